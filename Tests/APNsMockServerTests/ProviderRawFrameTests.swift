import Testing

/// What real clients do that curl and AsyncHTTPClient never do, written frame by frame
/// (design.md, "What real clients need").
@Suite("Provider with hand-written HTTP/2 frames")
struct ProviderRawFrameTests {
    /// Sends one complete push on `streamID` and returns the first frame the server answers on that stream.
    static func push(
        _ connection: RawConnection,
        streamID: UInt32,
        headers: [(String, String)],
        body: String = TestData.alertPayload
    ) async throws -> HTTP2Frame {
        try await connection.send(
            FrameWriter.headers(streamID: streamID, headers, endStream: false)
                + FrameWriter.data(streamID: streamID, Array(body.utf8), endStream: true)
        )
        return try #require(
            try await connection.nextFrame { $0.streamID == streamID },
            "the server closed the connection instead of answering stream \(streamID)"
        )
    }

    @Test func http2WithoutALPNIsServed() async throws {
        try await withTestServer { server in
            // aioapns offers no ALPN at all and starts HTTP/2 straight away.
            let connection = try await RawConnection.connect(port: server.providerPort, alpn: [])
            try await connection.send(FrameWriter.preface + FrameWriter.settings())
            let token = TestData.deviceToken()
            let answer = try await Self.push(
                connection,
                streamID: 1,
                headers: FrameWriter.pushHeaders(token: token, authority: server.authority)
            )
            #expect(answer.kind == .headers && answer.hasEndStream, "expected a lone HEADERS (200), got \(answer)")
            await connection.close()
            #expect(try await server.admin.notifications([("token", token)]).first?.status == 200)
        }
    }

    @Test func hostHeaderWithoutAuthorityAndNoContentLengthIsAccepted() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let token = TestData.deviceToken()
            // aioapns sends `host` and no `:authority`; neither it nor Node sends content-length.
            let headers = FrameWriter.pushHeaders(
                token: token,
                authority: nil,
                extra: [("host", "api.sandbox.push.apple.com"), ("apns-topic", TestData.topic), ("apns-push-type", "alert")]
            )
            let answer = try await Self.push(connection, streamID: 1, headers: headers)
            #expect(answer.kind == .headers && answer.hasEndStream, "expected a lone HEADERS (200), got \(answer)")
            await connection.close()

            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.status == 200)
            #expect(recording.authority == "api.sandbox.push.apple.com")
            #expect(recording.header("content-length") == nil)
            #expect(recording.payloadText == TestData.alertPayload)
        }
    }

    @Test func errorIsAnsweredOnlyAfterTheRequestEnds() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            // No apns-topic: the answer will be 400 MissingTopic, but only once the body has ended.
            let headers = FrameWriter.pushHeaders(token: TestData.deviceToken(), authority: server.authority, extra: [])
            let ping = FrameWriter.frame(.ping, streamID: 0, payload: Array("apnsmock".utf8))
            try await connection.send(
                FrameWriter.headers(streamID: 1, headers, endStream: false)
                    + FrameWriter.data(streamID: 1, Array(#"{"aps":"#.utf8), endStream: false)
                    + ping
            )
            // The server handles frames in order: anything it had to say about stream 1 would come before the PING ACK.
            let first = try #require(
                try await connection.nextFrame { $0.streamID == 1 || ($0.kind == .ping && $0.flags & HTTP2Frame.ack != 0) },
                "connection closed"
            )
            #expect(first.kind == .ping, "the server answered stream 1 before the request ended: \(first)")

            try await connection.send(FrameWriter.data(streamID: 1, Array("{}}".utf8), endStream: true))
            let headersFrame = try #require(try await connection.nextFrame { $0.streamID == 1 }, "connection closed")
            #expect(headersFrame.kind == .headers && !headersFrame.hasEndStream, "\(headersFrame)")
            let dataFrame = try #require(try await connection.nextFrame { $0.streamID == 1 }, "connection closed")
            #expect(dataFrame.kind == .data && dataFrame.hasEndStream, "\(dataFrame)")
            #expect(String(decoding: dataFrame.payload, as: UTF8.self) == #"{"reason":"MissingTopic"}"#)
            await connection.close()
        }
    }

    @Test func manyStreamsOnOneConnectionAreEachAnsweredOnce() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let token = TestData.deviceToken()
            let streams = (0..<100).map { UInt32(1 + 2 * $0) }
            // Every request in one write: 100 concurrent streams, well under MAX_CONCURRENT_STREAMS (1000).
            try await connection.send(
                streams.flatMap { stream in
                    FrameWriter.headers(streamID: stream, FrameWriter.pushHeaders(token: token, authority: server.authority), endStream: false)
                        + FrameWriter.data(streamID: stream, Array(TestData.alertPayload.utf8), endStream: true)
                }
            )
            var answered: [UInt32] = []
            while answered.count < streams.count {
                let frame = try #require(try await connection.nextFrame { $0.streamID != 0 }, "connection closed after \(answered.count) answers")
                #expect(frame.kind == .headers && frame.hasEndStream, "\(frame)")
                answered.append(frame.streamID)
            }
            #expect(answered.sorted() == streams)
            await connection.close()
            #expect(try await server.admin.waitForNotifications(count: 100, [("token", token), ("status", "200")]).count == 100)
        }
    }

    /// The session reuses a closed stream's state for the next stream: nothing of one request (a header, a
    /// longer body, a large body's buffer, a reset) may show in the next one's recording.
    @Test func streamsOneAfterAnotherAreRecordedWithOnlyTheirOwnFields() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let token = TestData.deviceToken()
            let long = #"{"aps":{"alert":""# + String(repeating: "x", count: 3000) + #""}}"#
            let large = #"{"aps":{"alert":""# + String(repeating: "y", count: 6000) + #""}}"#
            // The large body is over APNs' 4 KiB limit (413): its buffer is the one not kept for reuse.
            let sent: [(stream: UInt32, extra: [(String, String)], body: String, status: Int)] = [
                (1, [("apns-topic", TestData.topic), ("apns-collapse-id", "first"), ("apns-priority", "5")], long, 200),
                (3, [("apns-topic", TestData.topic)], #"{"aps":{}}"#, 200),
                (5, [("apns-topic", TestData.topic), ("apns-expiration", "0")], large, 413),
                (7, [("apns-topic", TestData.topic)], #"{"n":7}"#, 200),
            ]
            for request in sent {
                let answer = try await Self.push(
                    connection,
                    streamID: request.stream,
                    headers: FrameWriter.pushHeaders(token: token, authority: server.authority, extra: request.extra),
                    body: request.body
                )
                #expect(answer.kind == .headers && answer.hasEndStream == (request.status == 200), "stream \(request.stream): \(answer)")
            }
            // A request reset half-way, then one more on a reused state.
            try await connection.send(
                FrameWriter.headers(
                    streamID: 9,
                    FrameWriter.pushHeaders(token: token, authority: server.authority, extra: [("apns-id", "reset-one")]),
                    endStream: false
                )
                    + FrameWriter.data(streamID: 9, Array(#"{"half":"#.utf8), endStream: false)
                    + FrameWriter.rstStream(streamID: 9)
            )
            let last = try await Self.push(
                connection,
                streamID: 11,
                headers: FrameWriter.pushHeaders(token: token, authority: server.authority),
                body: #"{"n":11}"#
            )
            #expect(last.kind == .headers && last.hasEndStream, "\(last)")
            await connection.close()

            let recordings = try await server.admin.waitForNotifications(count: 6, [("token", token)])
            #expect(recordings.count == 6)
            let byPayload = Dictionary(recordings.map { ($0.payloadText ?? "", $0) }, uniquingKeysWith: { first, _ in first })
            for request in sent {
                let recording = try #require(byPayload[request.body], "no recording of stream \(request.stream)")
                #expect(recording.status == request.status)
                #expect(recording.headers.map(\.name) == request.extra.map(\.0), "stream \(request.stream)")
                #expect(recording.headers.map(\.value) == request.extra.map(\.1), "stream \(request.stream)")
                #expect(recording.payloadSize == request.body.utf8.count)
            }
            let reset = try #require(byPayload[#"{"half":"#], "no recording of the reset stream")
            #expect(reset.hasNullResponse)
            #expect(reset.header("apns-id") == "reset-one")
            let after = try #require(byPayload[#"{"n":11}"#])
            #expect(after.status == 200)
            #expect(after.headers.map(\.name) == ["apns-topic"])
        }
    }

    /// An HTTP/1.1 request over TLS gets `HTTP/1.1 505` naming HTTP/2, and nothing before it: the server's
    /// SETTINGS frame (`00 00 1e 04 00 …`) once came first, so HTTP/1 clients saw binary.
    /// A request that ends and is then reset, and a new stream, all in one write: libnghttp2 closes the first
    /// stream and opens the next within one read, before the handler has taken the first request's event. The
    /// session may not reuse the first stream's state for the second while that event still names it: each
    /// request is recorded as itself, once.
    @Test func aStreamClosedAndAnotherOpenedInOneReadAreRecordedApart() async throws {
        try await withTestServer { server in
            let (connection, _) = try await RawConnection.http2(port: server.providerPort)
            let first = TestData.deviceToken()
            let second = TestData.deviceToken()
            try await connection.send(
                FrameWriter.headers(streamID: 1, FrameWriter.pushHeaders(token: first, authority: server.authority), endStream: false)
                    + FrameWriter.data(streamID: 1, Array(#"{"n":1}"#.utf8), endStream: true)
                    + FrameWriter.rstStream(streamID: 1)
                    + FrameWriter.headers(streamID: 3, FrameWriter.pushHeaders(token: second, authority: server.authority), endStream: false)
                    + FrameWriter.data(streamID: 3, Array(#"{"n":3}"#.utf8), endStream: true)
            )
            let answer = try #require(try await connection.nextFrame { $0.streamID == 3 }, "connection closed")
            #expect(answer.kind == .headers && answer.hasEndStream, "\(answer)")
            await connection.close()

            let reset = try #require(try await server.admin.waitForNotifications(count: 1, [("token", first)]).first)
            #expect(reset.hasNullResponse, "\(reset)")
            #expect(reset.payloadText == #"{"n":1}"#)
            let answered = try #require(try await server.admin.waitForNotifications(count: 1, [("token", second)]).first)
            #expect(answered.status == 200, "\(answered)")
            #expect(answered.payloadText == #"{"n":3}"#)
            #expect(try await server.admin.notifications().count == 2)
        }
    }

    @Test func http1RequestOverTLSGets505First() async throws {
        try await withTestServer { server in
            let connection = try await RawConnection.connect(port: server.providerPort, alpn: ["http/1.1"], parseFrames: false)
            try await connection.send(Array("POST /3/device/00 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n".utf8))
            var received: [UInt8] = []
            for case .bytes(let bytes) in try await connection.eventsUntilClosed() {
                received += bytes
            }
            let text = String(decoding: received, as: UTF8.self)
            // The 505 and its message are there: the server closes the connection after them.
            let firstBytes = received.prefix(48).map { String($0, radix: 16) }.joined(separator: " ")
            #expect(text.contains("HTTP/1.1 505 HTTP Version Not Supported\r\n"), "first bytes: \(firstBytes)")
            #expect(text.contains("HTTP/2"))
            #expect(received.starts(with: Array("HTTP/1.1 505 ".utf8)), "first bytes: \(firstBytes)")
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }
}
