import DequeModule

/// One simulated device's life after APNs' 200s: its state, the changes to come, what is stored for it, and the
/// delivery logs of what it was sent. A value that takes events (a push accepted, a change of state, time passing)
/// and answers with what they caused; it reads no clock: every event brings its time, on the mock's clock.
///
/// The rules are the delivery facts' (docs/devices.md): an offline device's pushes are stored, `storedPerApp` at
/// most (a newer one, or one with the same `apns-collapse-id`, replaces the oldest), until it comes back or they
/// expire; `apns-expiration: 0` is tried once and never stored; low power holds priority 5 and 1; priority 1
/// waits for the next burst; background pushes spend a daily budget; notifications turned off discard alerts; an
/// app removed discards everything, stored pushes included.
struct SimulatedDevice: Sendable {
    /// A push waiting in storage, and when time alone releases it (a burst, a new budget window); `nil`: when the
    /// device's state lets it go.
    struct StoredPush: Sendable, Codable {
        var record: DeliveryRecord
        var releaseAt: Int64?
    }

    /// What an event did: the data points it added (for the metrics) and the logs that ended (for who waits).
    /// With `notices`, also each log as it was at each data point, for the sinks that write delivery events (the
    /// record file, the live feed); `nil` while none wants them, so a push costs no copy of its log.
    struct Activity: Sendable {
        var events: [DeliveryTally] = []
        var finished: [DeliveryRecord] = []
        var notices: [DeliveryRecord]?

        init(reporting: Bool = false) {
            notices = reporting ? [] : nil
        }

        /// A data point: `record` has just reached `state` (its last event).
        mutating func note(_ record: DeliveryRecord, _ state: DeliveryState) {
            events.append(DeliveryTally(record, state))
            notices?.append(record)
        }

        mutating func merge(_ other: Activity) {
            events += other.events
            finished += other.finished
            if let more = other.notices { notices = (notices ?? []) + more }
        }
    }

    private enum Verdict {
        case deliver
        case discard(DeliveryState)
        case store(DeliveryState, releaseAt: Int64?)
    }

    let policy: DeliveryPolicy
    private(set) var state: DeviceState
    /// Changes still to come, in time order.
    private(set) var timeline: [DeviceStateChange]
    /// Oldest first.
    private(set) var stored: [StoredPush] = []
    /// Logs that reached a final state, oldest first.
    private(set) var finished = Deque<DeliveryRecord>()
    /// The time the device has been brought to; events never go back before it.
    private(set) var time: Int64
    private var budgetWindowStart: Int64?
    private var budgetUsed = 0

    /// A device in `state` at `now`, whose `timeline` may start in the past (those changes are in force at once).
    init(state: DeviceState = .online, timeline: [DeviceStateChange] = [], at now: Int64, policy: DeliveryPolicy) {
        self.policy = policy
        self.state = state
        self.time = now
        let ordered = timeline.sorted { $0.at < $1.at }
        self.timeline = ordered.filter { $0.at > now }
        if let last = ordered.last(where: { $0.at <= now }) { self.state = last.state }
    }

    /// The state changes at `time`; an earlier time means now. Changes scheduled for later stay scheduled.
    mutating func change(to newState: DeviceState, at time: Int64, reporting: Bool = false) -> Activity {
        var activity = advance(to: time, reporting: reporting)
        enter(newState, at: self.time, &activity)
        return activity
    }

    /// Replaces the changes to come.
    mutating func schedule(_ changes: [DeviceStateChange]) {
        timeline = changes.filter { $0.at > time }.sorted { $0.at < $1.at }
    }

    /// Brings the device to `now`: expiries, releases and scheduled changes up to then, in time order (at one
    /// instant: expiries, then releases, then changes).
    /// - Parameter reporting: the activity carries ``Activity/notices``.
    mutating func advance(to now: Int64, reporting: Bool = false) -> Activity {
        var activity = Activity(reporting: reporting)
        while let next = nextEventTime(), next <= now {
            time = max(time, next)
            expire(at: time, &activity)
            if state.isConnected {
                release(at: time, released: true, &activity) { ($0.releaseAt ?? .max) <= next }
            }
            while let change = timeline.first, change.at <= next {
                timeline.removeFirst()
                enter(change.state, at: time, &activity)
            }
        }
        time = max(time, now)
        return activity
    }

