import Foundation
import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

@Suite("Scenario loading")
struct ScenarioLoaderTests {
    @Test func readsNameDescriptionSeedAndDefaults() throws {
        let scenario = try F.load(
            """
            name: demo
            description: A demo.
            seed: 99
            defaults:
              latency: 20ms
              environment: production
            """
        )
        #expect(scenario.name == "demo")
        #expect(scenario.description == "A demo.")
        #expect(scenario.seed == 99)
        #expect(scenario.defaults.latency == .fixed(milliseconds: 20))
        #expect(scenario.defaults.environment == .production)
        #expect(scenario.rules.isEmpty)
    }

    @Test func nameDefaultsToTheFileNameAndSeedToZeroAndRandomMeansNone() throws {
        let scenario = try F.load("rules: []", source: "/tmp/Scenarios/my-case.yaml")
        #expect(scenario.name == "my-case")
        #expect(scenario.seed == 0)
        #expect(try F.load("seed: random").seed == nil)
    }

    @Test func readsJitterLatency() throws {
        let scenario = try F.load("defaults: {latency: {min: 100ms, max: 1.5s}}")
        #expect(scenario.defaults.latency == .jitter(minMilliseconds: 100, maxMilliseconds: 1500))
    }

    @Test(arguments: [
        ("200ms", Int64(200)), ("10s", 10_000), ("1m", 60_000), ("1m30s", 90_000), ("2h", 7_200_000),
        ("1d", 86_400_000), ("0.5s", 500), ("0", 0),
    ])
    func readsDurations(text: String, milliseconds: Int64) throws {
        let scenario = try F.load("defaults: {latency: \(text)}")
        #expect(scenario.defaults.latency == .fixed(milliseconds: milliseconds))
    }

