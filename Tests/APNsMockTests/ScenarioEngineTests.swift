import Foundation
import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

@Suite("Scenario engine: matching")
struct ScenarioMatchingTests {
    /// The names of the rules that answer each request, in order (`-` for none).
    private func answers(_ engine: ScenarioEngine, _ requests: [APNsRequest], connection: UInt64 = 1) -> [String] {
        requests.map { engine.decide($0, connection: connection)?.ruleName ?? "-" }
    }

    @Test func noRuleMatchesMeansNoDecision() throws {
        let engine = try F.engine("rules: [{match: {token: \(F.tokenB)}, accept: true}]")
        #expect(engine.decide(F.push()) == nil)
    }

    @Test func emptyScenarioDecidesNothing() {
        let engine = ScenarioEngine(scenario: .empty, startedAt: 0, now: { 0 })
        #expect(engine.decide(F.push()) == nil)
    }

    @Test func exactTokenIsCaseInsensitive() throws {
        let engine = try F.engine("rules: [{name: r, match: {token: \(F.tokenA.uppercased())}, accept: true}]")
        #expect(
            answers(engine, [F.push(token: F.tokenA), F.push(token: F.tokenA.uppercased()), F.push(token: F.tokenB)])
                == ["r", "r", "-"]
        )
    }

    @Test func tokenListMatchesAnyOfThem() throws {
        let engine = try F.engine("rules: [{name: r, match: {token: [\(F.tokenA), \(F.tokenB)]}, accept: true}]")
        #expect(
            answers(engine, [F.push(token: F.tokenA), F.push(token: F.tokenB), F.push(token: F.tokenC)]) == [
                "r", "r", "-",
            ]
        )
    }

    @Test func tokenPrefix() throws {
        let engine = try F.engine("rules: [{name: r, match: {tokenPrefix: B2B2}, accept: true}]")
        #expect(answers(engine, [F.push(token: F.tokenB), F.push(token: F.tokenA)]) == ["r", "-"])
    }

    @Test func tokenRegexIsSearchedInTheTokenAsSent() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: tail, match: {tokenRegex: 'c3c3$'}, accept: true}
              - {name: any-case, match: {tokenRegex: '(?i)^B2'}, accept: true}
            """
        )
        #expect(
            answers(engine, [F.push(token: F.tokenC), F.push(token: F.tokenB.uppercased()), F.push(token: F.tokenA)])
                == ["tail", "any-case", "-"]
        )
    }

    @Test func deviceByName() throws {
        let engine = try F.engine(
            """
            devices: [{name: alice, token: \(F.tokenA), topic: com.example.app}]
            rules: [{name: r, match: {device: alice}, accept: true}]
            """
        )
        #expect(answers(engine, [F.push(token: F.tokenA.uppercased()), F.push(token: F.tokenB)]) == ["r", "-"])
    }

    @Test func topicPushTypeAndPriority() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: topic, match: {topic: [com.example.other, com.example.third]}, accept: true}
              - {name: voip, match: {pushType: voip}, accept: true}
              - {name: low, match: {priority: [1, 5]}, accept: true}
              - {name: default-priority, match: {priority: 10, pushType: background}, accept: true}
            """
        )
        #expect(
            answers(
                engine,
                [
                    F.push(topic: "com.example.third"), F.push(pushType: "voip"), F.push(priority: "5"),
                    F.push(pushType: "background"), F.push(pushType: "background", priority: "10"),
                    F.push(pushType: nil), F.push(topic: nil),
                ]
            ) == ["topic", "voip", "low", "default-priority", "default-priority", "-", "-"]
        )
    }

    @Test func headersWithValuesAndAbsentHeaders() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: collapse, match: {headers: {apns-collapse-id: group-1}}, accept: true}
              - {name: no-auth, match: {headers: {Authorization: null}}, accept: true}
            """
        )
        #expect(
            answers(
                engine,
                [
                    F.push(extraHeaders: [("apns-collapse-id", "group-1"), ("authorization", "bearer x")]),
                    F.push(extraHeaders: [("apns-collapse-id", "group-2"), ("authorization", "bearer x")]),
                    F.push(extraHeaders: [("apns-collapse-id", "group-2")]),
                ]
            ) == ["collapse", "-", "no-auth"]
        )
    }

    @Test func payloadPathsCompareJSONValues() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: title, match: {payload: {"$.aps.alert.title": "Sale"}}, accept: true}
              - {name: badge, match: {payload: {"aps.badge": 3}}, accept: true}
              - {name: index, match: {payload: {"$.items[1].id": "b", "$['dotted.key']": true}}, accept: true}
              - {name: absent, match: {payload: {"$.aps.sound": null}}, accept: true}
            """
        )
        #expect(
            answers(
                engine,
                [
                    F.push(payload: #"{"aps":{"alert":{"title":"Sale"}, "sound":"x"}}"#),
                    F.push(payload: #"{"aps":{"badge":3.0, "sound":"x"}}"#),
                    F.push(payload: #"{"aps":{"badge":"3", "sound":"x"}}"#),
                    F.push(payload: #"{"aps":{"sound":"x"},"items":[{"id":"a"},{"id":"b"}],"dotted.key":true}"#),
                    F.push(payload: #"{"aps":{"sound":"x"},"items":[{"id":"a"},{"id":"b"}],"dotted.key":1}"#),
                    F.push(payload: #"{"aps":{"alert":"hi"}}"#),
                    F.push(payload: #"not json"#),
                ]
            ) == ["title", "badge", "-", "index", "-", "absent", "-"]
        )
    }

    @Test func nthOverall() throws {
        let engine = try F.engine("rules: [{name: r, match: {nth: 3}, accept: true}]")
        #expect(answers(engine, Array(repeating: F.push(), count: 5)) == ["-", "-", "r", "-", "-"])
    }

    @Test func nthRange() throws {
        let engine = try F.engine("rules: [{name: r, match: {nth: {from: 2, to: 3}}, accept: true}]")
        #expect(answers(engine, Array(repeating: F.push(), count: 4)) == ["-", "r", "r", "-"])
    }

    @Test func nthForTokenCountsEachTokenSeparately() throws {
        let engine = try F.engine("rules: [{name: r, match: {nthForToken: 2}, accept: true}]")
        let requests = [
            F.push(token: F.tokenA), F.push(token: F.tokenB), F.push(token: F.tokenA.uppercased()),
            F.push(token: F.tokenB), F.push(token: F.tokenA),
        ]
        #expect(answers(engine, requests) == ["-", "-", "r", "r", "-"])
    }

    @Test func nthOnConnectionCountsEachConnectionSeparately() throws {
        let engine = try F.engine("rules: [{name: r, match: {nthOnConnection: 2}, accept: true}]")
        #expect(engine.decide(F.push(), connection: 1) == nil)
        #expect(engine.decide(F.push(), connection: 2) == nil)
        #expect(engine.decide(F.push(), connection: 1)?.ruleName == "r")
        #expect(engine.decide(F.push(), connection: 2)?.ruleName == "r")
        engine.connectionClosed(1)
        #expect(engine.decide(F.push(), connection: 1) == nil)  // a new connection with a reused id starts over
    }

    @Test func everyNth() throws {
        let engine = try F.engine("rules: [{name: r, match: {every: 3}, accept: true}]")
        #expect(answers(engine, Array(repeating: F.push(), count: 7)) == ["-", "-", "r", "-", "-", "r", "-"])
    }

    @Test func everyNthStartingLater() throws {
        // "Every third request, starting with the fifth": 5, 8, 11.
        let engine = try F.engine("rules: [{name: r, match: {every: 3, offset: 2}, accept: true}]")
        #expect(answers(engine, Array(repeating: F.push(), count: 11)) == ["-", "-", "-", "-", "r", "-", "-", "r", "-", "-", "r"])
        #expect(engine.scenario.rules[0].conditions.everyOffset == 2)
    }

    @Test func timeWindowsUseTheInjectedClock() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            "rules: [{name: window, match: {after: 10s, before: 1m}, accept: true}]",
            clock: clock
        )
        #expect(engine.decide(F.push()) == nil)
        clock.advance(by: 9_999)
        #expect(engine.decide(F.push()) == nil)
        clock.advance(by: 1)
        #expect(engine.decide(F.push())?.ruleName == "window")
        clock.set(F.start + 59_999)
        #expect(engine.decide(F.push())?.ruleName == "window")
        clock.advance(by: 1)
        #expect(engine.decide(F.push()) == nil)
    }

    @Test func allConditionsMustHold() throws {
        let engine = try F.engine("rules: [{name: r, match: {token: \(F.tokenA), pushType: voip}, accept: true}]")
        #expect(
            answers(
                engine,
                [
                    F.push(token: F.tokenA), F.push(token: F.tokenB, pushType: "voip"),
                    F.push(token: F.tokenA, pushType: "voip"),
                ]
            ) == ["-", "-", "r"]
        )
    }

    @Test func firstMatchingRuleWins() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: specific, match: {token: \(F.tokenA)}, reason: BadDeviceToken}
              - {name: general, accept: true}
            """
        )
        #expect(answers(engine, [F.push(token: F.tokenA), F.push(token: F.tokenB)]) == ["specific", "general"])
    }
}

@Suite("Scenario engine: answers")
struct ScenarioAnswerTests {
    @Test func scriptedStatusAndReason() throws {
        let engine = try F.engine("rules: [{name: r, reason: TooManyRequests}]")
        let decision = try #require(engine.decide(F.push()))
        #expect(decision.ruleIndex == 0)
        #expect(decision.answer == .respond(ScenarioResponse(status: 429, reason: .tooManyRequests)))
        #expect(decision.delay == nil)
        #expect(decision.faults.isEmpty)
    }

    @Test func acceptAnswers200() throws {
        let engine = try F.engine("rules: [{accept: true}]")
        #expect(engine.decide(F.push())?.response == ScenarioResponse(status: 200))
    }

    @Test func ruleWithoutAnswerLetsTheValidatorAnswer() throws {
        let engine = try F.engine("rules: [{delay: 250ms, maxConcurrentStreams: 1}]")
        let decision = try #require(engine.decide(F.push()))
        #expect(decision.answer == .validated)
        #expect(decision.delay == .milliseconds(250))
        #expect(decision.faults == [.setMaxConcurrentStreams(1)])
    }

    @Test func timestampsRelativeAbsoluteAndNow() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            """
            rules:
              - {match: {nth: 1}, reason: Unregistered, timestamp: -2d}
              - {match: {nth: 2}, reason: ExpiredToken, timestamp: 1496371306210}
              - {match: {nth: 3}, status: 410}
            """,
            clock: clock
        )
        clock.advance(by: 5_000)
        #expect(
            engine.decide(F.push())?.response
                == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start + 5_000 - 172_800_000)
        )
        #expect(
            engine.decide(F.push())?.response
                == ScenarioResponse(status: 410, reason: .expiredToken, timestamp: 1_496_371_306_210)
        )
        #expect(
            engine.decide(F.push())?.response
                == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start + 5_000)
        )
    }

    @Test func timestampOfTheDevicesUnregistration() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            """
            devices:
              - {name: gone, token: \(F.tokenA), topic: com.example.app, unregisteredAt: -1h}
              - {name: later, token: \(F.tokenB), topic: com.example.app, unregisteredAt: +1h}
            rules:
              - {name: explicit, match: {device: later}, reason: Unregistered, timestamp: unregistered}
              - {name: implicit, reason: Unregistered}
            """,
            clock: clock
        )
        // `unregistered` takes the device's time even before it is reached; without a timestamp, only a device
        // already unregistered lends its time, and other tokens get now.
        #expect(engine.decide(F.push(token: F.tokenB))?.response?.timestamp == F.start + 3_600_000)
        #expect(engine.decide(F.push(token: F.tokenA))?.response?.timestamp == F.start - 3_600_000)
        #expect(engine.decide(F.push(token: F.tokenC))?.response?.timestamp == F.start)
    }

    @Test func faultsThatReplaceTheAnswer() throws {
        let engine = try F.engine(
            """
            rules:
              - {match: {nth: 1}, reset: {errorCode: CANCEL}}
              - {match: {nth: 2}, drop: true}
              - {match: {nth: 3}, hang: true, delay: 1s}
              - {match: {nth: 4}, goaway: {errorCode: ENHANCE_YOUR_CALM, lastStreamId: 0, debugData: '{"reason":"Shutdown"}'}}
              - {match: {nth: 5}, reason: Shutdown, goaway: true}
              - {match: {nth: 6}, accept: true, closeConnection: true}
            """
        )
        let decisions = (1...6).map { _ in engine.decide(F.push()) }
        #expect(decisions[0]?.answer == ScenarioAnswer.none)
        #expect(decisions[0]?.faults == [.resetStream(errorCode: 8)])
        #expect(decisions[1]?.answer == ScenarioAnswer.none)
        #expect(decisions[1]?.faults == [.drop])
        #expect(decisions[2]?.answer == ScenarioAnswer.none)
        #expect(decisions[2]?.delay == .seconds(1))
        #expect(decisions[3]?.answer == ScenarioAnswer.none)
        #expect(decisions[3]?.faults == [.goAway(errorCode: 11, lastStreamID: 0, debugData: #"{"reason":"Shutdown"}"#)])
        #expect(decisions[4]?.response == ScenarioResponse(status: 503, reason: .shutdown))
        #expect(
            decisions[4]?.faults == [.goAway(errorCode: 0, lastStreamID: nil, debugData: #"{"reason":"Shutdown"}"#)]
        )
        #expect(decisions[5]?.response == ScenarioResponse(status: 200))
        #expect(decisions[5]?.faults == [.closeAfterAnswer])
    }

    @Test func defaultLatencyAppliesToUnmatchedRequestsAndRulesWithoutDelay() throws {
        let engine = try F.engine(
            """
            defaults: {latency: 20ms}
            rules:
              - {name: slow, match: {token: \(F.tokenB)}, accept: true, delay: 2s}
              - {name: plain, match: {token: \(F.tokenC)}, accept: true}
            """
        )
        let unmatched = try #require(engine.decide(F.push(token: F.tokenA)))
        #expect(unmatched.ruleIndex == nil && unmatched.answer == .validated && unmatched.delay == .milliseconds(20))
        #expect(engine.decide(F.push(token: F.tokenB))?.delay == .seconds(2))
        #expect(engine.decide(F.push(token: F.tokenC))?.delay == .milliseconds(20))
    }

    @Test func jitteredDelaysStayInRangeAndRepeatForTheSameSeed() throws {
        let yaml = "seed: 3\nrules: [{delay: {min: 100ms, max: 500ms}}]"
        let first = try F.engine(yaml)
        let second = try F.engine(yaml)
        let delays = (0..<200).map { _ in first.decide(F.push())?.delay }
        #expect(delays == (0..<200).map { _ in second.decide(F.push())?.delay })
        #expect(delays.allSatisfy { $0.map { $0 >= .milliseconds(100) && $0 <= .milliseconds(500) } ?? false })
        #expect(Set(delays.compactMap { $0 }).count > 50)
    }
}

@Suite("Scenario engine: sequences, times and probabilities")
struct ScenarioSequenceTests {
    private func statuses(_ engine: ScenarioEngine, _ count: Int) -> [String] {
        (0..<count).map { _ in
            guard let decision = engine.decide(F.push()) else { return "-" }
            switch decision.answer {
            case .respond(let response): return response.reason?.rawValue ?? String(response.status)
            case .validated: return "validated"
            case .none: return decision.faults.first.map { "\($0)" } ?? "none"
            }
        }
    }

    @Test func sequenceRepeatsItsLastStepForever() throws {
        let engine = try F.engine("rules: [{sequence: [accept, accept, {status: 410, reason: Unregistered}]}]")
        #expect(statuses(engine, 5) == ["200", "200", "Unregistered", "Unregistered", "Unregistered"])
    }

    @Test func sequenceWithRepeatCycles() throws {
        let engine = try F.engine("rules: [{repeat: true, sequence: [accept, BadDeviceToken, drop]}]")
        #expect(statuses(engine, 7) == ["200", "BadDeviceToken", "drop", "200", "BadDeviceToken", "drop", "200"])
    }

    @Test func sequenceAdvancesOnlyWhenItsRuleMatches() throws {
        let engine = try F.engine(
            "rules: [{name: s, match: {token: \(F.tokenB)}, sequence: [accept, TooManyRequests]}]"
        )
        #expect(engine.decide(F.push(token: F.tokenA)) == nil)
        #expect(engine.decide(F.push(token: F.tokenB))?.response?.status == 200)
        #expect(engine.decide(F.push(token: F.tokenA)) == nil)
        #expect(engine.decide(F.push(token: F.tokenB))?.step == 1)
    }

    @Test func timesStopsTheRuleAndLaterRulesTakeOver() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: first-two, times: 2, reason: ServiceUnavailable}
              - {name: rest, accept: true}
            """
        )
        #expect(statuses(engine, 4) == ["ServiceUnavailable", "ServiceUnavailable", "200", "200"])
        let snapshot = engine.snapshot()
        #expect(snapshot.rules.map(\.hits) == [2, 2])
        #expect(snapshot.rules.map(\.exhausted) == [true, false])
    }

    @Test func timesCountsHitsOfASequence() throws {
        let engine = try F.engine("rules: [{times: 3, sequence: [accept, Shutdown]}]")
        #expect(statuses(engine, 5) == ["200", "Shutdown", "Shutdown", "-", "-"])
    }

    @Test func probabilitiesRepeatForTheSameSeedAndDifferForAnother() throws {
        func pattern(seed: Int) throws -> [Bool] {
            let engine = try F.engine("seed: \(seed)\nrules: [{match: {probability: 0.3}, reason: TooManyRequests}]")
            return (0..<300).map { _ in engine.decide(F.push()) != nil }
        }
        let first = try pattern(seed: 11)
        #expect(try pattern(seed: 11) == first)
        #expect(try pattern(seed: 12) != first)
        let share = Double(first.filter { $0 }.count) / Double(first.count)
        #expect(share > 0.2 && share < 0.4)
    }

    @Test func probabilityZeroAndOne() throws {
        let engine = try F.engine(
            """
            rules:
              - {name: never, match: {probability: 0}, accept: true}
              - {name: always, match: {probability: 1}, accept: true}
            """
        )
        #expect((0..<50).allSatisfy { _ in engine.decide(F.push())?.ruleName == "always" })
    }

    @Test func oneRulesDrawsDoNotShiftAnothers() throws {
        // The second rule's pattern is the same whether or not the first rule also draws.
        func secondRulePattern(firstRule: String) throws -> [Bool] {
            let engine = try F.engine(
                """
                seed: 5
                rules:
                  - \(firstRule)
                  - {name: second, match: {token: \(F.tokenB), probability: 0.5}, accept: true}
                """
            )
            return (0..<100).flatMap { _ in
                _ = engine.decide(F.push(token: F.tokenA))
                return [engine.decide(F.push(token: F.tokenB))?.ruleName == "second"]
            }
        }
        let withDraws = try secondRulePattern(
            firstRule: "{name: first, match: {token: \(F.tokenA), probability: 0.5}, accept: true}"
        )
        let without = try secondRulePattern(firstRule: "{name: first, match: {token: \(F.tokenA)}, accept: true}")
        #expect(withDraws == without)
    }

    @Test func randomSeedIsPickedOnceAndShown() throws {
        let engine = try F.engine("seed: random\nrules: [{match: {probability: 0.5}, accept: true}]")
        #expect(engine.scenario.seed == nil)
        #expect(engine.snapshot().seed == engine.seed)
    }
}

