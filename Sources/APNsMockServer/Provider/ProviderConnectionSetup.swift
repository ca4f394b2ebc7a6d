import APNsMock
import Logging
import NIOSSL

/// What every connection of a provider listener shares: the engine, the recorder, the HTTP/2 settings and limits,
/// the counters. Made once per listener; each accepted connection gets its own handler from it.
struct ProviderConnectionSetup: Sendable {
    var processor: NotificationProcessor
    var recorder: Recorder
    var settings: HTTP2Settings
    var requestLimits: HTTP2RequestLimits
    var sessionLimits: HTTP2SessionLimits
    var connectionLimits: ProviderConnectionLimits
    var tracker: ConnectionTracker
    var metrics: ProviderMetrics
    var logger: Logger
    var service: ConnectionInfo.Service = .provider
    /// Who a client certificate names (its subject, topics and environment).
    var identify: @Sendable (NIOSSLCertificate) -> CertificateIdentity? = CertificateIdentityReader.identity(of:)
}
