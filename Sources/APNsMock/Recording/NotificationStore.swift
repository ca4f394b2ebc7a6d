import DequeModule
import Synchronization

/// Counts over what the recorder holds, since start or the last clear.
package struct RecorderStatistics: Sendable, Equatable {
    /// Requests recorded (answered or abandoned).
    package var received: Int = 0
    package var byStatus: [Int: Int] = [:]
    package var byReason: [String: Int] = [:]
    /// Broadcast-API requests by kind (`broadcast`, `channel-create`, …); device pushes are the rest of `received`.
    package var byKind: [String: Int] = [:]
    /// Recordings with payload warnings, by warning code.
    package var byWarning: [String: Int] = [:]
    /// Recordings by tenant (`--tenants`), since start or the last clear (a tenant's own clear zeroes its count).
    package var byTenant: [String: Int] = [:]
    /// Requests that ended without an answer (client reset, connection lost).
    package var abandoned: Int = 0
    /// Oldest recordings dropped to stay within capacity (or within the retention).
    package var evicted: Int = 0
    /// Of `evicted`, those dropped for their age (`--retention`).
    package var expired: Int = 0
    /// Recordings held now.
    package var stored: Int = 0
    package var capacity: Int = 0
}

extension RecorderStatistics {
    mutating func count(kind: BroadcastRecord.Kind, times: Int) {
        byKind[kind.rawValue, default: 0] += times
    }

    mutating func count(warnings: [PayloadWarning], times: Int) {
        for warning in warnings { byWarning[warning.code, default: 0] += times }
    }
}

/// A value counted while it repeats, and handed back with its count when another comes.
struct RepeatCount<Value: Equatable> {
    /// The value of the current run (`nil` before the first).
    private(set) var value: Value?
    private(set) var count = 0

    /// Counts `value`; returns the run it ends, when it is not the current one (`==` on arrays first compares
    /// their buffers, so the same array handed on again is recognised at once).
    mutating func add(_ value: Value) -> (Value, Int)? {
        if let current = self.value, current == value {
            count += 1
            return nil
        }
        defer { self.value = value; count = 1 }
        return self.value.map { ($0, count) }
    }
}

/// One page of a list (see `NotificationStore.page`).
package struct NotificationPage: Sendable {
    package var notifications: [RecordedNotification]
    /// Matches of the filters, on every page.
    package var total: Int
    /// Where the next page starts (`after` it, oldest first; `before` it, newest first), `nil` on the last page.
    package var next: UInt64?
}

/// The result of waiting for recordings.
package struct NotificationWaitResult: Sendable {
    /// Whether `count` matching notifications existed before the timeout.
    package var satisfied: Bool
    package var notifications: [RecordedNotification]
    package var total: Int
}

