import APNsMock
import Synchronization

/// The recordings as they are made, for `GET /admin/notifications/stream` (Server-Sent Events): a sink of the
/// recorder that hands each recording to every open stream whose filters it matches.
///
/// Each stream has its own bounded skip-ahead queue: a reader that falls behind loses the oldest recordings it
/// has not read (and is told how many), never slowing the provider port, which only queues. With no stream open
/// a recording costs one atomic load.
final class LiveFeed: RecordingSink {
    let name = "live"
    /// Recordings a stream may lag before it skips ahead.
    let capacityPerStream: Int

    /// What a reader takes at once: recordings, then the delivery data points that came after them.
    struct Batch {
        var recordings: [RecordedNotification] = []
        var deliveries: [DeliveryRecord] = []
        /// Recordings, and data points, let go since the last batch because the reader fell behind.
        var skipped: UInt64 = 0
        var deliveriesSkipped: UInt64 = 0
    }

    /// One open stream: its filters and its queue, with the reader's wake-up when it waits on an empty queue.
    final class Subscription: Sendable {
        let query: NotificationQuery
        private struct State {
            var queue: SinkQueue<RecordedNotification>
            /// Data points of the simulated devices' logs, bounded as the recordings are (the oldest go first).
            var deliveries: SinkQueue<DeliveryRecord>
            /// Skipped data points already told to the reader.
            var deliveriesSkippedTold: UInt64 = 0
            var waiter: CheckedContinuation<Void, Never>?
            var closed = false
            /// Skipped recordings already told to the reader.
            var skippedTold: UInt64 = 0
            /// The current wait's number, and the last wait whose time ran out.
            var waitNumber: UInt64 = 0
            var timedOut: UInt64 = 0
        }
        private let state: Mutex<State>

        init(query: NotificationQuery, capacity: Int) {
            self.query = query
            state = Mutex(State(
                queue: SinkQueue(name: "live", capacity: capacity, policy: .skipAhead),
                deliveries: SinkQueue(name: "live", capacity: capacity, policy: .skipAhead)
            ))
        }

        /// Queues a recording; `true` when the queue was full and let its oldest go.
        func push(_ recording: RecordedNotification) -> Bool {
            let (waiter, skipped) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
                guard !state.closed else { return (nil, false) }
                let before = state.queue.statistics.skipped
                _ = state.queue.pushRecording(recording)
                defer { state.waiter = nil }
                return (state.waiter, state.queue.statistics.skipped != before)
            }
            waiter?.resume()
            return skipped
        }

        /// Queues the recordings of a batch that match; returns how many older ones the queue let go for them.
        func push(matching recordings: [RecordedNotification]) -> UInt64 {
            let (waiter, skipped) = state.withLock { state -> (CheckedContinuation<Void, Never>?, UInt64) in
                guard !state.closed else { return (nil, 0) }
                let before = state.queue.statistics.skipped
                var pushed = false
                for recording in recordings where query.matches(recording) {
                    _ = state.queue.pushRecording(recording)
                    pushed = true
                }
                guard pushed else { return (nil, 0) }
                defer { state.waiter = nil }
                return (state.waiter, state.queue.statistics.skipped - before)
            }
            waiter?.resume()
            return skipped
        }

