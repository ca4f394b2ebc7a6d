import APNsMock
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// Moves the bytes of one provider connection between TLS and its libnghttp2 session, and hands each
/// complete request to the `NotificationProcessor` on this event loop.
///
/// Output is drained from libnghttp2 once per read batch and written with one flush, and only while the
/// channel is writable, so a slow client cannot make the server buffer without bound.
final class ProviderConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let session: HTTP2ServerSession
    private let processor: NotificationProcessor
    private let tracker: ConnectionTracker
    private var connection: ConnectionInfo
    private var ids = APNsIDGenerator()
    private var logger: Logger
    private var finished = false
    private var counted = false
    /// Set once TLS tells who the client is; SETTINGS wait for it, since their stream limit depends on it.
    private var state: ProviderConnectionState?
    /// A scenario outage said to refuse this connection with a GOAWAY once TLS is up.
    private var outageGoAway: (errorCode: UInt32, debugData: String)?
    private let identify: @Sendable (NIOSSLCertificate) -> CertificateIdentity?
    /// Recordings of answers waiting for a scenario's delay, by stream: committed when the answer goes out, or
    /// as abandoned if the connection ends first.
    private var delayedRecordings: [Int32: RecordedNotification] = [:]
    /// A decision asked to close the connection once what is queued has been written.
    private var closeAfterWrite = false
    /// Our SETTINGS go out at once, except to a client that negotiated `http/1.1`: it gets a readable 505
    /// instead of binary frames. A client without ALPN (aioapns) is taken to speak HTTP/2, as APNs does.
    private var peerSpeaksHTTP2 = false
    private var metrics: ConnectionMetrics
    /// Read once: the logger's level cannot change during a connection, and asking it per request showed in profiles.
    private let logsRequests: Bool

    /// Upper bound on bytes taken from libnghttp2 per write; the loop goes on while the channel is writable.
    private static let drainChunk = 256 * 1024

    init(
        processor: NotificationProcessor,
        settings: HTTP2Settings,
        limits: HTTP2RequestLimits,
        tracker: ConnectionTracker,
        metrics: ProviderMetrics,
        logger: Logger,
        identify: @escaping @Sendable (NIOSSLCertificate) -> CertificateIdentity?
    ) {
        self.processor = processor
        self.identify = identify
        self.tracker = tracker
        self.metrics = ConnectionMetrics(metrics)
        self.session = HTTP2ServerSession(settings: settings, limits: limits, tracker: tracker)
        self.connection = ConnectionInfo(id: tracker.nextConnectionID())
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
        session.submitInitialSettings(advertisedMaxConcurrentStreams: processor.initialMaxConcurrentStreams(for: fresh.auth))
        if let outage = outageGoAway {
            logger.info("scenario outage: refusing the connection with GOAWAY")
            perform([.goAway(errorCode: outage.errorCode, lastStreamID: 0, debugData: outage.debugData), .close], context: context)
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
        switch processor.scenario.current.isRefusingConnections() {
        case .refuse?:
            logger.info("scenario outage: refusing the connection")
            close(context: context, because: "connection refused: scenario outage")
        case .goAway(let errorCode, let debugData)?:
            outageGoAway = (errorCode, debugData)
        case nil:
            break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        if state == nil { startSession(context: context, certificate: nil) }
        let buffer = unwrapInboundIn(data)
        let result = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(HTTP2SessionError) in try session.receive(bytes) }
        }
        // Consumed, so that `handle` gets the only reference to the events and takes them out without copies.
        switch consume result {
        case .success(let events):
            peerSpeaksHTTP2 = true
            handle(events, context: context)
        case .failure(.notHTTP2(let looksLikeHTTP1)):
            refuseNonHTTP2Client(context: context, looksLikeHTTP1: looksLikeHTTP1)
        case .failure(.fatal(let code, let message)):
            logger.info("closing provider connection: HTTP/2 error", metadata: ["code": "\(code)", "error": "\(message)"])
            flushOutput(context: context)
            close(context: context, because: "connection closed after an HTTP/2 error (\(message))")
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
        finish(because: "connection closed before the request ended")
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(because: "connection closed before the request ended")
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // TLS failures (garbage instead of a ClientHello, a client that rejects our certificate) end here.
        logger.debug("provider connection error", metadata: ["error": "\(error)"])
        close(context: context, because: "connection failed before the request ended (\(error))")
    }

    // MARK: Private

    private func handle(_ events: consuming [HTTP2SessionEvent], context: ChannelHandlerContext) {
        guard !events.isEmpty else { return }
        // Taken out one by one, not iterated: iterating copies each request out of the array (a retain of each
        // of its buffers) and destroying the array releases them again.
        events.reverse()
        // One reading of each clock for the batch: its requests' last frames all arrived in the read that produced
        // it, which is their `receivedAt`; a request's latency counts the requests answered before it too.
        let started = ContinuousClock.now
        let receivedAt = processor.currentMilliseconds()
        var carriedOut = 0
        while let event = events.popLast() {
            switch consume event {
            case .request(let streamID, let request):
                if state == nil { state = processor.makeConnectionState(certificate: nil) }
                // In place (`state!`): a copy out and back showed in profiles (retains of every field).
                let decision = processor.process(
                    request, streamID: streamID, connection: connection, state: &state!, ids: &ids, receivedAt: receivedAt
                )
                if logsRequests {
                    logger.debug(
                        "request",
                        metadata: [
                            "stream": "\(streamID)", "path": "\(request.path)",
                            "status": "\(decision.response.map { String($0.status) } ?? "none")",
                            "reason": "\(decision.response?.reason?.rawValue ?? "-")",
                        ]
                    )
                }
                let pushType = decision.pushType
                if let delay = decision.delay, delay > .zero {
                    // A scenario's latency: answer later on this event loop; the connection may be gone by then.
                    if let recording = decision.pendingRecording { delayedRecordings[streamID] = recording }
                    context.eventLoop.assumeIsolated().scheduleTask(in: Self.timeAmount(delay)) {
                        // Gone from the table: the connection finished first and recorded it as abandoned.
                        guard let recording = self.delayedRecordings.removeValue(forKey: streamID) else { return }
                        guard !self.finished, self.session.isOpen(streamID) else {
                            self.processor.commit(recording, sent: false, because: "stream reset during the scenario's delay")
                            return
                        }
                        self.carryOut(decision, streamID: streamID, pushType: pushType, context: context)
                        self.metrics.recordLatency(ContinuousClock.now - started, requests: 1)
                        self.metrics.flush()
                        self.processor.commit(recording, sent: true)
                        self.flushOutput(context: context)
                    }
                } else {
                    carryOut(decision, streamID: streamID, pushType: pushType, context: context)
                    carriedOut += 1
                }
            case .abandoned(let streamID, let request, let because):
                processor.recordAbandoned(request, streamID: streamID, connection: connection, because: because)
            }
        }
        // The batch's answers leave together, in the write after it: one clock reading stands for all of them.
        if carriedOut > 0 { metrics.recordLatency(ContinuousClock.now - started, requests: carriedOut) }
        metrics.flush()
    }

    private func carryOut(
        _ decision: ProviderDecision,
        streamID: Int32,
        pushType: String?,
        context: ChannelHandlerContext
    ) {
        if let response = decision.response {
            session.respond(streamID: streamID, with: response)
            metrics.count(response, pushType: pushType)
        }
        switch decision.streamFault {
        case .reset(let errorCode)?:
            session.resetStream(streamID, errorCode: errorCode)
        case .hang?:
            session.leaveUnanswered(streamID)
        case nil:
            break
        }
        perform(decision.actions, context: context)
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The server is stopping: a GOAWAY with APNs' `{"reason":"Shutdown"}` tells the client to open no more
    /// streams; the streams in flight are still answered, and the connection closes once they are.
    private func beginShutdown(context: ChannelHandlerContext) {
        guard !finished else { return }
        guard peerSpeaksHTTP2 else {
            close(context: context, because: "connection closed: the server is shutting down")
            return
        }
        logger.debug("server shutting down: sending GOAWAY")
        // Every stream received so far will still be answered, so the GOAWAY names the last one received.
        session.goAway(errorCode: 0, lastStreamID: session.lastReceivedStreamID, debugData: Reason.shutdown.body())
        flushOutput(context: context)
    }

    private func perform(_ actions: [ConnectionAction], context: ChannelHandlerContext) {
        for action in actions {
            switch action {
            case .goAway(let errorCode, let lastStreamID, let debugData):
                logger.info("sending GOAWAY", metadata: ["error-code": "\(errorCode)", "debug": "\(debugData)"])
                session.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData)
            case .close:
                closeAfterWrite = true
            case .setMaxConcurrentStreams(let value):
                session.submitMaxConcurrentStreams(value)
            case .drop:
                logger.info("scenario: dropping the connection")
                close(context: context, because: "connection dropped by the scenario before the request ended")
                return
            }
        }
    }

    private func flushOutput(context: ChannelHandlerContext) {
        guard !finished, peerSpeaksHTTP2 else { return }
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
        if closeAfterWrite || session.isFinished {
            finish(because: closeAfterWrite ? "connection closed by the server before the request ended" : "connection closed before the request ended")
            closeAfterPendingWrites(context: context)
        }
    }

    /// Closes once everything written so far has reached the socket: closing at once would discard writes
    /// still queued in the channel (answers a client is waiting for, a GOAWAY).
    private func closeAfterPendingWrites(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// A client that does not speak HTTP/2 (no `h2` in ALPN, or plain HTTP/1.1): say so plainly, then close.
    private func refuseNonHTTP2Client(context: ChannelHandlerContext, looksLikeHTTP1: Bool) {
        logger.info("closing provider connection: client does not speak HTTP/2", metadata: ["http1": "\(looksLikeHTTP1)"])
        finish(because: "connection closed: client does not speak HTTP/2")
        guard looksLikeHTTP1 else {
            context.close(promise: nil)
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
        finish(because: reason)
        context.close(promise: nil)
    }

    /// Ends the session once, recording every request that will now never be answered.
    private func finish(because reason: String) {
        guard !finished else { return }
        finished = true
        for case .abandoned(let streamID, let request, let because) in session.close(because: reason) {
            processor.recordAbandoned(request, streamID: streamID, connection: connection, because: because)
        }
        for recording in delayedRecordings.values.sorted(by: { $0.streamID < $1.streamID }) {
            processor.commit(recording, sent: false)
        }
        delayedRecordings.removeAll()
        processor.scenario.current.connectionClosed(connection.id)
        if counted {
            tracker.closed()
            logger.debug("provider connection closed")
        }
    }
}
