import Synchronization
import Testing

@testable import APNsMock

private let tokenA = String(repeating: "a1", count: 32)
private let tokenB = String(repeating: "b2", count: 32)

private func recording(
    token: String = tokenA,
    topic: String = "com.example.app",
    pushType: String = "alert",
    reason: Reason? = nil,
    apnsID: String = "AAAAAAAA-0000-0000-0000-000000000001",
    receivedAt: Int64 = 1_000,
    abandoned: Bool = false
) -> RecordedNotification {
    let request = APNsRequest(
        method: "POST",
        path: "/3/device/" + token,
        headers: [
            HeaderField(name: "apns-topic", value: topic),
            HeaderField(name: "apns-push-type", value: pushType),
            HeaderField(name: "apns-id", value: apnsID),
        ],
        payload: Array(#"{"aps":{}}"#.utf8)
    )
    let response = abandoned ? nil : APNsResponse(status: reason?.status ?? 200, reason: reason, apnsID: apnsID)
    return RecordedNotification(
        sequence: 0,
        receivedAt: receivedAt,
        connectionID: 7,
        streamID: 1,
        request: request,
        response: response,
        abandonedBecause: abandoned ? "stream reset" : nil
    )
}

private func elapsed(_ body: () async -> Void) async -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    await body()
    return clock.now - start
}

@Suite("NotificationStore: recording")
struct NotificationStoreRecordingTests {
    @Test func theRetentionDropsRecordingsOlderThanItAsNewOnesComeAndWhenRead() {
        let now = WallClock.milliseconds()
        let expiredUpTo = Mutex<[UInt64]>([])
        let store = NotificationStore(capacity: 100, retention: 60_000, onExpire: { last in expiredUpTo.withLock { $0.append(last) } })
        _ = store.append(recording(receivedAt: now - 200_000))
        _ = store.append(recording(receivedAt: now - 50_000))
        _ = store.append(recording(receivedAt: now - 30_000))
        #expect(expiredUpTo.withLock { $0 } == [1], "the first is more than a minute older than the third")
        #expect(store.statistics().stored == 2)
        var batch = [recording(receivedAt: now - 10_000), recording(receivedAt: now - 5_000)]
        store.append(contentsOf: &batch)
        #expect(expiredUpTo.withLock { $0 } == [1])
        store.expireOld(now: now + 20_000)
        #expect(expiredUpTo.withLock { $0 } == [1, 2])
        store.expireOld(now: now + 52_000)
        #expect(expiredUpTo.withLock { $0 } == [1, 2, 4])
        // A list reads the wall clock: what is left is within the minute.
        #expect(store.list().notifications.map(\.receivedAt) == [now - 5_000])
        let statistics = store.statistics()
        #expect(statistics.expired == 4 && statistics.evicted == 4 && statistics.stored == 1, "\(statistics)")
        let unbounded = NotificationStore(capacity: 100)
        _ = unbounded.append(recording(receivedAt: 0))
        unbounded.expireOld(now: .max)
        #expect(unbounded.statistics().stored == 1)
    }

    @Test func assignsIncreasingSequenceNumbersFromOne() {
        let store = NotificationStore()
        let sequences = (0..<3).map { _ in store.append(recording()) }
        #expect(sequences == [1, 2, 3])
        #expect(store.list().notifications.map(\.sequence) == [1, 2, 3])
    }

