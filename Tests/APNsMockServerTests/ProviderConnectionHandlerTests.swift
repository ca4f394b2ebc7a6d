import APNsMock
import Logging
import NIOCore
import NIOEmbedded
import NIOTLS
import Testing

@testable import APNsMockServer

/// The provider connection handler on an `EmbeddedChannel`: its timers run on the embedded loop's clock, which
/// the tests move (as swift-nio-http2's `NIOHTTP2ServerConnectionManagementHandlerTests` do), so every timeout
/// is checked to the millisecond, with no wall-clock wait and no retry.
///
/// An embedded channel closes both sides at once, so the lingering close (output first, then the rest after
/// `lingerBound`) is checked over real sockets instead (`ProviderRawFrameTests`, the load tests).
@Suite("Provider connection handler on an embedded event loop")
struct ProviderConnectionHandlerTests {
    /// One connection: the handler in an embedded channel, a client that writes raw frames, and what came back.
    final class Harness {
        let channel: EmbeddedChannel
        let recorder = Recorder()
        private var pending: [UInt8] = []
        private var nextStreamID: UInt32 = 1

        init(limits: ProviderConnectionLimits = ProviderConnectionLimits(), scenario: String? = nil) throws {
            let active = try ActiveScenario(scenario.map { try ScenarioLoader.load(text: $0, source: "test.yaml") } ?? .empty)
            let handler = ProviderConnectionHandler(
                ProviderConnectionSetup(
                    processor: NotificationProcessor(scenario: active), recorder: recorder, settings: HTTP2Settings(),
                    requestLimits: HTTP2RequestLimits(), sessionLimits: HTTP2SessionLimits(), connectionLimits: limits,
                    tracker: ConnectionTracker(), metrics: ProviderMetrics(), logger: Logger(label: "provider-connection-test"),
                    identify: { _ in nil }
                )
            )
            channel = EmbeddedChannel(handler: handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        }

        var loop: EmbeddedEventLoop { channel.embeddedEventLoop }
        var isOpen: Bool { channel.isActive }

        func send(_ bytes: [UInt8]) throws {
            try channel.writeInbound(channel.allocator.buffer(bytes: bytes))
        }

        /// The client's preface and SETTINGS.
        func startHTTP2() throws {
            try send(FrameWriter.preface + FrameWriter.settings())
        }

        /// A push on the next stream; returns its stream ID.
        @discardableResult
        func push() throws -> UInt32 {
            let streamID = nextStreamID
            nextStreamID += 2
            let headers = FrameWriter.pushHeaders(token: TestData.deviceToken(), authority: "localhost")
            try send(
                FrameWriter.headers(streamID: streamID, headers, endStream: false)
                    + FrameWriter.data(streamID: streamID, Array(TestData.alertPayload.utf8), endStream: true)
            )
            return streamID
        }

        /// The frames written since the last call.
        func frames() throws -> [HTTP2Frame] {
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { pending += Array(buffer.readableBytesView) }
            return HTTP2Frame.take(from: &pending)
        }

        /// The bytes written since the last call, as text (for what is not HTTP/2).
        func text() throws -> String {
            var bytes: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// The streams answered with HEADERS among `frames`.
        static func answered(_ frames: [HTTP2Frame]) -> [UInt32] {
            frames.filter { $0.kind == .headers }.map(\.streamID)
        }

        func advance(_ amount: TimeAmount) {
            loop.advanceTime(by: amount)
        }
    }

    static func limits(handshake: TimeAmount = .seconds(10), idle: Duration? = nil) -> ProviderConnectionLimits {
        var limits = ProviderConnectionLimits()
        limits.handshakeTimeout = .nanoseconds(handshake.nanoseconds)
        limits.idleTimeout = idle
        return limits
    }

    // MARK: Handshake timeout

    @Test func aConnectionThatSendsNothingIsClosedAtTheHandshakeTimeoutAndNotBefore() throws {
        let connection = try Harness(limits: Self.limits(handshake: .seconds(10)))
        connection.advance(.milliseconds(9_999))
        #expect(connection.isOpen)
        connection.advance(.milliseconds(1))
        #expect(!connection.isOpen)
        #expect(try connection.frames().isEmpty, "no frame for a peer that never spoke HTTP/2")
    }

    @Test func thePrefaceStopsTheHandshakeTimeout() throws {
        let connection = try Harness(limits: Self.limits(handshake: .seconds(10)))
        try connection.startHTTP2()
        connection.advance(.seconds(3600))
        #expect(connection.isOpen)
        #expect(try connection.frames().first?.kind == .settings)
    }

    // MARK: Idle timeout

    @Test func anIdleConnectionGetsGoAwayIdleTimeoutAtTheTimeoutAndABusyOneDoesNot() throws {
        let connection = try Harness(limits: Self.limits(idle: .seconds(60)))
        try connection.startHTTP2()
        try connection.push()
        #expect(Harness.answered(try connection.frames()) == [1])
        // Busy: a push every 59 s keeps it open for as long as it goes on.
        for _ in 0..<5 {
            connection.advance(.seconds(59))
            #expect(connection.isOpen)
            let streamID = try connection.push()
            #expect(Harness.answered(try connection.frames()) == [streamID])
        }
        // Then silent: closed 60 s after the last push, not a millisecond sooner.
        connection.advance(.milliseconds(59_999))
        #expect(connection.isOpen)
        #expect(try connection.frames().isEmpty)
        connection.advance(.milliseconds(1))
        let goAway = try #require(try connection.frames().compactMap(GoAway.init).first)
        #expect(goAway.errorCode == 0 && goAway.debugData == #"{"reason":"IdleTimeout"}"# && goAway.lastStreamID == 11, "\(goAway)")
        #expect(!connection.isOpen)
        #expect(connection.recorder.store.list().total == 6, "every push recorded")
    }

    @Test func aConnectionWaitingForAnAnswerIsNotIdle() throws {
        let connection = try Harness(limits: Self.limits(idle: .seconds(60)), scenario: "name: slow\ndefaults:\n  latency: 90s\nrules: []\n")
        try connection.startHTTP2()
        try connection.push()
        connection.advance(.seconds(61))
        #expect(connection.isOpen, "the client waits for the server: that is not silence")
        #expect(Harness.answered(try connection.frames()).isEmpty)
        connection.advance(.seconds(29))
        #expect(Harness.answered(try connection.frames()) == [1])
        // Looked at again a timeout after the busy look (at 60 s): silent since the push, nothing in flight.
        connection.advance(.seconds(30))
        #expect(try connection.frames().compactMap(GoAway.init).first?.debugData == #"{"reason":"IdleTimeout"}"#)
        #expect(!connection.isOpen)
    }

    @Test func noIdleTimeoutMeansNever() throws {
        let connection = try Harness(limits: Self.limits(idle: nil))
        try connection.startHTTP2()
        connection.advance(.hours(48))
        #expect(connection.isOpen)
    }

    // MARK: Delayed answers and shutdown

    @Test func aDelayedAnswerLeavesAtItsDelayAndIsRecordedThen() throws {
        let connection = try Harness(scenario: "name: slow\ndefaults:\n  latency: 2s\nrules: []\n")
        try connection.startHTTP2()
        try connection.push()
        connection.advance(.milliseconds(1_999))
        #expect(Harness.answered(try connection.frames()).isEmpty)
        #expect(connection.recorder.store.list().total == 0, "recorded once the wire says what became of the answer")
        connection.advance(.milliseconds(1))
        #expect(Harness.answered(try connection.frames()) == [1])
        #expect(connection.recorder.store.list().total == 1)
    }

    @Test func aDelayedAnswerWhoseConnectionClosedMeanwhileIsRecordedAsNotSent() throws {
        let connection = try Harness(scenario: "name: slow\ndefaults:\n  latency: 2s\nrules: []\n")
        try connection.startHTTP2()
        try connection.push()
        _ = try connection.channel.close().wait()
        #expect(connection.recorder.store.list().total == 1)
        connection.advance(.seconds(2))
        #expect(connection.recorder.store.list().total == 1, "recorded once")
        let recording = try #require(connection.recorder.store.list().notifications.first)
        #expect(recording.response == nil && recording.abandonedBecause != nil, "\(recording)")
    }

    @Test func shutdownSendsGoAwayShutdownAnswersTheStreamInFlightThenCloses() throws {
        let connection = try Harness(scenario: "name: slow\ndefaults:\n  latency: 2s\nrules: []\n")
        try connection.startHTTP2()
        try connection.push()
        _ = try connection.frames()
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        let goAway = try #require(try connection.frames().compactMap(GoAway.init).first)
        #expect(goAway.debugData == #"{"reason":"Shutdown"}"# && goAway.lastStreamID == 1, "\(goAway)")
        #expect(connection.isOpen, "stream 1 is still to be answered")
        connection.advance(.seconds(2))
        #expect(Harness.answered(try connection.frames()) == [1])
        #expect(!connection.isOpen, "closed once its last stream is answered")
        #expect(connection.recorder.store.list().total == 1)
    }

    // MARK: Which protocol the peer speaks

    @Test func anHTTP1RequestGetsA505() throws {
        let connection = try Harness()
        try connection.send(Array("GET / HTTP/1.1\r\nhost: localhost\r\n\r\n".utf8))
        let text = try connection.text()
        #expect(text.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported"), "\(text)")
        #expect(!connection.isOpen)
    }

    /// h2spec 3.5/2: an invalid preface is a connection error PROTOCOL_ERROR, whatever word it starts with; and a
    /// peer that negotiated `h2` (SETTINGS already sent) never gets HTTP/1.1 text after them.
    @Test(arguments: [
        (false, "INVALID CONNECTION PREFACE\r\n\r\n"), (false, "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"),
        (true, "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"), (true, "GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"),
    ])
    func aBadPrefaceGetsGoAwayProtocolError(negotiatedH2: Bool, bytes: String) throws {
        let connection = try Harness()
        if negotiatedH2 {
            connection.channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        }
        try connection.send(Array(bytes.utf8))
        let frames = try connection.frames()
        #expect(frames.map(\.kind) == (negotiatedH2 ? [.settings, .goAway] : [.goAway]), "\(frames)")
        #expect(frames.last?.errorCode == 0x1)
        #expect(!connection.isOpen)
    }
}
