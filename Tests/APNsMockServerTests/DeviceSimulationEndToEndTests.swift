import Foundation
import Testing

/// Simulated devices over real sockets: httpx (Python's h2) as the provider, curl on the admin API, a scenario's
/// timeline put in force over HTTP, the metrics, and h2load for the counts at load.
@Suite("Simulated devices end to end")
struct DeviceSimulationEndToEndTests {
    static func httpxPush(_ server: TestServer, token: String, headers: [String] = [], body: String = TestData.alertPayload) async throws -> JSON {
        let script = TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/httpx_push.py").path
        var arguments = [script, server.deviceURL(token), "--ca", TestPaths.caCertificate, "--header", "apns-topic: \(TestData.topic)", "--data", body]
        for header in headers { arguments += ["--header", header] }
        let result = try await ExternalTool.run("python3", arguments, timeout: .seconds(30))
        #expect(result.exitCode == 0, "\(result)")
        return try JSON(parsing: Array(result.stdout.utf8))
    }

    @Test func aScenarioTimelineStoresWhileOfflineAndDeliversAtItsEnd() async throws {
        try await withTestServer { server in
            let phone = TestData.deviceToken()
            let scenario = """
                name: tunnel
                devices:
                  - name: phone
                    token: \(phone)
                    topic: \(TestData.topic)
                    timeline:
                      - offline: {at: +0s, for: 1h}
                """
            let put = try await BroadcastEndToEndTests.admin(server, "PUT", "/admin/scenario", body: scenario)
            #expect(put.status == 200, "\(put)")
            let sent = try await Self.httpxPush(server, token: phone, headers: ["apns-priority: 10"])
            #expect(sent["status"]?.int == 200 && sent["http_version"]?.string == "HTTP/2", "\(sent)")
            let uniqueID = try #require(sent["headers"]?["apns-unique-id"]?.string)
            let stored = try await BroadcastEndToEndTests.admin(server, "GET", "/admin/devices/\(phone)/stored")
            #expect(stored.body.contains("\"storedOffline\""), "\(stored)")
            let moved = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/clock", body: #"{"advance":"2h"}"#)
            #expect(moved.status == 200 && moved.body.contains("\"offset\":\"2h\""), "\(moved)")
            let log = try await BroadcastEndToEndTests.admin(server, "GET", "/admin/delivery?apnsUniqueId=\(uniqueID)")
            let json = try JSON(parsing: Array(log.body.utf8))
            #expect(json["events"]?.array?.compactMap { $0["state"]?.string } == ["received", "storedOffline", "deliveredFromStorage"], "\(log)")
            #expect(json["events"]?[2]?["console"]?.string == "Delivered to Device (From Storage)", "\(log)")
            // Delivered when the window ended (an hour after the scenario's start), not when the clock was read.
            let received = try #require(json["receivedAt"]?.int)
            let delivered = try #require(json["deliveredAt"]?.int)
            #expect(delivered - received <= 3_600_000 && delivered - received > 3_500_000, "\(log)")
            let devices = try await BroadcastEndToEndTests.admin(server, "GET", "/admin/devices")
            #expect(devices.body.contains("\"state\":\"online\""), "\(devices)")
        }
    }

