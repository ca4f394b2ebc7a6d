import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 frame as read off the wire (RFC 9113 §4.1).
struct HTTP2Frame: Sendable, CustomStringConvertible {
    enum Kind: UInt8, Sendable {
        case data = 0x0, headers = 0x1, priority = 0x2, rstStream = 0x3, settings = 0x4, pushPromise = 0x5
        case ping = 0x6, goAway = 0x7, windowUpdate = 0x8, continuation = 0x9
    }

    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4

    var type: UInt8
    var flags: UInt8
    var streamID: UInt32
    var payload: [UInt8]

    var kind: Kind? { Kind(rawValue: type) }
    var hasEndStream: Bool { flags & Self.endStream != 0 }

    /// The error code of a RST_STREAM or GOAWAY frame.
    var errorCode: UInt32? {
        switch kind {
        case .rstStream where payload.count >= 4: return Self.uint32(payload, at: 0)
        case .goAway where payload.count >= 8: return Self.uint32(payload, at: 4)
        default: return nil
        }
    }

    /// The (identifier, value) pairs of a SETTINGS frame.
    var settings: [(UInt16, UInt32)] {
        guard kind == .settings else { return [] }
        return stride(from: 0, to: payload.count - payload.count % 6, by: 6).map { offset in
            (UInt16(payload[offset]) << 8 | UInt16(payload[offset + 1]), Self.uint32(payload, at: offset + 2))
        }
    }

    var description: String {
        let name = kind.map { "\($0)" } ?? "type 0x\(String(type, radix: 16))"
        var text = "\(name) stream=\(streamID) flags=0x\(String(flags, radix: 16)) length=\(payload.count)"
        if let errorCode { text += " error=\(errorCode)" }
        return text
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The whole frames at the start of `bytes`, taken out of it; a partial frame stays for more bytes.
    static func take(from bytes: inout [UInt8]) -> [HTTP2Frame] {
        var frames: [HTTP2Frame] = []
        while bytes.count >= 9 {
            let length = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
            guard bytes.count >= 9 + length else { break }
            let streamID = bytes[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append(HTTP2Frame(type: bytes[3], flags: bytes[4], streamID: streamID, payload: Array(bytes[9..<9 + length])))
            bytes.removeFirst(9 + length)
        }
        return frames
    }
}

/// Writes client-side HTTP/2 frames by hand, for requests no well-behaved client library will send.
enum FrameWriter {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(_ kind: HTTP2Frame.Kind, flags: UInt8 = 0, streamID: UInt32, payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), kind.rawValue, flags]
            + bigEndian(streamID & 0x7FFF_FFFF) + payload
    }

    static func settings(_ entries: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(.settings, streamID: 0, payload: entries.flatMap { [UInt8($0.0 >> 8), UInt8($0.0 & 0xFF)] + bigEndian($0.1) })
    }

    static let settingsAck = frame(.settings, flags: HTTP2Frame.ack, streamID: 0)

    /// A HEADERS frame (END_HEADERS set) with every field as an HPACK literal without indexing, new name.
    static func headers(streamID: UInt32, _ fields: [(String, String)], endStream: Bool) -> [UInt8] {
        let block = fields.flatMap { literalWithoutIndexing(name: $0.0, value: $0.1) }
        return frame(.headers, flags: HTTP2Frame.endHeaders | (endStream ? HTTP2Frame.endStream : 0), streamID: streamID, payload: block)
    }

    static func data(streamID: UInt32, _ bytes: [UInt8], endStream: Bool) -> [UInt8] {
        frame(.data, flags: endStream ? HTTP2Frame.endStream : 0, streamID: streamID, payload: bytes)
    }

    /// RST_STREAM; `errorCode` 0x8 is CANCEL.
    static func rstStream(streamID: UInt32, errorCode: UInt32 = 0x8) -> [UInt8] {
        frame(.rstStream, streamID: streamID, payload: bigEndian(errorCode))
    }

    /// HPACK (RFC 7541 §6.2.2): `0000 0000`, then the name and the value as plain (non-Huffman) strings.
    static func literalWithoutIndexing(name: String, value: String) -> [UInt8] {
        [0x00] + string(name) + string(value)
    }

