import Foundation
import Synchronization

/// The devices the mock knows, shared by every connection (and the admin API): which token belongs to which
/// topic and environment, and which were unregistered and since when. Tokens are compared case-insensitively.
///
/// Each is also a simulated device (``SimulatedDevice``): online or not, what is stored for it, and the delivery
/// log of every push APNs accepted for it, on the mock's ``clock``. A device is brought up to the clock's time
/// whenever it is read or pushed to, so nothing runs in the background.
package final class DeviceRegistry: Sendable {
    /// Who put a device in the registry: its owner decides when it goes.
    package enum Origin: String, Sendable, Equatable, Codable {
        /// Declared by the scenario in force: goes when that scenario is replaced or deleted.
        case scenario
        /// Added through the admin API (or code): stays until removed, or until `POST /admin/reset`.
        case admin
    }

    /// A class: the provider port's check of every push reads an entry in place, where a value was copied out of
    /// the dictionary (its device, strings and logs retained) under the lock every event loop takes.
    private final class Entry {
        var device: Device
        var origin: Origin
        /// Lower case, for topic checks without allocating.
        var topic: String
        /// Insertion order, so `list()` is stable.
        var order: UInt64
        var simulation: SimulatedDevice

        init(device: Device, origin: Origin, topic: String, order: UInt64, simulation: SimulatedDevice) {
            self.device = device
            self.origin = origin
            self.topic = topic
            self.order = order
            self.simulation = simulation
        }
    }

    private struct Waiter {
        var key: String
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextOrder: UInt64 = 0
        /// Data points of every delivery log since start (`apns_mock_delivery_total`).
        var tallies: [DeliveryTally: Int] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        /// Waiters woken before they were registered.
        var firedWaiters: Set<UInt64> = []
        /// Each channel's most recent message, for devices that subscribe later (storage policy 1 only).
        var keptMessages: [String: DeliveryRecord] = [:]
        /// The settings devices added from now on follow: the scenario's (`delivery:`), or ``basePolicy``.
        var policy: DeliveryPolicy
        /// The sinks given each data point as it happens (``reportDeliveries(to:)``).
        var deliverySinks: [any RecordingSink] = []
        /// Some sink wants data points now: the devices' activities then carry their logs.
        var reporting: Bool { deliverySinks.contains { $0.wantsDeliveries } }
    }

    /// The time the device model reads.
    package let clock: MockClock
    /// The store-and-forward settings of the command line.
    package let basePolicy: DeliveryPolicy
    /// The settings devices added from now on follow (a device keeps those it was added with).
    package var policy: DeliveryPolicy { state.withLock { $0.policy } }
    /// The broadcast channels, for their storage policy.
    package let channels: ChannelRegistry?

    private let state: Mutex<State>
    /// Goes up with every change (a device, a state, a log), so a saver knows when there is something to save.
    private let revisionCounter = Atomic<UInt64>(0)
    package var revision: UInt64 { revisionCounter.load(ordering: .relaxed) }
    private func changed() { revisionCounter.add(1, ordering: .relaxed) }
    /// Mirrors `entries.count` so the hot path skips the lock and the token's normalisation when no device is registered.
    private let size = Atomic<Int>(0)
    /// A bit per value of a registered token's last two hex digits (of 64), so that nearly every push to a token
    /// nobody registered is known as such from its path's bytes: no `String` made, no lock taken. Set when a device
    /// is added, worked out again when devices are forgotten together; a device removed alone leaves its bit,
    /// which costs a look-up, never a wrong answer.
    private let tokenBits = Atomic<UInt64>(0)

    /// The token's bit in `tokenBits`; every bit for a token that does not end in two hex digits.
    static func tokenBit<Token: BidirectionalCollection<UInt8>>(_ token: Token) -> UInt64 {
        guard let last = token.last, let high = token.dropLast().last, let low = Hex.value(of: last), let high = Hex.value(of: high) else {
            return .max
        }
        return 1 << ((high << 4 | low) & 63)
    }

    /// Whether the request's token may be a registered device's: `false` for a push the registry surely does not
    /// know (checked from the path's bytes), or for a path that is not a device push's.
    package func mayKnow(tokenOf request: APNsRequest) -> Bool {
        if size.load(ordering: .relaxed) == 0 { return false }
        let bits = tokenBits.load(ordering: .relaxed)
        return request.withPath { path in APNsPath.tokenBytes(in: path).map { bits & Self.tokenBit($0) != 0 } ?? false }
    }

    /// `tokenBits` for what is registered now. With the lock held.
    private func recomputeTokenBits(_ state: State) {
        tokenBits.store(state.entries.keys.reduce(0) { $0 | Self.tokenBit($1.utf8) }, ordering: .relaxed)
    }

    /// Changes made at run time (not a scenario's devices), for replicas sharing a store.
    package let changes = SharedStateObserver()

    package init(_ devices: [Device] = [], clock: MockClock = MockClock(), policy: DeliveryPolicy = DeliveryPolicy(), channels: ChannelRegistry? = nil) {
        self.clock = clock
        self.basePolicy = policy
        self.state = Mutex(State(policy: policy))
        self.channels = channels
        for device in devices { add(device) }
    }

    /// The settings devices added from now on follow: a scenario's `delivery:` over the command line's, or (`nil`)
    /// the command line's.
    package func use(_ delivery: ScenarioDelivery?) {
        let policy = delivery?.applied(to: basePolicy) ?? basePolicy
        state.withLock { $0.policy = policy }
    }

    /// Adds a device, or replaces the one with the same token (keeping its place in the list; the device then
    /// belongs to `origin`).
    package func add(_ device: Device, origin: Origin = .admin) {
        put(device, origin: origin)
        if origin == .admin { changes.report(.devicePut(device)) }
    }

    /// `add` without reporting; `origin` `nil` (another replica's change) keeps an existing device's origin and its
    /// simulation, changing only its registration and state.
    private func put(_ device: Device, origin: Origin?) {
        let key = Device.normalizedToken(device.token)
        let topic = device.topic.lowercased()
        let now = clock.now()
        let simulation = SimulatedDevice(state: device.state, timeline: device.timeline(), at: now, policy: self.policy)
        var device = device
        device.state = simulation.state
        state.withLock { state in
            if let entry = state.entries[key], origin == nil {
                // Another replica's change to a device this one has: its registration and state, while what this
                // replica's simulation stored and logged for it stays.
                let activity = entry.simulation.change(to: device.state, at: now, reporting: state.reporting)
                device.state = entry.simulation.state
                entry.device = device
                entry.topic = topic
                self.account(activity, key: key, in: &state)
            } else if let existing = state.entries[key] {
                state.entries[key] = Entry(
                    device: device, origin: origin ?? existing.origin, topic: topic, order: existing.order, simulation: simulation
                )
            } else {
                let origin = origin ?? .admin
                state.entries[key] = Entry(device: device, origin: origin, topic: topic, order: state.nextOrder, simulation: simulation)
                state.nextOrder += 1
            }
            // Before the count, so a push that sees the device counted also sees its bit.
            tokenBits.bitwiseOr(Self.tokenBit(key.utf8), ordering: .relaxed)
            size.store(state.entries.count, ordering: .relaxed)
        }
        changed()
    }

    /// Marks a device unregistered from `time` (milliseconds since the epoch); returns it, or `nil` when the token
    /// is unknown.
    @discardableResult
    package func unregister(token: String, at time: Int64) -> Device? {
        let key = Device.normalizedToken(token)
        let now = clock.now()
        let device = state.withLock { state -> Device? in
            guard let entry = state.entries[key] else { return nil }
            entry.device.unregisteredAt = time
            var activity = entry.simulation.advance(to: now, reporting: state.reporting)
            if time <= now {
                activity.merge(entry.simulation.change(to: .appRemoved, at: now, reporting: state.reporting))
            } else {
                entry.simulation.schedule(entry.device.timeline())
            }
            entry.device.state = entry.simulation.state
            self.account(activity, key: key, in: &state)
            return entry.device
        }
        if let device { changes.report(.devicePut(device)) }
        changed()
        return device
    }

    /// Forgets a device; returns it, or `nil` when the token is unknown.
    @discardableResult
    package func remove(token: String) -> Device? {
        let removed = forget(token: token)
        if let removed { changes.report(.deviceRemoved(token: removed.token)) }
        return removed
    }

    private func forget(token: String) -> Device? {
        let key = Device.normalizedToken(token)
        defer { changed() }
        return state.withLock { state in
            defer { size.store(state.entries.count, ordering: .relaxed) }
            return state.entries.removeValue(forKey: key)?.device
        }
    }

    /// Forgets the devices `origin` put here (a scenario's, when it is replaced).
    package func removeAll(origin: Origin) {
        defer { changed() }
        state.withLock { state in
            state.entries = state.entries.filter { $0.value.origin != origin }
            recomputeTokenBits(state)
            size.store(state.entries.count, ordering: .relaxed)
        }
    }

    package func removeAll() {
        forgetAll()
        changes.report(.devicesCleared)
    }

    private func forgetAll() {
        defer { changed() }
        state.withLock { state in
            state.entries.removeAll()
            state.keptMessages.removeAll()
            size.store(0, ordering: .relaxed)
            tokenBits.store(0, ordering: .relaxed)
        }
    }

    /// Applies a change another replica made, without reporting it again; other changes are ignored.
    package func apply(_ change: SharedStateChange) {
        switch change {
        case .devicePut(let device): put(device, origin: nil)
        case .deviceRemoved(let token): _ = forget(token: token)
        case .devicesCleared: forgetAll()
        case .channelPut, .channelRemoved, .channelsCleared, .scenario, .tenantScenario, .inTenant: break
        }
    }

    /// Every device, in the order they were first added, brought to the clock's time.
    package func list() -> [Device] {
        let now = clock.now()
        return state.withLock { state in
            for key in Array(state.entries.keys) { self.settle(key, at: now, in: &state) }
            return state.entries.values.sorted { $0.order < $1.order }.map(\.device)
        }
    }

    package func device(token: String) -> Device? {
        let key = Device.normalizedToken(token)
        let now = clock.now()
        return state.withLock { state in
            self.settle(key, at: now, in: &state)
            return state.entries[key]?.device
        }
    }

    package var count: Int { state.withLock { $0.entries.count } }

    /// What APNs would answer for a push to `token`, judged by the registry alone; `nil` for unknown tokens and for
    /// registered tokens pushed correctly.
    ///
    /// In APNs' order: a token from the other environment does not exist there (`400 BadDeviceToken`); then a
    /// topic other than the device's (`400 DeviceTokenNotForTopic`, compared case-insensitively; `nil` skips the
    /// check); then a device unregistered at or before `now` (`410 Unregistered` with that time).
    /// No device registered: `check` would answer `nil` for every token (read without the lock).
    package var isEmpty: Bool { size.load(ordering: .relaxed) == 0 }

    package func check(token: String, topic: String?, environment: APNsEnvironment, now: Int64) -> ScenarioResponse? {
        var known = false
        return check(token: token, topic: topic, environment: environment, now: now, known: &known)
    }

    /// As above; `known` tells whether the token is a registered device's (a push it accepts reaches the device).
    package func check(token: String, topic: String?, environment: APNsEnvironment, now: Int64, known: inout Bool) -> ScenarioResponse? {
        if size.load(ordering: .relaxed) == 0 || tokenBits.load(ordering: .relaxed) & Self.tokenBit(token.utf8) == 0 { return nil }
        let key = Device.normalizedToken(token)
        let requestTopic = topic.map { $0.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? $0.lowercased() : $0 }
        let (answer, found) = state.withLock { state -> (ScenarioResponse?, Bool) in
            guard let entry = state.entries[key] else { return (nil, false) }
            if entry.device.environment != environment {
                return (ScenarioResponse(status: 400, reason: .badDeviceToken), true)
            }
            if let requestTopic, requestTopic != entry.topic {
                return (ScenarioResponse(status: 400, reason: .deviceTokenNotForTopic), true)
            }
            if let time = entry.device.unregisteredAt, time <= now {
                return (ScenarioResponse(status: 410, reason: .unregistered, timestamp: time), true)
            }
            return (nil, true)
        }
        known = found
        return answer
    }

    /// The normalised tokens of the devices `origin` put here.
    package func tokens(origin: Origin) -> [String] {
        state.withLock { state in state.entries.filter { $0.value.origin == origin }.map(\.key) }
    }

    /// Whether `token` is a registered device's.
    package func knows(token: String) -> Bool {
        if size.load(ordering: .relaxed) == 0 { return false }
        let key = Device.normalizedToken(token)
        return state.withLock { $0.entries[key] != nil }
    }
}

