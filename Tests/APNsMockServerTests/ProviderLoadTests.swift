import Foundation
import Testing

/// Many streams at once, from nghttp2's load generator: every request answered, every one recorded.
@Suite("Provider under load (h2load)")
struct ProviderLoadTests {
    /// Reads `h2load`'s summary line: `requests: 1000 total, 1000 started, 1000 done, 1000 succeeded, 0 failed, …`.
    static func requestCounts(_ output: String) -> [String: Int] {
        guard let line = output.components(separatedBy: "\n").first(where: { $0.hasPrefix("requests:") }) else { return [:] }
        var counts: [String: Int] = [:]
        for part in line.dropFirst("requests:".count).split(separator: ",") {
            let words = part.split(separator: " ")
            if words.count == 2, let number = Int(words[0]) { counts[String(words[1])] = number }
        }
        return counts
    }

    @Test func thousandPushesOverFourConnectionsAreAllAnsweredAndRecorded() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let result = try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payloadPath in
                try await ExternalTool.run(
                    "h2load",
                    [
                        "-n", "1000", "-c", "4", "-m", "250", "-d", payloadPath,
                        "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: alert",
                        server.deviceURL(token),
                    ],
                    timeout: .seconds(30)
                )
            }
            #expect(result.exitCode == 0, "\(result)")
            let counts = Self.requestCounts(result.stdout)
            #expect(counts["succeeded"] == 1000, "\(result)")
            #expect(counts["failed"] == 0, "\(result)")
            #expect(counts["errored"] == 0, "\(result)")
            #expect(result.stdout.contains("status codes: 1000 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(result)")

            // Each request is recorded before its answer goes out, so the count is final once h2load is done.
            let stats = try await server.admin.stats()
            #expect(stats["received"]?.int == 1000, "\(stats)")
            #expect(stats["byStatus"] == .object(["200": .number(1000)]), "\(stats)")
            #expect(stats["abandoned"]?.int == 0, "\(stats)")
            #expect(stats["recorder"]?["stored"]?.int == 1000, "\(stats)")
            #expect(stats["connections"]?["accepted"]?.int == 4, "\(stats)")

            let statistics = server.server.store.statistics()
            #expect(statistics.received == 1000)
            #expect(statistics.byStatus == [200: 1000])
            let (recorded, total) = server.server.store.list(.init(deviceToken: token, status: 200))
            #expect(total == 1000)
            #expect(Set(recorded.map(\.apnsID)).count == 1000, "every answer has its own apns-id")
            #expect(recorded.allSatisfy { $0.request.payload == Array(TestData.alertPayload.utf8) && $0.pushType == "alert" })

            // Metrics are added per read batch (many requests each here), before the batch's answers are written.
            let metrics = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics")
            let samples = OperationsTests.samples(metrics.body)
            #expect(samples[#"apns_mock_requests_total{status="200",reason=""}"#] == 1000, "\(metrics.body)")
            #expect(samples[#"apns_mock_requests_by_push_type_total{push_type="alert"}"#] == 1000, "\(metrics.body)")
            #expect(samples["apns_mock_request_duration_seconds_count"] == 1000, "\(metrics.body)")
        }
    }
}