    @Test func keepsSequenceGrowingAfterClear() {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording())
        store.clear()
        #expect(store.append(recording()) == 3)
    }

    @Test func aBatchIsNumberedInOrderCountedEvictedAndEmptied() {
        let store = NotificationStore(capacity: 3)
        store.append(recording(token: tokenA))
        var batch = [recording(token: tokenB), recording(token: tokenA, reason: .badDeviceToken), recording(token: tokenB)]
        store.append(contentsOf: &batch)
        #expect(batch.isEmpty)
        #expect(store.list().notifications.map(\.sequence) == [2, 3, 4])
        #expect(store.list().notifications.map(\.deviceToken) == [tokenB, tokenA, tokenB])
        let statistics = store.statistics()
        #expect(statistics.received == 4)
        #expect(statistics.evicted == 1)
        #expect(statistics.byStatus[400] == 1)
        var empty: [RecordedNotification] = []
        store.append(contentsOf: &empty)
        #expect(store.append(recording()) == 5)
    }

    @Test func aBatchWakesAWaiterWithTheFirstMatchesInOrder() async {
        let store = NotificationStore()
        var query = NotificationQuery()
        query.deviceToken = tokenB
        query.limit = 2
        let waiter = Task { await store.wait(for: query, count: 2, timeout: .seconds(30)) }
        for _ in 0..<10 { await Task.yield() }
        var batch = [recording(token: tokenB), recording(token: tokenA), recording(token: tokenB), recording(token: tokenB)]
        store.append(contentsOf: &batch)
        let result = await waiter.value
        #expect(result.satisfied)
        #expect(result.notifications.map(\.sequence) == [1, 3])
    }

    @Test func keepsRecordingsInArrivalOrder() {
        let store = NotificationStore()
        store.append(recording(token: tokenB))
        store.append(recording(token: tokenA))
        #expect(store.list().notifications.map(\.deviceToken) == [tokenB, tokenA])
    }

    @Test func evictsOldestFirstWhenFull() {
        let store = NotificationStore(capacity: 3)
        for _ in 0..<5 { store.append(recording()) }
        #expect(store.list().notifications.map(\.sequence) == [3, 4, 5])
    }

    @Test func countsEvictions() {
        let store = NotificationStore(capacity: 3)
        for _ in 0..<5 { store.append(recording()) }
        let statistics = store.statistics()
        #expect(statistics.evicted == 2)
        #expect(statistics.stored == 3)
        #expect(statistics.capacity == 3)
        #expect(statistics.received == 5)
    }

    @Test func countsByStatusReasonAndAbandoned() {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording())
        store.append(recording(reason: .badDeviceToken))
        store.append(recording(reason: .unregistered))
        store.append(recording(abandoned: true))
        let statistics = store.statistics()
        #expect(statistics.received == 5)
        #expect(statistics.byStatus == [200: 2, 400: 1, 410: 1])
        #expect(statistics.byReason == ["BadDeviceToken": 1, "Unregistered": 1])
        #expect(statistics.abandoned == 1)
        #expect(statistics.stored == 5)
        #expect(statistics.evicted == 0)
    }

    @Test func clearDropsRecordingsAndResetsCounters() {
        let store = NotificationStore(capacity: 2)
        for _ in 0..<3 { store.append(recording(reason: .badTopic)) }
        store.append(recording(abandoned: true))
        store.clear()
        #expect(store.list().total == 0)
        #expect(store.statistics() == RecorderStatistics(capacity: 2))
    }

    /// A sink may move a batch's recordings out of the array it is handed; the store keeps its own, and hands the
    /// next batch in the same array, emptied.
    @Test func onAppendMayTakeTheRecordingsAndTheStoreKeepsItsOwn() {
        let taken = Mutex<[UInt64]>([])
        let store = NotificationStore(onAppend: { batch in
            taken.withLock { $0 += batch.map(\.sequence) }
            batch.removeAll()
        })
        for size in [3, 1, 5] {
            var batch = (0..<size).map { _ in recording() }
            store.append(contentsOf: &batch)
            #expect(batch.isEmpty)
        }
        store.append(recording())
        #expect(taken.withLock { $0 } == Array(1...10))
        #expect(store.list().notifications.map(\.sequence) == Array(1...10))
    }

    @Test func callsOnAppendWithTheAssignedSequence() {
        let seen = Mutex<[UInt64]>([])
        let store = NotificationStore(onAppend: { notifications in seen.withLock { $0 += notifications.map(\.sequence) } })
        store.append(recording())
        store.append(recording())
        #expect(seen.withLock { $0 } == [1, 2])
    }

    /// Kinds and warnings are counted by runs (`RepeatCount`) and folded in when they change or are read: the
    /// counts must be what counting each recording gives, read at every point of a sequence that changes, repeats
    /// and returns, with the same array handed on again and with equal arrays that are not the same one.
    @Test func countsKindsAndWarningsAsEachRecordingDoes() {
        let store = NotificationStore()
        let a = PayloadWarning(code: "a", path: "$", message: "A")
        let b = PayloadWarning(code: "b", path: "$.aps", message: "B")
        let same = [a, b]
        let steps: [[PayloadWarning]] = [[a], same, same, [a, b], [], [b], [a], [a]]
        let kinds: [BroadcastRecord.Kind?] = [.broadcast, .broadcast, nil, .channelCreate, .broadcast, .broadcast, .channelList, nil]
        var byKind: [String: Int] = [:]
        var byWarning: [String: Int] = [:]
        for (index, warnings) in steps.enumerated() {
            var cache: RecordExtras?
            let extras = RecordExtras.make(
                abandonedBecause: nil, authentication: nil, scenarioRule: nil, faults: [],
                broadcast: kinds[index].map { BroadcastRecord(kind: $0, bundleID: "com.example.app", channelID: nil) },
                warnings: warnings, cache: &cache
            )
            var shapes = RecordShapeCache()
            let request = recording().request
            store.append(RecordedNotification(
                sequence: 0, receivedAt: 1, connectionID: 1, streamID: 1, request: request,
                response: APNsResponse(status: 200, apnsID: "AAAAAAAA-0000-0000-0000-000000000001"), extras: extras, shapes: &shapes
            ))
            if let kind = kinds[index] { byKind[kind.rawValue, default: 0] += 1 }
            for warning in warnings { byWarning[warning.code, default: 0] += 1 }
            let statistics = store.statistics()
            #expect(statistics.byKind == byKind, "after \(index + 1)")
            #expect(statistics.byWarning == byWarning, "after \(index + 1)")
        }
        store.clear()
        #expect(store.statistics().byKind.isEmpty && store.statistics().byWarning.isEmpty)
        store.append(recording())
        #expect(store.statistics().byKind.isEmpty && store.statistics().byWarning.isEmpty && store.statistics().received == 1)
    }

    @Test func losesNothingUnderConcurrentAppends() async {
        let store = NotificationStore()
        let sequences = await withTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<50 {
                group.addTask { (0..<200).map { _ in store.append(recording()) } }
            }
            var all: [UInt64] = []
            for await batch in group { all += batch }
            return all
        }
        #expect(sequences.count == 10_000)
        #expect(Set(sequences) == Set(1...10_000))
        #expect(store.statistics().received == 10_000)
        #expect(store.list().notifications.map(\.sequence) == Array(1...10_000))
    }
}

