import APNsMockServer
import Foundation
import Testing

/// Timeouts and the connection limit, with short settings: each fires, is counted, and spares busy connections.
@Suite("Connection timeouts and limits")
struct ConnectionLimitTests {
    /// Connects (plain TCP, or TLS), sends nothing, and prints how many seconds passed until the server closed.
    static let silentClient = """
        import socket, ssl, sys, time
        port, tls, ca = int(sys.argv[1]), sys.argv[2] == "tls", sys.argv[3]
        sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        if tls:
            context = ssl.create_default_context(cafile=ca)
            context.set_alpn_protocols(["h2"])
            sock = context.wrap_socket(sock, server_hostname="localhost")
        started = time.monotonic()
        try:
            data = sock.recv(65536)
            while data:
                data = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            pass
        print(round(time.monotonic() - started, 2))
        """

    static func closedAfter(port: Int, tls: Bool) async throws -> Double? {
        let result = try await ExternalTool.run(
            "python3", ["-c", silentClient, String(port), tls ? "tls" : "tcp", TestPaths.caCertificate], timeout: .seconds(30)
        )
        return Double(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: [false, true])
    func aConnectionThatSendsNothingIsClosedAfterTheHandshakeTimeout(tls: Bool) async throws {
        try await withTestServer(configure: { $0.connectionLimits.handshakeTimeout = .milliseconds(500) }) { server in
            let seconds = try #require(try await Self.closedAfter(port: server.providerPort, tls: tls))
            #expect(seconds < 5, "closed after \(seconds) s")
            let metrics = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body
            #expect(metrics.contains(#"apns_mock_connections_closed_by_limit_total{limit="handshake-timeout"} 1"#), "\(metrics)")
        }
    }

    /// A body shorter than its content-length, then silence: the admin port closes the connection in time.
    @Test func theAdminPortClosesARequestThatStopsArriving() async throws {
        try await withTestServer(configure: { $0.adminReadTimeout = .seconds(1) }) { server in
            let script = """
                import socket, sys, time
                sock = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
                sock.sendall(b"PUT /admin/scenario HTTP/1.1\\r\\nhost: x\\r\\ncontent-length: 100\\r\\n\\r\\nrules: []")
                started = time.monotonic()
                try:
                    while sock.recv(65536):
                        pass
                except ConnectionResetError:
                    pass
                print(round(time.monotonic() - started, 2))
                """
            let result = try await ExternalTool.run("python3", ["-c", script, String(server.adminPort)], timeout: .seconds(30))
            let seconds = try #require(Double(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(result)")
            #expect(seconds < 5, "closed after \(seconds) s")
            // A wait longer than the read timeout is not cut off.
            let waited = try await server.admin.request(.get, "/admin/notifications/wait", query: [("timeout", "2s")])
            #expect(waited.status == 408)
        }
    }

    /// `--idle-timeout` reaches the connection: one that sends its preface and then nothing gets GOAWAY IdleTimeout
    /// and is counted. The client only reads after its preface, so a loaded machine cannot make it miss anything.
    /// When the timeout fires, and that a busy connection never gets it, is checked to the millisecond on an embedded
    /// event loop (`ProviderConnectionHandlerTests`).
    @Test func theIdleTimeoutSettingReachesTheConnection() async throws {
        try await withTestServer(configure: { $0.connectionLimits.idleTimeout = .seconds(1) }) { server in
            let connection = try await RawConnection.connect(port: server.providerPort)
            try await connection.send(FrameWriter.preface + FrameWriter.settings())
            var frames: [HTTP2Frame] = []
            while case .frame(let frame)? = try await connection.nextEvent(timeout: .seconds(60)) { frames.append(frame) }
            let goAway = try #require(frames.compactMap(GoAway.init).first, "\(frames)")
            #expect(goAway.errorCode == 0 && goAway.debugData == #"{"reason":"IdleTimeout"}"#, "\(goAway)")
            let metrics = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body
            #expect(metrics.contains(#"apns_mock_connections_closed_by_limit_total{limit="idle-timeout"} 1"#), "\(metrics)")
            await connection.close()
        }
    }

    @Test func connectionsBeyondTheMaximumAreClosedWhileTheOthersKeepWorking() async throws {
        try await withTestServer(configure: { $0.connectionLimits.maxConnections = 2 }) { server in
            let first = try await RawPusher.open(server)
            let second = try await RawPusher.open(server)
            #expect(try await first.push().isBareHeaders)
            #expect(try await second.push().isBareHeaders)
            let third = try await Self.closedAfter(port: server.providerPort, tls: false)
            #expect(third != nil && third! < 2, "the third connection must be closed at once")
            #expect(try await first.push().isBareHeaders)
            #expect(try await second.push().isBareHeaders)
            let metrics = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body
            #expect(metrics.contains(#"apns_mock_connections_closed_by_limit_total{limit="over-limit"} 1"#), "\(metrics)")
            await first.close()
            await second.close()
        }
    }
}

/// A fatal error ends the connection with a GOAWAY that says why (RFC 9113 §5.4.1), never a silent close.
/// Each case sends the raw frames h2spec sends for it (`Tests/Clients/h2_abuse.py`), so CI keeps them fixed.
@Suite("GOAWAY on fatal errors")
struct FatalErrorGoAwayTests {
    @Test(arguments: [("bad-preface", 0x1), ("invalid-preface", 0x1), ("broken-preface", 0x1), ("continuation-flood", 0xB)])
    func aFatalErrorGetsAGoAwayWithItsCode(abuse: String, errorCode: Int) async throws {
        try await withTestServer { server in
            let (answer, result) = try await Self.send(abuse, to: server.providerPort)
            #expect(answer["goaway"] == .bool(true), "\(abuse): \(result)")
            #expect(answer["error"]?.int == errorCode, "\(abuse): \(result)")
            // Stream 1 was never processed whole: the client may retry it.
            #expect((answer["last_stream"]?.int ?? -1) <= 1, "\(abuse): \(result)")
        }
    }