// MARK: The simulated devices

extension DeviceRegistry {
    /// Changes a device's state now (on the mock's clock); returns it, or `nil` when the token is unknown.
    /// `appRemoved` also unregisters it from now on (410 with this time). An app removed stays removed: register
    /// the device again to start over.
    package func setState(token: String, to newState: DeviceState) throws(DeviceStateRefused) -> Device? {
        let key = Device.normalizedToken(token)
        let now = clock.now()
        let device = try state.withLock { state throws(DeviceStateRefused) -> Device? in
            guard let entry = state.entries[key] else { return nil }
            var activity = entry.simulation.advance(to: now, reporting: state.reporting)
            if entry.simulation.state == .appRemoved, newState != .appRemoved {
                // What bringing the device to now did stands (the entry is changed in place): it is counted first.
                entry.device.state = entry.simulation.state
                self.account(activity, key: key, in: &state)
                throw DeviceStateRefused(
                    message: "the app was removed from this device, and a token never comes back; register the device again (POST /admin/devices) to start over"
                )
            }
            activity.merge(entry.simulation.change(to: newState, at: now, reporting: state.reporting))
            if newState == .appRemoved, entry.device.unregisteredAt.map({ $0 > now }) ?? true { entry.device.unregisteredAt = now }
            entry.device.state = entry.simulation.state
            self.account(activity, key: key, in: &state)
            return entry.device
        }
        if let device { changes.report(.devicePut(device)) }
        return device
    }