        /// Queues the data points whose push's recording the filters match (one without a recording, restored
        /// without it, is unknown to them and left out).
        func push(deliveries: [DeliveryRecord]) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.closed else { return nil }
                var pushed = false
                for record in deliveries {
                    guard let recording = record.recording, query.matches(recording) else { continue }
                    _ = state.deliveries.push(record)
                    pushed = true
                }
                guard pushed else { return nil }
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func close() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.closed = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        /// What arrived since the last call, and how many were skipped meanwhile; waits up to `timeout` when
        /// nothing has (then returns nothing, for a heartbeat). `nil` once the feed is closed.
        func next(timeout: Duration) async -> Batch? {
            if let ready = take() { return ready }
            if isClosed { return nil }
            // Each wait has its own number: a timer only ends the wait it was started for, never a later one
            // (a late timer of an earlier wait ending the next one at once made a reader spin on heartbeats).
            let wait = state.withLock { state -> UInt64 in
                state.waitNumber &+= 1
                return state.waitNumber
            }
            let timer = Task {
                do { try await Task.sleep(for: timeout) } catch { return }
                self.timeOut(wait)
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.closed || state.queue.count > 0 || state.deliveries.count > 0 || state.timedOut == wait { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            timer.cancel()
            if let ready = take() { return ready }
            return isClosed ? nil : Batch()
        }

        private var isClosed: Bool { state.withLock { $0.closed } }

        /// Ends wait `wait` if it is still the one going on.
        private func timeOut(_ wait: UInt64) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.waitNumber == wait else { return nil }
                state.timedOut = wait
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        private func take() -> Batch? {
            state.withLock { state in
                let skipped = state.queue.statistics.skipped - state.skippedTold
                let deliveriesSkipped = state.deliveries.statistics.skipped - state.deliveriesSkippedTold
                guard state.queue.count > 0 || skipped > 0 || state.deliveries.count > 0 || deliveriesSkipped > 0 else { return nil }
                state.skippedTold = state.queue.statistics.skipped
                let taken = state.queue.takeAll().elements
                state.queue.finished(taken.count)
                state.deliveriesSkippedTold = state.deliveries.statistics.skipped
                let points = state.deliveries.takeAll().elements
                state.deliveries.finished(points.count)
                return Batch(recordings: Array(taken), deliveries: Array(points), skipped: skipped, deliveriesSkipped: deliveriesSkipped)
            }
        }
    }

    private struct State {
        var subscriptions: [ObjectIdentifier: Subscription] = [:]
        var statistics: RecordingSinkStatistics
    }
    private let state: Mutex<State>
    /// Mirrors `subscriptions.count`, so a recording with no stream open skips the lock.
    private let open = Atomic<Int>(0)

    init(capacityPerStream: Int = 10_000) {
        self.capacityPerStream = capacityPerStream
        state = Mutex(State(statistics: RecordingSinkStatistics(name: "live", policy: .skipAhead, capacity: capacityPerStream)))
    }

    func subscribe(_ query: NotificationQuery) -> Subscription {
        let subscription = Subscription(query: query, capacity: capacityPerStream)
        state.withLock { $0.subscriptions[ObjectIdentifier(subscription)] = subscription }
        open.add(1, ordering: .relaxed)
        return subscription
    }

    func unsubscribe(_ subscription: Subscription) {
        let removed = state.withLock { $0.subscriptions.removeValue(forKey: ObjectIdentifier(subscription)) != nil }
        if removed { open.subtract(1, ordering: .relaxed) }
        subscription.close()
    }

    /// Ends every stream (at shutdown, before the admin server waits for its responses to finish).
    func closeAll() {
        let all = state.withLock { state -> [Subscription] in
            defer { state.subscriptions = [:] }
            return Array(state.subscriptions.values)
        }
        open.store(0, ordering: .relaxed)
        for subscription in all { subscription.close() }
    }

    var streamsOpen: Int { open.load(ordering: .relaxed) }

    // MARK: RecordingSink

    func enqueue(_ recording: RecordedNotification) {
        guard open.load(ordering: .relaxed) > 0 else { return }
        state.withLock { state in
            state.statistics.written += 1
            for subscription in state.subscriptions.values where subscription.query.matches(recording) {
                if subscription.push(recording) { state.statistics.skipped += 1 }
            }
        }
    }

    var isListening: Bool { open.load(ordering: .relaxed) > 0 }

    var wantsDeliveries: Bool { open.load(ordering: .relaxed) > 0 }

    func enqueue(deliveries: [DeliveryRecord]) {
        guard open.load(ordering: .relaxed) > 0 else { return }
        let subscriptions = state.withLock { Array($0.subscriptions.values) }
        for subscription in subscriptions { subscription.push(deliveries: deliveries) }
    }

    /// Behind a load balancer the inspector's feed lands on one replica; it shows what every replica answered.
    var receivesOtherReplicas: Bool { true }

    func enqueue(contentsOf recordings: [RecordedNotification]) {
        guard open.load(ordering: .relaxed) > 0 else { return }
        state.withLock { state in
            state.statistics.written += UInt64(recordings.count)
            for subscription in state.subscriptions.values {
                state.statistics.skipped += subscription.push(matching: recordings)
            }
        }
    }

    func statistics() -> RecordingSinkStatistics {
        state.withLock { $0.statistics }
    }

    func finish(timeout: Duration) async -> RecordingSinkStatistics {
        closeAll()
        return statistics()
    }
}