@Suite("Scenario engine: control")
struct ScenarioControlTests {
    @Test func resetStartsCountersSequencesTimesAndTheClockOver() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            """
            seed: 9
            rules:
              - {name: late, match: {after: 1m}, reason: Shutdown}
              - {name: once, times: 1, reason: ServiceUnavailable}
              - {name: seq, match: {probability: 0.5}, sequence: [accept, Unregistered]}
            """,
            clock: clock
        )
        func run() -> [String] {
            (0..<20).map { _ in engine.decide(F.push())?.response.map { "\($0.status)" } ?? "-" }
        }
        let before = run()
        clock.advance(by: 120_000)
        #expect(engine.decide(F.push())?.ruleName == "late")
        engine.reset()
        #expect(engine.startedAt == F.start + 120_000)
        #expect(engine.snapshot().requests == 0)
        #expect(engine.snapshot().rules.map(\.hits) == [0, 0, 0])
        #expect(run() == before)
    }

    @Test func resetRestoresTheScenariosDevicesAndKeepsOthers() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            "devices: [{name: a, token: \(F.tokenA), topic: com.example.app, unregisteredAt: +1m}]",
            clock: clock
        )
        engine.devices.unregister(token: F.tokenA, at: F.start)
        engine.devices.add(Device(token: F.tokenB, topic: "com.example.app"))
        clock.advance(by: 10_000)
        engine.reset()
        #expect(engine.devices.device(token: F.tokenA)?.unregisteredAt == F.start + 10_000 + 60_000)
        #expect(engine.devices.device(token: F.tokenB) != nil)
    }

    @Test func snapshotJSONShowsTheScenarioAndHitCounts() throws {
        let engine = try F.engine(
            """
            name: snap
            devices: [{name: a, token: \(F.tokenA), topic: com.example.app}]
            rules:
              - {name: one, match: {token: \(F.tokenA)}, sequence: [accept, Unregistered]}
              - {name: two, times: 1, accept: true}
            """
        )
        _ = engine.decide(F.push(token: F.tokenA))
        _ = engine.decide(F.push(token: F.tokenB))
        _ = engine.decide(F.push(token: F.tokenB))
        let object = engine.snapshot().jsonObject()
        #expect(JSONSerialization.isValidJSONObject(object))
        #expect((object["scenario"] as? [String: Any])?["name"] as? String == "snap")
        #expect(object["requests"] as? Int64 == 3)
        let rules = try #require(object["rules"] as? [[String: Any]])
        #expect(rules.map { $0["name"] as? String } == ["one", "two"])
        #expect(rules.map { $0["hits"] as? Int64 } == [1, 1])
        #expect(rules.map { $0["exhausted"] as? Bool } == [false, true])
        #expect(rules[0]["nextStep"] as? Int == 1)
        #expect((object["devices"] as? [[String: Any]])?.first?["token"] as? String == F.tokenA)
    }

    @Test func outagesRefuseConnectionsInTheirWindow() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            """
            outages:
              - {from: 10s, until: 20s, mode: refuse}
              - {from: 20s, until: 30s, mode: goaway}
            """,
            clock: clock
        )
        #expect(engine.isRefusingConnections() == nil)
        clock.advance(by: 10_000)
        #expect(engine.isRefusingConnections() == .refuse)
        clock.advance(by: 10_000)
        #expect(engine.isRefusingConnections() == .goAway(errorCode: 0, debugData: #"{"reason":"Shutdown"}"#))
        #expect(engine.isRefusingConnections(now: F.start + 30_000) == nil)
    }

    @Test func deviceCheckGoesThroughTheRegistry() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try F.engine(
            """
            devices:
              - {name: a, token: \(F.tokenA), topic: com.example.app, unregisteredAt: +30s}
            """,
            clock: clock
        )
        #expect(engine.deviceCheck(token: F.tokenA, topic: "com.example.app", environment: .development) == nil)
        clock.advance(by: 30_000)
        #expect(
            engine.deviceCheck(token: F.tokenA, topic: "com.example.app", environment: .development)
                == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start + 30_000)
        )
    }
}

