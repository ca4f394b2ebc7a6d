/// How long a provider connection may take to start and may stay silent, and how many may be open at once.
/// A provider that keeps a busy connection open for days is never cut off: only silence counts.
package struct ProviderConnectionLimits: Sendable, Equatable {
    /// TLS handshake and the HTTP/2 preface must be done within this, or the connection is closed.
    package var handshakeTimeout: Duration = .seconds(10)
    /// A connection that has sent nothing for this long gets GOAWAY `{"reason":"IdleTimeout"}` (APNs' reason; its
    /// own timeout is undocumented, so the default is generous) and is closed. `nil`: never.
    package var idleTimeout: Duration? = .seconds(3600)
    /// Connections open at once; one more is closed as soon as it is accepted.
    package var maxConnections = 10_000

    package init() {}
}
