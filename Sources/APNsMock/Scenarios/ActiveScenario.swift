import Synchronization

/// The scenario in force, replaceable at run time (`PUT /admin/scenario`) while event loops read it.
///
/// Replacing keeps the device registry, so devices added through the admin API survive a new scenario.
public final class ActiveScenario: Sendable {
    private let engine: Mutex<ScenarioEngine>
    private let now: @Sendable () -> Int64

    public init(_ scenario: Scenario = .empty, now: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.now = now
        self.engine = Mutex(ScenarioEngine(scenario: scenario, now: now))
    }

    public var current: ScenarioEngine { engine.withLock { $0 } }

    /// Puts `scenario` in force from now on, starting its clock, counters and sequences afresh.
    public func replace(with scenario: Scenario) {
        engine.withLock { engine in
            engine = ScenarioEngine(scenario: scenario, now: now, devices: engine.devices, generation: engine.generation &+ 1)
        }
    }
}