@Suite("Scenario connection state")
struct ScenarioConnectionStateTests {
    @Test func lowersTheStreamLimitAfterARejectionAndRestoresItAfterASuccess() {
        var state = ScenarioConnectionState(
            policy: ScenarioConnectionPolicy(lowerStreamLimitAfterRejection: true),
            maxConcurrentStreams: 1000
        )
        #expect(state.record(status: 200, reason: nil) == [])
        #expect(state.record(status: 400, reason: .badTopic) == [.setMaxConcurrentStreams(1)])
        #expect(state.record(status: 429, reason: .tooManyRequests) == [])
        #expect(state.record(status: 410, reason: .unregistered) == [])
        #expect(state.record(status: 200, reason: nil) == [.setMaxConcurrentStreams(1000)])
        #expect(state.record(status: 200, reason: nil) == [])
    }

    @Test func unregisteredIsNotARejection() {
        var state = ScenarioConnectionState(
            policy: ScenarioConnectionPolicy(lowerStreamLimitAfterRejection: true),
            maxConcurrentStreams: 500
        )
        #expect(state.record(status: 410, reason: .unregistered) == [])
    }

    @Test func closesAfterNBadDeviceTokens() {
        var state = ScenarioConnectionState(
            policy: ScenarioConnectionPolicy(closeAfterBadDeviceTokens: 2),
            maxConcurrentStreams: 1000
        )
        #expect(state.record(status: 400, reason: .badDeviceToken) == [])
        #expect(state.record(status: 400, reason: .badTopic) == [])
        #expect(
            state.record(status: 400, reason: .badDeviceToken)
                == [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .close]
        )
    }

    @Test func engineMakesStateFromTheScenarioPolicy() throws {
        let engine = try F.engine("connection: {closeAfterBadDeviceTokens: 1}")
        var state = engine.makeConnectionState(maxConcurrentStreams: 1000)
        #expect(state.record(status: 400, reason: .badDeviceToken).last == .close)
    }
}