    /// Hands the device model the pushes APNs accepted (200s to a token it knows); others are ignored.
    /// - Parameter offset: the mock clock's offset when they arrived (their `receivedAt` is the wall clock's).
    package func accept(_ recordings: [RecordedNotification]) {
        let offset = clock.offsetMilliseconds
        state.withLock { state in
            for recording in recordings {
                if recording.broadcast != nil {
                    acceptBroadcast(recording, offset: offset, in: &state)
                    continue
                }
                guard let token = recording.deviceToken else { continue }
                let key = Device.normalizedToken(token)
                // The device's own settings: those in force when it was added.
                guard let policy = state.entries[key]?.simulation.policy,
                    let record = DeliveryRecord(accepted: recording, offset: offset, policy: policy)
                else { continue }
                let activity = state.entries[key]!.simulation.accept(record, reporting: state.reporting)
                state.entries[key]!.device.state = state.entries[key]!.simulation.state
                self.account(activity, key: key, in: &state)
            }
        }
    }

    /// A broadcast reaches each device subscribed to its channel; a channel that keeps its messages keeps this one
    /// for devices that subscribe later. With the lock held.
    private func acceptBroadcast(_ recording: RecordedNotification, offset: Int64, in state: inout State) {
        guard let channelID = recording.broadcast?.channelID,
            let template = DeliveryRecord(broadcast: recording, channel: channels?.channel(id: channelID), offset: offset)
        else { return }
        if template.expiresAt != nil { state.keptMessages[channelID] = template } else { state.keptMessages.removeValue(forKey: channelID) }
        for key in Array(state.entries.keys) where state.entries[key]!.device.subscriptions.contains(channelID) {
            var record = template
            record.token = state.entries[key]!.device.token
            let activity = state.entries[key]!.simulation.accept(record, reporting: state.reporting)
            state.entries[key]!.device.state = state.entries[key]!.simulation.state
            self.account(activity, key: key, in: &state)
        }
    }

