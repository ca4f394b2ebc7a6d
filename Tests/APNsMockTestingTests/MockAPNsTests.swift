import APNsMockServer
import APNsMockTesting
import AsyncHTTPClient
import ChildProcesses
import Foundation
import NIOCore
import NIOSSL
import Testing

/// The testing module through its public API only, as a provider team's test suite uses it.
@Suite struct MockAPNsTests {
    @Test func twoMocksRunAtOnceAndEachRecordsOnlyItsOwnPushes() async throws {
        try await MockAPNs.withRunningServer { first in
            try await MockAPNs.withRunningServer { second in
                #expect(first.providerPort != second.providerPort)
                #expect(first.credentials.caCertificatePEM != second.credentials.caCertificatePEM)
                let token = Self.deviceToken()
                try await Provider.with(first) { (provider: Provider) async throws in
                    #expect(try await provider.push(to: token, payload: #"{"aps":{"alert":"one"}}"#).status == 200)
                }
                try await Provider.with(second) { (provider: Provider) async throws in
                    #expect(try await provider.push(to: token, payload: #"{"aps":{"alert":"two"}}"#).status == 200)
                    #expect(try await provider.push(to: token, payload: #"{"aps":{"alert":"three"}}"#).status == 200)
                }
                let firstPushes = try await first.waitForNotifications(count: 1, matching: NotificationFilter(deviceToken: token))
                let secondPushes = try await second.waitForNotifications(count: 2, matching: NotificationFilter(deviceToken: token))
                #expect(firstPushes.map { $0.payload?["aps"]?["alert"]?.string } == ["one"])
                #expect(secondPushes.map { $0.payload?["aps"]?["alert"]?.string } == ["two", "three"])
                #expect(try await first.statistics().received == 1)
                #expect(try await second.statistics().received == 2)
                #expect(firstPushes[0].authentication?.method == "token")
                #expect(firstPushes[0].authentication?.keyId == first.credentials.keyID)
                #expect(firstPushes[0].topic == Provider.topic)
                #expect(firstPushes[0].response?.apnsId != nil)
            }
        }
    }

