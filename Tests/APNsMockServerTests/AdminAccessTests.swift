import APNsMockServer
import Foundation
import Testing

/// An admin API open to a network without a token is said so: at start, in `/admin/stats` (and the inspector, in
/// `InspectorPageTests`).
@Suite("Admin access")
struct AdminAccessTests {
    @Test(arguments: [
        ("127.0.0.1", false, nil as Bool?), ("localhost", false, nil), ("::1", false, nil), ("[::1]", false, nil), ("127.0.0.2", false, nil),
        ("0.0.0.0", false, true), ("::", false, true), ("192.168.1.20", false, true), ("0.0.0.0", true, nil),
    ])
    func aWarningOnlyBeyondLoopbackWithoutAToken(host: String, token: Bool, warns: Bool?) {
        let access = AdminAccess(host: host, hasToken: token)
        #expect((access.warning != nil) == (warns ?? false), "\(host) token \(token)")
        #expect(access.jsonObject()["token"] as? Bool == token)
    }

    @Test(.timeLimit(.minutes(1)))
    func theStartUpLogAndTheStatsSayWhenTheAdminAPIIsOpen() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for token in [nil, "s3cret"] as [String?] {
            let (launched, ports) = try await RecordingPipelineTests.serve(
                ["--admin-host", "0.0.0.0"] + (token.map { ["--admin-token", $0] } ?? []), in: folder
            )
            defer { launched.cleanUp() }
            let stats = try await ExternalTool.run("curl", ["-s", "-H", "Authorization: Bearer \(token ?? "")", "http://127.0.0.1:\(ports.admin)/admin/stats"])
            let json = try JSON(parsing: Array(stats.stdout.utf8))
            #expect(json["adminAccess"]?["loopback"] == .bool(false), "\(json)")
            // A change is logged, with its kind and whether it carried the token (never the token), and counted.
            let reset = try await ExternalTool.run("curl", ["-s", "-X", "POST", "-H", "Authorization: Bearer \(token ?? "")", "http://127.0.0.1:\(ports.admin)/admin/reset"])
            #expect(reset.exitCode == 0)
            let logged = try await poll(timeout: .seconds(10), "the admin change in the log") { () -> String? in
                launched.output.components(separatedBy: "\n").first { $0.contains("admin change") }
            }
            #expect(logged.contains("change=reset") && logged.contains("method=POST") && logged.contains("status=200"), "\(logged)")
            #expect(logged.contains(token == nil ? "token=none" : "token=admin-token") && (token.map { !logged.contains($0) } ?? true), "\(logged)")
            let metrics = try await ExternalTool.run("curl", ["-s", "-H", "Authorization: Bearer \(token ?? "")", "http://127.0.0.1:\(ports.admin)/metrics"])
            #expect(metrics.stdout.contains(#"apns_mock_admin_changes_total{change="reset"} 1"#), "\(metrics.stdout)")
            if token == nil {
                #expect(launched.output.contains("the admin API listens on 0.0.0.0 without --admin-token"), "\(launched.output)")
                #expect(json["adminAccess"]?["warning"]?.string?.contains("set --admin-token") == true, "\(json)")
            } else {
                #expect(!launched.output.contains("without --admin-token"), "\(launched.output)")
                #expect(json["adminAccess"]?["warning"] == nil && json["adminAccess"]?["token"] == .bool(true), "\(json)")
            }
        }
    }

    /// `--admin-tls`: the admin API answers over TLS with the server certificate (trusted through the mock's CA),
    /// and not in clear.
    @Test(.timeLimit(.minutes(1)))
    func theAdminAPIServesTLSWithTheServerCertificate() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (launched, ports) = try await RecordingPipelineTests.serve(["--admin-tls", "true"], in: folder)
        defer { launched.cleanUp() }
        #expect(launched.output.contains("admin=https://"), "\(launched.output)")
        let secure = try await ExternalTool.run("curl", ["-s", "--cacert", TestPaths.caCertificate, "https://127.0.0.1:\(ports.admin)/readyz"])
        #expect(secure.stdout == #"{"certificates":"loaded","status":"ready"}"#, "\(secure)")
        let clear = try await ExternalTool.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "http://127.0.0.1:\(ports.admin)/readyz"])
        #expect(clear.stdout != "200", "\(clear)")
    }
}