    /// A push APNs accepted for this device (its log holds only `received`).
    mutating func accept(_ accepted: DeliveryRecord, reporting: Bool = false) -> Activity {
        var activity = advance(to: accepted.receivedAt, reporting: reporting)
        var record = accepted
        activity.note(record, .received)
        let now = time
        switch judge(record, at: now, fromStorage: false, released: false) {
        case .deliver:
            finish(&record, .delivered, at: now, &activity)
        case .discard(let outcome):
            finish(&record, outcome, at: now, &activity)
        case .store(let storage, let releaseAt):
            guard (record.expiresAt ?? .min) > now else {
                // `apns-expiration: 0` (or a time already past): tried once, never stored.
                finish(&record, .discardedExpired, at: now, &activity)
                return activity
            }
            makeRoom(for: record, at: now, &activity)
            record.events.append(DeliveryEvent(storage, at: now))
            activity.note(record, storage)
            stored.append(StoredPush(record: record, releaseAt: releaseAt))
        }
        return activity
    }

    /// Everything but the policy, as a restart finds it again.
    struct Saved: Sendable, Codable {
        var state: DeviceState
        var timeline: [DeviceStateChange]
        var stored: [StoredPush]
        var finished: [DeliveryRecord]
        var time: Int64
        var budgetWindowStart: Int64?
        var budgetUsed: Int
    }

    var saved: Saved {
        Saved(
            state: state, timeline: timeline, stored: stored, finished: Array(finished), time: time,
            budgetWindowStart: budgetWindowStart, budgetUsed: budgetUsed
        )
    }

    /// The device as saved, under today's policy, its logs given their recordings again.
    init(saved: Saved, policy: DeliveryPolicy, recordings: SavedRecordings) {
        func relinked(_ record: DeliveryRecord) -> DeliveryRecord {
            var record = record
            recordings.relink(&record)
            return record
        }
        self.policy = policy
        state = saved.state
        timeline = saved.timeline
        stored = saved.stored.map { StoredPush(record: relinked($0.record), releaseAt: $0.releaseAt) }
        finished = Deque(saved.finished.suffix(policy.recordsPerDevice).map(relinked))
        time = saved.time
        budgetWindowStart = saved.budgetWindowStart
        budgetUsed = saved.budgetUsed
    }

    /// A message a channel kept, reaching a device that subscribed after it was sent: from storage, as far as the
    /// device's state lets it (and never once its time ran out).
    mutating func acceptKept(_ kept: DeliveryRecord, at now: Int64, reporting: Bool = false) -> Activity {
        var activity = advance(to: now, reporting: reporting)
        var record = kept
        guard (record.expiresAt ?? .min) > time else { return activity }
        activity.note(record, .received)
        switch judge(record, at: time, fromStorage: true, released: true) {
        case .deliver:
            finish(&record, .deliveredFromStorage, at: time, &activity)
        case .discard(let outcome):
            finish(&record, outcome, at: time, &activity)
        case .store(let storage, let releaseAt):
            makeRoom(for: record, at: time, &activity)
            record.events.append(DeliveryEvent(storage, at: time))
            activity.note(record, storage)
            stored.append(StoredPush(record: record, releaseAt: releaseAt))
        }
        return activity
    }

    /// The log of the push with this `apns-unique-id` or `apns-id`, stored or finished.
    func record(id: String) -> DeliveryRecord? {
        if let push = stored.last(where: { $0.record.uniqueID == id || $0.record.apnsID == id }) { return push.record }
        return finished.last(where: { $0.uniqueID == id || $0.apnsID == id })
    }

    /// What reached the device, in the order it arrived.
    var received: [DeliveryRecord] { finished.filter { $0.state.isDelivery } }

    /// Every log the device keeps: finished ones in the order they ended, then the stored ones.
    var records: [DeliveryRecord] { Array(finished) + stored.map(\.record) }

    // MARK: Rules

    /// Where a push goes now, given the device's state: `fromStorage` for one that waited, `released` for one whose
    /// burst or budget window came.
    private mutating func judge(_ record: DeliveryRecord, at now: Int64, fromStorage: Bool, released: Bool) -> Verdict {
        switch state {
        case .appRemoved:
            return .discard(fromStorage ? .discardedUnregisteredFromStorage : .discardedUnregistered)
        case .offline:
            return .store(.storedOffline, releaseAt: nil)
        case .notificationsDisabled where record.isAlert:
            return .discard(fromStorage ? .discardedDisabledFromStorage : .discardedDisabled)
        case .lowPower where record.priority < 10:
            return .store(.storedPower, releaseAt: nil)
        case .online, .lowPower, .notificationsDisabled:
            break
        }
        if record.priority <= 1, !released {
            let interval = policy.lowPriorityInterval
            return .store(.storedPower, releaseAt: (now / interval + 1) * interval)
        }
        if record.isBackground, let budget = policy.backgroundBudget {
            if budgetWindowStart.map({ now >= $0 + DeliveryPolicy.day }) ?? true {
                budgetWindowStart = now
                budgetUsed = 0
            }
            guard budgetUsed < budget else { return .store(.storedPower, releaseAt: budgetWindowStart! + DeliveryPolicy.day) }
            budgetUsed += 1
        }
        return .deliver
    }

