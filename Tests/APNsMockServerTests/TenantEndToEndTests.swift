import APNsMock
import APNsMockAdminClient
import APNsMockCertificates
import Foundation
import Testing

@testable import APNsMockServer

/// Two teams sharing one mock (`--tenants by-team`), each driven by a real client at once: team A with its token
/// key through aioapns, team B with its client certificate through httpx. Each sees only its own.
@Suite("Tenants end to end")
struct TenantEndToEndTests {
    static let teamA = "TEAM000001"
    static let teamB = "TEAM000002"
    static let topicB = "com.teamb.app"

    /// A mock with tenants by team, tokens for each team and one for the operator, and team B's certificate.
    static func withTwoTeams(_ body: (TestServer, _ certificateB: (certificate: String, key: String)) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-tenants-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let authority = try CertificateAuthority(certificateFile: TestPaths.caCertificate, privateKeyFile: TestPaths.certsDirectory + "/ca-key.pem")
        let written = try authority.writeClientCertificate(
            topics: [topicB], environment: [.development], to: scratch, name: "team-b", teamID: teamB
        )
        try await withTestServer(configure: {
            $0.authMode = .either
            $0.tenants = .byTeam
            $0.adminTokens = AdminTokens(
                unscoped: "operator-secret",
                scoped: [.init(tenant: teamA, secret: "secret-a"), .init(tenant: teamB, secret: "secret-b")]
            )
        }) { server in
            try await body(server, (written[0], written[1]))
        }
    }

    static func admin(_ server: TestServer, _ token: String, tenant: String? = nil) -> APNsMockAdminClient {
        APNsMockAdminClient(baseURL: "http://127.0.0.1:\(server.server.adminPort)", adminToken: token, tenant: tenant)
    }

