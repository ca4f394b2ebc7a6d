import APNsMock
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// Moves the bytes of one provider connection between TLS and its libnghttp2 session, hands each complete
/// request to the `NotificationProcessor` on this event loop, and carries out what its `StateMachine` says: the
/// machine owns the lifecycle; this class owns the socket, the session and the scheduled timers.
///
/// Output is drained from libnghttp2 once per read batch and written with one flush, and only while the
/// channel is writable, so a slow client cannot make the server buffer without bound. While a recording sink
/// is full (`RecordingBackPressure`), the handler stops asking the socket for more bytes: the provider is slowed
/// by TCP flow control, and no event loop ever blocks.
final class ProviderConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let setup: ProviderConnectionSetup
    /// Kept beside `setup`: read from a property of the handler, they are not retained per request.
    private let processor: NotificationProcessor, recorder: Recorder
    private let session: HTTP2ServerSession
    private var machine: StateMachine
    private var connection: ConnectionInfo
    private var ids = APNsIDGenerator()
    private var logger: Logger
    /// The engine's state for this connection (authentication, the scenario's connection rules), made when the
    /// session starts: SETTINGS wait for it, since their stream limit depends on who the client is.
    private var engineState: ProviderConnectionState?
    private var recordingContext = RecordingContext()
    /// A read's recordings, stored together at the end of `handle`: one acquisition of the store's lock per read.
    private var recordings: [RecordedNotification] = []
    private var metrics: ConnectionMetrics
    private var handshakeTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?
    /// Read once: the logger's level cannot change during a connection, and asking it per request showed in profiles.
    private let logsRequests: Bool

    /// Upper bound on bytes taken from libnghttp2 per write; the loop goes on while the channel is writable.
    private static let drainChunk = 256 * 1024
    /// How long a closing connection keeps reading after its last frame, for the client to close first.
    static let lingerBound: TimeAmount = .seconds(1)

    init(_ setup: ProviderConnectionSetup) {
        self.setup = setup
        (processor, recorder) = (setup.processor, setup.recorder)
        session = HTTP2ServerSession(
            settings: setup.settings, limits: setup.requestLimits, sessionLimits: setup.sessionLimits, tracker: setup.tracker
        )
        machine = StateMachine(limits: setup.connectionLimits.timeouts)
        connection = ConnectionInfo(id: setup.tracker.nextConnectionID(), service: setup.service)
        metrics = ConnectionMetrics(setup.metrics)
        logger = setup.logger
        logger[metadataKey: "connection"] = "\(connection.id)"
        logsRequests = logger.logLevel <= .debug
    }

    // MARK: Events in

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { channelBecameActive(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        channelBecameActive(context: context)
        context.fireChannelActive()
    }

    private func channelBecameActive(context: ChannelHandlerContext) {
        guard machine.state == .idle else { return }
        setup.tracker.opened()
        connection.remoteAddress = context.channel.remoteAddress?.description
        logger.debug("provider connection opened", metadata: ["remote": "\(connection.remoteAddress ?? "?")"])
        let outage = processor.scenario.current.isRefusingConnections()
        if let outage { logger.info("scenario outage: refusing the connection", metadata: ["with": "\(outage)"]) }
        apply(machine.channelActive(overLimit: setup.tracker.openConnections > setup.connectionLimits.maxConnections, outage: outage), context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            logger.debug("server shutting down: sending GOAWAY")
            return apply(machine.shutdownRequested(lastReceivedStreamID: session.lastReceivedStreamID), context)
        }
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            apply(machine.tlsCompleted(speaksHTTP2: negotiated != "http/1.1"), context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch machine.bytesReceived(at: context.eventLoop.now) {
        case .receive: break
        case .startSessionThenReceive(let actions): apply(actions, context, flushing: false)
        case .discard: return
        }
        let result = unwrapInboundIn(data).withUnsafeReadableBytes { bytes in
            Result { () throws(HTTP2SessionError) in try session.receive(bytes) }
        }
        // Consumed, so that `handle` gets the only reference to the events and takes them out without copies.
        switch consume result {
        case .success(let events):
            if case .handshaking = machine.state { apply(machine.sessionAccepted(at: context.eventLoop.now), context, flushing: false) }
            handle(events, context: context)
            if recorder.backPressure.isEngaged, machine.sinksFull() { resumeReadingWhenSinksRelease(context: context) }
        case .failure(.notHTTP2(let looksLikeHTTP1)):
            refuse(machine.notHTTP2(looksLikeHTTP1: looksLikeHTTP1), context: context)
        case .failure(.fatal(let code, let message)):
            logger.info("closing provider connection: HTTP/2 error", metadata: ["code": "\(code)", "error": "\(message)"])
            // GOAWAY with the error before closing, so the client can tell why (RFC 9113 §5.4.1).
            session.terminate(afterFatal: code)
            machine.failed(because: "connection closed after an HTTP/2 error (\(message))")
            flushOutput(context: context)
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
        machine.failed(because: "connection failed before the request ended (\(error))", immediately: true)
        flushOutput(context: context)
        context.close(promise: nil)
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested() { context.read() }
    }

    // MARK: Requests

    private func handle(_ events: consuming [HTTP2SessionEvent], context: ChannelHandlerContext) {
        guard !events.isEmpty else { return }
        // Taken out one by one, not iterated: iterating copies each request out of the array (a retain of each
        // of its buffers) and destroying the array releases them again.
        events.reverseByMoving()
        // One reading of each clock for the batch: its requests' last frames all arrived in the read that produced
        // it, which is their `receivedAt`; a request's latency counts the requests answered before it too.
        let started = ContinuousClock.now
        let receivedAt = processor.currentMilliseconds()
        // Read once for the batch: reading the property per request copied it (a retain of its address string).
        let connection = self.connection
        var carriedOut = 0
        while let event = events.popLast() {
            switch consume event {
            case .request(let stream):
                if decide(stream, connection, receivedAt: receivedAt, started: started, context: context) { carriedOut += 1 }
            case .abandoned(let stream, let because):
                let outcome = stream.withRequest { processor.abandonedOutcome($0, at: receivedAt, because: because, state: engineState) }
                end(stream, connection, outcome, .sent, context: context)
            case .finished(let stream, let outcome, let delivery):
                end(stream, connection, outcome, delivery, context: context)
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

    /// Decides a request and carries the decision out; `true` when it was carried out now (not delayed).
    @inline(__always)
    private func decide(_ stream: HTTP2ServerSession.Stream, _ connection: borrowing ConnectionInfo, receivedAt: Int64, started: ContinuousClock.Instant, context: ChannelHandlerContext) -> Bool {
        let streamID = stream.id
        if engineState == nil { engineState = processor.makeConnectionState(certificate: nil) }
        // The request is read in place, in `withRequest`'s closures: binding it to a local copies it. The engine's
        // state in place too (`engineState!`): a copy out and back showed in profiles (retains of every field).
        var decision = stream.withRequest { request in
            processor.process(request, streamID: streamID, connection: connection, state: &engineState!, ids: &ids, receivedAt: receivedAt)
        }
        if logsRequests {
            logger.debug("request", metadata: [
                "stream": "\(streamID)", "path": "\(stream.withRequest { $0.path })",
                "status": "\(decision.response.map { String($0.status) } ?? "none")", "reason": "\(decision.response?.reason?.rawValue ?? "-")",
            ])
        }
        if !decision.answers {
            // Nothing on the wire can change what becomes of a request without an answer: recorded now.
            end(stream, connection, decision.takeOutcome(), .sent, context: context)
        } else if let refused = session.keep(decision.takeOutcome(), for: stream) {
            end(stream, connection, refused, .notSent(because: "the stream closed before the answer was decided"), context: context)
            return false
        }
        guard let delay = decision.delay, delay > .zero else {
            carryOut(decision, stream: stream, context: context)
            return true
        }
        // A scenario's latency: answer later on this event loop. The stream keeps its outcome meanwhile, so a stream
        // or connection gone by then is recorded as not sent. A constant is captured: a captured `var` would be boxed
        // on the heap for every request, delayed or not.
        let delayed = decision
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
            guard self.machine.answersStreams else { return }
            self.carryOut(delayed, stream: stream, context: context)
            self.metrics.recordLatency(ContinuousClock.now - started, requests: 1)
            self.metrics.flush()
            self.flushOutput(context: context)
        }
        return false
    }

    /// Answers from the outcome the stream keeps, or carries out the stream fault, then the connection actions.
    @inline(__always)
    private func carryOut(_ decision: ProviderDecision, stream: HTTP2ServerSession.Stream, context: ChannelHandlerContext) {
        var answered = false
        if decision.answers, let submitted = session.respond(to: stream) {
            answered = true
            metrics.count(status: submitted.status, reason: submitted.reason, pushType: decision.pushType, broadcastKind: decision.broadcastKind)
        }
        switch decision.streamFault {
        case .reset(let errorCode)?: session.resetStream(stream.id, errorCode: errorCode)
        case .hang?: session.leaveUnanswered(stream.id)
        case nil: break
        }
        if !decision.actions.isEmpty {
            apply(machine.decided(streamID: stream.id, answered: answered, actions: decision.actions), context, flushing: false)
        }
    }

    /// A stream ended, with the outcome its event brought (an answer, or why there is none) and what became of the
    /// answer on the wire. This is the one place that records: beside the request path, whatever the state (nothing
    /// a provider sent goes unseen); then the machine says what the lifecycle does because of it.
    @inline(__always)
    private func end(
        _ stream: HTTP2ServerSession.Stream, _ connection: borrowing ConnectionInfo, _ outcome: borrowing RecordingOutcome,
        _ delivery: AnswerDelivery, context: ChannelHandlerContext
    ) {
        let streamID = stream.id
        if outcome.response.isSome {
            let warnings = outcome.warnings
            if !warnings.isEmpty { metrics.count(warnings) }
        }
        stream.withRequest { request in
            recorder.record(request, streamID: streamID, connection: connection, outcome: outcome, delivery: delivery, into: &recordings, context: &recordingContext)
        }
        let then = machine.streamEnded(streamID)
        guard !then.isEmpty else { return }
        recorder.commit(&recordings)  // Stored before the lifecycle acts: a close records what is left after these.
        apply(then, context, flushing: false)
    }

    // MARK: Actions out

    /// Carries out the state machine's actions, then writes (unless a read or a decision in progress writes later).
    private func apply(_ actions: [StateMachine.Action], _ context: ChannelHandlerContext, flushing: Bool = true) {
        for action in actions {
            switch action {
            case .goAway(let errorCode, let lastStreamID, let debugData):
                logger.info("sending GOAWAY", metadata: ["error-code": "\(errorCode)", "debug": "\(debugData)"])
                session.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData)
            case .setMaxConcurrentStreams(let value):
                session.submitMaxConcurrentStreams(value)
            case .startSession:
                startSession(context: context)
            case .armHandshakeTimer(let delay):
                handshakeTimer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    self.apply(self.machine.handshakeTimerFired(), context)
                }
            case .armIdleTimer(let deadline):
                idleTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
                    let (now, open, last) = (context.eventLoop.now, self.session.openStreams, self.session.lastReceivedStreamID)
                    self.apply(self.machine.idleTimerFired(now: now, streamsInFlight: open, lastReceivedStreamID: last), context)
                }
            case .countClosedBy(let limit):
                logger.info("closing the connection: a limit was reached", metadata: ["limit": "\(limit)"])
                setup.metrics.connectionsClosed(by: limit).increment()
            }
        }
        if flushing { flushOutput(context: context) }
    }

    /// Sends the server's SETTINGS once the peer is known: one stream only until a valid token, as APNs does.
    private func startSession(context: ChannelHandlerContext) {
        let certificate = (try? context.pipeline.syncOperations.nioSSL_peerCertificate()).flatMap(setup.identify)
        if let certificate {
            logger.debug("client certificate", metadata: ["subject": "\(certificate.subject)", "topics": "\(certificate.topics)"])
        }
        let fresh = processor.makeConnectionState(certificate: certificate)
        engineState = fresh
        session.submitInitialSettings(advertisedMaxConcurrentStreams: processor.initialMaxConcurrentStreams(for: fresh.auth))
    }

    /// Back-pressure from the recording sinks: reads paused until they have room again.
    private func resumeReadingWhenSinksRelease(context: ChannelHandlerContext) {
        let (loopBound, eventLoop) = (NIOLoopBound((self, context), eventLoop: context.eventLoop), context.eventLoop)
        recorder.backPressure.whenReleased {
            eventLoop.execute {
                let (handler, context) = loopBound.value
                if handler.machine.sinksReleased() { context.read() }
            }
        }
    }

    /// Writes what libnghttp2 has queued while the channel is writable; then closes if the machine says so.
    private func flushOutput(context: ChannelHandlerContext) {
        while machine.writesFrames, context.channel.isWritable {
            var output = context.channel.allocator.buffer(capacity: 0)
            let drained: Int
            do {
                drained = try session.drainOutput(maxBytes: Self.drainChunk) { output.writeBytes($0) }
            } catch {
                logger.info("closing provider connection: HTTP/2 error while sending", metadata: ["error": "\(error)"])
                machine.failed(because: "connection closed after an HTTP/2 error", immediately: true)
                break
            }
            handle(session.takeEvents(), context: context)
            guard drained > 0 else { break }
            context.writeAndFlush(wrapOutboundOut(output), promise: nil)
        }
        guard let closing = machine.flushed(sessionFinished: session.isFinished) else { return }
        settle(because: closing.reason, context: context)
        if closing.immediately { return context.close(promise: nil) }
        // A lingering close once what was written has reached the socket (closing at once would discard the answers
        // and the GOAWAY still queued): the output side first (TLS close_notify, then FIN), and the socket stays open
        // to read and discard what the client still sends, until it closes too or `lingerBound` passes. Closing both
        // sides while a client frame is in flight makes the kernel answer it with a reset, and a client that gets a
        // reset drops what it had not read yet: the last answer and the GOAWAY.
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
            context.close(mode: .output).assumeIsolated().whenComplete { result in
                guard case .success = result else { return context.close(promise: nil) }
                context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerBound) { context.close(promise: nil) }
            }
        }
    }

    /// A peer that does not speak HTTP/2 (`http/1.1` in ALPN, or bytes that are not the preface): say so, then close.
    private func refuse(_ refusal: StateMachine.Refuse?, context: ChannelHandlerContext) {
        logger.info("closing provider connection: client does not speak HTTP/2", metadata: ["refusal": "\(refusal.map { "\($0)" } ?? "none")"])
        settle(because: "connection closed: client does not speak HTTP/2", context: context)
        let bytes: [UInt8]
        switch refusal {
        case .goAwayProtocolError?: bytes = HTTP2ServerSession.goAwayFrame(errorCode: 0x1)
        case .http1VersionNotSupported?: bytes = HTTP2ServerSession.http1VersionNotSupported
        case nil: return context.close(promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// Ends the session once, recording every request it still held: answers not sent, requests not ended.
    private func settle(because fallback: String, context: ChannelHandlerContext) {
        guard let settled = machine.settle(because: fallback) else { return }
        handshakeTimer?.cancel()
        idleTimer?.cancel()
        handle(session.close(because: settled.reason), context: context)
        processor.scenario.current.connectionClosed(connection.id)
        guard settled.wasCounted else { return }
        setup.tracker.closed()
        logger.debug("provider connection closed")
    }
}
