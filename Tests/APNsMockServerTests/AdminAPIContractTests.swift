import APNsMockAdminClient
import APNsMockServer
import Foundation
import Testing
import Yams

/// The admin API's OpenAPI document (`docs/admin-api.yaml`) against what the server really serves, and the typed
/// admin client against a mock in another process.
@Suite struct AdminAPIContractTests {
    static var documentPath: String { TestPaths.repositoryRoot.appendingPathComponent("docs/admin-api.yaml").path }

    /// Every route the server registers is documented, and every documented operation is served.
    @Test func everyServedRouteIsDocumentedAndEveryDocumentedOneServed() async throws {
        let text = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var documented: Set<String> = []
        for (path, item) in paths {
            let operations = try #require(item as? [String: Any])
            for method in operations.keys where ["get", "put", "post", "delete", "patch", "head"].contains(method) {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        try await withTestServer { server in
            let served = Set(server.server.adminRoutes.map(\.description))
            #expect(served.count == server.server.adminRoutes.count, "a route is registered twice")
            #expect(served.subtracting(documented).sorted() == [], "served but not in docs/admin-api.yaml")
            #expect(documented.subtracting(served).sorted() == [], "documented but not served")
            #expect(served.count >= 25)
        }
    }

    /// `GET /admin/openapi.yaml` serves the file's text (the binary carries a copy: `scripts/sync-openapi`).
    @Test func theServedDocumentIsTheFile() async throws {
        let file = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
        try await withTestServer { server in
            let result = try await ExternalTool.run("curl", ["-sS", "-D", "-", "\(server.admin.baseURL)/admin/openapi.yaml"])
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            #expect(parts.first?.lowercased().contains("content-type: application/yaml") == true, "\(result)")
            #expect(parts.dropFirst().joined(separator: "\r\n\r\n") == file, "docs/admin-api.yaml changed: run scripts/sync-openapi")
        }
    }

    /// The document is valid OpenAPI 3.1; a scripted session's answers match its schemas; schemathesis's generated
    /// requests (every operation but the waiting ones) find no 5xx and nothing undocumented.
    @Test(.timeLimit(.minutes(3)))
    func answersMatchTheDocumentAndFuzzedRequestsFindNothing() async throws {
        try await withTestServer { server in
            for index in 0..<5 {
                let token = TestData.deviceToken()
                let result = try await ProviderCurlTests.curl([
                    "--http2", "-o", "/dev/null", "-w", "%{http_code}",
                    "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: alert",
                    "-d", #"{"aps":{"alert":{"title":"T\#(index)","body":"B"},"thread-id":"t"}}"#, server.deviceURL(token),
                ])
                #expect(result.stdout == "200", "\(result)")
            }
            let result = try await ExternalTool.run(
                "python3",
                [
                    TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/admin_api_contract.py").path,
                    Self.documentPath, server.admin.baseURL, "40",
                ],
                timeout: .seconds(150)
            )
            // The script's first line names what schemathesis found (and its seed); a report may keep only that.
            let passed = result.exitCode == 0 && result.stdout.contains("contract ok")
            #expect(passed, "\(result.stdout.prefix { $0 != "\n" })\n\(result)")
        }
    }

    /// The typed admin client against the built binary in a process of its own, with an admin token.
    @Test(.timeLimit(.minutes(2)))
    func theAdminClientDrivesAMockInAnotherProcess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (launched, ports) = try await RecordingPipelineTests.serve(["--admin-token", "s3cret"], in: folder)
        defer { launched.cleanUp() }
        let mock = APNsMockAdminClient(baseURL: "http://127.0.0.1:\(ports.admin)", adminToken: "s3cret")
        let unauthorized = APNsMockAdminClient(baseURL: "http://127.0.0.1:\(ports.admin)")
        await #expect(throws: AdminRequestFailed.self) { try await unauthorized.statistics() }

        try await mock.reset()
        let gone = TestData.deviceToken()
        try await mock.register(MockDevice(token: gone, topic: TestData.topic))
        try await mock.unregister(token: gone, at: Date(timeIntervalSince1970: 1_700_000_000))
        let live = TestData.deviceToken()
        for token in [live, gone] {
            let result = try await ProviderCurlTests.curl([
                "--http2", "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload,
                "https://127.0.0.1:\(ports.provider)/3/device/\(token)",
            ])
            #expect(result.stdout == (token == live ? "200" : "410"), "\(result)")
        }
        let answered = try await mock.waitForNotifications(count: 2, timeout: .seconds(10))
        #expect(answered.map(\.deviceToken) == [live, gone])
        #expect(answered[1].response?.timestamp == 1_700_000_000_000)
        #expect(try await mock.notifications(matching: NotificationFilter(status: 410)).map(\.deviceToken) == [gone])
        let statistics = try await mock.statistics()
        #expect(statistics.received == 2)
        #expect(statistics.byStatus == ["200": 1, "410": 1])

        await #expect(throws: ScenarioRejected.self) { try await mock.setScenario(yaml: "rules: [{match: {tokn: a}}]") }
        let state = try await mock.setScenario(yaml: "name: from-the-client\nrules:\n  - {name: all-gone, status: 410, reason: Unregistered}\n")
        #expect(state.rules.map(\.name) == ["all-gone"])
        #expect(try await mock.scenario().name == "from-the-client")
        try await mock.clearScenario()
        try await mock.clearNotifications()
        #expect(try await mock.notifications().isEmpty)
        do {
            _ = try await mock.waitForNotifications(count: 1, timeout: .milliseconds(200))
            Issue.record("a wait on an empty mock returned")
        } catch let timeout as NotificationWaitTimeout {
            #expect(timeout.description.contains("received nothing"))
        }
    }
}
