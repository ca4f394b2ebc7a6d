@testable import APNsMock
import APNsMockCertificates
import APNsMockServer
import Crypto
import Foundation
import Testing

/// Authentication over real sockets: provider tokens and client certificates, as APNs enforces them.
@Suite("Provider authentication end to end")
struct ProviderAuthenticationTests {
    static let keyID = "APNSMOCK01"
    static let teamID = "TEAM000001"

    static func signer() throws -> ProviderTokenSigner {
        let pem = try String(contentsOfFile: TestPaths.certsDirectory + "/AuthKey_\(keyID).p8", encoding: .utf8)
        return ProviderTokenSigner(keyID: keyID, teamID: teamID, privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
    }

    static func token(issuedAgo seconds: Int64 = 0, signature: ProviderTokenSigner.SignatureEncoding = .raw) throws -> String {
        try signer().token(issuedAt: Int64(Date().timeIntervalSince1970) - seconds, signature: signature)
    }

    static func tokenServer(_ body: (TestServer) async throws -> Void) async throws {
        try await withTestServer(configure: { $0.authMode = .either }) { server in try await body(server) }
    }

    static func curl(_ arguments: [String]) async throws -> ToolResult {
        try await ExternalTool.run(
            "curl",
            ["--silent", "--show-error", "--http2", "--cacert", TestPaths.caCertificate, "--max-time", "15"] + arguments
        )
    }

    @Test func asyncHTTPClientPushWithAValidTokenIsAccepted() async throws {
        try await Self.tokenServer { server in
            let token = try Self.token()
            let response = try await withProviderClient(server) { client in
                try await client.send(headers: [("authorization", "bearer \(token)"), ("apns-topic", TestData.topic)])
            }
            #expect(response.status == 200)
            let recording = try #require(try await server.admin.notifications().first)
            #expect(recording.json["authentication"]?["method"]?.string == "token")
            #expect(recording.json["authentication"]?["keyId"]?.string == Self.keyID)
            #expect(recording.json["authentication"]?["teamId"]?.string == Self.teamID)
            #expect(recording.json["authentication"]?["signatureVerified"]?.bool == true)
            #expect(try await server.admin.notifications([("key-id", Self.keyID), ("auth", "token")]).count == 1)
        }
    }

    @Test func missingTokenIs403MissingProviderToken() async throws {
        try await Self.tokenServer { server in
            let result = try await Self.curl(["-w", "\n%{http_code}", "-H", "apns-topic: \(TestData.topic)", "-d", "{}", server.deviceURL(TestData.deviceToken())])
            #expect(result.stdout == "{\"reason\":\"MissingProviderToken\"}\n403", "\(result)")
        }
    }

    @Test(arguments: [ProviderTokenSigner.SignatureEncoding.raw, .der])
    func curlWithATokenIsAcceptedWithRawAndDERSignatures(encoding: ProviderTokenSigner.SignatureEncoding) async throws {
        try await Self.tokenServer { server in
            let result = try await Self.curl([
                "-w", "%{http_code}", "-H", "authorization: bearer \(try Self.token(signature: encoding))",
                "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload, server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == "200", "\(result)")
        }
    }

    @Test func tokenOlderThanAnHourIs403ExpiredProviderToken() async throws {
        try await Self.tokenServer { server in
            let result = try await Self.curl([
                "-w", "\n%{http_code}", "-H", "authorization: bearer \(try Self.token(issuedAgo: 3700))",
                "-H", "apns-topic: \(TestData.topic)", "-d", "{}", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == "{\"reason\":\"ExpiredProviderToken\"}\n403", "\(result)")
        }
    }

    @Test func tamperedTokenIs403InvalidProviderToken() async throws {
        try await Self.tokenServer { server in
            var parts = try Self.token().split(separator: ".").map(String.init)
            parts[1] = Base64URL.encode(Array(#"{"iss":"TEAM000001","iat":\#(Int(Date().timeIntervalSince1970) - 10)}"#.utf8))
            let result = try await Self.curl([
                "-w", "\n%{http_code}", "-H", "authorization: bearer \(parts.joined(separator: "."))",
                "-H", "apns-topic: \(TestData.topic)", "-d", "{}", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == "{\"reason\":\"InvalidProviderToken\"}\n403", "\(result)")
        }
    }

    /// Two requests on one connection (`curl --next` reuses it), the second with a new token minutes later.
    @Test func aSecondTokenOnOneConnectionWithin20MinutesIs429() async throws {
        try await Self.tokenServer { server in
            let url = server.deviceURL(TestData.deviceToken())
            let result = try await Self.curl([
                "-w", "%{http_code}\n", "-H", "authorization: bearer \(try Self.token(issuedAgo: 600))",
                "-H", "apns-topic: \(TestData.topic)", "-d", "{}", url,
                "--next", "--http2", "--cacert", TestPaths.caCertificate, "-w", "%{http_code}\n",
                "-H", "authorization: bearer \(try Self.token())", "-H", "apns-topic: \(TestData.topic)", "-d", "{}", url,
            ])
            #expect(result.stdout == "200\n{\"reason\":\"TooManyProviderTokenUpdates\"}429\n", "\(result)")
            let stats = try await server.admin.stats()
            #expect(stats["connections"]?["accepted"]?.int == 1, "both requests must share one connection")
        }
    }

    /// APNs allows one stream until a request carries a valid token, then raises the limit with new SETTINGS.
    @Test func tokenConnectionsStartWithOneStreamAndAreRaisedAfterAValidToken() async throws {
        try await Self.tokenServer { server in
            let result = try await ExternalTool.run("nghttp", [
                "-v", "-n", "-H", "authorization: bearer \(try Self.token())", "-H", "apns-topic: \(TestData.topic)",
                "-d", "/dev/null", server.deviceURL(TestData.deviceToken()),
            ])
            let limits = result.stdout.components(separatedBy: "\n")
                .filter { $0.contains("SETTINGS_MAX_CONCURRENT_STREAMS") }
            let received = result.stdout.components(separatedBy: "recv SETTINGS frame").dropFirst()
                .compactMap { frame in frame.components(separatedBy: "\n").first(where: { $0.contains("MAX_CONCURRENT_STREAMS") }) }
            #expect(received.count == 2, "\(limits)\n\(result)")
            #expect(received.first?.hasSuffix(":1]") == true, "\(received)")
            #expect(received.last?.hasSuffix(":1000]") == true, "\(received)")
        }
    }

    @Test func certificateConnectionsStartWith1000Streams() async throws {
        try await Self.tokenServer { server in
            let result = try await ExternalTool.run("nghttp", [
                "-v", "-n", "--cert", TestPaths.certsDirectory + "/client-development.pem",
                "--key", TestPaths.certsDirectory + "/client-development-key.pem",
                "-H", "apns-topic: \(TestData.topic)", "-d", "/dev/null", server.deviceURL(TestData.deviceToken()),
            ])
            let received = result.stdout.components(separatedBy: "recv SETTINGS frame").dropFirst()
                .compactMap { frame in frame.components(separatedBy: "\n").first(where: { $0.contains("MAX_CONCURRENT_STREAMS") }) }
            #expect(received == ["          [SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1000]"], "\(result)")
        }
    }

    @Test func curlWithTheDevelopmentClientCertificateIsAcceptedAndRecorded() async throws {
        try await Self.tokenServer { server in
            let result = try await Self.curl([
                "-w", "%{http_code}", "--cert", TestPaths.certsDirectory + "/client-development.pem",
                "--key", TestPaths.certsDirectory + "/client-development-key.pem",
                "-H", "apns-topic: com.example.app.voip", "-H", "apns-push-type: voip",
                "-d", TestData.alertPayload, server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == "200", "\(result)")
            let recording = try #require(try await server.admin.notifications([("auth", "certificate")]).first)
            #expect(recording.json["authentication"]?["topics"]?.array?.compactMap(\.string)
                == ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
        }
    }

    @Test func certificateTopicRules() async throws {
        try await Self.tokenServer { server in
            let cert = ["--cert", TestPaths.certsDirectory + "/client-development.pem", "--key", TestPaths.certsDirectory + "/client-development-key.pem"]
            let missing = try await Self.curl(cert + ["-w", "\n%{http_code}", "-d", "{}", server.deviceURL(TestData.deviceToken())])
            #expect(missing.stdout == "{\"reason\":\"MissingTopic\"}\n400", "\(missing)")
            let other = try await Self.curl(cert + ["-w", "\n%{http_code}", "-H", "apns-topic: com.other.app", "-d", "{}", server.deviceURL(TestData.deviceToken())])
            #expect(other.stdout == "{\"reason\":\"TopicDisallowed\"}\n400", "\(other)")
        }
    }

    /// A production certificate against the development mock: GOAWAY with APNs' JSON, a bare GOAWAY, then close.
    @Test func certificateForTheOtherEnvironmentGetsGoAwayBadCertificateEnvironment() async throws {
        try await Self.tokenServer { server in
            let result = try await ExternalTool.run("nghttp", [
                "-v", "-n", "--cert", TestPaths.certsDirectory + "/client-production.pem",
                "--key", TestPaths.certsDirectory + "/client-production-key.pem",
                "-H", "apns-topic: \(TestData.topic)", "-d", "/dev/null", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout.contains("recv GOAWAY frame"), "\(result)")
            #expect(result.stdout.contains("(last_stream_id=0, error_code=NO_ERROR(0x00), opaque_data(38)=[{\"reason\":\"BadCertificateEnvironment\"}])"), "\(result)")
            #expect(!result.stdout.contains(":status"), "no answer on the stream: \(result)")
            let recording = try await poll("the abandoned recording") { try await server.admin.notifications().first }
            #expect(recording.hasNullResponse)
            #expect(recording.abandoned?.contains("BadCertificateEnvironment") == true, "\(recording)")
        }
    }

    @Test func certificateFromAnotherCAFailsTheHandshake() async throws {
        try await Self.tokenServer { server in
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-foreign-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try DevelopmentCredentials.generate().write(to: scratch)
            let result = try await Self.curl([
                "--cert", scratch + "/client-development.pem", "--key", scratch + "/client-development-key.pem",
                "-H", "apns-topic: \(TestData.topic)", "-d", "{}", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.exitCode != 0, "\(result)")
            #expect(try await server.admin.notifications().isEmpty)
        }
    }

    /// `authorization: bearer` and nothing else: "no provider token is specified", as APNs puts it.
    @Test func bearerWithoutATokenIsMissingProviderToken() async throws {
        try await Self.tokenServer { server in
            let result = try await Self.curl([
                "-H", "authorization: bearer", "-H", "apns-topic: \(TestData.topic)", "-d", "{}", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == #"{"reason":"MissingProviderToken"}"#, "\(result)")
            let recorded = try #require(try await server.admin.waitForNotifications(count: 1).first)
            #expect(recorded.status == 403 && recorded.reason == "MissingProviderToken", "\(recorded)")
        }
    }

    @Test func acceptAnyClientCertificateReadsAForeignCertificatesTopics() async throws {
        try await withTestServer(configure: { $0.authMode = .either; $0.acceptAnyClientCertificate = true }) { server in
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-foreign-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try DevelopmentCredentials.generate(bundleID: "com.foreign.app").write(to: scratch)
            let result = try await Self.curl([
                "-w", "%{http_code}", "--cert", scratch + "/client-development.pem", "--key", scratch + "/client-development-key.pem",
                "-H", "apns-topic: com.foreign.app", "-d", "{}", server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.stdout == "200", "\(result)")
        }
    }

    @Test func aioapnsSendsWithTokenAuthAndGets200() async throws {
        try await Self.tokenServer { server in
            let token = TestData.deviceToken()
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/aioapns_push.py").path,
                "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
                "--key", TestPaths.certsDirectory + "/AuthKey_\(Self.keyID).p8", "--key-id", Self.keyID, "--team-id", Self.teamID,
                "--topic", TestData.topic, "--token", token, "--count", "5",
            ], timeout: .seconds(40))
            #expect(result.exitCode == 0, "\(result)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 5, "\(result)")
            #expect(lines.allSatisfy { $0.contains("\"status\": \"200\"") && $0.contains("\"success\": true") }, "\(result)")
            let recorded = try await server.admin.waitForNotifications(count: 5, [("token", token), ("status", "200")])
            #expect(recorded.count == 5)
            #expect(recorded.allSatisfy { $0.json["authentication"]?["keyId"]?.string == Self.keyID })
        }
    }

    @Test func aioapnsSendsWithCertificateAuthAndGets200() async throws {
        try await Self.tokenServer { server in
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/aioapns_push.py").path,
                "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
                "--cert", TestPaths.certsDirectory + "/client-development.pem",
                "--cert-key", TestPaths.certsDirectory + "/client-development-key.pem",
                "--topic", TestData.topic, "--token", TestData.deviceToken(),
            ], timeout: .seconds(40))
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout.contains("\"status\": \"200\""), "\(result)")
            #expect(try await server.admin.notifications([("auth", "certificate")]).count == 1)
        }
    }

    @Test func httpxOverHTTP2GetsAPNsAnswers() async throws {
        try await withTestServer { server in
            let script = TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/httpx_push.py").path
            let ok = try await ExternalTool.run("python3", [
                script, server.deviceURL(TestData.deviceToken()), "--ca", TestPaths.caCertificate,
                "--header", "apns-topic: \(TestData.topic)",
            ])
            #expect(ok.stdout.contains("\"http_version\": \"HTTP/2\""), "\(ok)")
            #expect(ok.stdout.contains("\"status\": 200"), "\(ok)")
            #expect(ok.stdout.contains("\"body\": \"\""), "\(ok)")
            let bad = try await ExternalTool.run("python3", [
                script, server.deviceURL("abc"), "--ca", TestPaths.caCertificate, "--header", "apns-topic: \(TestData.topic)",
            ])
            #expect(bad.stdout.contains("\"status\": 400"), "\(bad)")
            #expect(bad.stdout.contains(#""body": "{\"reason\":\"BadDeviceToken\"}""#), "\(bad)")
        }
    }
}
