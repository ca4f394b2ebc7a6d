import APNsMock
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import NIOSSL
import Synchronization

/// The provider port: accepts TCP connections, wraps them in TLS and gives each its own HTTP/2 handler.
final class ProviderListener: Sendable {
    let channel: any Channel
    /// Knows every accepted connection, so shutdown can tell each one to finish (GOAWAY) and wait for it.
    /// Dropped after use: its deinit touches an event loop, which must still be running then.
    private let quiescing: Mutex<ServerQuiescingHelper?>

    private init(channel: any Channel, quiescing: ServerQuiescingHelper) {
        self.channel = channel
        self.quiescing = Mutex(quiescing)
    }

    static func bind(
        host: String,
        port: Int,
        group: any EventLoopGroup,
        sslContext: NIOSSLContext,
        acceptAnyClientCertificate: Bool,
        setup: ProviderConnectionSetup
    ) async throws -> ProviderListener {
        let quiescing = ServerQuiescingHelper(group: group)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
                }
            }
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
                    let http2 = ProviderConnectionHandler(setup)
                    try channel.pipeline.syncOperations.addHandlers(tls, http2)
                }
            }
            .bind(host: host, port: port)
            .get()
        return ProviderListener(channel: channel, quiescing: quiescing)
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    /// Stops accepting, sends every connection a GOAWAY, and waits until they have closed or `grace` passes.
    /// - Returns: whether every connection finished within the grace period.
    func shutdownGracefully(grace: Duration) async -> Bool {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        guard let helper = quiescing.withLock({ helper in defer { helper = nil }; return helper }) else { return true }
        helper.initiateShutdown(promise: promise)
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                (try? await promise.futureResult.get()) != nil
            }
            group.addTask {
                try? await Task.sleep(for: grace)
                return false
            }
            let finished = await group.next() ?? false
            group.cancelAll()
            return finished
        }
    }

    /// Closes the port. The quiescing helper goes with it, while the loops still run: a listener closed by a failed
    /// start is released only after the loops have stopped, and the helper's deinit would then ask a stopped loop
    /// to run work (SwiftNIO's "Cannot schedule tasks on an EventLoop that has already shut down").
    func close() async {
        try? await channel.close()
        let helper = quiescing.withLock { helper in defer { helper = nil }; return helper }
        withExtendedLifetime(helper) {}
    }
}