    /// The device's Live Activities subscribe to a broadcast channel; a message the channel keeps (storage policy
    /// 1, at most 8 hours old) reaches it from storage now. Returns the device, or `nil` for an unknown token.
    package func subscribe(token: String, toChannel channelID: String) throws(DeviceSubscriptionRefused) -> Device? {
        guard channels?.channel(id: channelID) != nil else {
            throw DeviceSubscriptionRefused(message: "no broadcast channel with id \(channelID); make it with POST /admin/channels or on the channel-management port")
        }
        let key = Device.normalizedToken(token)
        let now = clock.now()
        let device = state.withLock { state -> Device? in
            guard let entry = state.entries[key] else { return nil }
            guard !entry.device.subscriptions.contains(channelID) else { return entry.device }
            entry.device.subscriptions.append(channelID)
            var activity = SimulatedDevice.Activity()
            if var kept = state.keptMessages[channelID] {
                kept.token = entry.device.token
                activity = entry.simulation.acceptKept(kept, at: now, reporting: state.reporting)
            }
            entry.device.state = entry.simulation.state
            self.account(activity, key: key, in: &state)
            return entry.device
        }
        if let device { changes.report(.devicePut(device)) }
        changed()
        return device
    }

    /// The device's Live Activities leave a channel; returns the device, or `nil` for an unknown token.
    package func unsubscribe(token: String, fromChannel channelID: String) -> Device? {
        let key = Device.normalizedToken(token)
        let device = state.withLock { state -> Device? in
            guard state.entries[key] != nil else { return nil }
            state.entries[key]!.device.subscriptions.removeAll { $0 == channelID }
            return state.entries[key]!.device
        }
        if let device { changes.report(.devicePut(device)) }
        changed()
        return device
    }

