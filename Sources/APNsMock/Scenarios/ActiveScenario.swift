import Synchronization

/// The scenario in force, replaceable at run time (`PUT /admin/scenario`) while event loops read it.
///
/// The device registry outlives scenarios, but a scenario's declared devices belong to it: replacing (or deleting)
/// a scenario takes its devices away and puts the new one's in, while devices added through the admin API stay.
/// So one test's devices never leak into the next one's.
public final class ActiveScenario: Sendable {
    private let engine: Mutex<ScenarioEngine>
    private let now: @Sendable () -> Int64

    public init(_ scenario: Scenario = .empty, now: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.now = now
        self.engine = Mutex(ScenarioEngine(scenario: scenario, now: now))
    }

    public var current: ScenarioEngine { engine.withLock { $0 } }

    /// Puts `scenario` in force from now on, starting its clock, counters and sequences afresh; the previous
    /// scenario's declared devices go, the new one's come in.
    public func replace(with scenario: Scenario) {
        engine.withLock { engine in
            engine.devices.removeAll(origin: .scenario)
            engine = ScenarioEngine(scenario: scenario, now: now, devices: engine.devices, generation: engine.generation &+ 1)
        }
    }

    /// No scenario and no devices at all: the start state (`POST /admin/reset`).
    public func resetToStart() {
        engine.withLock { engine in
            engine.devices.removeAll()
            engine = ScenarioEngine(scenario: .empty, now: now, devices: engine.devices, generation: engine.generation &+ 1)
        }
    }
}