    /// h2spec 5.1/11 and 5.1/12: DATA or HEADERS on a stream that has closed is a connection error STREAM_CLOSED.
    @Test(arguments: ["data-on-closed", "headers-on-closed"])
    func aFrameOnAClosedStreamIsStreamClosed(abuse: String) async throws {
        try await withTestServer { server in
            let (answer, result) = try await Self.send(abuse, to: server.providerPort)
            #expect(answer["goaway"] == .bool(true) && answer["error"]?.int == 0x5, "\(abuse): \(result)")
            // Stream 1 was answered in full before the stray frame: the GOAWAY says so.
            #expect(answer["last_stream"]?.int == 1, "\(abuse): \(result)")
        }
    }

    /// h2spec 5.1/8 and 5.1/9 (DATA or HEADERS after the client's own RST_STREAM), 5.1/5, 5.1/6 and 6.1/2 (after
    /// the client's END_STREAM): STREAM_CLOSED, as a stream error (RST_STREAM) or a connection error (GOAWAY);
    /// RFC 9113 allows either, h2spec accepts either.
    @Test(arguments: ["data-after-reset", "headers-after-reset", "data-on-half-closed", "headers-on-half-closed"])
    func aFrameAfterTheClientsResetIsStreamClosed(abuse: String) async throws {
        try await withTestServer { server in
            let (answer, result) = try await Self.send(abuse, to: server.providerPort)
            let code = answer["goaway"] == .bool(true) ? answer["error"]?.int : answer["reset"]?.int
            #expect(code == 0x5, "\(abuse): \(result)")
        }
    }

    private static func send(_ abuse: String, to port: Int) async throws -> (JSON, ToolResult) {
        let result = try await ExternalTool.run("python3", [
            TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/h2_abuse.py").path,
            "--port", String(port), "--ca", TestPaths.caCertificate, "--case", abuse,
        ], timeout: .seconds(30))
        return (try JSON(parsing: Array(result.stdout.utf8)), result)
    }
}
