import Synchronization

/// The devices the mock knows, shared by every connection (and the admin API): which token belongs to which
/// topic and environment, and which were unregistered and since when. Tokens are compared case-insensitively.
public final class DeviceRegistry: Sendable {
    /// Who put a device in the registry: its owner decides when it goes.
    public enum Origin: Sendable, Equatable {
        /// Declared by the scenario in force: goes when that scenario is replaced or deleted.
        case scenario
        /// Added through the admin API (or code): stays until removed, or until `POST /admin/reset`.
        case admin
    }

    private struct Entry {
        var device: Device
        var origin: Origin
        /// Lower case, for topic checks without allocating.
        var topic: String
        /// Insertion order, so `list()` is stable.
        var order: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextOrder: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Mirrors `entries.count` so the hot path skips the lock and the token's normalisation when no device is registered.
    private let size = Atomic<Int>(0)

    /// Changes made at run time (not a scenario's devices), for replicas sharing a store.
    public let changes = SharedStateObserver()

    public init(_ devices: [Device] = []) {
        for device in devices { add(device) }
    }

    /// Adds a device, or replaces the one with the same token (keeping its place in the list; the device then
    /// belongs to `origin`).
    public func add(_ device: Device, origin: Origin = .admin) {
        put(device, origin: origin)
        if origin == .admin { changes.report(.devicePut(device)) }
    }

    /// `add` without reporting; `origin` `nil` keeps an existing device's.
    private func put(_ device: Device, origin: Origin?) {
        let key = Device.normalizedToken(device.token)
        let topic = device.topic.lowercased()
        state.withLock { state in
            if let existing = state.entries[key] {
                state.entries[key] = Entry(device: device, origin: origin ?? existing.origin, topic: topic, order: existing.order)
            } else {
                let origin = origin ?? .admin
                state.entries[key] = Entry(device: device, origin: origin, topic: topic, order: state.nextOrder)
                state.nextOrder += 1
            }
            size.store(state.entries.count, ordering: .relaxed)
        }
    }

    /// Marks a device unregistered from `time` (milliseconds since the epoch); returns it, or `nil` when the token
    /// is unknown.
    @discardableResult
    public func unregister(token: String, at time: Int64) -> Device? {
        let key = Device.normalizedToken(token)
        let device = state.withLock { state -> Device? in
            guard state.entries[key] != nil else { return nil }
            state.entries[key]!.device.unregisteredAt = time
            return state.entries[key]!.device
        }
        if let device { changes.report(.devicePut(device)) }
        return device
    }

    /// Forgets a device; returns it, or `nil` when the token is unknown.
    @discardableResult
    public func remove(token: String) -> Device? {
        let removed = forget(token: token)
        if let removed { changes.report(.deviceRemoved(token: removed.token)) }
        return removed
    }

    private func forget(token: String) -> Device? {
        let key = Device.normalizedToken(token)
        return state.withLock { state in
            defer { size.store(state.entries.count, ordering: .relaxed) }
            return state.entries.removeValue(forKey: key)?.device
        }
    }

    /// Forgets the devices `origin` put here (a scenario's, when it is replaced).
    public func removeAll(origin: Origin) {
        state.withLock { state in
            state.entries = state.entries.filter { $0.value.origin != origin }
            size.store(state.entries.count, ordering: .relaxed)
        }
    }

    public func removeAll() {
        forgetAll()
        changes.report(.devicesCleared)
    }

    private func forgetAll() {
        state.withLock { state in
            state.entries.removeAll()
            size.store(0, ordering: .relaxed)
        }
    }

    /// Applies a change another replica made, without reporting it again; other changes are ignored.
    public func apply(_ change: SharedStateChange) {
        switch change {
        case .devicePut(let device): put(device, origin: nil)
        case .deviceRemoved(let token): _ = forget(token: token)
        case .devicesCleared: forgetAll()
        case .channelPut, .channelRemoved, .channelsCleared, .scenario: break
        }
    }

    /// Every device, in the order they were first added.
    public func list() -> [Device] {
        state.withLock { state in
            state.entries.values.sorted { $0.order < $1.order }.map(\.device)
        }
    }

    public func device(token: String) -> Device? {
        let key = Device.normalizedToken(token)
        return state.withLock { $0.entries[key]?.device }
    }

    public var count: Int { state.withLock { $0.entries.count } }

    /// What APNs would answer for a push to `token`, judged by the registry alone; `nil` for unknown tokens and for
    /// registered tokens pushed correctly.
    ///
    /// In APNs' order: a token from the other environment does not exist there (`400 BadDeviceToken`); then a
    /// topic other than the device's (`400 DeviceTokenNotForTopic`, compared case-insensitively; `nil` skips the
    /// check); then a device unregistered at or before `now` (`410 Unregistered` with that time).
    /// No device registered: `check` would answer `nil` for every token (read without the lock).
    public var isEmpty: Bool { size.load(ordering: .relaxed) == 0 }

    public func check(token: String, topic: String?, environment: APNsEnvironment, now: Int64) -> ScenarioResponse? {
        if size.load(ordering: .relaxed) == 0 { return nil }
        let key = Device.normalizedToken(token)
        let requestTopic = topic.map { $0.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) ? $0.lowercased() : $0 }
        return state.withLock { state -> ScenarioResponse? in
            guard let entry = state.entries[key] else { return nil }
            if entry.device.environment != environment {
                return ScenarioResponse(status: 400, reason: .badDeviceToken)
            }
            if let requestTopic, requestTopic != entry.topic {
                return ScenarioResponse(status: 400, reason: .deviceTokenNotForTopic)
            }
            if let time = entry.device.unregisteredAt, time <= now {
                return ScenarioResponse(status: 410, reason: .unregistered, timestamp: time)
            }
            return nil
        }
    }
}
