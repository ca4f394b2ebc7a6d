import Synchronization

/// The scenario in force, replaceable at run time (`PUT /admin/scenario`) while event loops read it.
///
/// The device registry outlives scenarios, but a scenario's declared devices belong to it: replacing (or deleting)
/// a scenario takes its devices away and puts the new one's in, while devices added through the admin API stay.
/// So one test's devices never leak into the next one's.
public final class ActiveScenario: Sendable {
    private let engine: Mutex<ScenarioEngine>
    private let now: @Sendable () -> Int64

    /// - Parameter channels: the broadcast channel registry (its limit is the caller's to choose).
    public init(_ scenario: Scenario = .empty, now: @escaping @Sendable () -> Int64 = WallClock.milliseconds, channels: ChannelRegistry = ChannelRegistry()) {
        self.now = now
        self.channels = channels
        self.engine = Mutex(ScenarioEngine(scenario: scenario, now: now, channels: channels))
    }

    /// Broadcast channels: outlive scenarios like devices; a scenario's declared ones go with it.
    public let channels: ChannelRegistry

    public var current: ScenarioEngine { engine.withLock { $0 } }

    /// Puts `scenario` in force from now on, starting its clock, counters and sequences afresh; the previous
    /// scenario's declared devices go, the new one's come in.
    public func replace(with scenario: Scenario) {
        engine.withLock { engine in
            engine.devices.removeAll(origin: .scenario)
            engine.channels.removeAll(origin: .scenario)
            engine = ScenarioEngine(scenario: scenario, now: now, devices: engine.devices, channels: engine.channels, generation: engine.generation &+ 1)
        }
    }

    /// No scenario and no devices at all: the start state (`POST /admin/reset`).
    public func resetToStart() {
        engine.withLock { engine in
            engine.devices.removeAll()
            engine.channels.removeAll()
            engine = ScenarioEngine(scenario: .empty, now: now, devices: engine.devices, channels: engine.channels, generation: engine.generation &+ 1)
        }
    }
}