    static func aioapns(_ server: TestServer, token: String, count: Int) async throws -> [String] {
        let result = try await ExternalTool.run("python3", [
            TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/aioapns_push.py").path,
            "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
            "--key", TestPaths.certsDirectory + "/AuthKey_APNSMOCK01.p8", "--key-id", "APNSMOCK01", "--team-id", teamA,
            "--topic", TestData.topic, "--token", token, "--count", String(count),
        ], timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    static func httpx(_ server: TestServer, certificate: (certificate: String, key: String), token: String, count: Int) async throws -> [String] {
        let result = try await ExternalTool.run("python3", [
            TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/httpx_push.py").path,
            server.deviceURL(token), "--ca", TestPaths.caCertificate, "--cert", certificate.certificate, "--key", certificate.key,
            "--header", "apns-topic: \(topicB)", "--count", String(count),
        ], timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test func eachTeamSeesOnlyItsOwnRecordingsScenarioAndDevices() async throws {
        try await Self.withTwoTeams { server, certificateB in
            let (tokenA, tokenB) = (TestData.deviceToken(), TestData.deviceToken())
            // Both teams at once.
            async let sentA = Self.aioapns(server, token: tokenA, count: 5)
            async let sentB = Self.httpx(server, certificate: certificateB, token: tokenB, count: 3)
            let (linesA, linesB) = try await (sentA, sentB)
            #expect(linesA.count == 5 && linesA.allSatisfy { $0.contains("\"status\": \"200\"") }, "\(linesA)")
            #expect(linesB.count == 3 && linesB.allSatisfy { $0.contains("\"status\": 200") }, "\(linesB)")

            let (adminA, adminB, operatorView) = (Self.admin(server, "secret-a"), Self.admin(server, "secret-b"), Self.admin(server, "operator-secret"))
            let recordedA = try await adminA.notifications(matching: NotificationFilter(), limit: nil)
            let recordedB = try await adminB.notifications(matching: NotificationFilter(), limit: nil)
            #expect(recordedA.count == 5 && recordedA.allSatisfy { $0.tenant == Self.teamA && $0.deviceToken == tokenA })
            #expect(recordedB.count == 3 && recordedB.allSatisfy { $0.tenant == Self.teamB && $0.deviceToken == tokenB })
            #expect(try await operatorView.notifications(matching: NotificationFilter(), limit: nil).count == 8)
            #expect(try await Self.admin(server, "operator-secret", tenant: Self.teamB).notifications(matching: NotificationFilter(), limit: nil).count == 3)

            // A's token never gets B's data: not by id, not by naming the tenant.
            let idB = try #require(recordedB.first?.response?.apnsId)
            #expect(try await adminA.notification(apnsID: idB) == nil)
            #expect(try await adminB.notification(apnsID: idB) != nil)
            let (status, _) = try await Self.raw(server, "GET", "/admin/notifications?tenant=\(Self.teamB)", token: "secret-a")
            #expect(status == 404)
            #expect(try await adminA.statistics().received == 5)
            #expect(try await adminB.statistics().received == 3)

            // A's scenario answers A's pushes only.
            _ = try await adminA.setScenario(yaml: "name: a-down\nrules:\n  - name: down\n    reason: ServiceUnavailable\n")
            let failedA = try await Self.aioapns(server, token: tokenA, count: 1)
            #expect(failedA.count == 1 && failedA.allSatisfy { $0.contains("503") }, "\(failedA)")
            let stillB = try await Self.httpx(server, certificate: certificateB, token: tokenB, count: 1)
            #expect(stillB.count == 1 && stillB.allSatisfy { $0.contains("\"status\": 200") }, "\(stillB)")
            #expect(try await adminB.scenario().name != "a-down")

            // A's devices are A's.
            try await adminA.register(MockDevice(token: tokenA, topic: TestData.topic))
            #expect(try await adminA.devices().map(\.token) == [tokenA])
            #expect(try await adminB.devices().isEmpty)

            // A's reset leaves B's recordings whole: 3 + 1, counted exactly.
            try await adminA.reset()
            #expect(try await adminA.notifications(matching: NotificationFilter(), limit: nil).isEmpty)
            #expect(try await adminA.devices().isEmpty)
            #expect(try await adminB.notifications(matching: NotificationFilter(), limit: nil).count == 4)
            #expect(try await adminA.scenario().name != "a-down")
        }
    }

    @Test func aTenantsWaitAndLiveFeedSeeOnlyItsOwn() async throws {
        try await Self.withTwoTeams { server, certificateB in
            let adminA = Self.admin(server, "secret-a")
            async let waited = adminA.waitForNotifications(count: 2, matching: NotificationFilter(), timeout: .seconds(30))
            // The feed from the start (after 0): B's pushes come first, and A's reader must skip them.
            let feed = Task {
                try await ExternalTool.run("python3", [
                    TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/sse_read.py").path,
                    "http://127.0.0.1:\(server.server.adminPort)/admin/notifications/stream?access_token=secret-a",
                    "--count", "2", "--last-event-id", "0",
                ], timeout: .seconds(30))
            }
            _ = try await Self.httpx(server, certificate: certificateB, token: TestData.deviceToken(), count: 3)
            _ = try await Self.aioapns(server, token: TestData.deviceToken(), count: 2)
            let seen = try await waited
            #expect(seen.count == 2 && seen.allSatisfy { $0.tenant == Self.teamA })
            let read = try await feed.value
            #expect(read.exitCode == 0, "\(read)")
            let events = try JSON(parsing: Array(read.stdout.utf8)).array ?? []
            let tenants = events.compactMap { $0["data"]?["tenant"]?.string }
            #expect(tenants == [Self.teamA, Self.teamA], "\(read.stdout)")
        }
    }

    @Test func scopedTokensAndTenantNamesGetClearAnswers() async throws {
        try await Self.withTwoTeams { server, _ in
            #expect(try await Self.raw(server, "GET", "/admin/notifications", token: "wrong").status == 401)
            #expect(try await Self.raw(server, "GET", "/admin/notifications?tenant=\(Self.teamA)", token: "secret-a").status == 200)
            let (status, body) = try await Self.raw(server, "GET", "/admin/stats", token: "operator-secret")
            #expect(status == 200)
            #expect(body.contains(#""mode":"by-team""#), "\(body)")
        }
        // Without --tenants, naming one is a clear 400.
        try await withTestServer { server in
            let (status, body) = try await Self.raw(server, "GET", "/admin/notifications?tenant=TEAM000001", token: nil)
            #expect(status == 400 && body.contains("--tenants"), "\(body)")
        }
    }

    /// By host name: each team points its client at its own name, which the server certificate covers
    /// (`*.apns.localhost`); curl checks the name against the certificate, as every client does.
    @Test func byHostEachTeamsHostNameIsItsTenant() async throws {
        try await withTestServer(configure: { $0.tenants = .byHost }) { server in
            let port = server.server.providerPort
            for (host, count) in [("team-a.apns.localhost", 2), ("team-b.apns.localhost", 3)] {
                for _ in 0..<count {
                    let push = try await ProviderCurlTests.curl([
                        "--http2", "-o", "/dev/null", "-w", "%{http_code}", "--connect-to", "\(host):\(port):127.0.0.1:\(port)",
                        "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload,
                        "https://\(host):\(port)/3/device/\(TestData.deviceToken())",
                    ])
                    #expect(push.stdout == "200", "\(push)")
                }
            }
            let recorded = try await server.admin.notifications()
            #expect(recorded.map { $0.json["tenant"]?.string } == ["team-a", "team-a", "team-b", "team-b", "team-b"], "\(recorded)")
            #expect(try await server.admin.notifications([("tenant", "team-b")]).count == 3)
        }
    }

    /// One admin call with curl: its status and body.
    static func raw(_ server: TestServer, _ method: String, _ path: String, token: String?) async throws -> (status: Int, body: String) {
        var arguments = ["--silent", "--max-time", "15", "-X", method, "-w", "\n%{http_code}"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        let result = try await ExternalTool.run("curl", arguments + ["http://127.0.0.1:\(server.server.adminPort)\(path)"])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }
}
