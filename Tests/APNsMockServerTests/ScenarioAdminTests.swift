import APNsMock
import Foundation
import Testing

/// The admin API of scenarios and devices (`/admin/scenario`, `/admin/devices`), and what the recorder keeps of
/// scenario decisions, driven together with real pushes.
@Suite("Scenario admin API")
struct ScenarioAdminTests {
    static let twoRules = """
        name: two-rules
        rules:
          - name: counted
            match: {topic: com.example.counted}
            status: 500
          - name: other
            match: {topic: com.example.other}
            reason: TopicDisallowed
        """

    @Test func getScenarioShowsHitCountsThatFollowTheRequests() async throws {
        try await withScenario(Self.twoRules) { server in
            let before = try await server.admin.scenario()
            #expect(before["scenario"]?["name"]?.string == "two-rules")
            #expect(before["requests"]?.int == 0)
            #expect(before["rules"]?.array?.map { $0["name"]?.string } == ["counted", "other"])
            #expect(before["rules"]?.array?.map { $0["hits"]?.int } == [0, 0])
            #expect(before["rules"]?[0]?["index"]?.int == 0 && before["rules"]?[0]?["exhausted"]?.bool == false)

            try await withProviderClient(server) { (provider) async throws in
                for _ in 1...3 {
                    let answer = try await provider.send(headers: [("apns-topic", "com.example.counted")])
                    #expect(answer.status == 500 && answer.reason == "InternalServerError")
                }
                let other = try await provider.send(headers: [("apns-topic", "com.example.other")])
                #expect(other.status == 400 && other.reason == "TopicDisallowed")
                #expect(try await provider.send().status == 200)
            }
            let after = try await server.admin.scenario()
            #expect(after["requests"]?.int == 5)
            #expect(after["rules"]?.array?.map { $0["hits"]?.int } == [3, 1], "\(after)")
            #expect(after["startedAt"] == before["startedAt"])

            // The same counts on /metrics.
            let metrics = try await ExternalTool.run("curl", ["--silent", "--show-error", "http://127.0.0.1:\(server.adminPort)/metrics"])
            let lines = metrics.stdout.split(separator: "\n").filter { $0.contains("scenario_rule_hits{") }
            #expect(lines.contains { $0.contains(#"rule="counted""#) && Double($0.split(separator: " ").last ?? "") == 3 }, "\(lines)")
            #expect(lines.contains { $0.contains(#"rule="other""#) && Double($0.split(separator: " ").last ?? "") == 1 }, "\(lines)")
        }
    }

    @Test func putReplacesTheScenarioAndTheSnapshotLoadsBack() async throws {
        try await withScenario(Self.twoRules) { server in
            try await withProviderClient(server) { (provider) async throws in
                #expect(try await provider.send(headers: [("apns-topic", "com.example.counted")]).status == 500)

                // The `scenario` member of GET loads back as a scenario (JSON is YAML too).
                let snapshot = try await server.admin.scenario()
                let scenarioJSON = try #require(snapshot["scenario"])
                let (status, reloaded) = try await server.admin.call("PUT", "/admin/scenario", body: scenarioJSON.description)
                #expect(status == 200, "\(reloaded)")
                #expect(reloaded["scenario"] == scenarioJSON)
                #expect(reloaded["requests"]?.int == 0, "a new scenario starts its counters afresh")

                // A different one in JSON form: the old rules are gone.
                let json = #"{"name":"json-form","rules":[{"name":"gone","match":{"topic":"com.example.counted"},"status":410}]}"#
                let replaced = try await server.admin.putScenario(json)
                #expect(replaced["scenario"]?["name"]?.string == "json-form")
                #expect(replaced["rules"]?.array?.map { $0["name"]?.string } == ["gone"])
                let gone = try await provider.send(headers: [("apns-topic", "com.example.counted")])
                #expect(gone.status == 410 && gone.reason == "Unregistered" && gone.timestamp != nil, "\(gone.bodyText)")
                #expect(try await provider.send(headers: [("apns-topic", "com.example.other")]).status == 200)
            }
        }
    }

    /// `MockServer.scenario` replaced in-process (as an embedding test suite would) is what the admin API shows and
    /// what pushes get.
    @Test func scenarioReplacedInProcessIsInForce() async throws {
        try await withTestServer { server in
            let scenario = try ScenarioLoader.load(text: Self.twoRules, source: "in-process")
            server.server.scenario.replace(with: scenario)
            #expect(try await server.admin.scenario()["scenario"]?["name"]?.string == "two-rules")
            let answer = try await withProviderClient(server) { (provider) async throws in
                try await provider.send(headers: [("apns-topic", "com.example.other")])
            }
            #expect(answer.status == 400 && answer.reason == "TopicDisallowed")
            #expect(try await server.admin.hits("other") == 1)
        }
    }

