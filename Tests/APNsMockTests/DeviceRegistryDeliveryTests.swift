import Foundation
import Synchronization
import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

/// The registry as the device model: pushes handed over by the recorder, states changed by the admin API, the
/// mock's clock moved by tests, and the Console's look-up.
@Suite("DeviceRegistry delivery")
struct DeviceRegistryDeliveryTests {
    private func setUp(_ device: Device = Device(token: F.tokenA, topic: "com.example.app")) -> (DeviceRegistry, MockClock, ScenarioTestClock) {
        let wall = ScenarioTestClock(F.start)
        let clock = MockClock(wall: wall.function)
        let registry = DeviceRegistry([device], clock: clock)
        return (registry, clock, wall)
    }

    /// An accepted push's recording, as the store hands it over.
    private func accepted(
        _ apnsID: String,
        token: String = F.tokenA,
        at time: Int64,
        headers: [(String, String)] = [],
        status: Int = 200
    ) -> RecordedNotification {
        RecordedNotification(
            sequence: 1, receivedAt: time, connectionID: 1, streamID: 1,
            request: F.push(token: token, extraHeaders: headers),
            response: APNsResponse(status: status, reason: status == 200 ? nil : .badDeviceToken, apnsID: apnsID, uniqueID: "u-" + apnsID)
        )
    }

    @Test func aPushToAKnownDeviceGetsALogFoundByEitherID() {
        let (registry, _, _) = setUp()
        registry.accept([accepted("A-1", at: F.start)])
        #expect(registry.delivery(id: "A-1")?.events.map(\.state) == [.received, .delivered])
        #expect(registry.delivery(id: "u-A-1")?.apnsID == "A-1")
        #expect(registry.received(token: F.tokenA.uppercased())?.map(\.apnsID) == ["A-1"])
    }

    @Test func unknownTokensAndRefusedPushesGetNoLog() {
        let (registry, _, _) = setUp()
        registry.accept([accepted("B-1", token: F.tokenB, at: F.start), accepted("A-2", at: F.start, status: 400)])
        #expect(registry.delivery(id: "B-1") == nil)
        #expect(registry.delivery(id: "A-2") == nil)
        #expect(registry.deliveryCounts().isEmpty)
    }

    @Test func theHeadersThatDecideDeliveryAreRead() {
        let (registry, _, _) = setUp()
        registry.accept([
            accepted("A-1", at: F.start, headers: [("apns-priority", "5"), ("apns-collapse-id", "score"), ("apns-expiration", "0")])
        ])
        let record = registry.delivery(id: "A-1")
        #expect(record?.priority == 5)
        #expect(record?.collapseID == "score")
        #expect(record?.expiration == 0)
        #expect(record?.expiresAt == nil)
        #expect(record?.pushType == "alert")
    }

    @Test func movingTheClockExpiresAStoredPushInOneStep() throws {
        let (registry, clock, _) = setUp()
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-1", at: F.start)])
        #expect(registry.stored(token: F.tokenA)?.map(\.apnsID) == ["A-1"])
        try clock.advance(by: 31 * DeliveryPolicy.day)
        registry.settle()
        let record = try #require(registry.delivery(id: "A-1"))
        #expect(record.events.map(\.state) == [.received, .storedOffline, .discardedExpired])
        #expect(record.events.last?.at == F.start + 30 * DeliveryPolicy.day)
        #expect(registry.stored(token: F.tokenA) == [])
    }

    @Test func anExpirationIsMovedByTheOffsetInForceWhenThePushArrives() throws {
        let (registry, clock, _) = setUp()
        try clock.advance(by: 10 * DeliveryPolicy.day)
        _ = try registry.setState(token: F.tokenA, to: .offline)
        // The provider means "an hour from now" by its own (wall) clock.
        let expiration = (F.start + 3_600_000) / 1000
        registry.accept([accepted("A-1", at: F.start, headers: [("apns-expiration", String(expiration))])])
        let record = try #require(registry.delivery(id: "A-1"))
        #expect(record.receivedAt == F.start + 10 * DeliveryPolicy.day)
        #expect(record.expiresAt == F.start + 10 * DeliveryPolicy.day + 3_600_000)
        #expect(record.state == .storedOffline)
    }