    /// Moves the mock's clock forward by `milliseconds` and brings every device to its new time.
    package func advanceClock(by milliseconds: Int64) throws(ClockChangeRefused) {
        try clock.advance(by: milliseconds)
        settle()
    }

    /// Moves the mock's clock forward to `time` and brings every device to it.
    package func advanceClock(to time: Int64) throws(ClockChangeRefused) {
        try clock.advance(to: time)
        settle()
    }

    /// Brings every device to the clock's time (after the clock moved): what was due is delivered or discarded.
    package func settle() {
        let now = clock.now()
        state.withLock { state in
            for key in Array(state.entries.keys) { self.settle(key, at: now, in: &state) }
        }
        // The clock moved: its offset is saved with the devices.
        changed()
    }

    /// The delivery log of the push with this `apns-unique-id` or `apns-id`, if a simulated device has it (a
    /// broadcast's, the most recently added device's that has it).
    ///
    /// Found by looking through the logs (at most ``DeliveryPolicy/recordsInAll``), not through an index: keeping
    /// an index of two IDs per log cost every push to a device more than every look-up costs together.
    package func delivery(id: String) -> DeliveryRecord? {
        let now = clock.now()
        return state.withLock { state in
            var found: (key: String, order: UInt64)?
            for (key, entry) in state.entries where entry.order >= found?.order ?? 0 && entry.simulation.record(id: id) != nil {
                found = (key, entry.order)
            }
            guard let key = found?.key else { return nil }
            self.settle(key, at: now, in: &state)
            return state.entries[key]?.simulation.record(id: id)
        }
    }

    /// What reached the device, in delivery order; `nil` when the token is unknown.
    package func received(token: String) -> [DeliveryRecord]? {
        simulation(token)?.received
    }

    /// What is stored for the device now, oldest first; `nil` when the token is unknown.
    package func stored(token: String) -> [DeliveryRecord]? {
        simulation(token)?.stored.map(\.record)
    }

    /// Every delivery log the device keeps (finished ones in the order they ended, then the stored ones).
    package func deliveries(token: String) -> [DeliveryRecord]? {
        simulation(token)?.records
    }

