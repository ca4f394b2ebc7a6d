import Foundation
import Testing

/// The provider port as curl sees it: the client most people try first (`curl --http2 --cacert Certs/ca.pem`).
@Suite("Provider over curl")
struct ProviderCurlTests {
    /// `curl --http2` with the CA, printing the response headers (`-D -`) and the status last (`-w`).
    static func curl(_ arguments: [String], stdin: Data? = nil) async throws -> ToolResult {
        try await ExternalTool.run(
            "curl",
            ["--silent", "--show-error", "--cacert", TestPaths.caCertificate, "--max-time", "15"] + arguments,
            stdin: stdin
        )
    }

    /// Splits curl's `-D - -w '\n%{http_code}'` output into header lines, body, and status.
    struct CurlOutput {
        var statusLine: String
        var headers: [(name: String, value: String)]
        var body: String
        var code: String

        init(_ output: String) {
            var text = output
            var code = ""
            if let lastNewline = text.lastIndex(of: "\n") {
                code = String(text[text.index(after: lastNewline)...])
                text = String(text[..<lastNewline])
            }
            self.code = code
            let parts = text.components(separatedBy: "\r\n\r\n")
            let head = parts.first ?? ""
            body = parts.dropFirst().joined(separator: "\r\n\r\n")
            let lines = head.components(separatedBy: "\r\n")
            statusLine = (lines.first ?? "").trimmingCharacters(in: .whitespaces)
            headers = lines.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (
                    String(line[..<colon]).lowercased(),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            }
        }

        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }

    @Test func curlHTTP2PushIsAnswered200() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let result = try await Self.curl([
                "--http2", "-D", "-", "-w", "\n%{http_code}",
                "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: alert",
                "-d", TestData.alertPayload, server.deviceURL(token),
            ])
            #expect(result.exitCode == 0, "\(result)")
            let output = CurlOutput(result.stdout)
            #expect(output.code == "200", "\(result)")
            #expect(output.statusLine == "HTTP/2 200", "\(result)")
            #expect(TestData.isUpperCaseUUID(output.header("apns-id")), "\(result)")
            #expect(TestData.isLowerCaseUUID(output.header("apns-unique-id")), "\(result)")
            #expect(output.body.isEmpty, "\(result)")

            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.status == 200)
            #expect(recording.payloadText == TestData.alertPayload)
            // curl's default content-type is ignored, as APNs ignores it.
            #expect(recording.header("content-type") == "application/x-www-form-urlencoded")
        }
    }

    @Test func curlHTTP2BadDeviceTokenIsAnswered400WithJSONReason() async throws {
        try await withTestServer { server in
            let result = try await Self.curl([
                "--http2", "-D", "-", "-w", "\n%{http_code}",
                "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload, server.deviceURL("0123xyz"),
            ])
            #expect(result.exitCode == 0, "\(result)")
            let output = CurlOutput(result.stdout)
            #expect(output.code == "400", "\(result)")
            #expect(output.header("content-type") == "application/json", "\(result)")
            #expect(output.header("apns-id") != nil, "\(result)")
            #expect(output.body == #"{"reason":"BadDeviceToken"}"#, "\(result)")
        }
    }

    /// An HTTP/1.1 client must get a plain answer saying HTTP/2 is needed, not a confusing protocol error.
    /// (Until the server held back its SETTINGS for non-h2 peers, curl read a binary frame first and failed
    /// with "Received HTTP/0.9 when not allowed", exit 1.)
    @Test func curlHTTP1IsRefusedWith505NamingHTTP2() async throws {
        try await withTestServer { server in
            let result = try await Self.curl([
                "--http1.1", "-D", "-", "-w", "\n%{http_code}",
                "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload, server.deviceURL(TestData.deviceToken()),
            ])
            #expect(result.exitCode == 0, "\(result)")
            let output = CurlOutput(result.stdout)
            #expect(output.statusLine == "HTTP/1.1 505 HTTP Version Not Supported", "\(result)")
            #expect(output.code == "505", "\(result)")
            #expect(output.header("content-type") == "text/plain", "\(result)")
            #expect(output.body.contains("HTTP/2"), "\(result)")
            // The request is not taken as a push: nothing is recorded.
            #expect(try await server.admin.notifications().isEmpty)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func requestWithoutContentLengthIsAccepted() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            // `-T -` uploads stdin of unknown length: over HTTP/2 curl sends no content-length at all.
            let streamed = try await Self.curl(
                [
                    "--http2", "-X", "POST", "-T", "-", "-w", "%{http_code}",
                    "-H", "apns-topic: \(TestData.topic)", server.deviceURL(token),
                ],
                stdin: Data(TestData.alertPayload.utf8)
            )
            #expect(streamed.exitCode == 0, "\(streamed)")
            #expect(streamed.stdout == "200", "\(streamed)")
            // An explicit empty `content-length:` makes curl drop the header it would have sent.
            let stripped = try await Self.curl([
                "--http2", "-w", "%{http_code}", "-H", "content-length:",
                "-H", "apns-topic: \(TestData.topic)", "-d", #"{"aps":{"badge":1}}"#, server.deviceURL(token),
            ])
            #expect(stripped.exitCode == 0, "\(stripped)")
            #expect(stripped.stdout == "200", "\(stripped)")

            let recordings = try await server.admin.notifications([("token", token)])
            try #require(recordings.count == 2)
            for recording in recordings {
                #expect(recording.header("content-length") == nil, "curl sent content-length after all: \(recording)")
                #expect(recording.status == 200)
            }
            #expect(recordings[0].payloadText == TestData.alertPayload)
            #expect(recordings[1].payloadText == #"{"aps":{"badge":1}}"#)
        }
    }
}
