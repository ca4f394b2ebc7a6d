import APNsMock
import Foundation
import Testing

@testable import APNsMockServer

/// The inspector in headless Chromium: what a tester would see for a set of pushes sent by real clients, and a
/// push sent after the page loaded arriving through the live feed. Saves `docs/inspector.png` when
/// `APNS_MOCK_SCREENSHOT` names a path (the README's screenshot is made so).
@Suite("Inspector page (headless Chromium)")
struct InspectorPageTests {
    @Test(.timeLimit(.minutes(2)))
    func thePageShowsWhatTheDeviceWouldShow() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let client = try await RawPusher.open(server)
            let pushes = [
                #"{"aps":{"alert":{"title":"Ann","body":"Hi"},"thread-id":"ann"}}"#,
                #"{"aps":{"alert":{"title":"Bob","body":"Yo"},"thread-id":"bob"}}"#,
                #"{"aps":{"alert":{"title":"Ann","body":"Lunch?"},"thread-id":"ann"}}"#,
                #"{"aps":{"alert":{"title":"Glucose","body":"Low"},"thread-id":"health","sound":{"critical":1,"name":"a.caf","volume":1}}}"#,
            ]
            // A scenario with no rules: the editor shows its text as loaded, comment and all.
            let put = try await ExternalTool.run("curl", [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "--data-binary",
                "# shown as written\nname: inspector-yaml\n", "\(server.admin.baseURL)/admin/scenario",
            ])
            #expect(put.stdout == "200", "\(put)")
            for body in pushes { _ = try await client.push(token: token, body: body) }
            _ = try await client.push(token: token, headers: [("apns-topic", TestData.topic), ("apns-collapse-id", "score")], body: #"{"aps":{"alert":"1-0"}}"#)
            _ = try await client.push(token: token, headers: [("apns-topic", TestData.topic), ("apns-collapse-id", "score")], body: #"{"aps":{"alert":"2-0"}}"#)
            _ = try await client.push(token: token, headers: [("apns-topic", TestData.topic), ("apns-push-type", "background"), ("apns-priority", "5")], body: #"{"aps":{"content-available":1}}"#)
            _ = try await client.push(token: "abc", body: #"{"aps":{"alert":"rejected"}}"#)
            let la = [("apns-topic", TestData.topic + ".push-type.liveactivity"), ("apns-push-type", "liveactivity")]
            _ = try await client.push(token: token, headers: la, body: #"{"aps":{"event":"start","timestamp":1,"content-state":{"s":0},"attributes-type":"A","attributes":{},"alert":{"title":"t","body":"b"}}}"#)
            _ = try await client.push(token: token, headers: la, body: #"{"aps":{"event":"update","timestamp":2,"content-state":{"s":1}}}"#)
            _ = try await client.push(token: token, headers: la, body: #"{"aps":{"event":"end","timestamp":3,"content-state":{"s":2}}}"#)
            await client.close()

            let screenshot = ProcessInfo.processInfo.environment["APNS_MOCK_SCREENSHOT"]
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-inspector-\(UUID().uuidString).png").path
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/inspector_check.py").path,
                "--admin-port", String(server.adminPort), "--provider-port", String(server.providerPort),
                "--ca", TestPaths.caCertificate, "--token", token, "--screenshot", screenshot,
            ], timeout: .seconds(90))
            #expect(result.exitCode == 0, "\(result)")
            let found = try JSON(parsing: Array(result.stdout.utf8))
            #expect(found["apps"] == .array([.string("com.example.app")]), "\(found)")
            // Newest stack first: the collapse pair (no thread), the critical alert, Ann's two, Bob's one.
            #expect(found["threads"]?.array?.compactMap(\.string) == ["", "health", "ann", "bob"], "\(found)")
            #expect(found["summaries"]?.array?.compactMap(\.string).contains("1 more notification") == true, "\(found)")
            #expect(found["summaries"]?.array?.compactMap(\.string).contains { $0.contains("replaced 1 earlier") } == true, "\(found)")
            #expect(found["critical"]?.array?.first?.string?.contains("CRITICAL") == true, "\(found)")
            #expect(found["silent"]?.int == 1 && found["notDelivered"]?.array?.count == 1, "\(found)")
            #expect(found["activities"]?.array?.first?.string?.contains("ended") == true, "\(found)")
            #expect(found["hiddenTexts"]?.array?.compactMap(\.string).contains("2 Notifications") == true, "\(found)")
            #expect(found["hiddenBodies"] == .array([.string("Notification")]), "\(found)")
            #expect(found["latePushStatus"]?.int == 200 && found["latePushInFeed"] == .bool(true) && found["latePushInPreview"] == .bool(true), "\(found)")
            #expect(found["storyCritical"]?.string == "Device: in Notification Center under com.example.app / thread health: Glucose — Low [critical]", "\(found)")
            #expect(found["storyRejected"]?.string == "Device: nothing (400 BadDeviceToken: not delivered).", "\(found)")
            #expect(found["scenarioState"]?.string == "no rules, no devices", "\(found)")
            #expect(found["scenarioText"]?.string == "# shown as written\nname: inspector-yaml\n", "\(found)")
            #expect(FileManager.default.fileExists(atPath: screenshot))
            #expect(found["banner"]?.string == "", "loopback only: no warning \(found)")
        }
    }

    /// The device view: a registered device picked, taken offline and back with the page's state menu, a push
    /// stored meanwhile and then delivered from storage, shown with its thread and its delivery log.
    @Test(.timeLimit(.minutes(2)))
    func theDeviceViewShowsWhatTheDeviceReceivedAndItsDeliveryLogs() async throws {
        // Listening beyond loopback without an admin token: the page says so.
        try await withTestServer(configure: { $0.adminHost = "0.0.0.0" }) { server in
            let token = TestData.deviceToken()
            let registered = try await BroadcastEndToEndTests.admin(
                server, "POST", "/admin/devices", body: #"{"token":"\#(token)","topic":"\#(TestData.topic)","name":"phone"}"#
            )
            #expect(registered.status == 201, "\(registered)")
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/inspector_devices_check.py").path,
                "--admin-port", String(server.adminPort), "--provider-port", String(server.providerPort),
                "--ca", TestPaths.caCertificate, "--token", token,
            ], timeout: .seconds(90))
            #expect(result.exitCode == 0, "\(result)")
            let found = try JSON(parsing: Array(result.stdout.utf8))
            #expect(found["pageText"]?.string?.hasPrefix("Built from the newest 0 of 0 matching recordings") == true, "\(found)")
            #expect(found["pushStatus"]?.int == 200, "\(found)")
            #expect(found["cardsWhileOffline"]?.int == 0, "\(found)")
            #expect(found["threads"] == .array([.string("thread family")]), "\(found)")
            #expect(found["bodies"] == .array([.string("Call me")]), "\(found)")
            let log = found["logs"]?.array?.first?.string ?? ""
            #expect(log.contains("Received by APNs") && log.contains("Stored – Device Offline") && log.contains("Delivered to Device (From Storage)"), "\(found)")
            #expect(found["detailDelivery"]?.string?.hasPrefix("Delivery: Received by APNs") == true, "\(found)")
            #expect(found["banner"]?.string?.hasPrefix("Open to the network: the admin API listens on 0.0.0.0 without --admin-token") == true, "\(found)")
        }
    }

    /// With an admin token, the page asks for it in a form and keeps it in an HttpOnly, SameSite=Strict cookie: no
    /// URL the page requested (resources, the live feed) holds it, and no script can read it.
    @Test(.timeLimit(.minutes(2)))
    func theLoginKeepsTheTokenOutOfEveryURL() async throws {
        let secret = "inspector-\(UUID().uuidString)"
        try await withTestServer(configure: { $0.adminToken = secret }) { server in
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/inspector_login_check.py").path,
                "--admin-port", String(server.adminPort), "--admin-token", secret,
            ], timeout: .seconds(90))
            #expect(result.exitCode == 0, "\(result)")
            let found = try JSON(parsing: Array(result.stdout.utf8))
            #expect(found["loginShown"] == .bool(true) && found["mainHidden"] == .bool(true) && found["wrongTokenRefused"] == .bool(true), "\(found)")
            #expect(found["stats"]?.string?.contains("received") == true, "logged in: \(found)")
            let urls = found["urls"]?.array?.compactMap(\.string) ?? []
            #expect(urls.contains { $0.contains("/admin/notifications/stream") }, "the live feed was requested: \(urls)")
            #expect(urls.allSatisfy { !$0.contains(secret) }, "\(urls)")
            #expect(found["cookieVisibleToScripts"]?.string?.contains(secret) == false, "\(found)")
            #expect(found["cookie"] == .array([.object(["name": .string("apns_mock_admin"), "httpOnly": .bool(true), "sameSite": .string("Strict")])]), "\(found)")
        }
    }

    /// A tenant's token, logged in: the page names its tenant, offers no other, and its feed holds only its pushes.
    @Test(.timeLimit(.minutes(2)))
    func aTenantsLoginSeesOnlyItsOwnPushes() async throws {
        let secret = "tenant-a-\(UUID().uuidString)"
        try await withTestServer(configure: {
            $0.tenants = .byTopic
            $0.adminTokens = AdminTokens(unscoped: "operator", scoped: [.init(tenant: "com.a.app", secret: secret)])
        }) { server in
            for topic in ["com.b.app", "com.a.app", "com.b.app", "com.a.app", "com.b.app"] {
                let push = try await ProviderCurlTests.curl([
                    "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(topic)", "-d", TestData.alertPayload,
                    server.deviceURL(TestData.deviceToken()),
                ])
                #expect(push.stdout == "200", "\(push)")
            }
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/inspector_login_check.py").path,
                "--admin-port", String(server.adminPort), "--admin-token", secret, "--rows", "2",
            ], timeout: .seconds(90))
            #expect(result.exitCode == 0, "\(result)")
            let found = try JSON(parsing: Array(result.stdout.utf8))
            #expect(found["rowTenants"] == .array([.string("com.a.app"), .string("com.a.app")]), "\(found)")
            #expect(found["tenantName"] == .string("com.a.app") && found["pickerShown"] == .bool(false), "\(found)")
            let urls = found["urls"]?.array?.compactMap(\.string) ?? []
            #expect(!urls.isEmpty && urls.allSatisfy { !$0.contains(secret) }, "\(urls)")
        }
    }
}
