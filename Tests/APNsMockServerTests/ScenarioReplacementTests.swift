import Foundation
import Testing

/// A scenario put in force while connections are open: its connection policy reaches them, and the metrics of the
/// scenario it replaced go.
@Suite("Scenario replacement on open connections")
struct ScenarioReplacementTests {
    @Test func aNewScenariosConnectionPolicyAppliesToAConnectionOpenedBeforeIt() async throws {
        try await withTestServer { server in
            let pusher = try await RawPusher.open(server)
            #expect(try await pusher.push().isBareHeaders)
            try await server.admin.putScenario(
                """
                connection:
                  closeAfterBadDeviceTokens: 1
                """
            )
            let bad = try await pusher.push(token: String(repeating: "z", count: 64))
            #expect(bad.body == #"{"reason":"BadDeviceToken"}"#, "\(bad)")
            let after = try await pusher.framesUntilClosed()
            let goAway = try #require(bad.goAway ?? after.compactMap(GoAway.init).first, "the new policy closes the old connection: \(bad) \(after)")
            #expect(goAway.errorCode == 0)
            await pusher.close()
        }
    }

    /// A connection keeps the engine it last used while the scenario's generation stays the same: a new scenario,
    /// or none, must still decide its very next request.
    @Test func aNewScenariosRulesAndItsDeletionReachTheNextRequestOfAnOpenConnection() async throws {
        try await withTestServer { server in
            let pusher = try await RawPusher.open(server)
            #expect(try await pusher.push().isBareHeaders)
            try await server.admin.putScenario("rules:\n  - name: everything\n    status: 500\n    reason: InternalServerError\n")
            let scripted = try await pusher.push()
            #expect(scripted.body == #"{"reason":"InternalServerError"}"#, "\(scripted)")
            let (status, _) = try await server.admin.call("DELETE", "/admin/scenario")
            #expect(status == 200)
            let after = try await pusher.push()
            #expect(after.isBareHeaders, "no scenario after DELETE: \(after)")
            try await server.admin.putScenario("rules:\n  - name: again\n    status: 500\n    reason: InternalServerError\n")
            #expect(try await pusher.push().body == #"{"reason":"InternalServerError"}"#)
            #expect(try await server.admin.hits("again") == 1)
            await pusher.close()
        }
    }

    @Test func replacingAScenarioDropsTheMetricsOfItsRules() async throws {
        try await withTestServer { server in
            let metricsURL = "http://127.0.0.1:\(server.adminPort)/metrics"
            try await server.admin.putScenario("rules:\n  - name: old-rule\n    match: {topic: com.example.none}\n    status: 500\n    reason: InternalServerError\n")
            let before = try await OperationsTests.get(metricsURL).body
            #expect(before.contains(#"apns_mock_scenario_rule_hits{rule="old-rule"}"#), "\(before)")
            try await server.admin.putScenario("rules:\n  - name: new-rule\n    match: {topic: com.example.none}\n    status: 500\n    reason: InternalServerError\n")
            let after = try await OperationsTests.get(metricsURL).body
            #expect(after.contains(#"apns_mock_scenario_rule_hits{rule="new-rule"}"#), "\(after)")
            #expect(!after.contains("old-rule"), "\(after)")
        }
    }
}
