/// Everything that can go wrong while creating, loading or writing apns-mock certificates.
///
/// Underlying library errors are kept as text so the error stays `Equatable` and `Sendable`
/// and its description can be printed verbatim at start-up.
package enum APNsMockCertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Key generation, extension encoding or signing failed inside swift-crypto / swift-certificates.
    case certificateCreationFailed(reason: String)
    /// A certificate or key could not be encoded as PEM.
    case pemEncodingFailed(reason: String)
    /// The text given as a certificate is not a parseable PEM `CERTIFICATE`.
    case invalidCertificatePEM(reason: String)
    /// The text given as a private key is not a parseable PEM private key (PKCS#8, SEC1 or PKCS#1).
    case invalidPrivateKeyPEM(reason: String)
    /// The private key's public half differs from the certificate's public key.
    case privateKeyDoesNotMatchCertificate(subject: String)
    /// A certificate used as an issuer lacks `basicConstraints CA:TRUE`.
    case notACertificateAuthority(subject: String)
    /// A subject-alternative-name IP address is neither IPv4 nor IPv6 text.
    case invalidIPAddress(String)
    /// A file could not be read.
    case fileReadFailed(path: String, reason: String)
    /// The output directory could not be created.
    case directoryCreationFailed(path: String, reason: String)
    /// A file could not be written or its permissions could not be set.
    case fileWriteFailed(path: String, reason: String)
    /// The bytes given as a certificate are not a parseable DER X.509 certificate.
    case invalidCertificateDER(reason: String)
    /// A ``ClientCertificateProfile`` cannot be issued (empty bundle ID, no environment, ...).
    case invalidClientCertificateProfile(reason: String)
    /// A provider-token key ID is not 10 upper-case letters or digits, like Apple's.
    case invalidKeyID(String)
    /// A `.p8` file's name does not carry a key ID (`AuthKey_<KEYID>.p8`) and none was given.
    case missingKeyID(path: String)
    /// The text given as a provider-token signing key is not a P-256 private key in PEM.
    case invalidSigningKey(reason: String)
    /// A PKCS#12 (`.p12`) file could not be built.
    case pkcs12EncodingFailed(reason: String)

    package var description: String {
        switch self {
        case .certificateCreationFailed(let reason):
            "Could not create certificate: \(reason)"
        case .pemEncodingFailed(let reason):
            "Could not encode PEM: \(reason)"
        case .invalidCertificatePEM(let reason):
            "Not a valid PEM certificate: \(reason)"
        case .invalidPrivateKeyPEM(let reason):
            "Not a valid PEM private key: \(reason)"
        case .privateKeyDoesNotMatchCertificate(let subject):
            "The private key does not belong to the certificate \"\(subject)\""
        case .notACertificateAuthority(let subject):
            "The certificate \"\(subject)\" is not a CA (basicConstraints CA:TRUE is missing)"
        case .invalidIPAddress(let text):
            "\"\(text)\" is not an IPv4 or IPv6 address"
        case .fileReadFailed(let path, let reason):
            "Could not read \(path): \(reason)"
        case .directoryCreationFailed(let path, let reason):
            "Could not create directory \(path): \(reason)"
        case .fileWriteFailed(let path, let reason):
            "Could not write \(path): \(reason)"
        case .invalidCertificateDER(let reason):
            "Not a valid DER certificate: \(reason)"
        case .invalidClientCertificateProfile(let reason):
            "Invalid client certificate profile: \(reason)"
        case .invalidKeyID(let keyID):
            "\"\(keyID)\" is not a valid key ID (10 upper-case letters or digits, like Apple's)"
        case .missingKeyID(let path):
            "No key ID for \(path): name the file AuthKey_<KEYID>.p8 or pass the key ID explicitly"
        case .invalidSigningKey(let reason):
            "Not a valid P-256 signing key: \(reason)"
        case .pkcs12EncodingFailed(let reason):
            "Could not build the PKCS#12 file: \(reason)"
        }
    }
}

extension APNsMockCertificateError {
    /// Runs `body`, converting any library error with `wrap` so public API throws only this type.
    static func converting<T>(
        _ wrap: (String) -> APNsMockCertificateError,
        _ body: () throws -> T
    ) throws(APNsMockCertificateError) -> T {
        do {
            return try body()
        } catch let error as APNsMockCertificateError {
            throw error
        } catch {
            throw wrap(String(describing: error))
        }
    }
}
