import APNsMockServer
import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// What CI and staging rely on besides the provider port: metrics, health, the admin token, the record file,
/// the configuration file and graceful shutdown.
@Suite("Operations")
struct OperationsTests {
    static func get(_ url: String, bearer: String? = nil) async throws -> (status: Int, body: String, contentType: String?) {
        var request = HTTPClientRequest(url: url)
        if let bearer { request.headers.add(name: "authorization", value: "Bearer \(bearer)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return (Int(response.status.code), String(buffer: body), response.headers.first(name: "content-type"))
    }

    /// Sample lines of the Prometheus text format: `name{labels} value`, skipping comments.
    static func samples(_ text: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = value
        }
        return result
    }

    @Test func metricsCountPushesByStatusReasonAndPushTypeInPrometheusText() async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { client in
                for _ in 0..<3 {
                    _ = try await client.send(headers: [("apns-topic", TestData.topic), ("apns-push-type", "alert")])
                }
                _ = try await client.send(token: "nothex")
                _ = try await client.send(headers: [("apns-topic", TestData.topic), ("apns-push-type", "bogus")])
            }
            let (status, body, contentType) = try await Self.get("http://127.0.0.1:\(server.adminPort)/metrics")
            #expect(status == 200)
            #expect(contentType?.hasPrefix("text/plain") == true)
            // Every non-comment line parses as `series value`.
            let lines = body.split(separator: "\n").filter { !$0.hasPrefix("#") }
            #expect(lines.allSatisfy { Double($0.split(separator: " ").last ?? "") != nil }, "\(body)")
            let samples = Self.samples(body)
            #expect(samples[#"apns_mock_requests_total{status="200",reason=""}"#] == 3, "\(body)")
            #expect(samples[#"apns_mock_requests_total{status="400",reason="BadDeviceToken"}"#] == 1, "\(body)")
            #expect(samples[#"apns_mock_requests_total{status="400",reason="InvalidPushType"}"#] == 1, "\(body)")
            #expect(samples[#"apns_mock_requests_by_push_type_total{push_type="alert"}"#] == 3, "\(body)")
            #expect(samples[#"apns_mock_requests_by_push_type_total{push_type="none"}"#] == 1, "\(body)")
            #expect(samples[#"apns_mock_requests_by_push_type_total{push_type="invalid"}"#] == 1, "\(body)")
            #expect(samples["apns_mock_request_duration_seconds_count"] == 5, "\(body)")
            // Cumulative buckets ending in +Inf = count, one HELP and TYPE line (the histogram is apns-mock's own).
            #expect(samples[#"apns_mock_request_duration_seconds_bucket{le="+Inf"}"#] == 5, "\(body)")
            #expect((samples[#"apns_mock_request_duration_seconds_bucket{le="5.0"}"#] ?? 0) <= 5, "\(body)")
            #expect((samples[#"apns_mock_request_duration_seconds_bucket{le="0.00005"}"#] ?? -1) >= 0, "\(body)")
            #expect((samples["apns_mock_request_duration_seconds_sum"] ?? 0) > 0, "\(body)")
            #expect(body.components(separatedBy: "# TYPE apns_mock_request_duration_seconds histogram").count == 2, "\(body)")
            #expect(samples["apns_mock_recorder_stored"] == 5, "\(body)")
            #expect(samples["apns_mock_connections_accepted"] == 1, "\(body)")
        }
    }

    @Test func adminTokenProtectsEveryRouteButHealth() async throws {
        try await withTestServer(configure: { $0.adminToken = "s3cret" }) { server in
            let base = "http://127.0.0.1:\(server.adminPort)"
            let cases: [(String, String?, Int)] = [
                ("/admin/notifications", nil, 401), ("/admin/notifications", "wrong", 401), ("/metrics", nil, 401),
                ("/admin/notifications", "s3cret", 200), ("/healthz", nil, 200), ("/readyz", nil, 200),
            ]
            for (path, bearer, expected) in cases {
                let status = try await Self.get(base + path, bearer: bearer).status
                #expect(status == expected, "\(path) with \(bearer ?? "no token")")
            }
        }
    }

    @Test func readyzSaysReadyOnceListening() async throws {
        try await withTestServer { server in
            let (status, body, _) = try await Self.get("http://127.0.0.1:\(server.adminPort)/readyz")
            #expect(status == 200)
            #expect(body.contains(#""status":"ready""#), "\(body)")
        }
    }

    /// The NDJSON file holds exactly what the recorder holds, once the server has stopped.
    @Test func recordFileHoldsEveryRecordingAfterShutdown() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-\(UUID().uuidString).ndjson").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var recorded: [String] = []
        try await withTestServer(configure: { $0.recordFile = path }) { server in
            let load = try await ExternalTool.run("h2load", [
                "-n", "500", "-c", "2", "-m", "50", "-H", "apns-topic: \(TestData.topic)",
                "-d", "/dev/stdin", server.deviceURL(TestData.deviceToken()),
            ], stdin: Data(TestData.alertPayload.utf8))
            #expect(load.stdout.contains("500 succeeded"), "\(load)")
            recorded = server.server.store.list().notifications.compactMap { $0.response?.apnsID }
            // Lines the writer holds back to write whole chunks reach the file once it has nothing more to do:
            // the file is whole while the server runs, not only after it stopped.
            let whole = try await poll("500 lines in the record file while idle") { () -> Int? in
                let count = (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").count ?? 0
                return count == 500 ? count : nil
            }
            #expect(whole == 500)
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 500)
        // The space reserved ahead of the writes (32 MiB at a time where the file system can) is given back.
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(Int(status.st_blocks) * 512 <= (attributes[.size] as? Int ?? 0) + 64 << 10, "\(status.st_blocks) blocks")
        let ids = try lines.map { line -> String in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return ((object?["response"] as? [String: Any])?["apnsId"] as? String) ?? ""
        }
        #expect(ids.count == recorded.count)
        #expect(ids == recorded, "the file lists recordings in sequence order")
    }

    /// Shutdown under load: clients see GOAWAY with APNs' Shutdown reason; every stream the server answered is recorded.
    @Test func shutdownUnderLoadSendsGoAwayAndLosesNoRecording() async throws {
        try await withTestServer { server in
            let load = Task {
                try await ExternalTool.run("h2load", [
                    "-D", "3", "-c", "4", "-m", "20", "-H", "apns-topic: \(TestData.topic)",
                    "-d", "/dev/stdin", server.deviceURL(TestData.deviceToken()),
                ], stdin: Data(TestData.alertPayload.utf8))
            }
            _ = try await server.admin.waitForNotifications(count: 200, timeout: "10s")
            await server.server.shutdown(grace: .seconds(5))
            let result = try await load.value
            let succeeded = Int(result.stdout.firstMatch(of: /(\d+) succeeded/)?.1 ?? "") ?? -1
            #expect(succeeded >= 200, "\(result)")
            // Every 200 a client received is recorded. The recorder may hold a few more: answers to streams that
            // were in flight when h2load's own clock stopped it (at most one window, 4 connections x 20 streams).
            let recorded = server.server.store.statistics().byStatus[200] ?? 0
            #expect(recorded >= succeeded, "\(result)")
            #expect(recorded <= succeeded + 80, "\(result)")
            #expect(server.server.tracker.openConnections == 0)
        }
    }

    @Test func configurationFileSettingsApplyBelowEnvironmentAndFlags() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            # apns-mock settings
            port: 3000
            admin-port: 3001
            environment: production
            auth: token
            provider-key:
              - key-id=ABC123DEFG,team-id=TEAMID1234,file=/keys/a.p8
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let configuration = try ServerConfiguration.resolve(
            flags: [.config: path, .port: "4000"],
            environment: ["APNS_MOCK_ADMIN_PORT": "5001"]
        )
        #expect(configuration.port == 4000)
        #expect(configuration.adminPort == 5001)
        #expect(configuration.environment == .production)
        #expect(configuration.authMode == .token)
        #expect(configuration.providerKeys.map(\.keyID) == ["ABC123DEFG"])
    }

    @Test func configurationFileErrorsNameFileLineAndKey() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "port: 3000\nprot: 3001\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try ServerConfiguration.resolve(flags: [.config: path], environment: [:])
        } throws: { error in
            "\(error)" == "\(path):2: prot: unknown setting; did you mean 'port'?"
        }
        try "port: many\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect {
            try ServerConfiguration.resolve(flags: [.config: path], environment: [:])
        } throws: { error in
            "\(error)" == "\(path):1: port: 'many' is not a port number (0...65535)"
        }
    }
}