/// The bounded, in-memory recorder: every request the provider endpoint saw, oldest evicted first.
///
/// Appends come from the event loops, queries and waits from the admin API; one `Mutex` guards the state.
/// An append holds it for a deque append and a few counters, and does work per waiter only while a test
/// is waiting.
package final class NotificationStore: Sendable {
    private struct Waiter {
        var query: NotificationQuery
        var wanted: Int
        var matched: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    /// Noncopyable, because its index is: a `UniqueDeque` has no storage object to check for sharing or retain
    /// around an append (a `Deque`'s append retains and releases its storage object, atomically, on every push).
    private struct State: ~Copyable {
        var records = UniqueDeque<RecordedNotification>()
        var nextSequence: UInt64 = 1
        var statistics = RecorderStatistics()
        /// 200s counted apart from `statistics.byStatus` (folded in when read): nearly every request is one, and
        /// a dictionary update per request showed in profiles.
        var answered200 = 0
        /// The broadcast kind and the payload warnings recorded last, with how many recordings in a row had them:
        /// folded into `statistics` when they change and when read. Connections mostly repeat both, and a
        /// dictionary update per recording hashed its key's text every time.
        var kindRun = RepeatCount<BroadcastRecord.Kind>()
        var warningRun = RepeatCount<[PayloadWarning]>()
        var tenantRun = RepeatCount<String>()
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 1
        /// Waiters whose deadline passed before they were registered.
        var expiredWaiters: Set<UInt64> = []
        /// The array `onAppend` is handed, kept empty with its capacity between appends (an allocation per read
        /// otherwise).
        var handOver: [RecordedNotification] = []
    }

    package let capacity: Int
    private let state: Mutex<State>
    private let onAppend: (@Sendable (inout [RecordedNotification]) -> Void)?
    private let onIngest: (@Sendable ([RecordedNotification]) -> Void)?
    private let isListening: @Sendable () -> Bool
    /// How long a recording is kept, in milliseconds (`--retention`); `nil`: as long as capacity allows.
    package let retention: Int64?
    /// Told the newest sequence dropped for its age, outside the lock (the durable sinks drop theirs too).
    private let onExpire: (@Sendable (UInt64) -> Void)?
    /// The simulated devices, handed the pushes APNs accepted for them inside the lock, so that a reader who sees
    /// a recording also sees what the device made of it.
    private let devices: DeviceRegistry?
    /// With tenants, each accepted push goes to its tenant's devices instead.
    private let tenants: TenantDirectory?

    /// - Parameters:
    ///   - capacity: how many recordings to keep before evicting the oldest.
    ///   - onAppend: called with the new recordings of each append (one, or a batch), in sequence order, while the
    ///     store's lock is held: it must be quick and must not call back into the store (e.g. hand the recordings
    ///     to an NDJSON writer's buffer). It may move them out of the array: the store keeps its own copies.
    ///   - isListening: whether `onAppend` wants recordings now; when it does not, the store makes no copies for it.
    ///   - onIngest: as `onAppend`, for the recordings other replicas answered (`ingest`), numbered.
    ///   - devices: the simulated devices, given every accepted push to a token they know.
    ///   - retention: milliseconds a recording is kept; older ones go, oldest first, as new ones come and when a
    ///     list is read (`onExpire` is told the newest sequence that went).
    package init(
        capacity: Int = 100_000,
        isListening: @escaping @Sendable () -> Bool = { true },
        onAppend: (@Sendable (inout [RecordedNotification]) -> Void)? = nil,
        onIngest: (@Sendable ([RecordedNotification]) -> Void)? = nil,
        devices: DeviceRegistry? = nil,
        tenants: TenantDirectory? = nil,
        retention: Int64? = nil,
        onExpire: (@Sendable (UInt64) -> Void)? = nil
    ) {
        self.tenants = tenants.flatMap { $0.mode == .off ? nil : $0 }
        self.retention = retention
        self.onExpire = onExpire
        self.devices = devices
        self.isListening = isListening
        self.onIngest = onIngest
        precondition(capacity > 0, "a recorder must hold at least one notification")
        self.capacity = capacity
        self.onAppend = onAppend
        var initial = State()
        initial.records = Self.emptyRecords(capacity: capacity)
        initial.statistics.capacity = capacity
        self.state = Mutex(initial)
    }

    /// An empty index with room reserved for `capacity` recordings, up to a million (40 MB of address space).
    ///
    /// Reserved, not touched: the pages count toward RSS only once recordings fill them. Growing by doubling
    /// instead copied the index each time into fresh pages, faulting them in again while the recorder fills.
    private static func emptyRecords(capacity: Int) -> UniqueDeque<RecordedNotification> {
        UniqueDeque(minimumCapacity: min(capacity, 1_000_000))
    }

    /// Records a notification, assigning its sequence number, which it returns.
    @discardableResult
    package func append(_ notification: consuming RecordedNotification) -> UInt64 {
        var ready: [CheckedContinuation<Bool, Never>] = []
        // Moved into the index at the end, not copied: a copy and the original's release showed in profiles. An
        // Optional, because a value captured by the lock's closure can only be moved out of one.
        var pending: RecordedNotification? = consume notification
        var expiredUpTo: UInt64?
        let sequence = state.withLock { state in
            var accepted: RecordedNotification?
            if pending!.reachesDevices {
                accepted = pending!
                accepted!.sequence = state.nextSequence
            }
            // Inside the lock, so a record file sees recordings in sequence order.
            if let onAppend, isListening() {
                pending!.sequence = state.nextSequence
                var one = [pending!]
                onAppend(&one)
            }
            // After the sinks, so that a sink writing delivery events is given the recording first.
            if let accepted { handToDevices([accepted]) }
            return insert(pending.take()!, into: &state, ready: &ready, expiredUpTo: &expiredUpTo)
        }
        for continuation in ready { continuation.resume(returning: true) }
        if let expiredUpTo { onExpire?(expiredUpTo) }
        return sequence
    }

    /// Records a connection's batch of notifications, in order, under one acquisition of the lock, and empties
    /// the batch (keeping its capacity).
    ///
    /// With one event loop per core, loops appending one recording at a time contended for this lock on every
    /// request; a batch takes it once per read.
    package func append(contentsOf batch: inout [RecordedNotification]) {
        guard !batch.isEmpty else { return }
        var ready: [CheckedContinuation<Bool, Never>] = []
        // Taken out from the back after one reversal: moved, not copied, into the index.
        batch.reverseByMoving()
        var expiredUpTo: UInt64?
        state.withLock { state in
            var accepted: [RecordedNotification] = []
            // Read in place (the batch is reversed): only the pushes a device takes are copied.
            for index in batch.indices.reversed() where batch[index].reachesDevices {
                var copy = batch[index]
                copy.sequence = state.nextSequence + UInt64(batch.count - 1 - index)
                accepted.append(copy)
            }
            if let onAppend, isListening() {
                // Numbered as `insert` will number them, and handed over in order, inside the lock. One copy each
                // (the sinks take these, the last of them by moving), in an array kept from the previous append.
                var numbered: [RecordedNotification] = []
                swap(&numbered, &state.handOver)
                numbered.reserveCapacity(batch.count)
                for (offset, recording) in batch.reversed().enumerated() {
                    var copy = recording
                    copy.sequence = state.nextSequence + UInt64(offset)
                    numbered.append(copy)
                }
                onAppend(&numbered)
                numbered.removeAll(keepingCapacity: true)
                swap(&numbered, &state.handOver)
            }
            // After the sinks, so that a sink writing delivery events is given the recordings first.
            if !accepted.isEmpty { handToDevices(accepted) }
            while let next = batch.popLast() {
                _ = insert(next, into: &state, ready: &ready, expiredUpTo: &expiredUpTo)
            }
        }
        for continuation in ready { continuation.resume(returning: true) }
        if let expiredUpTo { onExpire?(expiredUpTo) }
    }

    /// Hands accepted pushes to the devices that take them: the tenant's, with tenants. Called with the lock held.
    private func handToDevices(_ accepted: [RecordedNotification]) {
        guard let tenants else {
            devices?.accept(accepted)
            return
        }
        var byTenant: [String: [RecordedNotification]] = [:]
        for recording in accepted { byTenant[recording.tenant ?? TenantResolver.unidentified, default: []].append(recording) }
        for (tenant, recordings) in byTenant {
            if let devices = tenants.existing(tenant)?.devices, !devices.isEmpty { devices.accept(recordings) }
        }
    }

    /// The sequences of recordings whose device's log is in `delivery`'s state: the devices of `tenant`, or of
    /// every tenant.
    private func sequences(matching delivery: DeliveryStateFilter, tenant: String?) -> Set<UInt64> {
        guard let tenants else { return devices?.sequences(matching: delivery) ?? [] }
        let registries = tenant.map { [tenants.existing($0)].compactMap { $0 } } ?? tenants.all.map(\.scenario)
        return registries.reduce(into: Set<UInt64>()) { $0.formUnion($1.devices.sequences(matching: delivery)) }
    }

    /// Numbers one recording, counts it, evicts the oldest when full, tells the sinks and the waiters, and moves it
    /// into the index. Taken by value, so the batch's recordings move straight in (through an `Optional`, each was
    /// copied twice more). Called with the lock held.
    private func insert(
        _ recording: consuming RecordedNotification,
        into state: inout State,
        ready: inout [CheckedContinuation<Bool, Never>],
        expiredUpTo: inout UInt64?
    ) -> UInt64 {
        let sequence = state.nextSequence
        recording.sequence = sequence
        state.nextSequence += 1
        state.statistics.received += 1
        // `status` and `reason`, not `response`: rebuilding the answer formats its IDs, inside the lock.
        if let status = recording.status {
            if status == 200 { state.answered200 += 1 } else { state.statistics.byStatus[status, default: 0] += 1 }
            if let reason = recording.reason { state.statistics.byReason[reason.rawValue, default: 0] += 1 }
        } else {
            state.statistics.abandoned += 1
        }
        // Extras are there for a small share of requests (a connection's device pushes under `--auth none` share one).
        if let broadcast = recording.broadcast, let (kind, count) = state.kindRun.add(broadcast.kind) {
            state.statistics.count(kind: kind, times: count)
        }
        let warnings = recording.warnings
        if !warnings.isEmpty, let (ended, count) = state.warningRun.add(warnings) {
            state.statistics.count(warnings: ended, times: count)
        }
        // Counted in runs too: a connection's pushes are one tenant's.
        if tenants != nil, let tenant = recording.tenant, let (ended, count) = state.tenantRun.add(tenant) {
            state.statistics.byTenant[ended, default: 0] += count
        }
        if state.records.count >= capacity, let evicted = state.records.popFirst() {
            Self.evicted(evicted, from: &state)
        }
        if let retention, let last = expire(before: recording.receivedAt &- retention, in: &state) { expiredUpTo = last }
        if !state.waiters.isEmpty {
            for id in Array(state.waiters.keys) where state.waiters[id]!.query.matches(recording) {
                state.waiters[id]!.matched += 1
                if state.waiters[id]!.matched >= state.waiters[id]!.wanted {
                    ready.append(state.waiters.removeValue(forKey: id)!.continuation)
                }
            }
        }
        state.records.append(recording)
        state.statistics.stored = state.records.count
        return sequence
    }

    /// Matching notifications in the query's order (at most `query.limit`), and how many match in all.
    package func list(_ query: NotificationQuery = NotificationQuery()) -> (notifications: [RecordedNotification], total: Int) {
        let page = page(query)
        return (page.notifications, page.total)
    }

    /// One page of matching notifications: at most `query.limit` in the query's order, after or before the
    /// query's cursor; `total` counts every match of the filters (the cursor aside), and `next` is the sequence
    /// number to continue from when more match past this page.
    package func page(_ query: NotificationQuery) -> NotificationPage {
        expireOld()
        var filters = query
        filters.afterSequence = nil
        filters.beforeSequence = nil
        // Asked of the devices before the store's lock is taken: their logs, not the recordings, know the state.
        if let delivery = query.delivery { filters.sequences = sequences(matching: delivery, tenant: query.tenant) }
        return state.withLock { state in
            var found: [RecordedNotification] = []
            var total = 0
            var more = false
            func visit(_ record: RecordedNotification) {
                guard filters.matches(record) else { return }
                total += 1
                if let after = query.afterSequence, record.sequence <= after { return }
                if let before = query.beforeSequence, record.sequence >= before { return }
                if query.limit.map({ found.count < $0 }) ?? true { found.append(record) } else { more = true }
            }
            let positions = state.records.indices
            if query.newestFirst {
                for index in positions.reversed() { visit(state.records[index]) }
            } else {
                for index in positions { visit(state.records[index]) }
            }
            return NotificationPage(notifications: found, total: total, next: more ? found.last?.sequence : nil)
        }
    }

    /// The most recent notification answered or sent with this `apns-id` (case-insensitive).
    package func notification(apnsID: String) -> RecordedNotification? {
        let query = NotificationQuery(apnsID: apnsID)
        return state.withLock { state in
            for index in state.records.indices.reversed() where query.matches(state.records[index]) {
                return state.records[index]
            }
            return nil
        }
    }

    /// The newest recording whose answer carried this `apns-unique-id`.
    package func notification(uniqueID: String) -> RecordedNotification? {
        state.withLock { state in
            for index in state.records.indices.reversed() where state.records[index].response?.uniqueID == uniqueID {
                return state.records[index]
            }
            return nil
        }
    }

    /// Counts a recording the store let go (for room or for its age); waiters no longer count it among their matches.
    private static func evicted(_ recording: borrowing RecordedNotification, from state: inout State) {
        state.statistics.evicted += 1
        guard !state.waiters.isEmpty else { return }
        for id in state.waiters.keys where state.waiters[id]!.query.matches(recording) {
            state.waiters[id]!.matched -= 1
        }
    }

    /// Drops the recordings received before `cutoff`, oldest first; returns the newest sequence dropped. With the
    /// lock held.
    private func expire(before cutoff: Int64, in state: inout State) -> UInt64? {
        var last: UInt64?
        while let first = state.records.indices.first, state.records[first].receivedAt < cutoff, let expired = state.records.popFirst() {
            Self.evicted(expired, from: &state)
            state.statistics.expired += 1
            last = expired.sequence
        }
        if last != nil { state.statistics.stored = state.records.count }
        return last
    }

    /// Drops what the retention no longer keeps at `now` (a store that receives nothing still lets old recordings
    /// go when it is read).
    package func expireOld(now: Int64 = WallClock.milliseconds()) {
        guard let retention else { return }
        if let last = state.withLock({ expire(before: now &- retention, in: &$0) }) { onExpire?(last) }
    }

    /// Waits in progress (for tests that must know a waiter is registered before they append).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    package func statistics() -> RecorderStatistics {
        expireOld()
        return state.withLock { state in
            var statistics = state.statistics
            if state.answered200 > 0 { statistics.byStatus[200, default: 0] += state.answered200 }
            if let kind = state.kindRun.value { statistics.count(kind: kind, times: state.kindRun.count) }
            if let warnings = state.warningRun.value { statistics.count(warnings: warnings, times: state.warningRun.count) }
            if let tenant = state.tenantRun.value { statistics.byTenant[tenant, default: 0] += state.tenantRun.count }
            return statistics
        }
    }

    /// Drops every recording and resets the counters; sequence numbers keep growing.
    /// Forgets every recording; returns the last sequence number given so far (every recording up to it is gone).
    @discardableResult
    package func clear() -> UInt64 {
        state.withLock { state in
            // A fresh reservation: the old index's pages go back to the system with it.
            state.records = Self.emptyRecords(capacity: capacity)
            state.statistics = RecorderStatistics()
            state.statistics.capacity = capacity
            state.answered200 = 0
            state.kindRun = RepeatCount()
            state.warningRun = RepeatCount()
            state.tenantRun = RepeatCount()
            for id in state.waiters.keys { state.waiters[id]!.matched = 0 }
            return state.nextSequence - 1
        }
    }

    /// Forgets one tenant's recordings, leaving the others' and the counters since the last full clear; returns the
    /// sequences that went, for the sinks that keep recordings.
    @discardableResult
    package func clear(tenant: String) -> [UInt64] {
        state.withLock { state in
            var kept = Self.emptyRecords(capacity: capacity)
            var gone: [UInt64] = []
            while let record = state.records.popFirst() {
                if record.tenant == tenant { gone.append(record.sequence) } else { kept.append(record) }
            }
            state.records = kept
            state.statistics.stored = state.records.count
            if let current = state.tenantRun.value { state.statistics.byTenant[current, default: 0] += state.tenantRun.count }
            state.tenantRun = RepeatCount()
            state.statistics.byTenant[tenant] = 0
            for id in state.waiters.keys where state.waiters[id]!.query.tenant == tenant { state.waiters[id]!.matched = 0 }
            return gone
        }
    }

    /// The counts of the recordings kept that match `query` (a tenant's), counted when asked: the running counters
    /// are the whole mock's.
    package func statistics(matching query: NotificationQuery) -> RecorderStatistics {
        expireOld()
        return state.withLock { state in
            var statistics = RecorderStatistics()
            statistics.capacity = capacity
            for index in state.records.indices {
                let recording = state.records[index]
                guard query.matches(recording) else { continue }
                statistics.received += 1
                statistics.stored += 1
                if let status = recording.status {
                    statistics.byStatus[status, default: 0] += 1
                    if let reason = recording.reason { statistics.byReason[reason.rawValue, default: 0] += 1 }
                } else {
                    statistics.abandoned += 1
                }
                if let broadcast = recording.broadcast { statistics.count(kind: broadcast.kind, times: 1) }
                if !recording.warnings.isEmpty { statistics.count(warnings: recording.warnings, times: 1) }
            }
            return statistics
        }
    }

    /// Puts back recordings kept by a persistent store at start, with their own sequence numbers (ascending, the
    /// newest `capacity` at most), counted as received; the next recording is numbered after the last of them.
    /// Nothing is handed to `onAppend`: they are where they came from already.
    package func restore(_ recordings: [RecordedNotification]) {
        var ready: [CheckedContinuation<Bool, Never>] = []
        var expiredUpTo: UInt64?
        state.withLock { state in
            for recording in recordings.suffix(capacity) where recording.sequence >= state.nextSequence {
                state.nextSequence = recording.sequence
                _ = insert(recording, into: &state, ready: &ready, expiredUpTo: &expiredUpTo)
            }
        }
        for continuation in ready { continuation.resume(returning: true) }
        if let expiredUpTo { onExpire?(expiredUpTo) }
    }

    /// Takes recordings another replica answered (read from a shared store), numbering them after this store's own:
    /// queries and waits see them; `onAppend` does not, since they were written where they came from, and
    /// `onIngest` gets them numbered, in order, inside the lock.
    /// Returns the sequence the first of those kept took (the last `capacity`), numbered in order from it.
    @discardableResult
    package func ingest(_ recordings: [RecordedNotification]) -> UInt64 {
        if recordings.isEmpty { return state.withLock { $0.nextSequence } }
        var ready: [CheckedContinuation<Bool, Never>] = []
        defer { for continuation in ready { continuation.resume(returning: true) } }
        return state.withLock { state in
            let first = state.nextSequence
            let kept = recordings.suffix(capacity)
            if let onIngest, isListening() {
                onIngest(kept.enumerated().map { offset, recording in
                    var copy = recording
                    copy.sequence = state.nextSequence + UInt64(offset)
                    return copy
                })
            }
            var expiredUpTo: UInt64?
            for recording in kept {
                _ = insert(recording, into: &state, ready: &ready, expiredUpTo: &expiredUpTo)
            }
            return first
        }
    }

    /// Waits until `count` notifications match `query`, or `timeout` passes; returns what matched either way.
    package func wait(for query: NotificationQuery, count: Int, timeout: Duration) async -> NotificationWaitResult {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        let deadline = Task {
            do {
                try await Task.sleep(for: timeout)
                self.finishWaiter(id)
            } catch {
                // Cancelled: the wait ended before its deadline.
            }
        }
        let satisfied = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    let matched = state.records.indices.count { query.matches(state.records[$0]) }
                    if matched >= count { return true }
                    if state.expiredWaiters.remove(id) != nil { return false }
                    state.waiters[id] = Waiter(query: query, wanted: count, matched: matched, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.finishWaiter(id)
        }
        deadline.cancel()
        await deadline.value
        state.withLock { _ = $0.expiredWaiters.remove(id) }
        let (notifications, total) = list(query)
        return NotificationWaitResult(satisfied: satisfied, notifications: notifications, total: total)
    }

    private func finishWaiter(_ id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter.continuation }
            state.expiredWaiters.insert(id)
            return nil
        }
        continuation?.resume(returning: false)
    }
}
