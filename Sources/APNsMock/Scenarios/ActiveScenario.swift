import Synchronization

/// The scenario in force, replaceable at run time (`PUT /admin/scenario`) while event loops read it.
///
/// The device registry outlives scenarios, but a scenario's declared devices belong to it: replacing (or deleting)
/// a scenario takes its devices away and puts the new one's in, while devices added through the admin API stay.
/// So one test's devices never leak into the next one's.
package final class ActiveScenario: Sendable {
    private let engine: Mutex<ScenarioEngine>
    private let now: @Sendable () -> Int64
    private let versionNumber = Mutex<UInt64>(0)
    /// Scenarios put in force here, for replicas sharing a store (those applied from another replica are not).
    package let changes = SharedStateObserver()

    /// Goes up by one with each scenario put in force (and each reset); replicas sharing a store agree on it.
    package var version: UInt64 { versionNumber.withLock { $0 } }

    /// - Parameters:
    ///   - now: the wall clock (injectable for tests); the mock's clock is made from it unless `clock` is given.
    ///   - clock: the mock's clock, which scenarios and devices read.
    ///   - channels: the broadcast channel registry (its limit is the caller's to choose).
    ///   - delivery: the simulated devices' store-and-forward settings.
    package init(
        _ scenario: Scenario = .empty,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        clock: MockClock? = nil,
        channels: ChannelRegistry = ChannelRegistry(),
        delivery: DeliveryPolicy = DeliveryPolicy()
    ) {
        let clock = clock ?? MockClock(wall: now)
        self.clock = clock
        self.now = { clock.now() }
        self.channels = channels
        self.devices = DeviceRegistry(clock: clock, policy: delivery, channels: channels)
        devices.use(scenario.delivery)
        self.engine = Mutex(ScenarioEngine(scenario: scenario, now: self.now, devices: devices, channels: channels))
    }

    /// The mock's clock: the wall clock moved by what tests asked (`POST /admin/clock`).
    package let clock: MockClock
    /// The devices, simulated: they outlive scenarios; a scenario's declared ones go with it.
    package let devices: DeviceRegistry

    /// Broadcast channels: outlive scenarios like devices; a scenario's declared ones go with it.
    package let channels: ChannelRegistry

    package var current: ScenarioEngine { engine.withLock { $0 } }

    /// The generation of the engine in force (``ScenarioEngine/generation``), read without the lock: a
    /// connection keeps the engine it got from ``current`` while this is still its generation. Taking the lock
    /// and retaining the engine for every request wrote to two cache lines that every event loop shares.
    package var generation: UInt64 { installedGeneration.load(ordering: .acquiring) }
    private let installedGeneration = Atomic<UInt64>(0)

    /// Puts `scenario` in force from now on, starting its clock, counters and sequences afresh; the previous
    /// scenario's declared devices go, the new one's come in.
    package func replace(with scenario: Scenario) {
        let version = install(scenario)
        changes.report(.scenario(source: scenario.sourceText ?? "", version: version))
    }

    /// Puts a scenario another replica put in force, at its version, without reporting it again.
    package func apply(_ scenario: Scenario, version: UInt64) {
        _ = install(scenario, version: version)
    }

    /// Takes the version the shared store gave a scenario put in force here (never going back).
    package func adopt(version: UInt64) {
        versionNumber.withLock { $0 = max($0, version) }
    }

    private func install(_ scenario: Scenario, version: UInt64? = nil) -> UInt64 {
        let installed = versionNumber.withLock { current in
            current = version ?? current + 1
            return current
        }
        engine.withLock { engine in
            engine.devices.removeAll(origin: .scenario)
            engine.channels.removeAll(origin: .scenario)
            // Before the new engine adds the scenario's devices: they follow its `delivery:`.
            engine.devices.use(scenario.delivery)
            engine = ScenarioEngine(scenario: scenario, now: now, devices: engine.devices, channels: engine.channels, generation: engine.generation &+ 1)
            installedGeneration.store(engine.generation, ordering: .releasing)
        }
        return installed
    }

    /// `GET /admin/scenario`'s object: the engine's snapshot and the version.
    package func snapshotObject() -> [String: Any] {
        let (engine, version) = (current, self.version)
        var object = engine.snapshot().jsonObject()
        object["version"] = Int64(clamping: version)
        return object
    }

    /// No scenario and no devices at all, and the clock back to the wall's: the start state (`POST /admin/reset`).
    package func resetToStart() {
        let version = versionNumber.withLock { current in
            current += 1
            return current
        }
        clock.reset()
        engine.withLock { engine in
            engine.devices.removeAll()
            engine.channels.removeAll()
            engine.devices.use(nil)
            engine = ScenarioEngine(scenario: .empty, now: now, devices: engine.devices, channels: engine.channels, generation: engine.generation &+ 1)
            installedGeneration.store(engine.generation, ordering: .releasing)
        }
        changes.report(.scenario(source: "", version: version))
    }
}