    @Test func badInputGetsAClearErrorNamingTheField() async throws {
        try await withTestServer { server in
            let phone = TestData.deviceToken()
            _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices", body: #"{"token":"\#(phone)","topic":"\#(TestData.topic)"}"#)
            let cases: [(String, String, String?, Int, String)] = [
                ("PUT", "/admin/devices/\(phone)/state", #"{"state":"asleep"}"#, 400, "'asleep' is not a device state"),
                ("PUT", "/admin/devices/\(phone)/state", #"{"mode":"offline"}"#, 400, "\"parameter\":\"mode\""),
                ("PUT", "/admin/devices/\(TestData.deviceToken())/state", #"{"state":"offline"}"#, 404, "no device with token"),
                ("POST", "/admin/clock", #"{"advance":"-1d"}"#, 400, "only moves forward"),
                ("POST", "/admin/clock", #"{"advance":"soon"}"#, 400, "is not a duration"),
                ("POST", "/admin/clock", #"{"to":"2001-01-01T00:00:00Z"}"#, 400, "only moves forward"),
                ("POST", "/admin/clock", "{}", 400, "expected one of"),
                ("GET", "/admin/delivery", nil, 400, "apns-unique-id"),
                ("GET", "/admin/delivery?apns-id=nothing", nil, 404, "no push"),
                ("GET", "/admin/devices/\(phone)/received/wait?count=0", nil, 400, "\"parameter\":\"count\""),
                ("PUT", "/admin/devices/\(phone)/state", #"{"state":"appRemoved"}"#, 200, "\"state\":\"appRemoved\""),
                ("PUT", "/admin/devices/\(phone)/state", #"{"state":"online"}"#, 409, "a token never comes back"),
            ]
            for (method, path, body, status, text) in cases {
                let answer = try await BroadcastEndToEndTests.admin(server, method, path, body: body)
                #expect(answer.status == status && answer.body.contains(text), "\(method) \(path) \(body ?? ""): \(answer)")
            }
        }
    }

    @Test func theRecordingsListFiltersByDeliveryState() async throws {
        try await withTestServer { server in
            let phone = TestData.deviceToken()
            _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices", body: #"{"token":"\#(phone)","topic":"\#(TestData.topic)"}"#)
            let delivered = try await Self.httpxPush(server, token: phone)
            _ = try await BroadcastEndToEndTests.admin(server, "PUT", "/admin/devices/\(phone)/state", body: #"{"state":"offline"}"#)
            let stored = try await Self.httpxPush(server, token: phone)
            let unsimulated = try await Self.httpxPush(server, token: TestData.deviceToken())
            #expect([delivered, stored, unsimulated].allSatisfy { $0["status"]?.int == 200 })
            func ids(_ filter: String) async throws -> [String] {
                let (status, json) = try await server.admin.request(.get, "/admin/notifications", query: [("delivery", filter)])
                #expect(status == 200, "\(json)")
                return (json["notifications"]?.array ?? []).compactMap { $0["response"]?["apnsId"]?.string }
            }
            #expect(try await ids("stored") == [stored["headers"]?["apns-id"]?.string].compactMap { $0 })
            #expect(try await ids("storedOffline") == (try await ids("stored")))
            #expect(try await ids("delivered") == [delivered["headers"]?["apns-id"]?.string].compactMap { $0 })
            #expect(try await ids("discarded").isEmpty)
            _ = try await BroadcastEndToEndTests.admin(server, "PUT", "/admin/devices/\(phone)/state", body: #"{"state":"online"}"#)
            #expect(try await ids("stored").isEmpty)
            #expect(try await ids("deliveredFromStorage") == [stored["headers"]?["apns-id"]?.string].compactMap { $0 })
            let bad = try await server.admin.request(.get, "/admin/notifications", query: [("delivery", "sent")])
            #expect(bad.status == 400 && bad.json["parameter"]?.string == "delivery", "\(bad)")
            let wait = try await server.admin.request(.get, "/admin/notifications/wait", query: [("delivery", "stored")])
            #expect(wait.status == 400 && wait.json["error"]?.string?.contains("received/wait") == true, "\(wait)")
        }
    }

    /// Broadcasts reach the simulated devices subscribed to their channel: policy 1 keeps the latest message for
    /// 8 hours (for a device offline, or one that subscribes later), policy 0 keeps nothing.
    @Test func broadcastsReachSubscribedDevicesAsTheChannelsPolicySays() async throws {
        try await withTestServer { server in
            let kept = try await BroadcastEndToEndTests.curl(
                server.server.channelsPort, "POST", "/1/apps/\(TestData.topic)/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#
            )
            let keptID = try #require(kept.headers["apns-channel-id"], "\(kept)")
            let fleeting = try await BroadcastEndToEndTests.curl(
                server.server.channelsPort, "POST", "/1/apps/\(TestData.topic)/channels", body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#
            )
            let fleetingID = try #require(fleeting.headers["apns-channel-id"], "\(fleeting)")
            let (online, offline, late) = (TestData.deviceToken(), TestData.deviceToken(), TestData.deviceToken())
            for (token, state) in [(online, "online"), (offline, "offline"), (late, "online")] {
                let added = try await BroadcastEndToEndTests.admin(
                    server, "POST", "/admin/devices", body: #"{"token":"\#(token)","topic":"\#(TestData.topic)","state":"\#(state)"}"#
                )
                #expect(added.status == 201, "\(added)")
            }
            for token in [online, offline] {
                for channel in [keptID, fleetingID] {
                    let subscribed = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices/\(token)/subscriptions", body: #"{"channel":"\#(channel)"}"#)
                    #expect(subscribed.status == 200 && subscribed.body.contains(channel), "\(subscribed)")
                }
            }
            func broadcast(_ channel: String, _ score: Int) async throws {
                let sent = try await BroadcastEndToEndTests.curl(
                    server.providerPort, "POST", "/4/broadcasts/apps/\(TestData.topic)",
                    headers: ["apns-channel-id: \(channel)", "apns-push-type: LiveActivity"] + (channel == fleetingID ? ["apns-expiration: 0"] : []),
                    body: #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{"score":\#(score)}}}"#
                )
                #expect(sent.status == 200, "\(sent)")
            }
            try await broadcast(keptID, 1)
            try await broadcast(fleetingID, 2)
            func states(_ token: String) async throws -> [String] {
                let (_, json) = try await server.admin.request(.get, "/admin/devices/\(token)/deliveries")
                return (json["deliveries"]?.array ?? []).map { log in
                    (log["channelId"]?.string == keptID ? "kept:" : "fleeting:") + (log["state"]?.string ?? "?")
                }
            }
            #expect(try await states(online) == ["kept:delivered", "fleeting:delivered"])
            #expect(try await states(offline) == ["fleeting:discardedExpired", "kept:storedOffline"])
            _ = try await BroadcastEndToEndTests.admin(server, "PUT", "/admin/devices/\(offline)/state", body: #"{"state":"online"}"#)
            #expect(try await states(offline) == ["fleeting:discardedExpired", "kept:deliveredFromStorage"])
            // A device that subscribes later gets the kept message, from storage; the fleeting one is gone.
            for channel in [keptID, fleetingID] {
                _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices/\(late)/subscriptions", body: #"{"channel":"\#(channel)"}"#)
            }
            #expect(try await states(late) == ["kept:deliveredFromStorage"])
            // Past 8 hours, a new subscriber gets nothing.
            let another = TestData.deviceToken()
            _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices", body: #"{"token":"\#(another)","topic":"\#(TestData.topic)"}"#)
            _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/clock", body: #"{"advance":"8h"}"#)
            _ = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices/\(another)/subscriptions", body: #"{"channel":"\#(keptID)"}"#)
            #expect(try await states(another) == [])
            let unknown = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices/\(another)/subscriptions", body: #"{"channel":"bm8tc3VjaA=="}"#)
            #expect(unknown.status == 404 && unknown.body.contains("no broadcast channel"), "\(unknown)")
            let left = try await BroadcastEndToEndTests.admin(server, "DELETE", "/admin/devices/\(another)/subscriptions/\(keptID.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(left.status == 200 && !left.body.contains(keptID), "\(left)")
        }
    }

    /// The device model sits on the recording path (the store hands it accepted pushes under its lock): at load,
    /// every answer h2load saw is a recording and a delivery log's data points, counted exactly, in the metrics
    /// and in the record file, each data point after its recording. Pushes to a token nobody registered, sent at
    /// the same time, are recordings and nothing else.
    @Test func atLoadEveryAcceptedPushIsRecordedAndDelivered() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-load-deliveries-\(UUID().uuidString).ndjson")
        defer { try? FileManager.default.removeItem(at: file) }
        let answered = try await withTestServer(configure: { $0.recordFile = file.path }) { server in
            let phone = TestData.deviceToken()
            let register = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices", body: #"{"token":"\#(phone)","topic":"\#(TestData.topic)"}"#)
            #expect(register.status == 201, "\(register)")
            func load(_ token: String, count: Int) async throws -> Int {
                let result = try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payloadPath in
                    try await ExternalTool.run(
                        "h2load",
                        ["-n", String(count), "-c", "2", "-m", "100", "-d", payloadPath, "-H", "apns-topic: \(TestData.topic)", server.deviceURL(token)],
                        timeout: .seconds(60)
                    )
                }
                #expect(result.exitCode == 0, "\(result)")
                #expect(result.stdout.contains("status codes: \(count) 2xx"), "\(result)")
                return try #require(ProviderLoadTests.requestCounts(result.stdout)["succeeded"], "\(result)")
            }
            async let toThePhone = load(phone, count: 20000)
            async let toNobody = load(TestData.deviceToken(), count: 10000)
            let answered = try await toThePhone
            let unknownAnswered = try await toNobody
            #expect(answered == 20000 && unknownAnswered == 10000)
            let stats = try await server.admin.stats()
            #expect(stats["received"]?.int == answered + unknownAnswered, "\(stats)")
            let metrics = OperationsTests.samples(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body)
            #expect(metrics[#"apns_mock_delivery_total{state="received",push_type="alert",priority="10"}"#] == Double(answered), "\(metrics)")
            #expect(metrics[#"apns_mock_delivery_total{state="delivered",push_type="alert",priority="10"}"#] == Double(answered), "\(metrics)")
            // The device keeps its newest 1,000 logs.
            let kept = try await server.admin.request(.get, "/admin/devices/\(phone)/deliveries")
            #expect(kept.json["deliveries"]?.array?.count == 1000)
            return (answered, unknownAnswered)
        }
        // Read after shutdown, which writes everything queued.
        var recorded: Set<Int> = []
        var dataPoints: [String: Int] = [:]
        var beforeItsRecording = 0
        // Read by their members' text, not parsed: 60,000 lines through the test's JSON parser took most of a minute.
        func number(after member: String, in line: Substring) -> Int? {
            guard let range = line.range(of: member) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            if line.hasPrefix(#"{"delivery":"#) {
                // The log's own state is its last `state` member (its keys are sorted: `events` before `state`).
                let state = line.ranges(of: #""state":""#).last.map { line[$0.upperBound...].prefix { $0 != "\"" } } ?? "?"
                dataPoints[String(state), default: 0] += 1
                if !recorded.contains(number(after: #""sequence":"#, in: line) ?? -1) { beforeItsRecording += 1 }
            } else if let sequence = number(after: #""sequence":"#, in: line) {
                recorded.insert(sequence)
            }
        }
        #expect(recorded.count == answered.0 + answered.1)
        #expect(dataPoints == ["received": answered.0, "delivered": answered.0], "\(dataPoints)")
        #expect(beforeItsRecording == 0)
    }

    /// A device offline, a push to it, the device back: the push's three data points, in order, after its recording.
    private static func offlineThenOnline(_ server: TestServer, phone: String) async throws -> RawOutcome {
        let added = try await BroadcastEndToEndTests.admin(server, "POST", "/admin/devices", body: #"{"token":"\#(phone)","topic":"\#(TestData.topic)","state":"offline"}"#)
        #expect(added.status == 201, "\(added)")
        let client = try await RawPusher.open(server)
        let sent = try await client.push(token: phone)
        await client.close()
        let online = try await BroadcastEndToEndTests.admin(server, "PUT", "/admin/devices/\(phone)/state", body: #"{"state":"online"}"#)
        #expect(online.status == 200, "\(online)")
        return sent
    }

    @Test func theRecordFileHasEachDeliveryDataPointAfterItsRecording() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-deliveries-\(UUID().uuidString).ndjson")
        defer { try? FileManager.default.removeItem(at: file) }
        let phone = TestData.deviceToken()
        try await withTestServer(configure: { $0.recordFile = file.path }) { server in
            let sent = try await Self.offlineThenOnline(server, phone: phone)
            #expect(sent.isBareHeaders, "a 200: \(sent)")
            let lines = try await poll(timeout: .seconds(30), "the record file's four lines") { () -> [JSON]? in
                guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
                let lines = text.split(separator: "\n").compactMap { try? JSON(parsing: Array($0.utf8)) }
                return lines.count >= 4 ? lines : nil
            }
            #expect(lines.count == 4, "\(lines)")
            #expect(lines[0]["delivery"] == nil && lines[0]["response"]?["status"]?.int == 200, "the recording first: \(lines[0])")
            let sequence = lines[0]["sequence"]?.int
            let deliveries = lines.dropFirst().compactMap { $0["delivery"] }
            #expect(deliveries.map { $0["state"]?.string } == ["received", "storedOffline", "deliveredFromStorage"], "\(lines)")
            #expect(deliveries.allSatisfy { $0["sequence"]?.int == sequence && $0["token"]?.string == phone }, "\(lines)")
            #expect(deliveries.map { $0["events"]?.array?.count } == [1, 2, 3], "each as its log was then: \(lines)")
        }
    }

    @Test func theLiveFeedSendsEachDeliveryDataPointAfterItsNotification() async throws {
        try await withTestServer { server in
            let phone = TestData.deviceToken()
            let events = try await LiveFeedTests.read(server, count: 3, of: "delivery") {
                _ = try await Self.offlineThenOnline(server, phone: phone)
            }
            let kinds = events.array?.compactMap { $0["event"]?.string } ?? []
            #expect(kinds == ["notification", "delivery", "delivery", "delivery"], "\(events)")
            let deliveries = events.array?.filter { $0["event"]?.string == "delivery" } ?? []
            #expect(deliveries.map { $0["data"]?["console"]?.string } == ["Received by APNs", "Stored – Device Offline", "Delivered to Device (From Storage)"], "\(events)")
            #expect(deliveries.allSatisfy { $0["id"] == nil }, "a data point sets no Last-Event-ID: \(events)")
        }
    }

    @Test func aFilteredLiveFeedSendsOnlyTheDataPointsOfTheRecordingsItMatches() async throws {
        try await withTestServer { server in
            let phone = TestData.deviceToken()
            let other = TestData.deviceToken()
            let events = try await LiveFeedTests.read(server, count: 3, of: "delivery", query: "?token=\(phone)") {
                _ = try await Self.offlineThenOnline(server, phone: other)
                _ = try await Self.offlineThenOnline(server, phone: phone)
            }
            let deliveries = events.array?.filter { $0["event"]?.string == "delivery" } ?? []
            #expect(deliveries.count == 3 && deliveries.allSatisfy { $0["data"]?["token"]?.string == phone }, "\(events)")
        }
    }
}
