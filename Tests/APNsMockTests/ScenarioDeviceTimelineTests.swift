import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

/// A scenario device's `state:` and `timeline:`: what loads, what the registry makes of it, and every mistake with
/// its file, line and field.
@Suite("Scenario device timelines")
struct ScenarioDeviceTimelineTests {
    private func only(_ yaml: String) throws -> ScenarioProblem {
        let problems = F.problems(yaml)
        try #require(problems.count == 1, "expected one problem, got \(problems)")
        return problems[0]
    }

    private static let header = """
        devices:
          - name: phone
            token: \(F.tokenA)
            topic: com.example.app

        """

    @Test func aStateAndATimelineLoadAndResolveAgainstTheStart() throws {
        let scenario = try F.load(
            Self.header + """
                    state: lowPower
                    timeline:
                      - offline: {at: +10s, for: 2m}
                      - online: {at: +5m}
                      - appRemoved: {at: +1h}
                """
        )
        let declared = try #require(scenario.devices.first)
        #expect(declared.state == .lowPower)
        #expect(declared.timeline.map(\.state) == [.offline, .online, .appRemoved])
        let device = declared.device(startedAt: F.start)
        // The window returns to the state before it; the removal is the registry's unregistration.
        #expect(
            device.stateChanges == [
                DeviceStateChange(at: F.start + 10_000, state: .offline),
                DeviceStateChange(at: F.start + 130_000, state: .lowPower),
                DeviceStateChange(at: F.start + 300_000, state: .online),
            ]
        )
        #expect(device.unregisteredAt == F.start + 3_600_000)
        #expect(device.state == .lowPower)
    }

    @Test func theEngineStartsTheTimelineWithTheScenario() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(Self.header + "    timeline:\n      - offline: {at: +10s, for: 2m}\n", clock: clock)
        #expect(engine.devices.device(token: F.tokenA)?.state == .online)
        clock.advance(by: 11_000)
        #expect(engine.devices.device(token: F.tokenA)?.state == .offline)
        clock.advance(by: 120_000)
        #expect(engine.devices.device(token: F.tokenA)?.state == .online)
    }

    @Test func anUnknownStateSuggestsTheNearestOne() throws {
        let problem = try only(Self.header + "    state: offlne\n")
        #expect(problem.description == "test.yaml:5:12: devices[0].state: 'offlne' is not a device state; did you mean 'offline'?")
    }

    @Test func anUnknownTimelineStateIsNamedWithItsLine() throws {
        let problem = try only(Self.header + "    timeline:\n      - asleep: {at: +10s}\n")
        #expect(problem.line == 6)
        #expect(problem.field == "devices[0].timeline[0]")
        #expect(problem.message.hasPrefix("'asleep' is not a device state;"))
    }

    @Test func anEntryNeedsATime() throws {
        let problem = try only(Self.header + "    timeline:\n      - offline: {for: 2m}\n")
        #expect(problem.field == "devices[0].timeline[0].offline.at")
        #expect(problem.message == "is required")
    }

    @Test func anEntryIsOneStateWithItsTime() throws {
        let problem = try only(Self.header + "    timeline:\n      - offline\n")
        #expect(problem.line == 6)
        #expect(problem.message.hasPrefix("expected one state with its time, such as - offline: {at: +10s, for: 2m}"))
    }

    @Test func entriesMustBeInTimeOrderAndWindowsMustNotOverlap() throws {
        let problem = try only(Self.header + "    timeline:\n      - offline: {at: +10s, for: 2m}\n      - lowPower: {at: +1m}\n")
        #expect(problem.line == 7)
        #expect(problem.field == "devices[0].timeline[1].lowPower.at")
        #expect(problem.message == "starts before the entry at line 6 ends (2m10s); keep the timeline in time order")
    }

    @Test func nothingFollowsARemovedApp() throws {
        let problem = try only(Self.header + "    timeline:\n      - appRemoved: {at: +1m}\n      - online: {at: +2m}\n")
        #expect(problem.line == 7)
        #expect(problem.message == "the app was removed at line 6, and a removed app stays removed; nothing can follow")
        let window = try only(Self.header + "    timeline:\n      - appRemoved: {at: +1m, for: 1m}\n")
        #expect(window.message == "a removed app stays removed; leave out for")
    }

    @Test func aWindowMustLastSomeTime() throws {
        let problem = try only(Self.header + "    timeline:\n      - offline: {at: +1m, for: 0s}\n")
        #expect(problem.message == "must be longer than 0s; leave it out to stay in the state")
    }

    @Test func subscriptionsNameTheScenariosChannels() throws {
        let yaml = Self.header + "    subscriptions: [scores]\nchannels:\n  - {name: scores, bundleId: com.example.app}\n"
        let engine = try F.engine(yaml)
        let channel = try #require(engine.scenario.channels.first)
        #expect(engine.devices.device(token: F.tokenA)?.subscriptions == [channel.id])
    }

    @Test func aSubscriptionToAnUnknownChannelIsNamedWithItsLine() throws {
        let problem = try only(Self.header + "    subscriptions: [score]\nchannels:\n  - {name: scores, bundleId: com.example.app}\n")
        #expect(problem.line == 5)
        #expect(problem.field == "devices[0].subscriptions")
        #expect(problem.message == "no channel named 'score'; did you mean 'scores'?")
    }
}