@Suite("NotificationStore: queries")
struct NotificationStoreQueryTests {
    @Test func listsEverythingWithAnEmptyQuery() {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording(abandoned: true))
        let (notifications, total) = store.list()
        #expect(notifications.count == 2)
        #expect(total == 2)
    }

    @Test func filtersByTokenIgnoringCase() {
        let store = NotificationStore()
        store.append(recording(token: tokenA))
        store.append(recording(token: tokenB.uppercased()))
        store.append(recording(token: tokenB))
        let result = store.list(NotificationQuery(deviceToken: tokenB.uppercased()))
        #expect(result.notifications.map(\.sequence) == [2, 3])
        #expect(result.total == 2)
    }

    @Test func filtersByTopic() {
        let store = NotificationStore()
        store.append(recording(topic: "com.example.app"))
        store.append(recording(topic: "com.example.app.voip"))
        #expect(store.list(NotificationQuery(topic: "com.example.app.voip")).notifications.map(\.sequence) == [2])
    }

    @Test func filtersByPushType() {
        let store = NotificationStore()
        store.append(recording(pushType: "alert"))
        store.append(recording(pushType: "background"))
        store.append(recording(pushType: "alert"))
        #expect(store.list(NotificationQuery(pushType: "alert")).notifications.map(\.sequence) == [1, 3])
    }

    @Test func filtersByStatus() {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording(reason: .badDeviceToken))
        store.append(recording(reason: .unregistered))
        store.append(recording(abandoned: true))
        #expect(store.list(NotificationQuery(status: 400)).notifications.map(\.sequence) == [2])
        #expect(store.list(NotificationQuery(status: 200)).notifications.map(\.sequence) == [1])
    }

    @Test func filtersByReason() {
        let store = NotificationStore()
        store.append(recording(reason: .badDeviceToken))
        store.append(recording(reason: .badTopic))
        store.append(recording())
        #expect(store.list(NotificationQuery(reason: "BadTopic")).notifications.map(\.sequence) == [2])
    }

    @Test func filtersByApnsIDIgnoringCase() {
        let store = NotificationStore()
        store.append(recording(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b"))
        store.append(recording(apnsID: "07C0F2E2-7CE0-71EC-D0D6-E7089220F778"))
        let query = NotificationQuery(apnsID: "EABEAE54-14A8-11E5-B60B-1697F925EC7B")
        #expect(store.list(query).notifications.map(\.sequence) == [1])
    }

    @Test func filtersBySinceInclusively() {
        let store = NotificationStore()
        store.append(recording(receivedAt: 1_000))
        store.append(recording(receivedAt: 1_999))
        store.append(recording(receivedAt: 2_000))
        store.append(recording(receivedAt: 3_000))
        #expect(store.list(NotificationQuery(since: 2_000)).notifications.map(\.sequence) == [3, 4])
    }

    @Test func limitsToTheEarliestAndReportsTheTotal() {
        let store = NotificationStore()
        for _ in 0..<5 { store.append(recording()) }
        let result = store.list(NotificationQuery(limit: 2))
        #expect(result.notifications.map(\.sequence) == [1, 2])
        #expect(result.total == 5)
    }

    @Test func limitZeroReturnsNothingButCountsAll() {
        let store = NotificationStore()
        for _ in 0..<3 { store.append(recording()) }
        let result = store.list(NotificationQuery(limit: 0))
        #expect(result.notifications.isEmpty)
        #expect(result.total == 3)
    }

    @Test func combinesFiltersWithAnd() {
        let store = NotificationStore()
        store.append(recording(token: tokenA, pushType: "alert"))
        store.append(recording(token: tokenB, pushType: "alert"))
        store.append(recording(token: tokenB, pushType: "voip"))
        let query = NotificationQuery(deviceToken: tokenB, pushType: "alert")
        #expect(store.list(query).notifications.map(\.sequence) == [2])
    }

    @Test func findsTheMostRecentNotificationByApnsID() {
        let store = NotificationStore()
        store.append(recording(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b"))
        store.append(recording(apnsID: "07C0F2E2-7CE0-71EC-D0D6-E7089220F778"))
        store.append(recording(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b"))
        #expect(store.notification(apnsID: "EABEAE54-14A8-11E5-B60B-1697F925EC7B")?.sequence == 3)
    }

    @Test func findsAbandonedNotificationByTheApnsIDItSent() {
        let store = NotificationStore()
        store.append(recording(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b", abandoned: true))
        let found = store.notification(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b")
        #expect(found?.sequence == 1)
        #expect(found?.response == nil)
    }

    @Test func findsNoNotificationForAnUnknownApnsID() {
        let store = NotificationStore()
        store.append(recording())
        #expect(store.notification(apnsID: "eabeae54-14a8-11e5-b60b-1697f925ec7b") == nil)
    }
}

@Suite("NotificationStore: wait")
struct NotificationStoreWaitTests {
    @Test func returnsAtOnceWhenEnoughAlreadyMatch() async {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording())
        var result: NotificationWaitResult?
        let duration = await elapsed {
            result = await store.wait(for: NotificationQuery(), count: 2, timeout: .seconds(60))
        }
        #expect(result?.satisfied == true)
        #expect(result?.notifications.map(\.sequence) == [1, 2])
        #expect(result?.total == 2)
        // Far below the timeout, with room for a loaded machine: under AddressSanitizer, with the whole suite
        // running in parallel, this took 5–6 s.
        #expect(duration < .seconds(30))
    }

    @Test func resumesWhenAppendsArriveFromAnotherTask() async {
        let store = NotificationStore()
        store.append(recording())
        let waiter = Task { await store.wait(for: NotificationQuery(), count: 3, timeout: .seconds(30)) }
        for _ in 0..<10 { await Task.yield() }
        let appender = Task {
            store.append(recording())
            store.append(recording())
        }
        await appender.value
        var result: NotificationWaitResult?
        let duration = await elapsed { result = await waiter.value }
        #expect(result?.satisfied == true)
        #expect(result?.notifications.map(\.sequence) == [1, 2, 3])
        #expect(duration < .seconds(10))
    }

    @Test func timesOutWithWhatWasFound() async {
        let store = NotificationStore()
        store.append(recording())
        store.append(recording())
        var result: NotificationWaitResult?
        let duration = await elapsed {
            result = await store.wait(for: NotificationQuery(), count: 5, timeout: .milliseconds(150))
        }
        #expect(result?.satisfied == false)
        #expect(result?.notifications.map(\.sequence) == [1, 2])
        #expect(result?.total == 2)
        #expect(duration >= .milliseconds(150))
        #expect(duration < .seconds(10))
    }

    @Test func countsOnlyNotificationsMatchingTheFilter() async {
        let store = NotificationStore()
        let waiter = Task { await store.wait(for: NotificationQuery(deviceToken: tokenB), count: 2, timeout: .seconds(30)) }
        for token in [tokenA, tokenA, tokenB, tokenA, tokenB] { store.append(recording(token: token)) }
        let result = await waiter.value
        #expect(result.satisfied)
        #expect(result.notifications.map(\.sequence) == [3, 5])
        #expect(result.total == 2)
    }

    @Test func isNotSatisfiedByNonMatchingNotifications() async {
        let store = NotificationStore()
        let waiter = Task {
            await store.wait(for: NotificationQuery(deviceToken: tokenB), count: 1, timeout: .milliseconds(200))
        }
        for _ in 0..<5 { store.append(recording(token: tokenA)) }
        let result = await waiter.value
        #expect(!result.satisfied)
        #expect(result.notifications.isEmpty)
        #expect(result.total == 0)
    }

    @Test func endsPromptlyWhenCancelled() async {
        let store = NotificationStore()
        let waiter = Task { await store.wait(for: NotificationQuery(), count: 1, timeout: .seconds(60)) }
        for _ in 0..<10 { await Task.yield() }
        waiter.cancel()
        var result: NotificationWaitResult?
        let duration = await elapsed { result = await waiter.value }
        #expect(result?.satisfied == false)
        #expect(result?.notifications.isEmpty == true)
        #expect(duration < .seconds(10))
        store.append(recording())  // must not resume the finished wait a second time
        #expect(store.list().total == 1)
    }

    @Test func endsAtOnceWhenAlreadyCancelled() async {
        let store = NotificationStore()
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await store.wait(for: NotificationQuery(), count: 1, timeout: .seconds(60))
        }
        var result: NotificationWaitResult?
        let duration = await elapsed { result = await waiter.value }
        #expect(result?.satisfied == false)
        #expect(duration < .seconds(10))
    }

    @Test func satisfiesManyConcurrentWaitersWithOneAppend() async {
        let store = NotificationStore()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { await store.wait(for: NotificationQuery(), count: 1, timeout: .seconds(30)).satisfied }
            }
            group.addTask {
                store.append(recording())
                return true
            }
            var all: [Bool] = []
            for await satisfied in group { all.append(satisfied) }
            return all
        }
        #expect(results == Array(repeating: true, count: 21))
    }

    @Test func waitsForAllOfManyConcurrentAppends() async {
        let store = NotificationStore()
        let waiter = Task { await store.wait(for: NotificationQuery(), count: 2_000, timeout: .seconds(30)) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask { for _ in 0..<100 { store.append(recording()) } }
            }
        }
        let result = await waiter.value
        #expect(result.satisfied)
        #expect(result.total == 2_000)
    }

    /// Waits until the waiter is registered, so the appends below are certain to be seen by it.
    private func untilWaiting(_ store: NotificationStore) async {
        let deadline = ContinuousClock.now + .seconds(10)
        while store.waiterCount == 0, ContinuousClock.now < deadline { await Task.yield() }
    }

    @Test func doesNotCountEvictedNotifications() async {
        let store = NotificationStore(capacity: 1)
        let waiter = Task {
            await store.wait(for: NotificationQuery(deviceToken: tokenB), count: 2, timeout: .seconds(60))
        }
        await untilWaiting(store)
        store.append(recording(token: tokenB))
        store.append(recording(token: tokenA))  // evicts the first B
        store.append(recording(token: tokenB))  // evicts A
        waiter.cancel()  // ends the wait unsatisfied, with what matches now
        let result = await waiter.value
        #expect(!result.satisfied)
        #expect(result.notifications.map(\.sequence) == [3])
    }

    @Test func doesNotCountNotificationsDroppedByClear() async {
        let store = NotificationStore()
        let waiter = Task { await store.wait(for: NotificationQuery(), count: 2, timeout: .seconds(60)) }
        await untilWaiting(store)
        store.append(recording())
        store.clear()
        store.append(recording())
        waiter.cancel()  // ends the wait unsatisfied, with what matches now
        let result = await waiter.value
        #expect(!result.satisfied)
        #expect(result.notifications.map(\.sequence) == [2])
    }

    @Test func isSatisfiedByExistingNotificationsEvenWithZeroTimeout() async {
        let store = NotificationStore()
        store.append(recording())
        var unsatisfied = 0
        for _ in 0..<1000 {
            let result = await store.wait(for: NotificationQuery(), count: 1, timeout: .zero)
            if !result.satisfied { unsatisfied += 1 }
        }
        #expect(unsatisfied == 0)
    }
}