    @Test func curlPushesWithTheCredentialsTheMockGives() async throws {
        try await MockAPNs.withRunningServer { mock in
            let caFile = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-ca-\(UUID().uuidString).pem")
            try mock.credentials.caCertificatePEM.write(to: caFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: caFile) }
            let token = Self.deviceToken()
            let output = try await Self.run(
                "/usr/bin/curl",
                [
                    "-sS", "--http2", "--cacert", caFile.path, "-o", "/dev/null", "-w", "%{http_code}",
                    "-H", "authorization: bearer \(try mock.providerToken())",
                    "-H", "apns-topic: \(Provider.topic)", "-H", "apns-push-type: alert",
                    "--data", #"{"aps":{"alert":"from curl"}}"#,
                    mock.providerURL.absoluteString + "/3/device/" + token,
                ]
            )
            #expect(output == "200")
            let recordings = try await mock.waitForNotifications(matching: NotificationFilter(deviceToken: token, status: 200))
            #expect(recordings.first?.header("user-agent")?.hasPrefix("curl/") == true)
            #expect(recordings.first?.payload?["aps"]?["alert"]?.string == "from curl")
        }
    }

    @Test func aScriptedUnregisteredTokenAnswers410WithItsTimestamp() async throws {
        try await MockAPNs.withRunningServer { mock in
            let gone = Self.deviceToken()
            let state = try await mock.setScenario(
                yaml: """
                    name: uninstalled
                    rules:
                      - name: gone
                        match: { token: "\(gone)" }
                        status: 410
                        reason: Unregistered
                        timestamp: "-1d"
                    """
            )
            #expect(state.name == "uninstalled")
            #expect(state.source?.hasPrefix("name: uninstalled\nrules:") == true)
            try await Provider.with(mock) { (provider: Provider) async throws in
                let answer = try await provider.push(to: gone, payload: #"{"aps":{"alert":"hi"}}"#)
                #expect(answer.status == 410)
                #expect(answer.body.contains("\"Unregistered\""))
                #expect(answer.body.contains("\"timestamp\""))
                #expect(try await provider.push(to: Self.deviceToken(), payload: #"{"aps":{"alert":"hi"}}"#).status == 200)
            }
            let recorded = try await mock.waitForNotifications(matching: NotificationFilter(status: 410))
            #expect(recorded.first?.deviceToken == gone)
            #expect(recorded.first?.reason == "Unregistered")
            #expect(recorded.first?.scenarioRule == "gone")
            #expect(recorded.first?.response?.timestamp != nil)
            #expect(try await mock.scenario().rules.first?.hits == 1)
        }
    }

    @Test func anUnregisteredDeviceAnswers410FromTheDeviceRegistry() async throws {
        try await MockAPNs.withRunningServer { mock in
            let token = Self.deviceToken()
            try await mock.register(MockDevice(token: token, topic: Provider.topic))
            let uninstalled = Date(timeIntervalSince1970: 1_700_000_000)
            let device = try await mock.unregister(token: token, at: uninstalled)
            #expect(device.unregisteredAt == 1_700_000_000_000)
            #expect(try await mock.devices().map(\.token) == [token])
            try await Provider.with(mock) { (provider: Provider) async throws in
                let answer = try await provider.push(to: token, payload: #"{"aps":{"alert":"hi"}}"#)
                #expect(answer.status == 410)
                #expect(answer.body.contains("1700000000000"))
            }
            try await mock.removeDevice(token: token)
            #expect(try await mock.devices().isEmpty)
            await #expect(throws: AdminRequestFailed.self) { try await mock.removeDevice(token: token) }
        }
    }

    @Test func aWaitThatTimesOutSaysWhatWasReceived() async throws {
        try await MockAPNs.withRunningServer { mock in
            let sent = Self.deviceToken()
            try await Provider.with(mock) { (provider: Provider) async throws in
                #expect(try await provider.push(to: sent, payload: #"{"aps":{"alert":"hi"}}"#).status == 200)
            }
            let awaited = Self.deviceToken()
            do {
                _ = try await mock.waitForNotifications(count: 1, matching: NotificationFilter(deviceToken: awaited), timeout: .milliseconds(300))
                Issue.record("the wait returned without a matching push")
            } catch let timeout as NotificationWaitTimeout {
                #expect(timeout.matched.isEmpty)
                #expect(timeout.totalReceived == 1)
                #expect(timeout.description.contains("token=\(awaited)"))
                #expect(timeout.description.contains("/3/device/\(sent)"))
                #expect(timeout.description.contains("→ 200"))
            }
            // The same over HTTP.
            do {
                _ = try await mock.adminClient.waitForNotifications(count: 2, matching: NotificationFilter(deviceToken: sent), timeout: .milliseconds(300))
                Issue.record("the wait returned with one push of two")
            } catch let timeout as NotificationWaitTimeout {
                #expect(timeout.matched.map(\.deviceToken) == [sent])
                #expect(timeout.description.contains("1 matched"))
            }
        }
    }

    @Test func aBadScenarioIsRefusedWithLineAndColumnAndTheOldOneStays() async throws {
        try await MockAPNs.withRunningServer { mock in
            try await mock.setScenario(yaml: "name: first\nrules: []\n")
            for administration in [mock as any APNsMockAdministration, mock.adminClient] {
                do {
                    try await administration.setScenario(yaml: "name: second\nrules:\n  - name: typo\n    match: { tokenPrefx: ab }\n")
                    Issue.record("a scenario with an unknown key was accepted")
                } catch let rejected as ScenarioRejected {
                    let problem = try #require(rejected.problems.first)
                    #expect(problem.line == 4)
                    #expect(problem.column != nil)
                    #expect(problem.message.contains("tokenPrefix"))
                    #expect(rejected.description.contains(":4:"))
                }
                #expect(try await administration.scenario().name == "first")
            }
        }
    }

    @Test func aClientCertificateAuthenticatesWithoutAToken() async throws {
        try await MockAPNs.withRunningServer { mock in
            let token = Self.deviceToken()
            try await Provider.with(mock, certificate: .development) { (provider: Provider) async throws in
                #expect(try await provider.push(to: token, payload: #"{"aps":{"alert":"hi"}}"#, bearer: nil).status == 200)
            }
            let recording = try #require(try await mock.waitForNotifications(matching: NotificationFilter(deviceToken: token)).first)
            #expect(recording.authentication?.method == "certificate")
            #expect(try await mock.notifications(matching: NotificationFilter(authentication: "certificate")).count == 1)
        }
    }

    @Test func theHTTPClientAndTheInProcessCallsAgree() async throws {
        try await MockAPNs.withRunningServer { mock in
            let token = Self.deviceToken()
            try await Provider.with(mock) { (provider: Provider) async throws in
                for index in 0..<3 {
                    #expect(try await provider.push(to: token, payload: #"{"aps":{"alert":"\#(index)"}}"#).status == 200)
                }
            }
            let http = mock.adminClient
            let inProcess = try await mock.waitForNotifications(count: 3, matching: NotificationFilter(deviceToken: token))
            #expect(try await http.notifications(matching: NotificationFilter(deviceToken: token)) == inProcess)
            #expect(try await http.notifications(matching: NotificationFilter(deviceToken: token), limit: 2) == Array(inProcess.prefix(2)))
            let apnsID = try #require(inProcess[1].response?.apnsId)
            #expect(try await http.notification(apnsID: apnsID) == inProcess[1])
            #expect(try await mock.notification(apnsID: apnsID) == inProcess[1])
            #expect(try await http.notification(apnsID: "00000000-0000-0000-0000-000000000000") == nil)
            #expect(try await http.statistics().received == mock.statistics().received)
            await #expect(throws: AdminRequestFailed.self) { try await http.notifications(matching: NotificationFilter(status: 42)) }
            await #expect(throws: AdminRequestFailed.self) { try await mock.notifications(matching: NotificationFilter(status: 42)) }
            try await http.clearNotifications()
            #expect(try await mock.notifications().isEmpty)
        }
    }

    @Test func theMockStopsWhenTheBodyThrows() async throws {
        struct Planned: Error {}
        var providerURL: URL?
        await #expect(throws: Planned.self) {
            try await MockAPNs.withRunningServer { mock in
                providerURL = mock.providerURL
                throw Planned()
            }
        }
        let url = try #require(providerURL)
        // Nothing listens any more: curl cannot connect (no HTTP status, "000").
        let status = try await Self.run("/usr/bin/curl", ["-s", "-k", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", url.absoluteString])
        #expect(status == "000")
    }

    /// The testing module's settings are the command line's, by name and grammar; a bad one starts nothing.
    @Test func aConfigurationTakesTheCommandLinesSettingsByName() async throws {
        let mock = try await MockAPNs.start(.init(["auth": "none", "max-payload": "2048"]))
        #expect(mock.configuration.settings["auth"] == "none")
        // No credentials needed, and 2,049 bytes are over the limit set.
        func push(_ payload: String) async throws -> String {
            try await Self.run("/usr/bin/curl", [
                "-s", "--http2", "--cacert", mock.credentials.directory + "/ca.pem", "-o", "/dev/null", "-w", "%{http_code}",
                "-H", "apns-topic: com.example.app", "-d", payload, mock.providerURL.absoluteString + "/3/device/" + Self.deviceToken(),
            ])
        }
        #expect(try await push(#"{"aps":{"alert":"hi"}}"#) == "200")
        #expect(try await push(#"{"aps":{"alert":""# + String(repeating: "x", count: 2049 - 20) + #""}}"#) == "413")
        let unknown = await #expect(throws: MockConfigurationRejected.self) { try await MockAPNs.start(.init(["autth": "none"])) }
        #expect(unknown?.setting == "autth" && unknown?.message.contains("'auth'") == true, "\(String(describing: unknown))")
        let bad = await #expect(throws: MockConfigurationRejected.self) { try await MockAPNs.start(.init(["port": "abc"])) }
        #expect(bad?.description == "port: 'abc' is not a port number (0...65535)", "\(String(describing: bad))")
        // The stores beyond memory are the binary's: asked for here, they are refused by name.
        let store = await #expect(throws: MockConfigurationRejected.self) { try await MockAPNs.start(.init(["store": "sqlite:/tmp/x.sqlite"])) }
        #expect(store?.setting == "store", "\(String(describing: store))")
        await mock.stop()
    }

    /// Two apps' tests sharing one mock by topic: each tenant's client sees its own pushes and scenario only.
    @Test func aTenantsAdminClientSeesOnlyItsOwn() async throws {
        let mock = try await MockAPNs.start(.init(["auth": "none", "tenants": "by-topic"]))
        let (appA, appB) = (mock.adminClient(tenant: "com.a.app"), mock.adminClient(tenant: "com.b.app"))
        _ = try await appB.setScenario(yaml: "name: b-down\nrules:\n  - name: down\n    reason: ServiceUnavailable\n")
        let (tokenA, tokenB) = (Self.deviceToken(), Self.deviceToken())
        try await Provider.with(mock) { (provider: Provider) async throws in
            #expect(try await provider.push(to: tokenA, payload: "{}", bearer: nil, headers: [("apns-topic", "com.a.app")]).status == 200)
            #expect(try await provider.push(to: tokenB, payload: "{}", bearer: nil, headers: [("apns-topic", "com.b.app")]).status == 503)
        }
        #expect(try await appA.notifications(matching: NotificationFilter(), limit: nil).map(\.tenant) == ["com.a.app"])
        #expect(try await appB.notifications(matching: NotificationFilter(), limit: nil).map(\.tenant) == ["com.b.app"])
        #expect(try await appA.scenario().name != "b-down")
        #expect(try await mock.notifications(matching: NotificationFilter(), limit: nil).count == 2)
        await mock.stop()
    }

    @Test func aStartedMockStopsOnRequestAndAgain() async throws {
        let mock = try await MockAPNs.start()
        #expect(try await mock.statistics().received == 0)
        await mock.stop()
        await mock.stop()
    }

    // MARK: Helpers

    static func deviceToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        try await ChildProcess.run(executable, arguments).output
    }
}

/// A provider in a few lines of AsyncHTTPClient: HTTP/2 to the mock, trusting its CA.
struct Provider {
    static let topic = "com.example.app"

    let client: HTTPClient
    let mock: MockAPNs

    static func with(
        _ mock: MockAPNs,
        certificate: MockCredentials.ClientCertificate? = nil,
        _ body: (Provider) async throws -> Void
    ) async throws {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try mock.credentials.clientTLSConfiguration(presenting: certificate))
        configuration.httpVersion = .automatic
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await body(Provider(client: client, mock: mock))
            try await client.shutdown()
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Sends one push; `bearer` is a provider token (the mock's, unless given; `nil` sends none).
    func push(
        to token: String, payload: String, bearer: String?? = .none, headers: [(String, String)] = []
    ) async throws -> (status: Int, body: String, apnsID: String?, uniqueID: String?) {
        var request = HTTPClientRequest(url: mock.providerURL.absoluteString + "/3/device/" + token)
        request.method = .POST
        if !headers.contains(where: { $0.0 == "apns-topic" }) { request.headers.add(name: "apns-topic", value: Self.topic) }
        request.headers.add(name: "apns-push-type", value: "alert")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let authorization: String? = switch bearer {
        case .none: try mock.providerToken()
        case .some(let given): given
        }
        if let authorization { request.headers.add(name: "authorization", value: "bearer " + authorization) }
        request.body = .bytes(ByteBuffer(string: payload))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 * 1024)
        #expect(response.version == .http2)
        return (Int(response.status.code), String(buffer: body), response.headers.first(name: "apns-id"), response.headers.first(name: "apns-unique-id"))
    }
}