    @Test func removingTheAppAnswers410FromThenOnWithTheMockClocksTime() throws {
        let (registry, clock, wall) = setUp()
        try clock.advance(by: DeliveryPolicy.day)
        let device = try #require(try registry.setState(token: F.tokenA, to: .appRemoved))
        #expect(device.state == .appRemoved)
        #expect(device.unregisteredAt == F.start + DeliveryPolicy.day)
        let answer = registry.check(token: F.tokenA, topic: "com.example.app", environment: .development, now: wall.now + clock.offsetMilliseconds)
        #expect(answer == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start + DeliveryPolicy.day))
        #expect(throws: DeviceStateRefused.self) { try registry.setState(token: F.tokenA, to: .online) }
    }

    @Test func anUnregistrationInTheFutureRemovesTheAppAtItsTime() throws {
        let (registry, clock, _) = setUp()
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-1", at: F.start)])
        registry.unregister(token: F.tokenA, at: F.start + 60_000)
        #expect(registry.device(token: F.tokenA)?.state == .offline)
        try clock.advance(by: 120_000)
        #expect(registry.device(token: F.tokenA)?.state == .appRemoved)
        #expect(registry.delivery(id: "A-1")?.events.last == DeliveryEvent(.discardedUnregisteredFromStorage, at: F.start + 60_000))
    }

    /// A refused change still brings the device to now: what that did (a stored push discarded when the app's removal
    /// came due) is counted once, not lost with the refusal.
    @Test func aRefusedChangeCountsWhatBringingTheDeviceToNowDid() throws {
        let (registry, clock, _) = setUp()
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-1", at: F.start)])
        registry.unregister(token: F.tokenA, at: F.start + 60_000)
        try clock.advance(by: 120_000)
        #expect(throws: DeviceStateRefused.self) { try registry.setState(token: F.tokenA, to: .online) }
        let discarded = registry.deliveryCounts().filter { $0.key.state == .discardedUnregisteredFromStorage }.values.reduce(0, +)
        #expect(discarded == 1)
        #expect(registry.delivery(id: "A-1")?.state == .discardedUnregisteredFromStorage)
        // Reading the device again brings nothing more to count.
        #expect(registry.deliveryCounts().filter { $0.key.state == .discardedUnregisteredFromStorage }.values.reduce(0, +) == 1)
    }

    @Test func aDeviceRegisteredWithAStateStartsInIt() {
        let (registry, _, _) = setUp(Device(token: F.tokenA, topic: "com.example.app", state: .lowPower))
        #expect(registry.device(token: F.tokenA)?.state == .lowPower)
        #expect(registry.list().map(\.state) == [.lowPower])
    }

    @Test func aWaitReturnsWhenAStoredPushIsDelivered() async throws {
        let (registry, _, _) = setUp()
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-1", at: F.start)])
        async let delivered = registry.waitForDeliveries(token: F.tokenA, count: 1, timeout: .seconds(30))
        // Polls with a deadline until the waiter is registered, then brings the device back.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, registry.waiterCount == 0 { await Task.yield() }
        _ = try registry.setState(token: F.tokenA, to: .online)
        #expect(await delivered)
    }

    @Test func aWaitForAnUnknownTokenOrTooManyEndsFalse() async {
        let (registry, _, _) = setUp()
        #expect(await registry.waitForDeliveries(token: F.tokenB, count: 1, timeout: .seconds(30)) == false)
        registry.accept([accepted("A-1", at: F.start)])
        #expect(await registry.waitForDeliveries(token: F.tokenA, count: 1, timeout: .zero))
        #expect(await registry.waitForDeliveries(token: F.tokenA, count: 2, timeout: .milliseconds(1)) == false)
    }