    private mutating func enter(_ newState: DeviceState, at now: Int64, _ activity: inout Activity) {
        // An app removed stays removed: its token is dead, and a reinstalled app gets another.
        guard newState != state, state != .appRemoved else { return }
        state = newState
        // Offline keeps what is stored as it is; any other state looks again at what waits for the device (not at
        // what waits for a time: a burst, a budget window).
        guard newState != .offline else { return }
        release(at: now, released: false, &activity) { push in push.releaseAt.map { $0 <= now } ?? true }
    }

    /// Judges again the stored pushes `due` picks, in order: delivered or discarded ones leave storage.
    private mutating func release(at now: Int64, released: Bool, _ activity: inout Activity, _ due: (StoredPush) -> Bool) {
        var keep: [StoredPush] = []
        for var push in stored {
            guard due(push) else {
                keep.append(push)
                continue
            }
            switch judge(push.record, at: now, fromStorage: true, released: released) {
            case .deliver:
                finish(&push.record, .deliveredFromStorage, at: now, &activity)
            case .discard(let outcome):
                finish(&push.record, outcome, at: now, &activity)
            case .store(let storage, let releaseAt):
                if push.record.state != storage {
                    push.record.events.append(DeliveryEvent(storage, at: now))
                    activity.note(push.record, storage)
                }
                // Never again at this instant: a window that ends now opens the next one.
                push.releaseAt = releaseAt.map { max($0, now + 1) }
                keep.append(push)
            }
        }
        stored = keep
    }

    /// Stored pushes whose time ran out go, at that time.
    private mutating func expire(at now: Int64, _ activity: inout Activity) {
        guard stored.contains(where: { ($0.record.expiresAt ?? .max) <= now }) else { return }
        var keep: [StoredPush] = []
        for var push in stored {
            if let expiresAt = push.record.expiresAt, expiresAt <= now {
                finish(&push.record, .discardedExpired, at: expiresAt, &activity)
            } else {
                keep.append(push)
            }
        }
        stored = keep
    }

    /// One stored push per app (the policy's count): one with the same `apns-collapse-id` goes first, then the
    /// oldest.
    private mutating func makeRoom(for record: DeliveryRecord, at now: Int64, _ activity: inout Activity) {
        // A channel's message replaces the one before it from that channel, apart from the app's own pushes.
        if let channelID = record.channelID {
            if let index = stored.firstIndex(where: { $0.record.channelID == channelID }) {
                var replaced = stored.remove(at: index)
                finish(&replaced.record, .discardedCoalesced, at: now, &activity)
            }
            return
        }
        if let collapseID = record.collapseID, let index = stored.firstIndex(where: { $0.record.channelID == nil && $0.record.collapseID == collapseID }) {
            var replaced = stored.remove(at: index)
            finish(&replaced.record, .discardedCoalesced, at: now, &activity)
        }
        while stored.filter({ $0.record.channelID == nil }).count >= policy.storedPerApp,
            let oldest = stored.firstIndex(where: { $0.record.channelID == nil })
        {
            var replaced = stored.remove(at: oldest)
            finish(&replaced.record, .discardedCoalesced, at: now, &activity)
        }
    }

    private mutating func finish(_ record: inout DeliveryRecord, _ outcome: DeliveryState, at time: Int64, _ activity: inout Activity) {
        record.events.append(DeliveryEvent(outcome, at: time))
        activity.note(record, outcome)
        activity.finished.append(record)
        finished.append(record)
        if finished.count > policy.recordsPerDevice { finished.removeFirst() }
    }

    /// Lets the oldest finished logs go until at most `limit` are kept.
    mutating func keepFinished(atMost limit: Int) {
        if finished.count > limit { finished.removeFirst(finished.count - max(0, limit)) }
    }

    /// When time alone next changes something (an expiry, a release, a scheduled change), on the mock's clock.
    func nextEventTime() -> Int64? {
        var next = timeline.first?.at
        for push in stored {
            if let expiresAt = push.record.expiresAt { next = min(next ?? expiresAt, expiresAt) }
            if state.isConnected, let releaseAt = push.releaseAt { next = min(next ?? releaseAt, releaseAt) }
        }
        return next
    }
}

/// One data point counted by the metrics: `apns_mock_delivery_total{state, push_type, priority}`.
package struct DeliveryTally: Sendable, Hashable {
    package var state: DeliveryState
    package var pushType: String
    package var priority: Int

    init(_ record: DeliveryRecord, _ state: DeliveryState) {
        self.state = state
        self.pushType = record.pushType
        self.priority = record.priority
    }
}