@Suite("Scenario shipped files behave as described")
struct ScenarioShippedBehaviourTests {
    private func engine(_ file: String, clock: ScenarioTestClock) throws -> ScenarioEngine {
        let path = ScenarioFixtures.scenariosDirectory.appendingPathComponent(file).path
        return ScenarioEngine(scenario: try ScenarioLoader.load(file: path), startedAt: clock.now, now: clock.function)
    }

    @Test func tokenLifecycle() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try engine("token-lifecycle.yaml", clock: clock)
        let uninstalled = String(repeating: "b2", count: 32)
        let soon = String(repeating: "c3", count: 32)
        let production = String(repeating: "d4", count: 32)
        let otherApp = String(repeating: "e5", count: 32)
        let flapping = String(repeating: "07", count: 32)
        func check(_ token: String) -> ScenarioResponse? {
            engine.deviceCheck(token: token, topic: "com.example.app", environment: .development)
        }
        #expect(
            check(uninstalled) == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start - 172_800_000)
        )
        #expect(check(soon) == nil)
        #expect(check(production)?.reason == .badDeviceToken)
        #expect(check(otherApp)?.reason == .deviceTokenNotForTopic)
        clock.advance(by: 30_000)
        #expect(check(soon) == ScenarioResponse(status: 410, reason: .unregistered, timestamp: F.start + 30_000))
        let flaps = (0..<4).map { _ in engine.decide(F.push(token: flapping))?.response?.status }
        #expect(flaps == [200, 200, 410, 410])
    }

    @Test func outage() throws {
        let clock = ScenarioTestClock(F.start)
        let engine = try engine("outage.yaml", clock: clock)
        #expect(engine.decide(F.push()) == nil)
        clock.advance(by: 10_000)
        #expect(
            engine.decide(F.push())?.faults.first
                == .goAway(errorCode: 0, lastStreamID: nil, debugData: #"{"reason":"Shutdown"}"#)
        )
        #expect(engine.decide(F.push())?.response == ScenarioResponse(status: 503, reason: .serviceUnavailable))
        clock.advance(by: 5_000)
        #expect(engine.isRefusingConnections() == .refuse)
        clock.advance(by: 25_000)
        #expect(engine.decide(F.push()) == nil)
        #expect(engine.isRefusingConnections() == nil)
    }
}