    @Test func invalidPutIsRefusedWithEveryProblemAndTheOldScenarioStays() async throws {
        try await withScenario(Self.twoRules) { server in
            let broken = """
                name: broken
                rules:
                  - name: one
                    match: {pushType: alrt}
                    status: 400
                    reason: Unregistered
                  - name: two
                    match: {tokenRegex: '[0-9'}
                    delay: 10
                """
            let (status, body) = try await server.admin.call("PUT", "/admin/scenario", body: broken)
            #expect(status == 400)
            #expect(body["error"]?.string == "the scenario is not valid; the previous one stays in force")
            let problems = body["problems"]?.array?.compactMap(\.string) ?? []
            #expect(
                problems == [
                    "PUT /admin/scenario:4:23: rules[0].match.pushType: unknown push type 'alrt'; did you mean 'alert'?",
                    "PUT /admin/scenario:5:13: rules[0].status: status 400 does not go with reason Unregistered, which APNs answers with 410",
                    "PUT /admin/scenario:8:25: rules[1].match.tokenRegex: is not a valid regular expression: expected ']'",
                    "PUT /admin/scenario:9:12: rules[1].delay: '10' has no unit; write 10ms or 10s",
                ],
                "\(problems)"
            )
            // A YAML syntax error comes alone, with its position.
            let (syntaxStatus, syntax) = try await server.admin.call("PUT", "/admin/scenario", body: "rules:\n  - name: a\n   bad: [\n")
            #expect(syntaxStatus == 400)
            let syntaxProblems = syntax["problems"]?.array?.compactMap(\.string) ?? []
            #expect(syntaxProblems.count == 1 && syntaxProblems.first?.hasPrefix("PUT /admin/scenario:") == true, "\(syntax)")
            #expect(syntaxProblems.first?.contains("YAML syntax") == true, "\(syntax)")

            // The old scenario is still in force: its rule answers.
            #expect(try await server.admin.scenario()["scenario"]?["name"]?.string == "two-rules")
            let answer = try await withProviderClient(server) { (provider) async throws in
                try await provider.send(headers: [("apns-topic", "com.example.counted")])
            }
            #expect(answer.status == 500 && answer.reason == "InternalServerError")
            #expect(try await server.admin.hits("counted") == 1)
        }
    }

    @Test func resetRestartsSequencesAndCounters() async throws {
        let yaml = """
            rules:
              - name: works-once
                match: {topic: com.example.once}
                sequence: [accept, {status: 410, reason: Unregistered}]
            """
        try await withScenario(yaml) { server in
            try await withProviderClient(server) { (provider) async throws in
                let headers = [("apns-topic", "com.example.once")]
                #expect(try await provider.send(headers: headers).status == 200)
                let gone = try await provider.send(headers: headers)
                #expect(gone.status == 410 && gone.reason == "Unregistered")
                #expect(try await provider.send(headers: headers).status == 410, "the last step repeats")
                let before = try await server.admin.scenario()
                #expect(before["rules"]?[0]?["hits"]?.int == 3 && before["rules"]?[0]?["nextStep"]?.int == 1, "\(before)")

                let reset = try await server.admin.resetScenario()
                #expect(reset["requests"]?.int == 0)
                #expect(reset["rules"]?[0]?["hits"]?.int == 0 && reset["rules"]?[0]?["nextStep"]?.int == 0, "\(reset)")
                #expect((reset["startedAt"]?.int ?? 0) >= (before["startedAt"]?.int ?? .max))

                #expect(try await provider.send(headers: headers).status == 200, "the sequence starts over")
                #expect(try await provider.send(headers: headers).status == 410)
            }
        }
    }

    @Test func deleteRemovesTheRules() async throws {
        try await withScenario(Self.twoRules) { server in
            try await withProviderClient(server) { (provider) async throws in
                #expect(try await provider.send(headers: [("apns-topic", "com.example.counted")]).status == 500)
                let (status, emptied) = try await server.admin.call("DELETE", "/admin/scenario")
                #expect(status == 200)
                #expect(emptied["rules"]?.array?.isEmpty == true, "\(emptied)")
                #expect(try await server.admin.scenario()["rules"]?.array?.isEmpty == true)
                let answer = try await provider.send(headers: [("apns-topic", "com.example.counted")])
                #expect(answer.status == 200, "no rule any more: \(answer.bodyText)")
                let recording = try #require(try await server.admin.notifications([("topic", "com.example.counted")]).first { $0.status == 200 })
                #expect(recording.scenarioRule == nil)
            }
        }
    }

    @Test func devicesAddedUnregisteredAndRemovedAtRunTime() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let production = TestData.deviceToken()
            let (created, device) = try await server.admin.call(
                "POST", "/admin/devices", body: #"{"token":"\#(token)","topic":"\#(TestData.topic)","environment":"development","name":"phone"}"#
            )
            #expect(created == 201, "\(device)")
            #expect(device["token"]?.string == token && device["topic"]?.string == TestData.topic && device["name"]?.string == "phone")
            #expect(device["environment"]?.string == "development" && device["unregisteredAt"] == nil)
            #expect(try await server.admin.call("POST", "/admin/devices", body: #"{"token":"\#(production)","topic":"\#(TestData.topic)","environment":"production"}"#).status == 201)

            let (listed, list) = try await server.admin.call("GET", "/admin/devices")
            #expect(listed == 200)
            #expect(list["devices"]?.array?.compactMap { $0["token"]?.string } == [token, production])

            try await withProviderClient(server) { (provider) async throws in
                #expect(try await provider.send(token: token).status == 200)
                let wrongTopic = try await provider.send(token: token, headers: [("apns-topic", "com.example.other")])
                #expect(wrongTopic.status == 400 && wrongTopic.reason == "DeviceTokenNotForTopic")
                let wrongEnvironment = try await provider.send(token: production)
                #expect(wrongEnvironment.status == 400 && wrongEnvironment.reason == "BadDeviceToken")

                // Unregistered at a given time: 410 with exactly that timestamp.
                let (unregistered, updated) = try await server.admin.call(
                    "POST", "/admin/devices/\(token)/unregister", body: #"{"timestamp": 1700000000000}"#
                )
                #expect(unregistered == 200 && updated["unregisteredAt"]?.int == 1_700_000_000_000, "\(updated)")
                let gone = try await provider.send(token: token)
                #expect(gone.status == 410)
                #expect(gone.bodyText == #"{"reason":"Unregistered","timestamp":1700000000000}"#)

                // Without a body: unregistered now. Tokens are compared without regard to case.
                let before = epochMilliseconds()
                let (now, nowDevice) = try await server.admin.call("POST", "/admin/devices/\(token.uppercased())/unregister")
                let after = epochMilliseconds()
                #expect(now == 200)
                let at = try #require(nowDevice["unregisteredAt"]?.int)
                #expect((before...after).contains(at))
                #expect(try await provider.send(token: token).timestamp == at)

                // Removed: no longer judged by the registry.
                let (deleted, removed) = try await server.admin.call("DELETE", "/admin/devices/\(token)")
                #expect(deleted == 200 && removed["removed"]?.string == token, "\(removed)")
                #expect(try await provider.send(token: token).status == 200)
                #expect(try await server.admin.call("DELETE", "/admin/devices/\(token)").status == 404)
                #expect(try await server.admin.call("POST", "/admin/devices/\(token)/unregister").status == 404)
            }
            let (_, remaining) = try await server.admin.call("GET", "/admin/devices")
            #expect(remaining["devices"]?.array?.compactMap { $0["token"]?.string } == [production])
        }
    }

    @Test func badDeviceBodiesAreRefusedNamingTheField() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let cases: [(body: String, parameter: String)] = [
                (#"{"topic":"com.example.app"}"#, "token"),
                (#"{"token":"xyz","topic":"com.example.app"}"#, "token"),
                (#"{"token":"\#(token)"}"#, "topic"),
                (#"{"token":"\#(token)","topic":"com.example.app","environment":"staging"}"#, "environment"),
                (#"{"token":"\#(token)","topic":"com.example.app","colour":"blue"}"#, "colour"),
                (#"{"token":"\#(token)","topic":"com.example.app","unregisteredAt":"yesterday"}"#, "unregisteredAt"),
                ("not json", "body"),
                ("[1, 2]", "body"),
            ]
            for (body, parameter) in cases {
                let (status, json) = try await server.admin.call("POST", "/admin/devices", body: body)
                #expect(status == 400, "\(body): \(json)")
                #expect(json["parameter"]?.string == parameter, "\(body): \(json)")
                #expect(json["error"]?.string?.isEmpty == false, "\(body): \(json)")
            }
            #expect(try await server.admin.call("POST", "/admin/devices", body: #"{"token":"\#(token)","topic":"com.example.app"}"#).status == 201)
            let (status, json) = try await server.admin.call("POST", "/admin/devices/\(token)/unregister", body: #"{"timestamp":"yesterday"}"#)
            #expect(status == 400 && json["parameter"]?.string == "timestamp", "\(json)")
            let (_, devices) = try await server.admin.call("GET", "/admin/devices")
            #expect(devices["devices"]?.array?.count == 1)
            #expect(devices["devices"]?[0]?["unregisteredAt"] == nil, "a refused unregister changes nothing: \(devices)")
        }
    }

    /// Devices added through the admin API survive a new scenario (docs: "Replacing keeps the device registry").
    @Test func devicesAddedAtRunTimeSurviveANewScenario() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            #expect(try await server.admin.call("POST", "/admin/devices", body: #"{"token":"\#(token)","topic":"\#(TestData.topic)","unregisteredAt":1700000000000}"#).status == 201)
            try await server.admin.putScenario(Self.twoRules)
            try await server.admin.resetScenario()
            let answer = try await withProviderClient(server) { provider in try await provider.send(token: token) }
            #expect(answer.status == 410 && answer.timestamp == 1_700_000_000_000, "\(answer.bodyText)")
        }
    }

    @Test func recordingsCarryTheRuleAndFaultsAndFilterByRule() async throws {
        let yaml = """
            rules:
              - name: shrink
                match: {topic: com.example.shrink}
                maxConcurrentStreams: 5
              - name: refuse
                match: {topic: com.example.refuse}
                reason: BadTopic
            """
        try await withScenario(yaml) { server in
            try await withProviderClient(server) { (provider) async throws in
                #expect(try await provider.send(headers: [("apns-topic", "com.example.shrink")]).status == 200)
                #expect(try await provider.send(headers: [("apns-topic", "com.example.refuse")]).status == 400)
                #expect(try await provider.send(headers: [("apns-topic", "com.example.refuse")]).status == 400)
                #expect(try await provider.send().status == 200)
            }
            let all = try await server.admin.recordingsInOrder()
            #expect(all.map { $0.scenarioRule ?? "-" } == ["shrink", "refuse", "refuse", "-"])
            #expect(all.map(\.faults) == [["SETTINGS_MAX_CONCURRENT_STREAMS 5"], [], [], []])
            // No rule is JSON null, and a recording without faults has no `faults` member.
            #expect(all.last?.json["scenarioRule"] == .null)
            #expect(all.last?.json["faults"] == nil)
            #expect(all[1].reason == "BadTopic")

            let refused = try await server.admin.notifications([("rule", "refuse")])
            #expect(refused.count == 2 && refused.allSatisfy { $0.topic == "com.example.refuse" })
            #expect(try await server.admin.notifications([("rule", "shrink")]).count == 1)
            #expect(try await server.admin.notifications([("rule", "no-such-rule")]).isEmpty)
            // Combined with other filters, and usable when waiting.
            #expect(try await server.admin.notifications([("rule", "refuse"), ("status", "200")]).isEmpty)
            #expect(try await server.admin.waitForNotifications(count: 2, timeout: "1s", [("rule", "refuse")]).count == 2)
        }
    }

    /// Reloading never drops recordings: they are still listed after PUT, reset and DELETE of the scenario.
    @Test func recordingsSurviveScenarioReloads() async throws {
        try await withScenario(Self.twoRules) { server in
            try await withProviderClient(server) { (provider) async throws in
                #expect(try await provider.send(headers: [("apns-topic", "com.example.counted")]).status == 500)
                #expect(try await provider.send().status == 200)
            }
            let before = try await server.admin.recordingsInOrder()
            #expect(before.count == 2)

            try await server.admin.putScenario("name: next\nrules: []\n")
            #expect(try await server.admin.recordingsInOrder().map(\.json) == before.map(\.json))
            try await server.admin.resetScenario()
            #expect(try await server.admin.call("DELETE", "/admin/scenario").status == 200)
            let after = try await server.admin.recordingsInOrder()
            #expect(after.map(\.json) == before.map(\.json), "recordings changed across reloads")
            #expect(try await server.admin.notifications([("rule", "counted")]).count == 1, "the rule filter still finds old recordings")
            #expect(try await server.admin.stats()["received"]?.int == 2)

            // New recordings are appended after the old ones.
            _ = try await expectServerStillAnswers(server)
            #expect(try await server.admin.recordingsInOrder().count == 3)
        }
    }
}
