import Foundation
import Testing

/// Clients that misbehave: the server must survive each one, record what it can, and go on answering.
@Suite("Provider against abusive clients")
struct ProviderAbuseTests {
    /// Bytes that are neither TLS nor HTTP/2 (a fixed pseudo-random sequence, starting with 0x00 so it can
    /// never pass for an HTTP/1 request line).
    static func junk(_ count: Int) -> [UInt8] {
        var state: UInt32 = 0x9E37_79B9
        return [0x00] + (1..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// Waits for the server to count no open provider connections: a misbehaving connection must not leak.
    static func expectNoOpenConnections(_ server: TestServer) async throws {
        _ = try await poll("the server to close every provider connection") { () -> Bool? in
            let stats = try await server.admin.stats()
            return stats["connections"]?["open"]?.int == 0 ? true : nil
        }
    }

    @Test func garbageAfterTLSHandshakeClosesOnlyThatConnection() async throws {
        try await withTestServer { server in
            let connection = try await RawConnection.connect(port: server.providerPort)
            try await connection.send(Self.junk(4096))
            let events = try await connection.eventsUntilClosed()
            // Nothing but the server's own SETTINGS (sent as soon as TLS is up) may come back: no HTTP/1 text.
            for case .frame(let frame) in events {
                #expect(frame.kind == .settings || frame.kind == .goAway, "unexpected \(frame)")
            }
            try await Self.expectNoOpenConnections(server)
            #expect(try await server.admin.notifications().isEmpty)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func garbageFrameAfterPrefaceGetsGoAwayAndClose() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            // A frame header announcing 16 MB - 1 of an unknown type: far over SETTINGS_MAX_FRAME_SIZE.
            try await connection.send([0xFF, 0xFF, 0xFF, 0xEE, 0x00, 0x00, 0x00, 0x00, 0x01] + Self.junk(512))
            let events = try await connection.eventsUntilClosed()
            let goAway = events.compactMap { event -> HTTP2Frame? in
                if case .frame(let frame) = event, frame.kind == .goAway { return frame }
                return nil
            }.first
            let frame = try #require(goAway, "expected a GOAWAY before the close, got \(events)")
            #expect(frame.errorCode == 0x6, "expected FRAME_SIZE_ERROR, got \(frame)")
            try await Self.expectNoOpenConnections(server)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func garbageBeforeTLSClosesOnlyThatConnection() async throws {
        try await withTestServer { server in
            let connection = try await RawConnection.connect(port: server.providerPort, tls: false, parseFrames: false)
            try await connection.send(Self.junk(4096))
            _ = try await connection.eventsUntilClosed()
            try await Self.expectNoOpenConnections(server)
            #expect(try await server.admin.notifications().isEmpty)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func clientThatVanishesMidRequestIsRecordedAsAbandoned() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let apnsID = "11111111-2222-3333-4444-555555555555"
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let headers = FrameWriter.pushHeaders(
                token: token,
                authority: server.authority,
                extra: [("apns-topic", TestData.topic), ("apns-push-type", "alert"), ("apns-id", apnsID)]
            )
            try await connection.send(
                FrameWriter.headers(streamID: 1, headers, endStream: false)
                    + FrameWriter.data(streamID: 1, Array(#"{"aps":{"al"#.utf8), endStream: false)
            )
            await connection.close()

            let recordings = try await server.admin.waitForNotifications(count: 1, [("token", token)])
            let recording = try #require(recordings.first)
            #expect(recording.hasNullResponse, "\(recording)")
            #expect(recording.abandoned == "connection closed before the request ended", "\(recording)")
            #expect(recording.topic == TestData.topic)
            #expect(recording.pushType == "alert")
            #expect(recording.header("apns-id") == apnsID)
            #expect(recording.payloadText == #"{"aps":{"al"#)
            #expect(recording.payloadSize == 11)
            // Found by the apns-id it was sent with, though it was never answered.
            #expect(try await server.admin.notification(apnsID: apnsID)?.deviceToken == token)
            let stats = try await server.admin.stats()
            #expect(stats["abandoned"]?.int == 1, "\(stats)")
            try await Self.expectNoOpenConnections(server)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func streamResetMidBodyIsRecordedAsAbandonedAndConnectionGoesOn() async throws {
        try await withTestServer { server in
            let resetToken = TestData.deviceToken()
            let nextToken = TestData.deviceToken()
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            try await connection.send(
                FrameWriter.headers(streamID: 1, FrameWriter.pushHeaders(token: resetToken, authority: server.authority), endStream: false)
                    + FrameWriter.data(streamID: 1, Array(#"{"aps":"#.utf8), endStream: false)
                    + FrameWriter.rstStream(streamID: 1, errorCode: 0x8)
            )
            let reset = try #require(try await server.admin.waitForNotifications(count: 1, [("token", resetToken)]).first)
            #expect(reset.hasNullResponse, "\(reset)")
            #expect(reset.abandoned == "stream reset before the request ended (HTTP/2 error CANCEL)", "\(reset)")
            #expect(reset.payloadText == #"{"aps":"#)

            // The same connection still takes requests.
            try await connection.send(
                FrameWriter.headers(streamID: 3, FrameWriter.pushHeaders(token: nextToken, authority: server.authority), endStream: false)
                    + FrameWriter.data(streamID: 3, Array(TestData.alertPayload.utf8), endStream: true)
            )
            let answer = try #require(try await connection.nextFrame { $0.streamID == 3 }, "connection closed instead of answering")
            #expect(answer.kind == .headers && answer.hasEndStream, "expected a lone HEADERS (200), got \(answer)")
            let next = try #require(try await server.admin.notifications([("token", nextToken)]).first)
            #expect(next.status == 200)
            await connection.close()
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func bodyLongerThanContentLengthGetsStreamReset() async throws {
        try await withTestServer { server in
            let liarToken = TestData.deviceToken()
            let nextToken = TestData.deviceToken()
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let headers = FrameWriter.pushHeaders(token: liarToken, authority: server.authority, extra: [("apns-topic", TestData.topic), ("content-length", "5")])
            try await connection.send(
                FrameWriter.headers(streamID: 1, headers, endStream: false)
                    + FrameWriter.data(streamID: 1, Array(TestData.alertPayload.utf8), endStream: true)
            )
            let reset = try #require(try await connection.nextFrame { $0.streamID == 1 }, "connection closed instead of resetting the stream")
            #expect(reset.kind == .rstStream, "expected RST_STREAM for a body longer than its content-length, got \(reset)")
            #expect(reset.errorCode == 0x1, "expected PROTOCOL_ERROR, got \(reset)")

            try await connection.send(
                FrameWriter.headers(streamID: 3, FrameWriter.pushHeaders(token: nextToken, authority: server.authority), endStream: false)
                    + FrameWriter.data(streamID: 3, Array(TestData.alertPayload.utf8), endStream: true)
            )
            let answer = try #require(try await connection.nextFrame { $0.streamID == 3 }, "connection closed instead of answering")
            #expect(answer.kind == .headers && answer.hasEndStream, "expected a lone HEADERS (200), got \(answer)")
            await connection.close()

            // The lying request never got an answer: it is recorded as abandoned, not as a push.
            let liar = try #require(try await server.admin.waitForNotifications(count: 1, [("token", liarToken)]).first)
            #expect(liar.hasNullResponse, "\(liar)")
            #expect(liar.abandoned?.contains("PROTOCOL_ERROR") == true, "\(liar)")
            #expect(try await server.admin.notifications([("token", nextToken)]).first?.status == 200)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func tenMegabyteBodyIsAnswered413() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let size = 10 * 1024 * 1024
            let result = try await ExternalTool.withTemporaryFile(Data(repeating: UInt8(ascii: "x"), count: size)) { path in
                try await ProviderCurlTests.curl([
                    "--http2", "-D", "-", "-w", "\n%{http_code}",
                    "-H", "apns-topic: \(TestData.topic)", "--data-binary", "@" + path, server.deviceURL(token),
                ])
            }
            #expect(result.exitCode == 0, "\(result)")
            let output = ProviderCurlTests.CurlOutput(result.stdout)
            #expect(output.code == "413", "\(result)")
            #expect(output.body == #"{"reason":"PayloadTooLarge"}"#, "\(result)")

            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.status == 413)
            #expect(recording.reason == "PayloadTooLarge")
            #expect(recording.payloadSize == size)
            #expect(recording.json["payloadTruncated"]?.bool == true)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    /// Past the discard bound the server stops reading: it answers 413 at once, then resets the stream with
    /// NO_ERROR (RFC 9113 §8.1), so a client that never stops sending cannot hold it.
    @Test func bodyOverTheDiscardBoundIsAnswered413AtOnceThenReset() async throws {
        try await withTestServer(configure: { $0.requestLimits.discardedBodyBound = 1024 * 1024 }) { server in
            let token = TestData.deviceToken()
            let result = try await ExternalTool.withTemporaryFile(Data(count: 4 * 1024 * 1024)) { path in
                try await ExternalTool.run(
                    "nghttp",
                    ["-v", "--timeout=10", "-H", "apns-topic: \(TestData.topic)", "-d", path, server.deviceURL(token)]
                )
            }
            let frames = ProviderNghttpTests.frames(in: result.stdout)
            let stream = try ProviderNghttpTests.requestStream(frames)
            let answer = frames.filter { $0.direction == "recv" && $0.streamID == stream && $0.type != "WINDOW_UPDATE" }
            #expect(answer.map(\.type) == ["HEADERS", "DATA", "RST_STREAM"], "\(answer)")
            #expect(answer.last?.details.contains("(error_code=NO_ERROR(0x00))") == true, "\(answer)")
            #expect(result.stdout.contains("recv (stream_id=\(stream)) :status: 413"), "\(result)")
            #expect(result.stdout.contains(#"{"reason":"PayloadTooLarge"}"#), "\(result)")

            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.status == 413)
            #expect(recording.reason == "PayloadTooLarge")
            let size = try #require(recording.payloadSize)
            #expect(size > 1024 * 1024 && size < 4 * 1024 * 1024, "the server read \(size) bytes, not stopping at the bound")
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    @Test func thousandHeadersAreAnswered431() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let manyHeaders = (1...1000).flatMap { ["-H", "x-filler-\($0): value-\($0)"] }
            let result = try await ProviderCurlTests.curl(
                ["--http2", "-w", "%{http_code}", "-H", "apns-topic: \(TestData.topic)"] + manyHeaders
                    + ["-d", TestData.alertPayload, server.deviceURL(token)]
            )
            // The header list (about 50 kB) is far over the advertised SETTINGS_MAX_HEADER_LIST_SIZE of 8000:
            // the server's choice is 431, as Netty-based HTTP/2 servers answer.
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout == "431", "\(result)")
            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.status == 431)
            #expect(recording.reason == nil)
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }
}