    /// A request's pseudo-headers and headers for `POST /3/device/<token>`.
    static func pushHeaders(
        token: String,
        authority: String?,
        extra: [(String, String)] = [("apns-topic", TestData.topic)]
    ) -> [(String, String)] {
        var fields = [(":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + token)]
        if let authority { fields.append((":authority", authority)) }
        return fields + extra
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return integer(bytes.count, prefixBits: 7, firstByte: 0x00) + bytes
    }

    /// HPACK integer encoding (RFC 7541 §5.1).
    private static func integer(_ value: Int, prefixBits: Int, firstByte: UInt8) -> [UInt8] {
        let limit = (1 << prefixBits) - 1
        if value < limit { return [firstByte | UInt8(value)] }
        var result = [firstByte | UInt8(limit)]
        var rest = value - limit
        while rest >= 128 {
            result.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        result.append(UInt8(rest))
        return result
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// A queue of values from the event loop, read by a test with a deadline.
final class Inbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var finished = false
        var waiter: (id: Int, continuation: CheckedContinuation<Element?, any Error>)?
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    func yield(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.items.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// The next element, `nil` once finished, or a failure when `timeout` passes first.
    func next(timeout: Duration) async throws -> Element? {
        let id = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        let deadline = Task {
            try await Task.sleep(for: timeout)
            let waiter = self.state.withLock { state -> CheckedContinuation<Element?, any Error>? in
                guard let waiter = state.waiter, waiter.id == id else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            waiter?.resume(throwing: TestFailure("nothing arrived from the server within \(timeout)"))
        }
        defer { deadline.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let immediate = state.withLock { state -> Element?? in
                if !state.items.isEmpty { return .some(state.items.removeFirst()) }
                if state.finished { return .some(nil) }
                state.waiter = (id, continuation)
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}

/// What a raw connection hands the test: frames (or plain bytes, before any HTTP/2), and its end.
enum RawEvent: Sendable {
    case frame(HTTP2Frame)
    case bytes([UInt8])
}

/// Feeds a raw connection's inbound bytes to an `Inbox`, cut into HTTP/2 frames or passed as they came.
private final class RawInboundHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let inbox: Inbox<RawEvent>
    private let parseFrames: Bool
    private var pending: [UInt8] = []

    init(inbox: Inbox<RawEvent>, parseFrames: Bool) {
        self.inbox = inbox
        self.parseFrames = parseFrames
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = Array(unwrapInboundIn(data).readableBytesView)
        guard parseFrames else {
            inbox.yield(.bytes(bytes))
            return
        }
        pending += bytes
        for frame in HTTP2Frame.take(from: &pending) { inbox.yield(.frame(frame)) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS alert or a reset from the server: the connection is over either way.
        context.close(promise: nil)
    }
}

/// A client connection that writes whatever bytes a test asks for: over TLS (ALPN `h2`, trusting the
/// development CA) for hand-written HTTP/2, or over plain TCP for bytes that are not even TLS.
final class RawConnection: Sendable {
    let channel: any Channel
    private let inbox: Inbox<RawEvent>

    private init(channel: any Channel, inbox: Inbox<RawEvent>) {
        self.channel = channel
        self.inbox = inbox
    }

    static func connect(port: Int, tls: Bool = true, alpn: [String] = ["h2"], parseFrames: Bool = true) async throws -> RawConnection {
        let inbox = Inbox<RawEvent>()
        let sslContext: NIOSSLContext?
        if tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .file(TestPaths.caCertificate)
            configuration.applicationProtocols = alpn
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        // No SNI name: the certificate is checked against the IP address connected to.
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHandler(RawInboundHandler(inbox: inbox, parseFrames: parseFrames))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, inbox: inbox)
    }

    /// Connects over TLS, sends the preface and an empty SETTINGS, and acknowledges the server's SETTINGS
    /// once it arrives; returns that SETTINGS frame.
    static func http2(port: Int) async throws -> (RawConnection, HTTP2Frame) {
        let started = ContinuousClock.now
        // Each step says where it failed and when: a bare "I/O on closed channel" from a run of every suite under
        // AddressSanitizer did not tell which write found the connection closed.
        func step<Result>(_ name: String, _ body: () async throws -> Result) async throws -> Result {
            do {
                return try await body()
            } catch {
                throw TestFailure("opening an HTTP/2 connection: \(name) failed after \(ContinuousClock.now - started): \(error)")
            }
        }
        let connection = try await step("connect") { try await connect(port: port) }
        try await step("sending the preface") { try await connection.send(FrameWriter.preface + FrameWriter.settings()) }
        let settings = try await step("waiting for SETTINGS") {
            try await connection.nextFrame { $0.kind == .settings && $0.flags & HTTP2Frame.ack == 0 }
        }
        guard let settings else { throw TestFailure("the server closed the connection before its SETTINGS") }
        try await step("acknowledging SETTINGS") { try await connection.send(FrameWriter.settingsAck) }
        return (connection, settings)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    /// The next event, `nil` once the server has closed the connection.
    func nextEvent(timeout: Duration = .seconds(5)) async throws -> RawEvent? {
        try await inbox.next(timeout: timeout)
    }

    /// The next frame matching `predicate` (others are dropped), `nil` if the connection closes first.
    func nextFrame(
        timeout: Duration = .seconds(5),
        where predicate: (HTTP2Frame) -> Bool = { _ in true }
    ) async throws -> HTTP2Frame? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { throw TestFailure("no matching frame within \(timeout)") }
            switch try await inbox.next(timeout: remaining) {
            case .frame(let frame)?:
                if predicate(frame) { return frame }
            case .bytes?:
                continue
            case nil:
                return nil
            }
        }
    }

    /// Everything the server sends until it closes the connection; fails if it is still open after `timeout`.
    func eventsUntilClosed(timeout: Duration = .seconds(5)) async throws -> [RawEvent] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var events: [RawEvent] = []
        while true {
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { throw TestFailure("the server did not close the connection within \(timeout)") }
            do {
                guard let event = try await inbox.next(timeout: remaining) else { return events }
                events.append(event)
            } catch {
                throw TestFailure("the server did not close the connection within \(timeout); it sent \(events)")
            }
        }
    }

    /// Closes the client side at once (TLS close_notify, then TCP FIN), without any HTTP/2 goodbye.
    func close() async {
        try? await channel.close()
    }
}