    /// The recordings' sequence numbers of the logs whose state now `filter` matches.
    package func sequences(matching filter: DeliveryStateFilter) -> Set<UInt64> {
        let now = clock.now()
        return state.withLock { state in
            var found: Set<UInt64> = []
            for key in Array(state.entries.keys) {
                self.settle(key, at: now, in: &state)
                for record in state.entries[key]!.simulation.records where filter.matches(record.state) {
                    if let sequence = record.sequence, sequence > 0 { found.insert(sequence) }
                }
            }
            return found
        }
    }

    /// Gives `sinks` every data point of every log from now on, as it happens: each as the log was then (its last
    /// event the new one). Only sinks that ``RecordingSink/wantsDeliveries`` are given them, and only while they do.
    package func reportDeliveries(to sinks: [any RecordingSink]) {
        state.withLock { $0.deliverySinks = sinks }
    }

    /// Data points of every delivery log since start, for the metrics.
    package func deliveryCounts() -> [DeliveryTally: Int] {
        state.withLock { $0.tallies }
    }

    /// Returns once `count` pushes have reached the device (also when they did before the call), or `false` after
    /// `timeout` or at once for an unknown token. A delivery that only the clock brings (a scheduled change, a
    /// burst, an expiry) is waited for until its time.
    package func waitForDeliveries(token: String, count: Int, timeout: Duration) async -> Bool {
        let key = Device.normalizedToken(token)
        let deadline = ContinuousClock.now + timeout
        while !Task.isCancelled {
            let now = clock.now()
            let (id, found, nextEvent) = state.withLock { state -> (UInt64, Bool, Int64?) in
                defer { state.nextWaiterID += 1 }
                self.settle(key, at: now, in: &state)
                return (state.nextWaiterID, state.entries[key] != nil, state.entries[key]?.simulation.nextEventTime())
            }
            guard found else { return false }
            var wake = deadline
            if let nextEvent { wake = min(wake, ContinuousClock.now + .milliseconds(max(1, nextEvent - now))) }
            let timer = Task {
                try? await Task.sleep(until: wake, clock: .continuous)
                self.wake(waiter: id)
            }
            let enough = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    // Looked at and registered under one lock, so a delivery in between is not missed.
                    let immediate: Bool? = state.withLock { state in
                        if let entry = state.entries[key], entry.simulation.received.count >= count { return true }
                        if state.firedWaiters.remove(id) != nil { return false }
                        state.waiters[id] = Waiter(key: key, continuation: continuation)
                        return nil
                    }
                    if let immediate { continuation.resume(returning: immediate) }
                }
            } onCancel: {
                self.wake(waiter: id)
            }
            timer.cancel()
            state.withLock { _ = $0.firedWaiters.remove(id) }
            if enough { return true }
            if ContinuousClock.now >= deadline { return false }
        }
        return false
    }

    /// Waits in progress (for tests that must know a waiter is registered before they act).
    var waiterCount: Int { state.withLock { $0.waiters.count } }

    /// Wakes a waiter to look again; one not registered yet finds out when it registers.
    private func wake(waiter id: UInt64) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter.continuation }
            state.firedWaiters.insert(id)
            return nil
        }
        continuation?.resume(returning: false)
    }

    /// Brings one device to `now`, with the lock held.
    private func settle(_ key: String, at now: Int64, in state: inout State) {
        guard state.entries[key] != nil else { return }
        let activity = state.entries[key]!.simulation.advance(to: now, reporting: state.reporting)
        state.entries[key]!.device.state = state.entries[key]!.simulation.state
        self.account(activity, key: key, in: &state)
    }

    /// Counts what an event did, tells the sinks that want them its data points, keeps the device within its share
    /// of the logs, and wakes who waits for the device.
    private func account(_ activity: SimulatedDevice.Activity, key: String, in state: inout State) {
        if !activity.finished.isEmpty {
            // The device's share of the logs kept in all (see `DeliveryPolicy.recordsInAll`).
            let share = max(1, basePolicy.recordsInAll / max(1, state.entries.count))
            if share < state.entries[key]?.simulation.policy.recordsPerDevice ?? 0 {
                state.entries[key]!.simulation.keepFinished(atMost: share)
            }
        }
        if !activity.events.isEmpty { changed() }
        for tally in activity.events { state.tallies[tally, default: 0] += 1 }
        if let notices = activity.notices, !notices.isEmpty {
            // With the lock held, so data points reach the sinks in the order they happened; the sinks only queue.
            for sink in state.deliverySinks where sink.wantsDeliveries { sink.enqueue(deliveries: notices) }
        }
        guard !activity.finished.isEmpty, !state.waiters.isEmpty else { return }
        // Woken to look again (resuming only schedules the waiting task).
        for (id, waiter) in state.waiters where waiter.key == key {
            state.waiters.removeValue(forKey: id)
            waiter.continuation.resume(returning: false)
        }
    }

    /// The device's simulation, brought to the clock's time (a copy: its logs are shared until changed).
    private func simulation(_ token: String) -> SimulatedDevice? {
        let key = Device.normalizedToken(token)
        let now = clock.now()
        return state.withLock { state in
            self.settle(key, at: now, in: &state)
            return state.entries[key]?.simulation
        }
    }
}

