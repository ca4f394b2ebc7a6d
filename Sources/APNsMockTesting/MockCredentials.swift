import APNsMockCertificates
import Foundation
import NIOSSL

/// What a provider needs to talk to a ``MockAPNs``: the CA to trust, the key to sign provider tokens with, and
/// client certificates for certificate-based authentication, as PEM text and as NIOSSL values.
public struct MockCredentials: Sendable {
    /// Which development client certificate to present.
    public enum ClientCertificate: Sendable {
        /// Allowed in the development (sandbox) environment only.
        case development
        /// Allowed in the production environment only.
        case production
    }

    /// The directory the mock reads them from, laid out as `Certs/`.
    public let directory: String
    /// The development CA that signed the server certificate (PEM `CERTIFICATE`): what clients trust.
    public let caCertificatePEM: String
    /// The provider-token signing key (PKCS#8 PEM, as Apple's `AuthKey_<KEYID>.p8`).
    public let signingKeyPEM: String
    /// The signing key's id (the token's `kid`).
    public let keyID: String
    /// The team id the mock expects in tokens (`iss`).
    public let teamID: String
    /// The development client certificate (PEM), topics `com.example.app` and its VoIP and complication topics.
    public let developmentClientCertificatePEM: String
    /// The development client certificate's private key (PKCS#8 PEM).
    public let developmentClientPrivateKeyPEM: String
    /// The production client certificate (PEM).
    public let productionClientCertificatePEM: String
    /// The production client certificate's private key (PKCS#8 PEM).
    public let productionClientPrivateKeyPEM: String

    private let signingKey: SigningKeyFile

    /// The CA as NIOSSL trust roots, for `TLSConfiguration.trustRoots`.
    public func trustRoots() throws -> NIOSSLTrustRoots {
        .certificates(try NIOSSLCertificate.fromPEMBytes(Array(caCertificatePEM.utf8)))
    }

    /// A client TLS configuration that trusts the mock, presenting a client certificate when asked
    /// (e.g. for AsyncHTTPClient: `HTTPClient.Configuration(tlsConfiguration: …)`).
    public func clientTLSConfiguration(presenting certificate: ClientCertificate? = nil) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = try trustRoots()
        if let certificate {
            let (certificatePEM, keyPEM) = switch certificate {
            case .development: (developmentClientCertificatePEM, developmentClientPrivateKeyPEM)
            case .production: (productionClientCertificatePEM, productionClientPrivateKeyPEM)
            }
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
        }
        return tls
    }

    /// A provider token (JWT, ES256) signed with ``signingKeyPEM``.
    public func providerToken(issuedAt: Date = Date()) throws -> String {
        try signingKey.providerToken(teamID: teamID, issuedAt: issuedAt)
    }

    /// A fresh development set written to `directory`.
    static func generate(in directory: String, teamID: String) throws -> MockCredentials {
        try DevelopmentCredentials.generate().write(to: directory)
        return try load(from: directory, teamID: teamID)
    }

    /// The set in `directory` (as `apns-mock certs generate` writes it).
    static func load(from directory: String, teamID: String) throws -> MockCredentials {
        func read(_ name: String) throws -> String {
            try String(contentsOfFile: URL(fileURLWithPath: directory).appendingPathComponent(name).path, encoding: .utf8)
        }
        guard let signingKey = try SigningKeyFile.loadAll(in: directory).first else {
            throw MockCredentialsMissing(directory: directory, file: "AuthKey_<KEYID>.p8")
        }
        typealias Name = DevelopmentCredentials.FileName
        return MockCredentials(
            directory: directory,
            caCertificatePEM: try read(Name.caCertificate),
            signingKeyPEM: signingKey.pem,
            keyID: signingKey.keyID,
            teamID: teamID,
            developmentClientCertificatePEM: try read(Name.clientCertificate(.development)),
            developmentClientPrivateKeyPEM: try read(Name.clientPrivateKey(.development)),
            productionClientCertificatePEM: try read(Name.clientCertificate(.production)),
            productionClientPrivateKeyPEM: try read(Name.clientPrivateKey(.production)),
            signingKey: signingKey
        )
    }
}

/// A credentials directory lacks a file the mock needs.
public struct MockCredentialsMissing: Error, Sendable, CustomStringConvertible {
    /// The directory that was given.
    public var directory: String
    /// The file it lacks.
    public var file: String

    public var description: String {
        "no \(file) in '\(directory)': use a directory made by 'apns-mock certs generate --out DIR', or .generated"
    }
}
