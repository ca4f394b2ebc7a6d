import NIOCore

/// How long a provider connection may take to start and may stay silent, and how many may be open at once.
/// A provider that keeps a busy connection open for days is never cut off: only silence counts, and a connection
/// whose streams wait for their answers is not silent.
package struct ProviderConnectionLimits: Sendable, Equatable {
    /// TLS handshake and the HTTP/2 preface must be done within this, or the connection is closed.
    package var handshakeTimeout: Duration = .seconds(10)
    /// A connection that has sent nothing for this long, and has no stream waiting for its answer, gets GOAWAY `{"reason":"IdleTimeout"}` (APNs' reason; its
    /// own timeout is undocumented, so the default is generous) and is closed. `nil`: never.
    package var idleTimeout: Duration? = .seconds(3600)
    /// Connections open at once; one more is closed as soon as it is accepted.
    package var maxConnections = 10_000

    package init() {}
}

extension ProviderConnectionLimits {
    /// The timeouts, as the connection's state machine reads them.
    var timeouts: ProviderConnectionHandler.StateMachine.Limits {
        .init(handshakeTimeout: TimeAmount(handshakeTimeout), idleTimeout: idleTimeout.map(TimeAmount.init))
    }
}

extension TimeAmount {
    /// A duration as NIO schedules it, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
