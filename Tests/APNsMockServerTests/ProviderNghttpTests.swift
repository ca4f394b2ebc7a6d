import Foundation
import Testing

/// The provider port's HTTP/2 framing as nghttp2's own client prints it (`nghttp -v`).
@Suite("Provider framing seen by nghttp")
struct ProviderNghttpTests {
    /// One frame line of `nghttp -v`, e.g. `[  0.032] recv HEADERS frame <length=76, flags=0x05, stream_id=13>`,
    /// with the indented detail lines that follow it.
    struct FrameLine: CustomStringConvertible {
        var direction: String
        var type: String
        var length: Int
        var flags: Int
        var streamID: Int
        var details: [String]

        var description: String { "\(direction) \(type) len=\(length) flags=0x\(String(flags, radix: 16)) stream=\(streamID)" }
        var hasEndStream: Bool { flags & 0x1 != 0 }
    }

    static func frames(in output: String) -> [FrameLine] {
        var frames: [FrameLine] = []
        for line in output.components(separatedBy: "\n") {
            if let frame = parseFrameLine(line) {
                frames.append(frame)
            } else if line.hasPrefix("          "), !frames.isEmpty {
                frames[frames.count - 1].details.append(line.trimmingCharacters(in: .whitespaces))
            }
        }
        return frames
    }

    private static func parseFrameLine(_ line: String) -> FrameLine? {
        // "[  0.032] recv HEADERS frame <length=76, flags=0x05, stream_id=13>"
        // A response body is printed without a newline, so a frame line may start after it: find "] recv ".
        guard
            line.hasSuffix(">"),
            let marker = line.range(of: "] recv ") ?? line.range(of: "] send ")
        else { return nil }
        let words = line[line.index(after: marker.lowerBound)...].split(separator: " ", maxSplits: 3)
        guard words.count == 4, words[0] == "recv" || words[0] == "send", words[2] == "frame" else { return nil }
        var fields: [String: String] = [:]
        for part in words[3].dropFirst().dropLast().split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        guard
            let length = fields["length"].flatMap({ Int($0) }),
            let flags = fields["flags"].flatMap({ Int($0.dropFirst(2), radix: 16) }),
            let streamID = fields["stream_id"].flatMap({ Int($0) })
        else { return nil }
        return FrameLine(direction: String(words[0]), type: String(words[1]), length: length, flags: flags, streamID: streamID, details: [])
    }

    /// Runs `nghttp -v` for one POST with `payload` (through a file, so nghttp sends it with a length).
    /// - Parameter times: how many times nghttp sends the request, on one connection (`-m`).
    static func nghttp(
        _ server: TestServer, token: String, headers: [(String, String)], payload: String, times: Int = 1
    ) async throws -> ToolResult {
        try await ExternalTool.withTemporaryFile(Data(payload.utf8)) { payloadPath in
            try await ExternalTool.run(
                "nghttp",
                ["-v", "--timeout=10", "-m", "\(times)"] + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + ["-d", payloadPath, server.deviceURL(token)]
            )
        }
    }

    /// The stream nghttp opened for its request: the one its HEADERS frame went out on.
    static func requestStream(_ frames: [FrameLine]) throws -> Int {
        try #require(frames.first { $0.direction == "send" && $0.type == "HEADERS" }?.streamID)
    }

