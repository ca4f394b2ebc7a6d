import Foundation
import Testing

/// Payload warnings over the wire: a push APNs accepts but the device would mishandle is answered 200 and its
/// recording, the stats and the metrics say what is wrong; `--lint off` says nothing.
@Suite("Payload warnings end to end")
struct PayloadWarningEndToEndTests {
    static let mistaken = #"{"aps":{"content-available":1,"badge":1}}"#

    static func push(_ server: TestServer) async throws -> ToolResult {
        try await ProviderAuthenticationTests.curl([
            "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: background", "-H", "apns-priority: 10",
            "--data-binary", mistaken, "-w", "%{http_code}", server.deviceURL(TestData.deviceToken()),
        ])
    }

    @Test func aMistakenBackgroundPushIsAnswered200AndWarned() async throws {
        try await withTestServer { server in
            let sent = try await Self.push(server)
            #expect(sent.stdout == "200", "\(sent)")
            let recordings = try await server.admin.notifications([("warnings", "any")])
            let codes = recordings.first?.json["warnings"]?.array?.compactMap { $0["code"]?.string }
            #expect(codes == ["background-with-alert", "background-priority-10"], "\(recordings)")
            #expect(try await server.admin.notifications([("warning", "background-priority-10")]).count == 1)
            let stats = try await server.admin.stats()
            #expect(stats["byWarning"]?["background-with-alert"]?.int == 1, "\(stats)")
            let samples = OperationsTests.samples(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body)
            #expect(samples[#"apns_mock_payload_warnings_total{code="background-priority-10"}"#] == 1, "\(samples)")
        }
    }

    @Test func lintOffRecordsNoWarnings() async throws {
        try await withTestServer(configure: { $0.lint = false }) { server in
            #expect(try await Self.push(server).stdout == "200")
            let recording = try #require(try await server.admin.notifications().first)
            #expect(recording.json["warnings"] == .array([]), "\(recording)")
        }
    }
}
