import Foundation
import Testing

/// What a test suite needs between its test cases: a scenario's devices go with it, `POST /admin/reset` returns
/// the mock to its start state.
@Suite("Test isolation through the admin API")
struct TestIsolationTests {
    static let uninstalled = String(repeating: "b2", count: 32)
    static let scenarioWithAnUninstalledDevice = """
        devices:
          - name: gone
            token: \(uninstalled)
            topic: \(TestData.topic)
            unregisteredAt: -2d
        """

    @Test func aScenariosDevicesGoWithItAndAdminDevicesStay() async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { client in
                let adminToken = String(repeating: "c3", count: 32)
                let added = try await server.admin.call(
                    "POST", "/admin/devices", body: #"{"token":"\#(adminToken)","topic":"\#(TestData.topic)","unregisteredAt":1700000000000}"#
                )
                #expect(added.status == 201, "\(added.json)")

                // Test case 1: its scenario unregisters a device.
                try await server.admin.putScenario(Self.scenarioWithAnUninstalledDevice)
                #expect(try await client.send(token: Self.uninstalled).status == 410)
                // The scenario counts the requests its registry answered.
                #expect(try await server.admin.scenario()["requests"]?.int == 1)

                // Test case 2: no scenario. The old scenario's device is gone; the admin's stays.
                let deleted = try await server.admin.call("DELETE", "/admin/scenario")
                #expect(deleted.status == 200)
                #expect(try await client.send(token: Self.uninstalled).status == 200, "the old scenario's device leaked")
                #expect(try await client.send(token: adminToken).status == 410, "a device added through the API stays")

                // A new scenario does not bring the old one's devices back either.
                try await server.admin.putScenario("rules: []\n")
                #expect(try await client.send(token: Self.uninstalled).status == 200)
                let devices = try await server.admin.call("GET", "/admin/devices")
                #expect(devices.json["devices"]?.array?.compactMap { $0["token"]?.string } == [adminToken], "\(devices.json)")
            }
        }
    }

    @Test func resetReturnsTheMockToItsStartState() async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { client in
                _ = try await server.admin.call("POST", "/admin/devices", body: #"{"token":"\#(String(repeating: "d4", count: 32))","topic":"x"}"#)
                try await server.admin.putScenario(Self.scenarioWithAnUninstalledDevice)
                #expect(try await client.send(token: Self.uninstalled).status == 410)
                #expect(try await client.send().status == 200)

                let reset = try await server.admin.call("POST", "/admin/reset")
                #expect(reset.status == 200, "\(reset.json)")

                let stats = try await server.admin.stats()
                #expect(stats["received"]?.int == 0 && stats["recorder"]?["stored"]?.int == 0, "\(stats)")
                #expect(stats["byStatus"] == .object([:]), "\(stats)")
                #expect(try await server.admin.call("GET", "/admin/devices").json["devices"]?.array?.isEmpty == true)
                let scenario = try await server.admin.scenario()
                #expect(scenario["requests"]?.int == 0 && scenario["rules"]?.array?.isEmpty == true, "\(scenario)")
                #expect(try await client.send(token: Self.uninstalled).status == 200)
                // Sequence numbers keep growing: a recording is never confused with one from before the reset.
                let after = try await server.admin.notifications()
                #expect(after.count == 1 && (after.first?.json["sequence"]?.int ?? 0) > 2, "\(after.map(\.json))")
            }
        }
    }
}