    @Test func serverSettingsAreExactlyWhatAPNsSends() async throws {
        try await withTestServer { server in
            let result = try await Self.nghttp(server, token: TestData.deviceToken(), headers: [("apns-topic", TestData.topic)], payload: TestData.alertPayload)
            #expect(result.exitCode == 0, "\(result)")
            let frames = Self.frames(in: result.stdout)
            let settings = try #require(frames.first { $0.direction == "recv" && $0.type == "SETTINGS" && $0.flags & 0x1 == 0 }, "\(result)")
            #expect(settings.streamID == 0)
            #expect(settings.length == 30)
            let entries = settings.details.filter { $0.hasPrefix("[SETTINGS_") }
            #expect(
                entries == [
                    "[SETTINGS_HEADER_TABLE_SIZE(0x01):4096]",
                    "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1000]",
                    "[SETTINGS_INITIAL_WINDOW_SIZE(0x04):65535]",
                    "[SETTINGS_MAX_FRAME_SIZE(0x05):16384]",
                    "[SETTINGS_MAX_HEADER_LIST_SIZE(0x06):8000]",
                ],
                "\(result)"
            )
            // The server's SETTINGS is the first frame it sends.
            #expect(frames.first { $0.direction == "recv" }?.type == "SETTINGS")
        }
    }

    @Test func successIsOneHeadersFrameWithEndStreamAndNoData() async throws {
        try await withTestServer { server in
            let result = try await Self.nghttp(server, token: TestData.deviceToken(), headers: [("apns-topic", TestData.topic)], payload: TestData.alertPayload)
            #expect(result.exitCode == 0, "\(result)")
            let frames = Self.frames(in: result.stdout)
            let stream = try Self.requestStream(frames)
            let received = frames.filter { $0.direction == "recv" && $0.streamID == stream }
            #expect(received.map(\.type) == ["HEADERS"], "frames on stream \(stream): \(received)")
            let headers = try #require(received.first)
            #expect(headers.flags == 0x05, "HEADERS must carry END_STREAM | END_HEADERS: \(headers)")
            #expect(result.stdout.contains("recv (stream_id=\(stream)) :status: 200"), "\(result)")
        }
    }

    @Test func errorIsHeadersThenOneDataFrameWithEndStream() async throws {
        try await withTestServer { server in
            let result = try await Self.nghttp(server, token: TestData.deviceToken(), headers: [("apns-push-type", "alert")], payload: TestData.alertPayload)
            #expect(result.exitCode == 0, "\(result)")
            let frames = Self.frames(in: result.stdout)
            let stream = try Self.requestStream(frames)
            let received = frames.filter { $0.direction == "recv" && $0.streamID == stream }
            #expect(received.map(\.type) == ["HEADERS", "DATA"], "frames on stream \(stream): \(received)")
            guard received.count == 2 else { return }
            #expect(received[0].flags == 0x04, "HEADERS: END_HEADERS without END_STREAM: \(received[0])")
            #expect(received[1].flags == 0x01, "DATA: END_STREAM: \(received[1])")
            let body = #"{"reason":"MissingTopic"}"#
            #expect(received[1].length == body.utf8.count)
            #expect(result.stdout.contains(body), "\(result)")
            #expect(result.stdout.contains("recv (stream_id=\(stream)) :status: 400"), "\(result)")
            #expect(result.stdout.contains("recv (stream_id=\(stream)) content-type: application/json"), "\(result)")
        }
    }

    /// The IDs are literals never indexed, but only the first answer spells their names out: it indexes them,
    /// and the later answers name them by their index (see `HTTP2ServerSession.IDHeaderNames`).
    @Test func onlyTheFirstAnswerSpellsOutTheIDHeadersNames() async throws {
        try await withTestServer { server in
            let result = try await Self.nghttp(
                server, token: TestData.deviceToken(), headers: [("apns-topic", TestData.topic)], payload: TestData.alertPayload, times: 3
            )
            #expect(result.exitCode == 0, "\(result)")
            let answers = Self.frames(in: result.stdout).filter { $0.direction == "recv" && $0.type == "HEADERS" }
            try #require(answers.count == 3, "\(result)")
            let streams = answers.map(\.streamID)
            // nghttp prints a never-indexed field as "sensitive".
            #expect(result.stdout.contains("recv (stream_id=\(streams[0])) apns-id: "), "\(result)")
            #expect(result.stdout.contains("recv (stream_id=\(streams[0])) apns-unique-id: "), "\(result)")
            for stream in streams.dropFirst() {
                #expect(result.stdout.contains("recv (stream_id=\(stream), sensitive) apns-id: "), "\(result)")
                #expect(result.stdout.contains("recv (stream_id=\(stream), sensitive) apns-unique-id: "), "\(result)")
            }
            // Both names cost one byte each instead of a Huffman-coded string: at least 12 bytes fewer.
            for later in answers.dropFirst() {
                #expect(later.length <= answers[0].length - 12, "\(answers)")
            }
        }
    }
}