    @Test func theCountsFollowEveryDataPoint() throws {
        let (registry, _, _) = setUp()
        registry.accept([accepted("A-1", at: F.start)])
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-2", at: F.start + 1)])
        let counts = registry.deliveryCounts()
        #expect(counts.filter { $0.key.state == .received }.values.reduce(0, +) == 2)
        #expect(counts.filter { $0.key.state == .delivered }.values.reduce(0, +) == 1)
        #expect(counts.filter { $0.key.state == .storedOffline }.values.reduce(0, +) == 1)
    }

    @Test func theClockOnlyMovesForward() throws {
        let clock = MockClock(wall: { F.start })
        #expect(throws: ClockChangeRefused.self) { try clock.advance(by: -1) }
        #expect(throws: ClockChangeRefused.self) { try clock.advance(to: F.start - 1) }
        #expect(throws: ClockChangeRefused.self) { try clock.advance(by: MockClock.maximumOffset + 1) }
        try clock.advance(to: F.start + 5000)
        #expect(clock.now() == F.start + 5000)
        #expect(clock.jsonObject()["offset"] as? String == "5s")
        clock.reset()
        #expect(clock.now() == F.start)
    }

    @Test func aSnapshotRestoresStatesStorageLogsAndTheClock() throws {
        let (registry, clock, wall) = setUp(Device(name: "phone", token: F.tokenA, topic: "com.example.app"))
        var first = accepted("A-1", at: F.start)
        first.sequence = 7
        registry.accept([first])
        _ = try registry.setState(token: F.tokenA, to: .offline)
        var second = accepted("A-2", at: F.start + 1)
        second.sequence = 8
        registry.accept([second])
        try clock.advance(by: 3_600_000)
        registry.settle()
        let bytes = registry.snapshot()

        let restoredClock = MockClock(wall: wall.function)
        let restored = DeviceRegistry(clock: restoredClock)
        #expect(try restored.restore(bytes, recordings: SavedRecordings(bySequence: [first, second])) == 1)
        #expect(restoredClock.offsetMilliseconds == 3_600_000)
        #expect(restored.device(token: F.tokenA)?.state == .offline)
        #expect(restored.device(token: F.tokenA)?.name == "phone")
        #expect(restored.stored(token: F.tokenA)?.map(\.apnsID) == ["A-2"])
        #expect(restored.delivery(id: "u-A-1") == registry.delivery(id: "u-A-1"))
        #expect(restored.delivery(id: "A-1")?.recording?.sequence == 7, "the log found its recording again")
        _ = try restored.setState(token: F.tokenA, to: .online)
        #expect(restored.received(token: F.tokenA)?.map(\.apnsID) == ["A-1", "A-2"])
        #expect(throws: DeviceSnapshotUnreadable.self) { try restored.restore(Array("not json".utf8), recordings: SavedRecordings(bySequence: [])) }
    }

    @Test func anotherReplicasStateChangeKeepsWhatThisReplicaStored() throws {
        let (registry, _, _) = setUp()
        _ = try registry.setState(token: F.tokenA, to: .offline)
        registry.accept([accepted("A-1", at: F.start)])
        var online = try #require(registry.device(token: F.tokenA))
        online.state = .online
        registry.apply(.devicePut(online))
        #expect(registry.device(token: F.tokenA)?.state == .online)
        #expect(registry.delivery(id: "A-1")?.state == .deliveredFromStorage)
        // Registering again through the admin API starts over.
        registry.add(Device(token: F.tokenA, topic: "com.example.app"))
        #expect(registry.deliveries(token: F.tokenA) == [])
    }
}

/// A sink that keeps the delivery data points it is given, wanting them while `wants` says so.
private final class DeliveryCollector: RecordingSink {
    let name = "collector"
    private let state = Mutex<(wants: Bool, notices: [DeliveryRecord])>((true, []))

    var wants: Bool {
        get { state.withLock { $0.wants } }
        set { state.withLock { $0.wants = newValue } }
    }
    var notices: [DeliveryRecord] { state.withLock { $0.notices } }
    var wantsDeliveries: Bool { wants }

