import APNsMock
import APNsMockServer
import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

// Support for the scenario end-to-end tests (`Scenario*Tests.swift`): scenario servers, admin calls with a body,
// a hand-written HTTP/2 client that reports what happened to each stream, and a few checks of its own.

/// The shipped scenario files and servers started with them.
enum ScenarioFiles {
    static let shipped = [
        "happy-path", "token-lifecycle", "bad-requests", "throttling", "outage", "flaky-network", "auth-failures",
    ]

    static var directory: URL { TestPaths.repositoryRoot.appendingPathComponent("Scenarios") }

    /// `Scenarios/<name>.yaml`.
    static func path(_ name: String) -> String { directory.appendingPathComponent(name + ".yaml").path }

    static func text(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

    /// The text of `Scenarios/<name>.yaml` with each replacement made exactly once, so a test that shortens a
    /// shipped file's timings fails plainly (instead of testing something else) when the file changes.
    static func text(_ name: String, replacing replacements: [(String, String)]) throws -> String {
        var text = try self.text(name)
        for (old, new) in replacements {
            let count = text.components(separatedBy: old).count - 1
            guard count == 1 else {
                throw TestFailure("Scenarios/\(name).yaml contains '\(old)' \(count) times, not once; update this test")
            }
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }
}

/// Starts a test server with `Scenarios/<name>.yaml` loaded at start (`ServerConfiguration.scenarioFile`, as
/// `--scenario` does).
func withShippedScenario<Result>(
    _ name: String,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    try await withTestServer(configure: { configuration in
        configuration.scenarioFile = ScenarioFiles.path(name)
        configure(&configuration)
    }, body)
}

/// Starts a test server and puts `yaml` in force through `PUT /admin/scenario` before running `body`.
func withScenario<Result>(
    _ yaml: String,
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    try await withTestServer(configure: configure) { server in
        try await server.admin.putScenario(yaml)
        return try await body(server)
    }
}

extension AdminClient {
    /// Any method with an optional body; returns the status and the decoded JSON body.
    func call(_ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, json: JSON) {
        var request = HTTPClientRequest(url: baseURL + path)
        switch method {
        case "GET": request.method = .GET
        case "PUT": request.method = .PUT
        case "POST": request.method = .POST
        case "DELETE": request.method = .DELETE
        default: throw TestFailure("unsupported method \(method)")
        }
        if let body {
            request.body = .bytes(ByteBuffer(string: body))
            request.headers.add(name: "content-type", value: body.hasPrefix("{") ? "application/json" : "application/yaml")
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = Array(try await response.body.collect(upTo: 16 * 1024 * 1024).readableBytesView)
        do {
            return (Int(response.status.code), try JSON(parsing: bytes))
        } catch {
            throw TestFailure(
                "admin \(method) \(path) answered \(response.status.code) with a body that is not JSON: "
                    + String(decoding: bytes, as: UTF8.self)
            )
        }
    }

    /// `PUT /admin/scenario`, which must succeed; returns the new snapshot.
    @discardableResult
    func putScenario(_ yaml: String) async throws -> JSON {
        let (status, json) = try await call("PUT", "/admin/scenario", body: yaml)
        guard status == 200 else { throw TestFailure("PUT /admin/scenario answered \(status): \(json)") }
        return json
    }

    /// `GET /admin/scenario`.
    func scenario() async throws -> JSON {
        let (status, json) = try await call("GET", "/admin/scenario")
        guard status == 200 else { throw TestFailure("GET /admin/scenario answered \(status): \(json)") }
        return json
    }

    /// The hit count `GET /admin/scenario` shows for the rule called `name`.
    func hits(_ name: String) async throws -> Int? {
        try await scenario()["rules"]?.array?.first { $0["name"]?.string == name }?["hits"]?.int
    }

    /// `POST /admin/scenario/reset`.
    @discardableResult
    func resetScenario() async throws -> JSON {
        let (status, json) = try await call("POST", "/admin/scenario/reset")
        guard status == 200 else { throw TestFailure("POST /admin/scenario/reset answered \(status): \(json)") }
        return json
    }

    /// The recordings in the order the server recorded them (by `sequence`).
    func recordingsInOrder(_ query: [(String, String)] = []) async throws -> [Recording] {
        try await notifications(query + [("limit", "10000")]).sorted {
            ($0.json["sequence"]?.int ?? 0) < ($1.json["sequence"]?.int ?? 0)
        }
    }
}

extension Recording {
    var scenarioRule: String? { json["scenarioRule"]?.string }
    var faults: [String] { json["faults"]?.array?.compactMap(\.string) ?? [] }
    var timestamp: Int? { response?["timestamp"]?.int }
    var receivedAtMillis: Int? { json["receivedAtMillis"]?.int }
    var connectionID: Int? { json["connectionId"]?.int }
}

/// A check that depends on the scenario's clock came too late (the machine stalled past a time window): the test
/// starts the scenario over and tries again rather than assert on the wrong window.
struct TooLate: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `attempt` until it finishes without ``TooLate``, at most `attempts` times; `attempt` gets the attempt number
/// (from 1) and must start the scenario's clock itself (`PUT` or `POST /admin/scenario/reset`).
func retryingWhenLate<Result>(
    attempts: Int = 4,
    _ attempt: (Int) async throws -> Result
) async throws -> Result {
    var lateness: [String] = []
    for number in 1...attempts {
        do {
            return try await attempt(number)
        } catch let late as TooLate {
            lateness.append(late.description)
        }
    }
    throw TestFailure("every attempt came too late for the scenario's time windows: \(lateness)")
}

/// The scenario's clock as a test sees it: milliseconds since the scenario (re)started, and checks that throw
/// ``TooLate`` when a step missed its time window.
struct ScenarioClock {
    var startedAt: Int
    var attempt: Int
    /// What a "second" of the scenario's time windows is in this attempt, in milliseconds (tests stretch their
    /// windows on each new attempt).
    var second = 1000

    var elapsed: Int { epochMilliseconds() - startedAt }

    /// Throws ``TooLate`` unless it is still before `limit` milliseconds since the start.
    func before(_ limit: Int, _ what: String) throws {
        let now = elapsed
        if now >= limit { throw TooLate("attempt \(attempt): \(what) at \(now) ms, not before \(limit) ms") }
    }

    /// Runs `body`, which must finish before `limit`; when it fails or ends past `limit`, that is ``TooLate``.
    func timely<Result>(before limit: Int, _ what: String, _ body: () async throws -> Result) async throws -> Result {
        try before(limit, what)
        let result: Result
        do {
            result = try await body()
        } catch {
            try before(limit, "\(what) (which failed: \(error))")
            throw error
        }
        try before(limit, what)
        return result
    }
}

/// Milliseconds since the epoch, as the server's clock reads it.
func epochMilliseconds() -> Int {
    Int((Date().timeIntervalSince1970 * 1000).rounded(.down))
}

let millisecondsPerDay = 86_400_000

extension ProviderResponse {
    /// The `reason` of an error body, or `nil` for a 200.
    var reason: String? { (try? JSON(parsing: body))?["reason"]?.string }
    /// The `timestamp` of a 410 body.
    var timestamp: Int? { (try? JSON(parsing: body))?["timestamp"]?.int }
}

extension ProviderClient {
    /// Sends a push and measures how long the answer took.
    func timedSend(
        token: String = TestData.deviceToken(),
        headers: [(String, String)] = [("apns-topic", TestData.topic)],
        body: String? = TestData.alertPayload
    ) async throws -> (response: ProviderResponse, elapsed: Duration) {
        let started = ContinuousClock.now
        let response = try await send(token: token, headers: headers, body: body)
        return (response, ContinuousClock.now - started)
    }
}

// MARK: - A hand-written HTTP/2 client that reports each stream's fate

/// What happened to one push sent over a ``RawPusher``.
struct RawOutcome: Sendable, CustomStringConvertible {
    enum End: Sendable, Equatable {
        /// The stream ended normally (HEADERS, perhaps DATA, with END_STREAM).
        case answered
        /// RST_STREAM with this error code.
        case reset(UInt32)
        /// The connection closed before the stream ended.
        case connectionClosed
        /// Nothing ended the stream before the client gave up.
        case timedOut
    }

    var end: End
    /// The frames received on this stream.
    var frames: [HTTP2Frame] = []
    /// SETTINGS frames (not acknowledgements) that arrived while waiting.
    var settings: [[(UInt16, UInt32)]] = []
    /// A GOAWAY that arrived while waiting.
    var goAway: GoAway?
    var elapsed: Duration = .zero

    /// The response body (the DATA frames of the stream).
    var body: String {
        String(decoding: frames.filter { $0.kind == .data }.flatMap(\.payload), as: UTF8.self)
    }

    /// Whether the answer was a lone HEADERS with END_STREAM: how the server sends a 200.
    var isBareHeaders: Bool {
        end == .answered && frames.count == 1 && frames[0].kind == .headers && frames[0].hasEndStream
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS values announced while waiting, in order.
    var maxConcurrentStreamsChanges: [UInt32] {
        settings.flatMap { $0.filter { $0.0 == 0x3 }.map(\.1) }
    }

    var description: String {
        "\(end) after \(elapsed): frames \(frames), body '\(body)', settings \(settings.map { $0.map { "\($0.0)=\($0.1)" } }), goAway \(goAway.map { "\($0)" } ?? "none")"
    }
}

/// A decoded GOAWAY frame.
struct GoAway: Sendable, CustomStringConvertible {
    var lastStreamID: UInt32
    var errorCode: UInt32
    var debugData: String

    init?(_ frame: HTTP2Frame) {
        guard frame.kind == .goAway, frame.payload.count >= 8 else { return nil }
        lastStreamID = frame.payload[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
        errorCode = frame.payload[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        debugData = String(decoding: frame.payload[8...], as: UTF8.self)
    }

    var description: String { "GOAWAY(last=\(lastStreamID), error=\(errorCode), debug='\(debugData)')" }
}

/// Sends pushes one at a time on one hand-written HTTP/2 connection and reports, for each, the frames that came
/// back on its stream, the SETTINGS and GOAWAY frames seen meanwhile, and how the stream ended.
final class RawPusher {
    let connection: RawConnection
    let server: TestServer
    private(set) var nextStreamID: UInt32 = 1
    private(set) var isClosed = false
    /// The SETTINGS frame the server sent first.
    let initialSettings: HTTP2Frame

    fileprivate init(connection: RawConnection, initialSettings: HTTP2Frame, server: TestServer) {
        self.connection = connection
        self.initialSettings = initialSettings
        self.server = server
    }

    static func open(_ server: TestServer) async throws -> RawPusher {
        let (connection, settings) = try await RawConnection.http2(port: server.providerPort)
        return RawPusher(connection: connection, initialSettings: settings, server: server)
    }

    /// Sends one push and waits up to `timeout` for its stream to end.
    func push(
        token: String = TestData.deviceToken(),
        headers: [(String, String)] = [("apns-topic", TestData.topic)],
        body: String = TestData.alertPayload,
        timeout: Duration = .seconds(5)
    ) async throws -> RawOutcome {
        let sent = await send(token: token, headers: headers, body: body)
        return try await outcome(of: sent, timeout: timeout)
    }

    /// A push sent but not yet waited for.
    struct Sent {
        var streamID: UInt32
        var started: ContinuousClock.Instant
    }

    /// Sends one push without waiting for its answer (see ``outcome(of:timeout:)``).
    func send(
        token: String = TestData.deviceToken(),
        headers: [(String, String)] = [("apns-topic", TestData.topic)],
        body: String = TestData.alertPayload
    ) async -> Sent {
        let streamID = nextStreamID
        nextStreamID += 2
        let started = ContinuousClock.now
        do {
            try await connection.send(
                FrameWriter.headers(streamID: streamID, FrameWriter.pushHeaders(token: token, authority: server.authority, extra: headers), endStream: false)
                    + FrameWriter.data(streamID: streamID, Array(body.utf8), endStream: true)
            )
        } catch {
            // Written to a connection the server already closed: what it sent before is still in the inbox.
        }
        return Sent(streamID: streamID, started: started)
    }

    /// Waits up to `timeout` for the stream of `sent` to end.
    func outcome(of sent: Sent, timeout: Duration = .seconds(5)) async throws -> RawOutcome {
        let streamID = sent.streamID
        let started = sent.started
        var outcome = RawOutcome(end: .timedOut)
        // Counted from now, not from the send: a test may look at the recording first.
        let deadline = ContinuousClock.now.advanced(by: timeout)
        loop: while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { break }
            let event: RawEvent?
            do {
                event = try await connection.nextEvent(timeout: remaining)
            } catch {
                break  // the deadline passed: outcome stays .timedOut
            }
            guard let event else {
                isClosed = true
                outcome.end = .connectionClosed
                break loop
            }
            guard case .frame(let frame) = event else { continue }
            switch frame.kind {
            case .settings where frame.flags & HTTP2Frame.ack == 0:
                outcome.settings.append(frame.settings)
                try? await connection.send(FrameWriter.settingsAck)
            case .goAway:
                outcome.goAway = GoAway(frame)
            case .ping where frame.flags & HTTP2Frame.ack == 0:
                try? await connection.send(FrameWriter.frame(.ping, flags: HTTP2Frame.ack, streamID: 0, payload: frame.payload))
            default:
                guard frame.streamID == streamID else { continue }
                if frame.kind == .rstStream {
                    outcome.end = .reset(frame.errorCode ?? 0)
                    break loop
                }
                outcome.frames.append(frame)
                if frame.hasEndStream, frame.kind == .headers || frame.kind == .data {
                    outcome.end = .answered
                    break loop
                }
            }
        }
        outcome.elapsed = ContinuousClock.now - started
        if outcome.end == .timedOut {
            // Give up on the stream as a real client does, so it no longer counts against the stream limit.
            try? await connection.send(FrameWriter.rstStream(streamID: streamID, errorCode: 0x8))
        }
        if !isClosed {
            try await barrier(&outcome)
        }
        return outcome
    }

    /// Sends a PING and reads until its acknowledgement, so SETTINGS or GOAWAY frames the server queued with (or
    /// just after) the answer are attributed to this push rather than the next.
    private func barrier(_ outcome: inout RawOutcome) async throws {
        let opaque: [UInt8] = [0x73, 0x63, 0x65, 0x6E, 0x61, 0x72, 0x69, 0x6F]  // "scenario"
        do {
            try await connection.send(FrameWriter.frame(.ping, streamID: 0, payload: opaque))
        } catch {
            return
        }
        while true {
            let event: RawEvent?
            do {
                event = try await connection.nextEvent(timeout: .seconds(5))
            } catch {
                throw TestFailure("no PING acknowledgement within 5 s after \(outcome)")
            }
            guard let event else {
                isClosed = true
                return
            }
            guard case .frame(let frame) = event else { continue }
            switch frame.kind {
            case .ping where frame.flags & HTTP2Frame.ack != 0 && frame.payload == opaque:
                return
            case .settings where frame.flags & HTTP2Frame.ack == 0:
                outcome.settings.append(frame.settings)
                try? await connection.send(FrameWriter.settingsAck)
            case .goAway:
                outcome.goAway = GoAway(frame)
            default:
                continue
            }
        }
    }

    /// Whatever else the server sends until it closes the connection (fails if it stays open past `timeout`).
    func framesUntilClosed(timeout: Duration = .seconds(5)) async throws -> [HTTP2Frame] {
        if isClosed { return [] }
        let events = try await connection.eventsUntilClosed(timeout: timeout)
        isClosed = true
        return events.compactMap { event in
            if case .frame(let frame) = event { return frame }
            return nil
        }
    }

    func close() async {
        await connection.close()
    }
}

/// What a new provider connection meets: refused (closed before the server's SETTINGS), a GOAWAY right after the
/// handshake, or a working connection (a push answered 200).
enum ConnectionProbe: CustomStringConvertible {
    case refused(String)
    case goAway(GoAway)
    case working
    case other(RawOutcome)

    var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }

    var isWorking: Bool {
        if case .working = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .refused(let why): return "refused (\(why))"
        case .goAway(let goAway): return "\(goAway)"
        case .working: return "working"
        case .other(let outcome): return "other: \(outcome)"
        }
    }

    /// Opens a new connection (TLS, preface, SETTINGS) and pushes once on it.
    static func probe(_ server: TestServer, token: String = TestData.deviceToken()) async -> ConnectionProbe {
        let connection: RawConnection
        do {
            connection = try await RawConnection.connect(port: server.providerPort)
        } catch {
            return .refused("TCP connect failed: \(error)")
        }
        // The write fails if the server already closed the connection; what it sent first is still in the inbox.
        try? await connection.send(FrameWriter.preface + FrameWriter.settings())
        var frames: [HTTP2Frame] = []
        // Until the server's SETTINGS, a GOAWAY, or the end of the connection.
        while true {
            let event: RawEvent?
            do {
                event = try await connection.nextEvent(timeout: .seconds(3))
            } catch {
                await connection.close()
                return .refused("nothing within 3 s")
            }
            guard let event else {
                return frames.isEmpty ? .refused("closed before any frame") : .refused("closed after \(frames)")
            }
            guard case .frame(let frame) = event else { continue }
            frames.append(frame)
            if frame.kind == .goAway, let goAway = GoAway(frame) {
                await connection.close()
                return .goAway(goAway)
            }
            if frame.kind == .settings, frame.flags & HTTP2Frame.ack == 0 {
                try? await connection.send(FrameWriter.settingsAck)
                break
            }
        }
        let pusher = RawPusher(connection: connection, initialSettings: frames[frames.count - 1], server: server)
        let outcome: RawOutcome
        do {
            outcome = try await pusher.push(token: token, timeout: .seconds(3))
        } catch {
            await pusher.close()
            return .refused("\(error)")
        }
        await pusher.close()
        if outcome.isBareHeaders { return .working }
        if outcome.frames.isEmpty, let goAway = outcome.goAway { return .goAway(goAway) }
        return .other(outcome)
    }
}

// MARK: - nghttp

enum ScenarioNghttp {
    /// `nghttp -v` for one push, on a connection of its own.
    static func push(
        _ server: TestServer,
        token: String = TestData.deviceToken(),
        headers: [(String, String)] = [("apns-topic", TestData.topic)],
        payload: String = TestData.alertPayload,
        timeout: Int = 10
    ) async throws -> (result: ToolResult, frames: [ProviderNghttpTests.FrameLine], stream: Int) {
        let result = try await ExternalTool.withTemporaryFile(Data(payload.utf8)) { path in
            try await ExternalTool.run(
                "nghttp",
                ["-v", "--timeout=\(timeout)"] + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + ["-d", path, server.deviceURL(token)]
            )
        }
        let frames = ProviderNghttpTests.frames(in: result.stdout)
        let stream = try ProviderNghttpTests.requestStream(frames)
        return (result, frames, stream)
    }
}

// MARK: - Checks of the support itself

@Suite("Scenario test support")
struct ScenarioSupportTests {
    @Test func everyShippedFileIsThere() throws {
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: ScenarioFiles.directory.path)
            .filter { $0.hasSuffix(".yaml") }
            .map { String($0.dropLast(5)) }
        #expect(Set(onDisk) == Set(ScenarioFiles.shipped), "Scenarios/ holds \(onDisk.sorted()); the scenario tests cover \(ScenarioFiles.shipped)")
    }
}
