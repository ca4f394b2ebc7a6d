import APNsMock
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// The provider port: accepts TCP connections, wraps them in TLS and gives each its own HTTP/2 handler.
final class ProviderListener: Sendable {
    let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    static func bind(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        sslContext: NIOSSLContext,
        processor: NotificationProcessor,
        settings: HTTP2Settings,
        limits: HTTP2RequestLimits,
        tracker: ConnectionTracker,
        acceptAnyClientCertificate: Bool,
        logger: Logger
    ) async throws -> ProviderListener {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let tls =
                        acceptAnyClientCertificate
                        ? NIOSSLServerHandler(context: sslContext, customVerificationCallback: { _, promise in
                            // Staging with a team's real Apple certificate: its topics and environment are still read.
                            promise.succeed(.certificateVerified)
                        })
                        : NIOSSLServerHandler(context: sslContext)
                    let http2 = ProviderConnectionHandler(
                        processor: processor,
                        settings: settings,
                        limits: limits,
                        tracker: tracker,
                        logger: logger,
                        identify: CertificateIdentityReader.identity(of:)
                    )
                    try channel.pipeline.syncOperations.addHandlers(tls, http2)
                }
            }
            .bind(host: host, port: port)
            .get()
        return ProviderListener(channel: channel)
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    func close() async {
        try? await channel.close()
    }
}
