import Foundation

/// The certificates apns-mock needs to serve TLS: a development CA and a server certificate it signed.
///
/// Clients trust `ca.pem`; the server presents `server.pem` / `server-key.pem`.
package struct DevelopmentCertificateSet: Sendable {
    /// File names used by ``write(to:)``.
    package enum FileName {
        package static let caCertificate = "ca.pem"
        package static let caPrivateKey = "ca-key.pem"
        package static let serverCertificate = "server.pem"
        package static let serverPrivateKey = "server-key.pem"
    }

    /// The CA that signed ``server``.
    package let authority: CertificateAuthority
    /// The TLS server certificate and its key.
    package let server: CertifiedKey

    /// Pairs an authority with a server certificate; no check is made that one signed the other.
    package init(authority: CertificateAuthority, server: CertifiedKey) {
        self.authority = authority
        self.server = server
    }

    /// Generates a fresh CA (ECDSA P-256, CN "apns-mock Development CA", 20 years) and a server
    /// certificate signed by it (P-256, CN "apns-mock", 825 days, ``ServerCertificateProfile/apnsMock`` names).
    ///
    /// Both validity windows start an hour before `now` (``CertificateValidity/clockSkewAllowance``).
    package static func generate(now: Date = Date()) throws(APNsMockCertificateError) -> DevelopmentCertificateSet {
        try generate(authority: CertificateAuthority.generate(now: now), now: now)
    }

    /// Issues a new server certificate from an existing CA, so a CA already trusted by clients can be kept.
    package static func generate(
        authority: CertificateAuthority,
        serverProfile: ServerCertificateProfile = .apnsMock,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> DevelopmentCertificateSet {
        DevelopmentCertificateSet(
            authority: authority,
            server: try authority.issueServerCertificate(serverProfile, now: now)
        )
    }

    /// The CA certificate (PEM `CERTIFICATE`).
    package var caCertificatePEM: String { authority.certificatePEM }
    /// The CA private key (PKCS#8 PEM `PRIVATE KEY`).
    package var caPrivateKeyPEM: String { authority.privateKeyPEM }
    /// The server certificate (PEM `CERTIFICATE`).
    package var serverCertificatePEM: String { server.certificatePEM }
    /// The server private key (PKCS#8 PEM `PRIVATE KEY`).
    package var serverPrivateKeyPEM: String { server.privateKeyPEM }

    /// Writes `ca.pem`, `ca-key.pem`, `server.pem` and `server-key.pem` into `directory`, creating it
    /// if needed and replacing existing files. All files get mode 0644 (see ``PEMFiles``).
    ///
    /// - Returns: The written paths, in the order above.
    @discardableResult
    package func write(to directory: String) throws(APNsMockCertificateError) -> [String] {
        try PEMFiles.createDirectory(directory)
        let files = [
            (FileName.caCertificate, caCertificatePEM),
            (FileName.caPrivateKey, caPrivateKeyPEM),
            (FileName.serverCertificate, serverCertificatePEM),
            (FileName.serverPrivateKey, serverPrivateKeyPEM),
        ]
        var written: [String] = []
        for (name, contents) in files {
            let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
            try PEMFiles.write(contents, to: path)
            written.append(path)
        }
        return written
    }
}
