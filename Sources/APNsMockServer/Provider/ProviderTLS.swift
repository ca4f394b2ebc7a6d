import NIOSSL

/// The provider port's TLS: TLS 1.2 or later, ALPN `h2`, the configured certificate.
///
/// A client that offers no ALPN at all still gets HTTP/2 (aioapns does this, and Apple serves it), so
/// nothing here insists on a negotiated protocol.
enum ProviderTLS {
    /// - Parameter clientCAPath: when set, a client certificate is asked for (not required) and must chain to it.
    static func makeContext(certificatePath: String, privateKeyPath: String, clientCAPath: String?) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // h2 first (the server's preference wins); http/1.1 is listed only so an HTTP/1-only client is
        // recognised at the handshake and told plainly to use HTTP/2, instead of being sent binary frames.
        configuration.applicationProtocols = ["h2", "http/1.1"]
        if let clientCAPath {
            configuration.certificateVerification = .optionalVerification
            configuration.trustRoots = .file(clientCAPath)
        }
        return try NIOSSLContext(configuration: configuration)
    }

    /// `--admin-tls`: the admin API over TLS with the server's own certificate (so a client trusting the mock's CA
    /// trusts it), HTTP/1.1 only.
    static func makeAdminConfiguration(certificatePath: String, privateKeyPath: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }
}