    func enqueue(deliveries: [DeliveryRecord]) { state.withLock { $0.notices += deliveries } }
    func enqueue(_ recording: RecordedNotification) {}
    func statistics() -> RecordingSinkStatistics { RecordingSinkStatistics(name: name, policy: .skipAhead, capacity: 0) }
    func finish(timeout: Duration) async -> RecordingSinkStatistics { statistics() }
}

@Suite("DeviceRegistry delivery events")
struct DeviceRegistryDeliveryEventTests {
    @Test func eachDataPointReachesASinkThatWantsThemAsTheLogWasThen() throws {
        let wall = ScenarioTestClock(F.start)
        let registry = DeviceRegistry([Device(token: F.tokenA, topic: "com.example.app")], clock: MockClock(wall: wall.function))
        let sink = DeliveryCollector()
        registry.reportDeliveries(to: [sink])
        _ = try registry.setState(token: F.tokenA, to: .offline)
        let recording = RecordedNotification(
            sequence: 7, receivedAt: F.start, connectionID: 1, streamID: 1, request: F.push(token: F.tokenA),
            response: APNsResponse(status: 200, reason: nil, apnsID: "A-1", uniqueID: "u-A-1")
        )
        registry.accept([recording])
        _ = try registry.setState(token: F.tokenA, to: .online)
        let notices = sink.notices
        #expect(notices.map(\.state) == [.received, .storedOffline, .deliveredFromStorage])
        #expect(notices.map(\.events.count) == [1, 2, 3])
        #expect(notices.allSatisfy { $0.apnsID == "A-1" && $0.sequence == 7 })
    }

    @Test func aSinkThatDoesNotWantThemIsGivenNone() throws {
        let wall = ScenarioTestClock(F.start)
        let registry = DeviceRegistry([Device(token: F.tokenA, topic: "com.example.app")], clock: MockClock(wall: wall.function))
        let sink = DeliveryCollector()
        sink.wants = false
        registry.reportDeliveries(to: [sink])
        registry.accept([
            RecordedNotification(
                sequence: 1, receivedAt: F.start, connectionID: 1, streamID: 1, request: F.push(token: F.tokenA),
                response: APNsResponse(status: 200, reason: nil, apnsID: "A-1", uniqueID: "u-A-1")
            )
        ])
        #expect(sink.notices.isEmpty)
        // The log is kept all the same.
        #expect(registry.delivery(id: "A-1")?.state == .delivered)
        sink.wants = true
        _ = try registry.setState(token: F.tokenA, to: .appRemoved)
        #expect(sink.notices.isEmpty, "nothing stored: removing the app ends no log")
    }
}

@Suite("DeviceRegistry log bound")
struct DeviceRegistryLogBoundTests {
    /// However many devices are pushed to, the logs kept in all stay within `recordsInAll`: each device keeps its share.
    @Test func eachDeviceKeepsItsShareOfTheLogsKeptInAll() {
        let wall = ScenarioTestClock(F.start)
        let devices = (1...5).map { Device(token: String(format: "%064x", $0), topic: "com.example.app") }
        let registry = DeviceRegistry(devices, clock: MockClock(wall: wall.function), policy: DeliveryPolicy(recordsPerDevice: 1000, recordsInAll: 10))
        let pushes = (1...6).map { index in
            RecordedNotification(
                sequence: UInt64(index), receivedAt: F.start, connectionID: 1, streamID: 1, request: F.push(token: devices[0].token),
                response: APNsResponse(status: 200, reason: nil, apnsID: "A-\(index)", uniqueID: "u-A-\(index)")
            )
        }
        registry.accept(pushes)
        #expect(registry.deliveries(token: devices[0].token)?.compactMap(\.apnsID) == ["A-5", "A-6"], "10 in all over 5 devices: 2 each")
        #expect(registry.delivery(id: "A-1") == nil, "a log let go is not found any more")
        #expect(registry.delivery(id: "u-A-6")?.state == .delivered)
        #expect(registry.deliveryCounts().values.reduce(0, +) == 12, "the metrics still count every data point")
    }
}
