import APNsMock
import Logging
import NIOCore

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
    /// Upper bound on bytes taken from libnghttp2 per write; the loop goes on while the channel is writable.
    private static let drainChunk = 256 * 1024

    init(
        processor: NotificationProcessor,
        settings: HTTP2Settings,
        limits: HTTP2RequestLimits,
        tracker: ConnectionTracker,
        logger: Logger
    ) {
        self.processor = processor
        self.tracker = tracker
        self.session = HTTP2ServerSession(settings: settings, limits: limits)
        self.connection = ConnectionInfo(id: tracker.nextConnectionID())
        self.logger = logger
        self.logger[metadataKey: "connection"] = "\(connection.id)"
    }

    func handlerAdded(context: ChannelHandlerContext) {
        session.submitInitialSettings()
        if context.channel.isActive { connectionBecameActive(context: context) }
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
        flushOutput(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        let buffer = unwrapInboundIn(data)
        let result = buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(HTTP2SessionError) in try session.receive(bytes) }
        }
        switch result {
        case .success(let events):
            handle(events)
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

    private func handle(_ events: [HTTP2SessionEvent]) {
        for event in events {
            switch event {
            case .request(let streamID, let request):
                let response = processor.process(request, streamID: streamID, connection: connection, ids: &ids)
                logger.debug(
                    "request",
                    metadata: [
                        "stream": "\(streamID)", "path": "\(request.path)", "status": "\(response.status)",
                        "reason": "\(response.reason?.rawValue ?? "-")",
                    ]
                )
                session.respond(streamID: streamID, with: response)
            case .abandoned(let streamID, let request, let because):
                processor.recordAbandoned(request, streamID: streamID, connection: connection, because: because)
            }
        }
    }

    private func flushOutput(context: ChannelHandlerContext) {
        guard !finished else { return }
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
            handle(session.takeEvents())
            guard drained > 0 else { break }
            context.writeAndFlush(wrapOutboundOut(output), promise: nil)
        }
        if session.isFinished {
            close(context: context, because: "connection closed before the request ended")
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
        handle(session.close(because: reason))
        if counted {
            tracker.closed()
            logger.debug("provider connection closed")
        }
    }
}
