import APNsMock
import Foundation
import Testing

/// The broadcast API over real sockets: channel management on its own TLS + HTTP/2 port, broadcasts on the
/// provider port, driven by curl, nghttp and h2load; every operation in the recorder.
@Suite("Broadcast end to end")
struct BroadcastEndToEndTests {
    static let bundle = "com.example.app"

    /// `curl --http2` with the development CA: status line and headers (`-D -`), then the body.
    static func curl(_ port: Int, _ method: String, _ path: String, headers: [String] = [], body: String? = nil) async throws -> (status: Int, headers: [String: String], body: String) {
        var arguments = ["-s", "--http2", "--cacert", TestPaths.caCertificate, "-D", "-", "-X", method]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        arguments.append("https://localhost:\(port)\(path)")
        let result = try await ExternalTool.run("curl", arguments, timeout: .seconds(20))
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? -1
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2 { fields[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces) }
        }
        return (status, fields, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// An admin call over plain HTTP with curl: the status and the body.
    static func admin(_ server: TestServer, _ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, body: String) {
        var arguments = ["-s", "-w", "\n%{http_code}", "-X", method]
        if let body { arguments += ["--data-binary", body] }
        arguments.append("http://127.0.0.1:\(server.adminPort)\(path)")
        let result = try await ExternalTool.run("curl", arguments, timeout: .seconds(20))
        let lines = result.stdout.components(separatedBy: "\n")
        return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
    }

    @Test func createReadListBroadcastDeleteThenNotRegistered() async throws {
        try await withTestServer { server in
            let channels = server.server.channelsPort
            let provider = server.providerPort
            let created = try await Self.curl(channels, "POST", "/1/apps/\(Self.bundle)/channels", headers: ["apns-request-id: 11111111-2222-3333-4444-555555555555"],
                                              body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            #expect(created.status == 201 && created.body.isEmpty, "\(created)")
            #expect(created.headers["apns-request-id"] == "11111111-2222-3333-4444-555555555555", "\(created)")
            let id = try #require(created.headers["apns-channel-id"], "\(created)")

            let read = try await Self.curl(channels, "GET", "/1/apps/\(Self.bundle)/channels", headers: ["apns-channel-id: \(id)"])
            #expect(read.status == 200 && read.body == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, "\(read)")
            let list = try await Self.curl(channels, "GET", "/1/apps/\(Self.bundle)/all-channels")
            #expect(list.status == 200 && list.body == #"{"channels":["\#(id)"]}"#, "\(list)")

            let broadcastHeaders = ["apns-channel-id: \(id)", "apns-push-type: LiveActivity", "apns-priority: 10"]
            let sent = try await Self.curl(provider, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: broadcastHeaders,
                                           body: #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{}}}"#)
            #expect(sent.status == 200 && sent.headers["apns-request-id"] != nil && sent.headers["apns-unique-id"] != nil && sent.headers["apns-id"] == nil, "\(sent)")

            let deleted = try await Self.curl(channels, "DELETE", "/1/apps/\(Self.bundle)/channels", headers: ["apns-channel-id: \(id)"])
            #expect(deleted.status == 204, "\(deleted)")
            let after = try await Self.curl(provider, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: broadcastHeaders, body: "{}")
            #expect(after.status == 400 && after.body == #"{"reason":"ChannelNotRegistered"}"# && after.headers["apns-request-id"] != nil, "\(after)")

            let recorded = try await server.admin.notifications([("channel-id", id)])
            let kinds = recorded.compactMap { $0.json["kind"]?.string }
            #expect(kinds == ["channel-create", "channel-read", "broadcast", "channel-delete", "broadcast"], "\(recorded)")
            #expect(recorded[2].json["response"]?["requestId"]?.string == sent.headers["apns-request-id"], "\(recorded)")
            let waited = try await server.admin.waitForNotifications(count: 1, [("kind", "channel-list")])
            #expect(waited.count == 1 && waited[0].json["bundleId"]?.string == Self.bundle, "\(waited)")
            let stats = try await server.admin.stats()
            #expect(stats["byKind"] == .object(["channel-create": .number(1), "channel-read": .number(1), "channel-list": .number(1), "broadcast": .number(2), "channel-delete": .number(1)]), "\(stats)")
            let samples = OperationsTests.samples(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body)
            #expect(samples[#"apns_mock_broadcast_requests_total{kind="broadcast"}"#] == 2, "\(samples)")
            #expect(samples[#"apns_mock_broadcast_requests_total{kind="channel-create"}"#] == 1, "\(samples)")
        }
    }

    @Test func theAdminAPISeedsAndClearsChannels() async throws {
        try await withTestServer { server in
            let seeded = try await Self.admin(server, "POST", "/admin/channels", body: #"{"bundleId":"com.example.app","messageStoragePolicy":0,"id":"dHN0LXNyY2gtY2hubA=="}"#)
            #expect(seeded.status == 201, "\(seeded)")
            let policyZero = ["apns-channel-id: dHN0LXNyY2gtY2hubA==", "apns-push-type: liveactivity"]
            let late = try await Self.curl(server.providerPort, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: policyZero + ["apns-expiration: 1800000000"], body: "{}")
            #expect(late.status == 400 && late.body == #"{"reason":"BadExpirationDate"}"#, "\(late)")
            let now = try await Self.curl(server.providerPort, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: policyZero + ["apns-expiration: 0"], body: "{}")
            #expect(now.status == 200, "\(now)")
            let bad = try await Self.admin(server, "POST", "/admin/channels", body: #"{"bundleId":"com.example.app","messageStoragePolicy":true}"#)
            #expect(bad.status == 400 && bad.body.contains("messageStoragePolicy"), "\(bad)")
            let reset = try await Self.admin(server, "POST", "/admin/reset")
            #expect(reset.status == 200)
            let listed = try await Self.admin(server, "GET", "/admin/channels")
            #expect(listed.body == #"{"channels":[]}"#, "\(listed)")
        }
    }

    /// Authentication on both listeners, by independent clients: httpx (Python's h2) with a provider token, curl with
    /// the development client certificate; no credentials at all gets MissingProviderToken on both ports.
    @Test func tokenAndCertificateAuthOnBothListeners() async throws {
        try await ProviderAuthenticationTests.tokenServer { server in
            let script = TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/httpx_push.py").path
            let token = try ProviderAuthenticationTests.token()
            let created = try await ExternalTool.run("python3", [
                script, "https://localhost:\(server.server.channelsPort)/1/apps/\(Self.bundle)/channels", "--ca", TestPaths.caCertificate,
                "--header", "authorization: bearer \(token)", "--data", #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#,
            ])
            let createdJSON = try JSON(parsing: Array(created.stdout.utf8))
            #expect(createdJSON["status"]?.int == 201 && createdJSON["http_version"]?.string == "HTTP/2", "\(created)")
            let id = try #require(createdJSON["headers"]?["apns-channel-id"]?.string, "\(created)")
            let sent = try await ExternalTool.run("python3", [
                script, "https://localhost:\(server.providerPort)/4/broadcasts/apps/\(Self.bundle)", "--ca", TestPaths.caCertificate,
                "--header", "authorization: bearer \(token)", "--header", "apns-channel-id: \(id)", "--header", "apns-push-type: LiveActivity",
                "--data", #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{}}}"#,
            ])
            #expect(sent.stdout.contains("\"status\": 200") && sent.stdout.contains("apns-unique-id"), "\(sent)")

            let certificate = ["--cert", TestPaths.certsDirectory + "/client-development.pem", "--key", TestPaths.certsDirectory + "/client-development-key.pem"]
            let listed = try await ProviderAuthenticationTests.curl(certificate + ["https://localhost:\(server.server.channelsPort)/1/apps/\(Self.bundle)/all-channels"])
            #expect(listed.stdout == #"{"channels":["\#(id)"]}"#, "\(listed)")
            let byCertificate = try await ProviderAuthenticationTests.curl(certificate + [
                "-H", "apns-channel-id: \(id)", "-H", "apns-push-type: LiveActivity", "--data-binary", "{}", "-w", "%{http_code}",
                "https://localhost:\(server.providerPort)/4/broadcasts/apps/\(Self.bundle)",
            ])
            #expect(byCertificate.stdout == "200", "\(byCertificate)")
            let otherApp = try await ProviderAuthenticationTests.curl(certificate + ["https://localhost:\(server.server.channelsPort)/1/apps/com.example.other/all-channels"])
            #expect(otherApp.stdout == #"{"reason":"TopicMismatch"}"#, "\(otherApp)")

            for port in [server.providerPort, server.server.channelsPort] {
                let path = port == server.providerPort ? "/4/broadcasts/apps/\(Self.bundle)" : "/1/apps/\(Self.bundle)/all-channels"
                let method = port == server.providerPort ? "POST" : "GET"
                let anonymous = try await ProviderAuthenticationTests.curl(["-X", method, "https://localhost:\(port)\(path)"])
                #expect(anonymous.stdout == #"{"reason":"MissingProviderToken"}"#, "\(anonymous)")
            }
            let byAuth = try await server.admin.notifications([("auth", "certificate"), ("kind", "broadcast")])
            #expect(byAuth.count == 1, "\(byAuth)")
        }
    }

    /// APNs' limit, reached over the wire: 10,001 creates from h2load make 10,000 channels and one
    /// CannotCreateChannelConfig; another app still gets its own.
    @Test func theTenThousandChannelLimit() async throws {
        try await withTestServer { server in
            let result = try await ExternalTool.withTemporaryFile(Data(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8)) { body in
                try await ExternalTool.run("h2load", [
                    "-n", "10001", "-c", "2", "-m", "20", "-d", body,
                    "https://127.0.0.1:\(server.server.channelsPort)/1/apps/\(Self.bundle)/channels",
                ], timeout: .seconds(60))
            }
            #expect(result.stdout.contains("status codes: 10000 2xx, 0 3xx, 1 4xx, 0 5xx"), "\(result)")
            #expect(server.server.channels.list(bundleID: Self.bundle).count == 10_000)
            let refused = try await server.admin.notifications([("reason", "CannotCreateChannelConfig")])
            #expect(refused.count == 1 && refused[0].json["kind"]?.string == "channel-create", "\(refused)")
            let other = try await Self.curl(server.server.channelsPort, "POST", "/1/apps/com.example.other/channels",
                                            body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            #expect(other.status == 201, "\(other)")
        }
    }

    /// The settings for Apple's undocumented choices, end to end.
    @Test func theUndocumentedChoicesAreSettings() async throws {
        try await withTestServer(configure: {
            $0.broadcast.maxChannelsPerApp = 1
            $0.broadcast.missingStoragePolicyReason = .badRequestParams
            $0.broadcast.requireExpiration = true
        }) { server in
            let channels = server.server.channelsPort
            let noPolicy = try await Self.curl(channels, "POST", "/1/apps/\(Self.bundle)/channels", body: #"{"push-type":"LiveActivity"}"#)
            #expect(noPolicy.body == #"{"reason":"BadRequestParams"}"#, "\(noPolicy)")
            let made = try await Self.curl(channels, "POST", "/1/apps/\(Self.bundle)/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            let id = try #require(made.headers["apns-channel-id"], "\(made)")
            let second = try await Self.curl(channels, "POST", "/1/apps/\(Self.bundle)/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
            #expect(second.body == #"{"reason":"CannotCreateChannelConfig"}"#, "\(second)")
            let headers = ["apns-channel-id: \(id)", "apns-push-type: LiveActivity"]
            let withoutExpiration = try await Self.curl(server.providerPort, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: headers, body: "{}")
            #expect(withoutExpiration.body == #"{"reason":"BadExpirationDate"}"#, "\(withoutExpiration)")
            let withExpiration = try await Self.curl(server.providerPort, "POST", "/4/broadcasts/apps/\(Self.bundle)", headers: headers + ["apns-expiration: 0"], body: "{}")
            #expect(withExpiration.status == 200, "\(withExpiration)")
        }
    }

    /// At load: every 200 h2load counts is a recording, exactly, and is counted in the statistics and the metrics
    /// by kind and by payload warning. Broadcasts and device pushes with other warnings arrive at once on eight
    /// connections, so the runs of equal kinds and warnings the store and the metrics count by keep changing.
    @Test func broadcastsUnderH2LoadAreAllRecordedAndCounted() async throws {
        try await withTestServer { server in
            let channel = try server.server.channels.create(bundleID: Self.bundle, environment: .development, storagePolicy: .mostRecentMessageStored)
            // No `timestamp`: a Live Activity warning on every broadcast; `content-available` with an alert at priority 5: a
            // background warning on every device push.
            let broadcastPayload = Data(#"{"aps":{"event":"update","content-state":{}}}"#.utf8)
            let devicePayload = Data(#"{"aps":{"content-available":1,"alert":"x"}}"#.utf8)
            async let broadcasts = ExternalTool.withTemporaryFile(broadcastPayload) { payload in
                try await ExternalTool.run("h2load", [
                    "-n", "3000", "-c", "4", "-m", "50", "-d", payload,
                    "-H", "apns-channel-id: \(channel.id)", "-H", "apns-push-type: LiveActivity",
                    "https://127.0.0.1:\(server.providerPort)/4/broadcasts/apps/\(Self.bundle)",
                ], timeout: .seconds(60))
            }
            async let pushes = ExternalTool.withTemporaryFile(devicePayload) { payload in
                try await ExternalTool.run("h2load", [
                    "-n", "3000", "-c", "4", "-m", "50", "-d", payload,
                    "-H", "apns-topic: \(Self.bundle)", "-H", "apns-push-type: background", "-H", "apns-priority: 5",
                    "https://127.0.0.1:\(server.providerPort)/3/device/\(String(repeating: "ab", count: 32))",
                ], timeout: .seconds(60))
            }
            let (broadcastResult, pushResult) = try await (broadcasts, pushes)
            #expect(broadcastResult.stdout.contains("3000 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(broadcastResult)")
            #expect(pushResult.stdout.contains("3000 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(pushResult)")
            var query = APNsMockQuery.broadcasts
            query.status = 200
            #expect(server.server.store.list(query).total == 3000)
            let statistics = server.server.store.statistics()
            #expect(statistics.received == 6000)
            #expect(statistics.byKind == ["broadcast": 3000], "\(statistics)")
            #expect(statistics.byWarning == ["liveactivity-missing-timestamp": 3000, "background-with-alert": 3000], "\(statistics)")
            let samples = OperationsTests.samples(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body)
            #expect(samples[#"apns_mock_broadcast_requests_total{kind="broadcast"}"#] == 3000, "\(samples)")
            #expect(samples[#"apns_mock_payload_warnings_total{code="liveactivity-missing-timestamp"}"#] == 3000, "\(samples)")
            #expect(samples[#"apns_mock_payload_warnings_total{code="background-with-alert"}"#] == 3000, "\(samples)")
        }
    }
}

/// Named queries for the tests above.
enum APNsMockQuery {
    static var broadcasts: NotificationQuery {
        var query = NotificationQuery()
        query.kind = "broadcast"
        return query
    }
}
