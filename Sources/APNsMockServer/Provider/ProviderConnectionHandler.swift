import APNsMock
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// Moves the bytes of one provider connection between TLS and its libnghttp2 session, hands each complete
/// request to the `NotificationProcessor` on this event loop, carries out its decision, and records each
/// request beside the path once the wire has said what became of its answer.
///
/// Output is drained from libnghttp2 once per read batch and written with one flush, and only while the
/// channel is writable, so a slow client cannot make the server buffer without bound. While a recording sink
/// is full (`RecordingBackPressure`), the handler stops asking the socket for more bytes: the provider is slowed
/// by TCP flow control, and no event loop ever blocks.
final class ProviderConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let session: HTTP2ServerSession
    private let processor: NotificationProcessor
    private let recorder: Recorder
    private let tracker: ConnectionTracker
    private var connection: ConnectionInfo
    private var ids = APNsIDGenerator()
    private var logger: Logger
    private var lifecycle = StateMachine(gated: false)
    /// The connection's requests have been settled (each recorded) and its session closed.
    private var settled = false
    private var counted = false
    /// A `closeAfterWrites` action is waiting for the current flush to end.
    private var closeRequested = false
    /// Set once TLS tells who the client is; SETTINGS wait for it, since their stream limit depends on it.
    private var state: ProviderConnectionState?
    private var recordingContext = RecordingContext()
    /// A read's recordings, stored together at the end of `handle`: one acquisition of the store's lock per read.
    private var recordings: [RecordedNotification] = []
    /// A scenario outage said to refuse this connection with a GOAWAY once TLS is up.
    private var outageGoAway: (errorCode: UInt32, debugData: String)?
    private let identify: @Sendable (NIOSSLCertificate) -> CertificateIdentity?
    /// Our SETTINGS go out at once, except to a client that negotiated `http/1.1`: it gets a readable 505
    /// instead of binary frames. A client without ALPN (aioapns) is taken to speak HTTP/2, as APNs does.
    private var peerSpeaksHTTP2 = false
    /// Reading is paused while a recording sink is full; a `read` asked for meanwhile waits here.
    private var readPaused = false
    private var pendingRead = false
    private var metrics: ConnectionMetrics
    private let providerMetrics: ProviderMetrics
    private let connectionLimits: ProviderConnectionLimits
    /// HTTP/2 bytes have arrived (the preface at least): the handshake timeout no longer applies.
    private var prefaceReceived = false
    /// When the last bytes arrived, for the idle timeout.
    private var lastRead = NIODeadline.now()
    private var handshakeTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?
    /// Read once: the logger's level cannot change during a connection, and asking it per request showed in profiles.
    private let logsRequests: Bool

    /// Upper bound on bytes taken from libnghttp2 per write; the loop goes on while the channel is writable.
    private static let drainChunk = 256 * 1024

    init(
        processor: NotificationProcessor,
        recorder: Recorder,
        settings: HTTP2Settings,
        limits: HTTP2RequestLimits,
        sessionLimits: HTTP2SessionLimits,
        connectionLimits: ProviderConnectionLimits,
        tracker: ConnectionTracker,
        metrics: ProviderMetrics,
        logger: Logger,
        service: ConnectionInfo.Service = .provider,
        identify: @escaping @Sendable (NIOSSLCertificate) -> CertificateIdentity?
    ) {
        self.processor = processor
        self.recorder = recorder
        self.identify = identify
        self.tracker = tracker
        self.metrics = ConnectionMetrics(metrics)
        self.providerMetrics = metrics
        self.connectionLimits = connectionLimits
        self.session = HTTP2ServerSession(settings: settings, limits: limits, sessionLimits: sessionLimits, tracker: tracker)
        self.connection = ConnectionInfo(id: tracker.nextConnectionID(), service: service)
        self.logger = logger
        self.logger[metadataKey: "connection"] = "\(connection.id)"
        self.logsRequests = logger.logLevel <= .debug
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { connectionBecameActive(context: context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            beginShutdown(context: context)
            return
        }
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            peerSpeaksHTTP2 = negotiated != "http/1.1"
            let peer = try? context.pipeline.syncOperations.nioSSL_peerCertificate()
            let certificate = peer.flatMap(identify)
            if let certificate {
                logger.debug("client certificate", metadata: ["subject": "\(certificate.subject)", "topics": "\(certificate.topics)"])
            }
            startSession(context: context, certificate: certificate)
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Sends the server's SETTINGS once the peer is known: one stream only until a valid token, as APNs does.
    private func startSession(context: ChannelHandlerContext, certificate: CertificateIdentity?) {
        guard state == nil else { return }
        let fresh = processor.makeConnectionState(certificate: certificate)
        state = fresh
        if lifecycle.isServing { lifecycle = StateMachine(gated: fresh.auth.isStreamGated) }
        session.submitInitialSettings(advertisedMaxConcurrentStreams: processor.initialMaxConcurrentStreams(for: fresh.auth))
        if let outage = outageGoAway {
            logger.info("scenario outage: refusing the connection with GOAWAY")
            apply(lifecycle.refused(goAway: outage), context: context)
        }
        flushOutput(context: context)
    }

    func channelActive(context: ChannelHandlerContext) {
        connectionBecameActive(context: context)
        context.fireChannelActive()
    }

    private func connectionBecameActive(context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        tracker.opened()
        connection.remoteAddress = context.channel.remoteAddress?.description
        logger.debug("provider connection opened", metadata: ["remote": "\(connection.remoteAddress ?? "?")"])
        if tracker.openConnections > connectionLimits.maxConnections {
            logger.warning("connection limit reached: closing a new connection", metadata: ["max-connections": "\(connectionLimits.maxConnections)"])
            providerMetrics.connectionsClosed(by: "over-limit").increment()
            close(context: context, because: "connection refused: --max-connections reached")
            return
        }
        startTimers(context: context)
        switch processor.scenario.current.isRefusingConnections() {
        case .refuse?:
            logger.info("scenario outage: refusing the connection")
            apply(lifecycle.refused(goAway: nil), context: context)
        case .goAway(let errorCode, let debugData)?:
            outageGoAway = (errorCode, debugData)
        case nil:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !settled else { return }
        lastRead = .now()
        if state == nil { startSession(context: context, certificate: nil) }
        let buffer = unwrapInboundIn(data)
        let result = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(HTTP2SessionError) in try session.receive(bytes) }
        }
        // Consumed, so that `handle` gets the only reference to the events and takes them out without copies.
        switch consume result {
        case .success(let events):
            peerSpeaksHTTP2 = true
            prefaceReceived = true
            handle(events, context: context)
            pauseReadingWhileSinksAreFull(context: context)
        case .failure(.notHTTP2(let looksLikeHTTP1)):
            refuseNonHTTP2Client(context: context, looksLikeHTTP1: looksLikeHTTP1)
        case .failure(.fatal(let code, let message)):
            logger.info("closing provider connection: HTTP/2 error", metadata: ["code": "\(code)", "error": "\(message)"])
            // GOAWAY with the error before closing, so the client can tell why (RFC 9113 §5.4.1).
            session.terminate(afterFatal: code)
            peerSpeaksHTTP2 = true
            apply(lifecycle.failed(), context: context)
            flushOutput(context: context, closingBecause: "connection closed after an HTTP/2 error (\(message))")
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushOutput(context: context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { flushOutput(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(because: "connection closed before the request ended", context: context)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle(because: "connection closed before the request ended", context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // TLS failures (garbage instead of a ClientHello, a client that rejects our certificate) end here.
        logger.debug("provider connection error", metadata: ["error": "\(error)"])
        close(context: context, because: "connection failed before the request ended (\(error))")
    }

    func read(context: ChannelHandlerContext) {
        if readPaused {
            pendingRead = true
        } else {
            context.read()
        }
    }

    // MARK: Private

    /// The handshake timeout (TLS and the HTTP/2 preface) and the idle timeout, both on this event loop.
    private func startTimers(context: ChannelHandlerContext) {
        let loop = context.eventLoop.assumeIsolated()
        handshakeTimer = loop.scheduleTask(in: Self.timeAmount(connectionLimits.handshakeTimeout)) {
            guard !self.prefaceReceived, !self.settled else { return }
            self.logger.info("closing a connection that did not finish TLS and the HTTP/2 preface in time", metadata: [
                "handshake-timeout": "\(self.connectionLimits.handshakeTimeout)",
            ])
            self.providerMetrics.connectionsClosed(by: "handshake-timeout").increment()
            self.close(context: context, because: "no TLS handshake or HTTP/2 preface within the handshake timeout")
        }
        if let idle = connectionLimits.idleTimeout { scheduleIdleCheck(context: context, in: idle) }
    }

    private func scheduleIdleCheck(context: ChannelHandlerContext, in delay: Duration) {
        idleTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.timeAmount(delay)) {
            guard !self.settled, let idle = self.connectionLimits.idleTimeout else { return }
            let silent = NIODeadline.now() - self.lastRead
            let limit = Self.timeAmount(idle)
            guard silent >= limit else {
                // Read since: look again when this connection could be idle at the earliest.
                self.scheduleIdleCheck(context: context, in: .nanoseconds((limit - silent).nanoseconds))
                return
            }
            self.logger.info("closing an idle connection with GOAWAY IdleTimeout", metadata: ["idle-timeout": "\(idle)"])
            self.providerMetrics.connectionsClosed(by: "idle-timeout").increment()
            guard self.peerSpeaksHTTP2 else {
                self.close(context: context, because: "connection closed: idle")
                return
            }
            self.apply(self.lifecycle.idleTimedOut(lastReceivedStreamID: self.session.lastReceivedStreamID), context: context)
            self.flushOutput(context: context)
        }
    }

    /// Back-pressure from the recording sinks: no more reads until they have room again.
    private func pauseReadingWhileSinksAreFull(context: ChannelHandlerContext) {
        guard !readPaused, recorder.backPressure.isEngaged else { return }
        readPaused = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        recorder.backPressure.whenReleased {
            eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.resumeReading(context: context)
            }
        }
    }

    private func resumeReading(context: ChannelHandlerContext) {
        guard readPaused else { return }
        readPaused = false
        if pendingRead {
            pendingRead = false
            context.read()
        }
    }

    private func handle(_ events: consuming [HTTP2SessionEvent], context: ChannelHandlerContext) {
        guard !events.isEmpty else { return }
        // Taken out one by one, not iterated: iterating copies each request out of the array (a retain of each
        // of its buffers) and destroying the array releases them again.
        events.reverseByMoving()
        // One reading of each clock for the batch: its requests' last frames all arrived in the read that produced
        // it, which is their `receivedAt`; a request's latency counts the requests answered before it too.
        let started = ContinuousClock.now
        let receivedAt = processor.currentMilliseconds()
        // Read once for the batch: passing the property to each call copied it (a retain of its address string
        // for every request, twice).
        let connection = self.connection
        var carriedOut = 0
        while let event = events.popLast() {
            switch consume event {
            case .request(let stream):
                let streamID = stream.id
                // The request is read in place, in `withRequest`'s closures: binding it to a local copies it.
                if state == nil { state = processor.makeConnectionState(certificate: nil) }
                // In place (`state!`): a copy out and back showed in profiles (retains of every field).
                var decision = stream.withRequest { request in
                    processor.process(request, streamID: streamID, connection: connection, state: &state!, ids: &ids, receivedAt: receivedAt)
                }
                if logsRequests {
                    logger.debug(
                        "request",
                        metadata: [
                            "stream": "\(streamID)", "path": "\(stream.withRequest { $0.path })",
                            "status": "\(decision.response.map { String($0.status) } ?? "none")",
                            "reason": "\(decision.response?.reason?.rawValue ?? "-")",
                        ]
                    )
                }
                // Recorded beside the path: an answer when the session has sent it (a `.finished` event), a request
                // that gets none at once, since nothing on the wire can change that.
                if !decision.answers {
                    let outcome = decision.outcome
                    stream.withRequest { request in
                        recorder.record(
                            request, streamID: streamID, connection: connection, outcome: outcome, into: &recordings, context: &recordingContext
                        )
                    }
                } else if let refused = session.attach(decision.takeOutcome(), to: stream) {
                    // Moved to the stream, which answers from it and keeps it for the recording (`carryOut`).
                    stream.withRequest { request in
                        recorder.record(
                            request, streamID: streamID, connection: connection, outcome: refused,
                            delivery: .notSent(because: "the stream closed before the answer was decided"), into: &recordings,
                            context: &recordingContext
                        )
                    }
                    continue
                }
                let pushType = decision.pushType
                if let delay = decision.delay, delay > .zero {
                    // A scenario's latency: answer later on this event loop; the stream or connection may be gone by
                    // then, and the session has recorded it as not sent. A constant is captured: a captured `var`
                    // would be boxed on the heap for every request, delayed or not.
                    let delayed = decision
                    context.eventLoop.assumeIsolated().scheduleTask(in: Self.timeAmount(delay)) {
                        guard !self.settled, self.session.isOpen(streamID) else { return }
                        self.carryOut(delayed, stream: stream, pushType: pushType, context: context)
                        self.metrics.recordLatency(ContinuousClock.now - started, requests: 1)
                        self.metrics.flush()
                        self.flushOutput(context: context)
                    }
                } else {
                    carryOut(decision, stream: stream, pushType: pushType, context: context)
                    carriedOut += 1
                }
            case .abandoned(let stream, let because):
                let streamID = stream.id
                stream.withRequest { request in
                    recorder.recordAbandoned(
                        request, streamID: streamID, connection: connection, at: receivedAt, because: because, into: &recordings
                    )
                }
            case .finished(let stream, let delivery):
                // A `.finished` stream holds the outcome `attach` gave it; recorded all the same if it did not.
                let streamID = stream.id
                let outcome = stream.takeOutcome() ?? .abandoned(at: receivedAt, because: "no outcome was kept")
                stream.withRequest { request in
                    recorder.record(
                        request, streamID: streamID, connection: connection, outcome: outcome, delivery: delivery, into: &recordings,
                        context: &recordingContext
                    )
                }
                let actions = lifecycle.answerFinished(streamID: stream.id)
                if !actions.isEmpty {
                    // Stored before the lifecycle acts: a close here records what is left after these.
                    recorder.commit(&recordings)
                    apply(actions, context: context)
                }
            case .libraryGoAway(let errorCode, let lastStreamID):
                logger.warning(
                    "libnghttp2 ended the connection with GOAWAY (one of its limits, or a protocol error by the client)",
                    metadata: ["error-code": "\(HTTP2ErrorCodeName.name(of: errorCode))", "last-stream": "\(lastStreamID)"]
                )
            }
        }
        recorder.commit(&recordings)
        // The batch's answers leave together, in the write after it: one clock reading stands for all of them.
        if carriedOut > 0 { metrics.recordLatency(ContinuousClock.now - started, requests: carriedOut) }
        metrics.flush()
    }

    /// - Parameter stream: the request's stream, as its event named it: the answer goes to it without looking it up
    ///   again by its ID.
    private func carryOut(
        _ decision: ProviderDecision,
        stream: HTTP2ServerSession.Stream,
        pushType: String?,
        context: ChannelHandlerContext
    ) {
        let streamID = stream.id
        var answered = false
        // The answer is the one `attach` gave the stream with its outcome: taken out to be read in place and given
        // back at once (reading it through the stream copied it).
        if decision.answers, let outcome = stream.takeOutcome() {
            answered = session.respond(to: stream, with: outcome.response!)
            if answered {
                metrics.count(status: outcome.response!.status, reason: outcome.response!.reason, pushType: pushType, broadcastKind: decision.broadcastKind)
                let warnings = outcome.warnings
                if !warnings.isEmpty { metrics.count(warnings) }
            }
            stream.restoreOutcome(outcome)
        }
        switch decision.streamFault {
        case .reset(let errorCode)?:
            session.resetStream(streamID, errorCode: errorCode)
        case .hang?:
            session.leaveUnanswered(streamID)
        case nil:
            break
        }
        if !decision.actions.isEmpty {
            apply(lifecycle.decided(streamID: streamID, answered: answered, actions: decision.actions), context: context)
        }
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The server is stopping: a GOAWAY with APNs' `{"reason":"Shutdown"}` tells the client to open no more
    /// streams; the streams in flight are still answered, and the connection closes once they are.
    private func beginShutdown(context: ChannelHandlerContext) {
        guard !settled else { return }
        guard peerSpeaksHTTP2 else {
            close(context: context, because: "connection closed: the server is shutting down")
            return
        }
        logger.debug("server shutting down: sending GOAWAY")
        apply(lifecycle.shutdownRequested(lastReceivedStreamID: session.lastReceivedStreamID), context: context)
        flushOutput(context: context)
    }

    /// Carries out the state machine's actions.
    private func apply(_ actions: [StateMachine.Action], context: ChannelHandlerContext) {
        for action in actions {
            switch action {
            case .goAway(let errorCode, let lastStreamID, let debugData):
                logger.info("sending GOAWAY", metadata: ["error-code": "\(errorCode)", "debug": "\(debugData)"])
                session.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData)
            case .setMaxConcurrentStreams(let value):
                session.submitMaxConcurrentStreams(value)
            case .closeAfterWrites:
                closeRequested = true
            case .closeNow:
                logger.info("closing the connection at once (scenario drop or outage)")
                close(context: context, because: "connection dropped by the scenario before the request ended")
                return
            }
        }
    }

    /// Writes what libnghttp2 has queued; then, when the connection is to close, settles its requests and closes
    /// once the writes have left.
    private func flushOutput(context: ChannelHandlerContext, closingBecause reason: String? = nil) {
        if !settled, peerSpeaksHTTP2 {
            while context.channel.isWritable {
                var output = context.channel.allocator.buffer(capacity: 0)
                let drained: Int
                do {
                    drained = try session.drainOutput(maxBytes: Self.drainChunk) { output.writeBytes($0) }
                } catch {
                    logger.info("closing provider connection: HTTP/2 error while sending", metadata: ["error": "\(error)"])
                    close(context: context, because: "connection closed after an HTTP/2 error")
                    return
                }
                handle(session.takeEvents(), context: context)
                guard drained > 0 else { break }
                context.writeAndFlush(wrapOutboundOut(output), promise: nil)
            }
            if session.isFinished { apply(lifecycle.sessionFinished(), context: context) }
        }
        if closeRequested || reason != nil, !settled {
            settle(because: reason ?? "connection closed by the server before the answer was sent", context: context)
            closeAfterPendingWrites(context: context)
        }
    }

    /// Closes once everything written so far has reached the socket: closing at once would discard writes
    /// still queued in the channel (answers a client is waiting for, a GOAWAY).
    ///
    /// A lingering close: the output side closes first (TLS close_notify, then FIN), and the socket stays open to
    /// read (and discard) what the client was still sending, until it closes too or `lingerBound` passes. Closing
    /// both sides at once while a client frame is in flight makes the kernel answer it with a reset, and a
    /// client that gets a reset drops what it had not read yet: the last answer and the GOAWAY.
    private func closeAfterPendingWrites(context: ChannelHandlerContext) {
        let flushed = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)))
        flushed.assumeIsolated().whenComplete { _ in
            context.close(mode: .output).assumeIsolated().whenComplete { result in
                guard case .success = result else {
                    context.close(promise: nil)
                    return
                }
                context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerBound) {
                    context.close(promise: nil)
                }
            }
        }
    }

    /// How long a closing connection keeps reading after its last frame, for the client to close first.
    static let lingerBound: TimeAmount = .seconds(1)

    /// A client that does not speak HTTP/2 (no `h2` in ALPN, or plain HTTP/1.1): say so plainly, then close.
    private func refuseNonHTTP2Client(context: ChannelHandlerContext, looksLikeHTTP1: Bool) {
        logger.info("closing provider connection: client does not speak HTTP/2", metadata: ["http1": "\(looksLikeHTTP1)"])
        _ = lifecycle.failed()
        settle(because: "connection closed: client does not speak HTTP/2", context: context)
        guard looksLikeHTTP1 else {
            // Not the preface: GOAWAY PROTOCOL_ERROR (RFC 9113 §3.4), then close.
            let frame = context.channel.allocator.buffer(bytes: HTTP2ServerSession.goAwayFrame(errorCode: 0x1))
            context.writeAndFlush(wrapOutboundOut(frame)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
            return
        }
        let message = "apns-mock speaks HTTP/2 only, as APNs does: use an HTTP/2 client (ALPN h2, e.g. curl --http2).\n"
        let response =
            "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain\r\nconnection: close\r\n"
            + "content-length: \(message.utf8.count)\r\n\r\n\(message)"
        let buffer = context.channel.allocator.buffer(string: response)
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private func close(context: ChannelHandlerContext, because reason: String) {
        _ = lifecycle.failed()
        settle(because: reason, context: context)
        context.close(promise: nil)
    }

    /// Ends the session once, recording every request it still held: answers not sent, requests not ended.
    private func settle(because reason: String, context: ChannelHandlerContext) {
        guard !settled else { return }
        settled = true
        handshakeTimer?.cancel()
        idleTimer?.cancel()
        handle(session.close(because: reason), context: context)
        _ = lifecycle.closed()
        processor.scenario.current.connectionClosed(connection.id)
        if counted {
            tracker.closed()
            logger.debug("provider connection closed")
        }
    }
}