    @Test func readsDevicesWithRelativeAbsoluteAndISOTimes() throws {
        let scenario = try F.load(
            """
            defaults: {environment: production}
            devices:
              - {name: a, token: \(F.tokenA), topic: com.example.app}
              - {name: b, token: \(F.tokenB), topic: com.example.app, environment: sandbox, unregisteredAt: -2d}
              - {name: c, token: \(F.tokenC), topic: com.example.app, unregisteredAt: +30s}
              - {name: d, token: "0a0b", topic: t, unregisteredAt: 1700000000000}
              - {name: e, token: "0c0d", topic: t, unregisteredAt: "2023-11-14T22:13:20Z"}
              - {name: f, token: "0e0f", topic: t, unregisteredAt: now}
            """
        )
        #expect(
            scenario.devices == [
                ScenarioDevice(name: "a", token: F.tokenA, topic: "com.example.app", environment: .production),
                ScenarioDevice(
                    name: "b",
                    token: F.tokenB,
                    topic: "com.example.app",
                    environment: .development,
                    unregisteredAt: .relative(milliseconds: -172_800_000)
                ),
                ScenarioDevice(
                    name: "c",
                    token: F.tokenC,
                    topic: "com.example.app",
                    environment: .production,
                    unregisteredAt: .relative(milliseconds: 30_000)
                ),
                ScenarioDevice(
                    name: "d",
                    token: "0a0b",
                    topic: "t",
                    environment: .production,
                    unregisteredAt: .absolute(milliseconds: 1_700_000_000_000)
                ),
                ScenarioDevice(
                    name: "e",
                    token: "0c0d",
                    topic: "t",
                    environment: .production,
                    unregisteredAt: .absolute(milliseconds: 1_700_000_000_000)
                ),
                ScenarioDevice(
                    name: "f",
                    token: "0e0f",
                    topic: "t",
                    environment: .production,
                    unregisteredAt: .relative(milliseconds: 0)
                ),
            ]
        )
    }

    @Test func readsConnectionSettingsAndOutages() throws {
        let scenario = try F.load(
            """
            connection:
              closeAfterBadDeviceTokens: 3
              lowerStreamLimitAfterRejection: true
            outages:
              - {from: 10s, until: 30s, mode: refuse}
              - {from: 30s, until: 1m, mode: goaway, reason: ServiceUnavailable}
              - {from: 2m, mode: goaway, errorCode: ENHANCE_YOUR_CALM, debugData: go away}
            """
        )
        #expect(
            scenario.connection
                == ScenarioConnectionPolicy(closeAfterBadDeviceTokens: 3, lowerStreamLimitAfterRejection: true)
        )
        #expect(
            scenario.outages == [
                ScenarioOutage(from: 10_000, until: 30_000, mode: .refuse),
                ScenarioOutage(
                    from: 30_000,
                    until: 60_000,
                    mode: .goAway(errorCode: 0, debugData: #"{"reason":"ServiceUnavailable"}"#)
                ),
                ScenarioOutage(from: 120_000, until: nil, mode: .goAway(errorCode: 11, debugData: "go away")),
            ]
        )
    }

    @Test func readsEveryCondition() throws {
        let scenario = try F.load(
            """
            devices:
              - {name: alice, token: \(F.tokenA.uppercased()), topic: com.example.app}
            rules:
              - name: everything
                match:
                  token: [\(F.tokenB.uppercased()), \(F.tokenC)]
                  tokenPrefix: B2B2
                  tokenRegex: '^(?i)b2+'
                  device: alice
                  topic: com.example.app
                  pushType: [alert, background]
                  priority: 5
                  headers: {apns-collapse-id: group-1, apns-expiration: null, apns-priority: 5}
                  payload: {"$.aps.alert.title": "Hi", "aps.badge": 3, "$.list[1]": true, "$.x": null}
                  nth: 5
                  nthForToken: {from: 2}
                  nthOnConnection: {from: 1, to: 3}
                  every: 4
                  after: 10s
                  before: 1m
                  probability: 0.25
                accept: true
            """
        )
        let conditions = try #require(scenario.rules.first).conditions
        #expect(conditions.tokens == [F.tokenB, F.tokenC])
        #expect(conditions.tokenPrefix == "b2b2")
        #expect(conditions.tokenRegex == "^(?i)b2+")
        #expect(conditions.device == DeviceReference(name: "alice", token: F.tokenA))
        #expect(conditions.topics == ["com.example.app"])
        #expect(conditions.pushTypes == [.alert, .background])
        #expect(conditions.priorities == [5])
        #expect(
            conditions.headers == [
                HeaderCondition(name: "apns-collapse-id", value: "group-1"),
                HeaderCondition(name: "apns-expiration", value: nil),
                HeaderCondition(name: "apns-priority", value: "5"),
            ]
        )
        #expect(
            conditions.payload.map(\.path.components) == [
                [.key("aps"), .key("alert"), .key("title")], [.key("aps"), .key("badge")], [.key("list"), .index(1)],
                [.key("x")],
            ]
        )
        #expect(conditions.payload.map(\.value) == [.string("Hi"), .number(3), .bool(true), .null])
        #expect(conditions.nth == .exactly(5))
        #expect(conditions.nthForToken == OrdinalRange(from: 2, to: nil))
        #expect(conditions.nthOnConnection == OrdinalRange(from: 1, to: 3))
        #expect(conditions.every == 4)
        #expect(conditions.after == 10_000)
        #expect(conditions.before == 60_000)
        #expect(conditions.probability == 0.25)
    }

    @Test func readsAnswers() throws {
        let scenario = try F.load(
            """
            rules:
              - {name: a, accept: true}
              - {name: b, status: 200}
              - {name: c, reason: Unregistered}
              - {name: d, status: 410, reason: ExpiredToken, timestamp: -2d}
              - {name: e, status: 410, timestamp: unregistered}
              - {name: f, status: 410, reason: Unregistered, timestamp: 1496371306210}
              - {name: g, status: 503}
              - {name: h, status: 400, reason: BadTopic, delay: {min: 100ms, max: 500ms}}
              - {name: i, status: 429}
              - {name: j, delay: 2s}
            """
        )
        let steps = scenario.rules.map(\.steps)
        #expect(steps[0] == [RuleStep(answer: .accept)])
        #expect(steps[1] == [RuleStep(answer: .accept)])
        #expect(steps[2] == [RuleStep(answer: ScriptedAnswer(status: 410, reason: .unregistered))])
        #expect(
            steps[3] == [
                RuleStep(
                    answer: ScriptedAnswer(
                        status: 410,
                        reason: .expiredToken,
                        timestamp: .time(.relative(milliseconds: -172_800_000))
                    )
                )
            ]
        )
        #expect(
            steps[4] == [RuleStep(answer: ScriptedAnswer(status: 410, reason: .unregistered, timestamp: .unregistered))]
        )
        #expect(
            steps[5] == [
                RuleStep(
                    answer: ScriptedAnswer(
                        status: 410,
                        reason: .unregistered,
                        timestamp: .time(.absolute(milliseconds: 1_496_371_306_210))
                    )
                )
            ]
        )
        #expect(steps[6] == [RuleStep(answer: ScriptedAnswer(status: 503, reason: .serviceUnavailable))])
        #expect(
            steps[7] == [
                RuleStep(
                    answer: ScriptedAnswer(status: 400, reason: .badTopic),
                    delay: .jitter(minMilliseconds: 100, maxMilliseconds: 500)
                )
            ]
        )
        #expect(steps[8] == [RuleStep(answer: ScriptedAnswer(status: 429, reason: .tooManyRequests))])
        #expect(steps[9] == [RuleStep(answer: nil, delay: .fixed(milliseconds: 2000))])
    }

    @Test func readsFaults() throws {
        let scenario = try F.load(
            """
            rules:
              - {name: a, goaway: {errorCode: ENHANCE_YOUR_CALM, lastStreamId: 7, debugData: '{"reason":"Shutdown"}'}}
              - {name: b, goaway: true}
              - {name: c, goaway: {errorCode: 2, reason: IdleTimeout}}
              - {name: d, reset: {errorCode: CANCEL}}
              - {name: e, reset: true}
              - {name: f, reset: refused_stream}
              - {name: g, drop: true}
              - {name: h, hang: true}
              - {name: i, maxConcurrentStreams: 1}
              - {name: j, accept: true, closeConnection: true}
              - {name: k, reason: Shutdown, goaway: true, maxConcurrentStreams: 10}
            """
        )
        let faults = scenario.rules.map { $0.steps[0].faults }
        #expect(faults[0] == [.goAway(errorCode: 11, lastStreamID: 7, debugData: #"{"reason":"Shutdown"}"#)])
        #expect(faults[1] == [.goAway(errorCode: 0, lastStreamID: nil, debugData: #"{"reason":"Shutdown"}"#)])
        #expect(faults[2] == [.goAway(errorCode: 2, lastStreamID: nil, debugData: #"{"reason":"IdleTimeout"}"#)])
        #expect(faults[3] == [.resetStream(errorCode: 8)])
        #expect(faults[4] == [.resetStream(errorCode: 8)])
        #expect(faults[5] == [.resetStream(errorCode: 7)])
        #expect(faults[6] == [.drop])
        #expect(faults[7] == [.hang])
        #expect(faults[8] == [.setMaxConcurrentStreams(1)])
        #expect(faults[9] == [.closeAfterAnswer])
        #expect(
            faults[10] == [
                .setMaxConcurrentStreams(10),
                .goAway(errorCode: 0, lastStreamID: nil, debugData: #"{"reason":"Shutdown"}"#),
            ]
        )
        #expect(scenario.rules[0].steps[0].faultReplacesAnswer)
        #expect(!scenario.rules[10].steps[0].faultReplacesAnswer)
        #expect(!scenario.rules[8].steps[0].faultReplacesAnswer)
    }

    @Test func readsSequencesInShortAndLongForm() throws {
        let scenario = try F.load(
            """
            rules:
              - name: s
                delay: 10ms
                sequence: [accept, 200, Unregistered, 503, drop, hang, reset, goaway, {status: 429, delay: 1s}, {}]
              - name: r
                repeat: true
                sequence: [accept, {reason: BadDeviceToken}]
            """
        )
        let first = scenario.rules[0]
        #expect(first.isSequence && !first.cycles)
        #expect(
            first.steps == [
                RuleStep(answer: .accept, delay: .fixed(milliseconds: 10)),
                RuleStep(answer: .accept, delay: .fixed(milliseconds: 10)),
                RuleStep(answer: ScriptedAnswer(status: 410, reason: .unregistered), delay: .fixed(milliseconds: 10)),
                RuleStep(
                    answer: ScriptedAnswer(status: 503, reason: .serviceUnavailable),
                    delay: .fixed(milliseconds: 10)
                ),
                RuleStep(delay: .fixed(milliseconds: 10), faults: [.drop]),
                RuleStep(delay: .fixed(milliseconds: 10), faults: [.hang]),
                RuleStep(delay: .fixed(milliseconds: 10), faults: [.resetStream(errorCode: 8)]),
                RuleStep(
                    delay: .fixed(milliseconds: 10),
                    faults: [.goAway(errorCode: 0, lastStreamID: nil, debugData: #"{"reason":"Shutdown"}"#)]
                ),
                RuleStep(
                    answer: ScriptedAnswer(status: 429, reason: .tooManyRequests),
                    delay: .fixed(milliseconds: 1000)
                ),
                RuleStep(delay: .fixed(milliseconds: 10)),
            ]
        )
        #expect(scenario.rules[1].cycles)
        #expect(scenario.rules[1].steps.count == 2)
    }

    @Test func rulesWithoutNamesAreNamedByPosition() throws {
        let scenario = try F.load("rules: [{accept: true}, {name: second, accept: true}]")
        #expect(scenario.rules.map(\.name) == ["rules[0]", "second"])
    }

    @Test func readsTheSameScenarioFromJSON() throws {
        let yaml = try F.load(
            """
            name: j
            rules:
              - name: r
                match: {token: \(F.tokenA), payload: {"$.aps.badge": 1}}
                status: 410
                timestamp: -1h
            """
        )
        let json = try F.load(
            """
            {
            \t"name": "j",
            \t"rules": [
            \t\t{"name": "r", "match": {"token": "\(F.tokenA)", "payload": {"$.aps.badge": 1}},
            \t\t "status": 410, "timestamp": "-1h"}
            \t]
            }
            """
        )
        #expect(yaml == json)
    }

    @Test func jsonObjectLoadsBackAsTheSameScenario() throws {
        let text = """
            name: round-trip
            description: all features
            seed: 5
            defaults: {latency: {min: 1ms, max: 90s}, environment: development}
            devices:
              - {name: alice, token: \(F.tokenA), topic: com.example.app, unregisteredAt: -2d}
              - {name: bob, token: \(F.tokenB), topic: com.example.app, environment: production, unregisteredAt: 1700000000000}
            connection: {closeAfterBadDeviceTokens: 2, lowerStreamLimitAfterRejection: true}
            outages:
              - {from: 0, until: 10s, mode: refuse}
              - {from: 1m, mode: goaway, errorCode: 11, debugData: "x/y"}
            rules:
              - name: one
                match:
                  device: alice
                  token: [\(F.tokenB), \(F.tokenC)]
                  tokenPrefix: a1
                  tokenRegex: '^a1'
                  topic: [a, b]
                  pushType: voip
                  priority: [5, 10]
                  headers: {x-a: "1", x-b: null}
                  payload: {"$.a[0].b": [1, "two", {"three": 3.5}], "c": null}
                  nth: 2
                  nthForToken: {from: 3, to: 4}
                  nthOnConnection: {from: 5}
                  every: 6
                  after: 1s
                  before: 1h
                  probability: 0.5
                times: 3
                status: 410
                reason: ExpiredToken
                timestamp: unregistered
                delay: 1s500ms
              - name: two
                repeat: true
                sequence:
                  - accept
                  - {status: 410, timestamp: -2d}
                  - {status: 410, timestamp: 1234}
                  - {status: 410, timestamp: now}
                  - {goaway: {errorCode: CANCEL, lastStreamId: 3, debugData: ""}}
                  - {reset: 1234}
                  - {maxConcurrentStreams: 0, closeConnection: true}
                  - drop
                  - hang
            """
        let scenario = try F.load(text)
        let data = try JSONSerialization.data(
            withJSONObject: scenario.jsonObject(),
            options: [.sortedKeys, .withoutEscapingSlashes]
        )
        let reloaded = try F.load(String(decoding: data, as: UTF8.self), source: "GET /admin/scenario")
        #expect(reloaded == scenario)
    }

    @Test func escapedSlashesInJSONAreRead() throws {
        let scenario = try F.load(#"{"name": "a\/b", "rules": []}"#)
        #expect(scenario.name == "a/b")
    }

    // MARK: Shipped files

    static let shippedFiles = [
        "happy-path.yaml", "token-lifecycle.yaml", "bad-requests.yaml", "throttling.yaml", "outage.yaml",
        "flaky-network.yaml", "auth-failures.yaml",
    ]

    @Test(arguments: shippedFiles)
    func shippedScenarioLoads(file: String) throws {
        let path = F.scenariosDirectory.appendingPathComponent(file).path
        let scenario: Scenario
        do {
            scenario = try ScenarioLoader.load(file: path)
        } catch {
            Issue.record("\(error)")
            return
        }
        #expect(scenario.name == String(file.dropLast(".yaml".count)))
        #expect(scenario.description != nil)
    }

    @Test func everyShippedFileIsCovered() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: F.scenariosDirectory.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") || $0.hasSuffix(".json") }
        #expect(Set(files) == Set(Self.shippedFiles))
    }

    @Test func unreadableFileIsAProblemWithoutPosition() {
        #expect(throws: ScenarioLoadError.self) { try ScenarioLoader.load(file: "/nonexistent/x.yaml") }
        do {
            _ = try ScenarioLoader.load(file: "/nonexistent/x.yaml")
        } catch {
            #expect(error.problems.count == 1)
            #expect(error.description.hasPrefix("/nonexistent/x.yaml: cannot read the file"))
        }
    }
}
