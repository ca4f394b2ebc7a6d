import Foundation

/// Everything a developer needs to talk to apns-mock, written as one `Certs/` folder:
///
/// | File | What |
/// |---|---|
/// | `ca.pem`, `ca-key.pem` | the development CA clients trust |
/// | `server.pem`, `server-key.pem` | the server's TLS certificate |
/// | `client-development.pem`, `client-development-key.pem`, `client-development.p12` | APNs client certificate for the sandbox |
/// | `client-production.pem`, `client-production-key.pem`, `client-production.p12` | the same for production |
/// | `AuthKey_APNSMOCK01.p8` | provider-token signing key, key ID `APNSMOCK01` |
///
/// The client certificates are for bundle `com.example.app` with the topics `com.example.app`,
/// `com.example.app.voip` and `com.example.app.complication`, team ID `TEAM000001`.
/// The `.p12` files are protected by the password **`apns-mock`** (``pkcs12Password``).
/// All files are mode 0644: these are throw-away development credentials.
package struct DevelopmentCredentials: Sendable {
    /// File names used by ``write(to:pkcs12Password:)``.
    package enum FileName {
        package static let caCertificate = DevelopmentCertificateSet.FileName.caCertificate
        package static let caPrivateKey = DevelopmentCertificateSet.FileName.caPrivateKey
        package static let serverCertificate = DevelopmentCertificateSet.FileName.serverCertificate
        package static let serverPrivateKey = DevelopmentCertificateSet.FileName.serverPrivateKey

        /// `client-development` / `client-production`.
        package static func clientStem(_ environment: APNsCertificateEnvironment) -> String {
            "client-\(environment.rawValue)"
        }
        /// `client-<environment>.pem`.
        package static func clientCertificate(_ environment: APNsCertificateEnvironment) -> String {
            clientStem(environment) + ".pem"
        }
        /// `client-<environment>-key.pem`.
        package static func clientPrivateKey(_ environment: APNsCertificateEnvironment) -> String {
            clientStem(environment) + "-key.pem"
        }
        /// `client-<environment>.p12`.
        package static func clientPKCS12(_ environment: APNsCertificateEnvironment) -> String {
            clientStem(environment) + ".p12"
        }
        /// `AuthKey_<KEYID>.p8`.
        package static func signingKey(keyID: String) -> String {
            SigningKeyFile.fileName(keyID: keyID)
        }
    }

    /// The bundle ID of the default client certificates.
    package static let defaultBundleID = "com.example.app"
    /// The password of every `.p12` apns-mock writes unless told otherwise.
    package static let pkcs12Password = "apns-mock"
    /// The key ID of the default signing key (also ``SigningKeyFile/defaultKeyID``).
    package static let defaultSigningKeyID = SigningKeyFile.defaultKeyID

    /// The CA and the server certificate.
    package let certificates: DevelopmentCertificateSet
    /// Client certificate with only the development environment extension (`.3.1`).
    package let developmentClient: CertifiedKey
    /// Client certificate with only the production environment extension (`.3.2`).
    package let productionClient: CertifiedKey
    /// The provider-token signing key.
    package let signingKey: SigningKeyFile

    package init(
        certificates: DevelopmentCertificateSet,
        developmentClient: CertifiedKey,
        productionClient: CertifiedKey,
        signingKey: SigningKeyFile
    ) {
        self.certificates = certificates
        self.developmentClient = developmentClient
        self.productionClient = productionClient
        self.signingKey = signingKey
    }

    /// Generates a new CA, server certificate, both client certificates and a signing key.
    package static func generate(
        bundleID: String = defaultBundleID,
        signingKeyID: String = defaultSigningKeyID,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> DevelopmentCredentials {
        try generate(
            certificates: DevelopmentCertificateSet.generate(now: now),
            bundleID: bundleID,
            signingKey: SigningKeyFile.generate(keyID: signingKeyID),
            now: now
        )
    }

    /// Issues client certificates from `certificates.authority`; reuses `signingKey` if given
    /// (e.g. one loaded from an existing `AuthKey_*.p8`, so configured clients keep working),
    /// otherwise generates one with key ID ``defaultSigningKeyID``.
    package static func generate(
        certificates: DevelopmentCertificateSet,
        bundleID: String = defaultBundleID,
        signingKey: SigningKeyFile? = nil,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> DevelopmentCredentials {
        let authority = certificates.authority
        let key: SigningKeyFile
        if let signingKey {
            key = signingKey
        } else {
            key = try SigningKeyFile.generate(keyID: defaultSigningKeyID)
        }
        return DevelopmentCredentials(
            certificates: certificates,
            developmentClient: try authority.issueClientCertificate(
                .standard(bundleID: bundleID, environments: [.development]),
                now: now
            ),
            productionClient: try authority.issueClientCertificate(
                .standard(bundleID: bundleID, environments: [.production]),
                now: now
            ),
            signingKey: key
        )
    }

    /// The client certificate for `environment`.
    package func client(for environment: APNsCertificateEnvironment) -> CertifiedKey {
        switch environment {
        case .development: developmentClient
        case .production: productionClient
        }
    }

    /// Writes every file of the table above into `directory`, creating it if needed and replacing
    /// existing files. The `.p12` files get fresh random salts on every write.
    ///
    /// - Returns: The written paths: the four of ``DevelopmentCertificateSet/write(to:)``, then
    ///   certificate, key and `.p12` for development and for production, then the `.p8`.
    @discardableResult
    package func write(
        to directory: String,
        pkcs12Password: String = DevelopmentCredentials.pkcs12Password
    ) throws(APNsMockCertificateError) -> [String] {
        var written = try certificates.write(to: directory)
        for environment in APNsCertificateEnvironment.allCases.sorted() {
            written += try client(for: environment).write(
                to: directory,
                name: FileName.clientStem(environment),
                pkcs12Password: pkcs12Password
            )
        }
        written.append(try signingKey.write(to: directory))
        return written
    }
}