/// A subscription the device model refuses, with why.
package struct DeviceSubscriptionRefused: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// A change of state the device model refuses, with why.
package struct DeviceStateRefused: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

// MARK: Saving and restoring

extension DeviceRegistry {
    /// Every device as a restart finds it again: its registration, its simulation (state, what is stored, its logs),
    /// and the clock's offset.
    struct Snapshot: Codable {
        struct Saved: Codable {
            var device: Device
            var origin: Origin
            var simulation: SimulatedDevice.Saved
        }

        var version = 1
        var clockOffset: Int64
        var devices: [Saved]
        var keptMessages: [String: DeliveryRecord]?
    }

    /// The registry as JSON (for a durable store to keep).
    package func snapshot() -> [UInt8] {
        let now = clock.now()
        let snapshot = state.withLock { state -> Snapshot in
            for key in Array(state.entries.keys) { self.settle(key, at: now, in: &state) }
            let entries = state.entries.values.sorted { $0.order < $1.order }
            return Snapshot(
                clockOffset: clock.offsetMilliseconds,
                devices: entries.map { Snapshot.Saved(device: $0.device, origin: $0.origin, simulation: $0.simulation.saved) },
                keptMessages: state.keptMessages
            )
        }
        return (try? Array(JSONEncoder().encode(snapshot))) ?? []
    }

    /// Puts back the devices of `snapshot()` (replacing those with the same token) and the clock's offset; the
    /// logs find their recordings again among `recordings`. Returns how many devices came back.
    package func restore(_ bytes: [UInt8], recordings: SavedRecordings) throws(DeviceSnapshotUnreadable) -> Int {
        let snapshot: Snapshot
        do {
            snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(bytes))
        } catch {
            throw DeviceSnapshotUnreadable(reason: "\(error)")
        }
        clock.reset()
        try? clock.advance(by: snapshot.clockOffset)
        state.withLock { state in
            for saved in snapshot.devices {
                let key = Device.normalizedToken(saved.device.token)
                let simulation = SimulatedDevice(saved: saved.simulation, policy: state.policy, recordings: recordings)
                let order = state.entries[key]?.order ?? state.nextOrder
                if state.entries[key] == nil { state.nextOrder += 1 }
                state.entries[key] = Entry(device: saved.device, origin: saved.origin, topic: saved.device.topic.lowercased(), order: order, simulation: simulation)
            }
            for (channelID, message) in snapshot.keptMessages ?? [:] {
                var message = message
                recordings.relink(&message)
                state.keptMessages[channelID] = message
            }
            recomputeTokenBits(state)
            size.store(state.entries.count, ordering: .relaxed)
        }
        changed()
        return snapshot.devices.count
    }
}

/// A saved device snapshot that cannot be read back, with why.
package struct DeviceSnapshotUnreadable: Error, Sendable, CustomStringConvertible {
    package var reason: String
    package var description: String { "the saved device states cannot be read: \(reason)" }
}
