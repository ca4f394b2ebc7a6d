import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority that can sign leaf certificates: a CA certificate plus its private key.
///
/// apns-mock generates one per installation (see ``DevelopmentCertificateSet``) and can reload it
/// from `ca.pem` / `ca-key.pem` so that a CA the user already trusts keeps signing new certificates.
package struct CertificateAuthority: Sendable {
    /// The subject common name used by ``generate(commonName:now:)`` when none is given.
    package static let defaultCommonName = "apns-mock Development CA"
    /// Long enough that a CA installed into a keychain or simulator never needs replacing.
    package static let defaultValidityYears = 20

    /// The CA certificate and its key.
    package let identity: CertifiedKey

    package var certificate: Certificate { identity.certificate }
    package var privateKey: Certificate.PrivateKey { identity.privateKey }
    package var certificatePEM: String { identity.certificatePEM }
    package var privateKeyPEM: String { identity.privateKeyPEM }

    /// Wraps an existing CA certificate and key, rejecting certificates that are not CAs.
    package init(identity: CertifiedKey) throws(APNsMockCertificateError) {
        guard case .isCertificateAuthority = try? identity.certificate.extensions.basicConstraints else {
            throw .notACertificateAuthority(subject: identity.certificate.subject.description)
        }
        self.identity = identity
    }

    /// Loads a CA from PEM text, e.g. the contents of `ca.pem` and `ca-key.pem`.
    package init(certificatePEM: String, privateKeyPEM: String) throws(APNsMockCertificateError) {
        try self.init(identity: CertifiedKey(certificatePEM: certificatePEM, privateKeyPEM: privateKeyPEM))
    }

    /// Loads a CA from PEM files, e.g. `ca.pem` and `ca-key.pem`.
    package init(certificateFile: String, privateKeyFile: String) throws(APNsMockCertificateError) {
        try self.init(identity: CertifiedKey(certificateFile: certificateFile, privateKeyFile: privateKeyFile))
    }

    /// Creates a self-signed ECDSA P-256 root CA.
    ///
    /// The certificate carries `basicConstraints CA:TRUE` (critical, no path-length limit so
    /// intermediates remain possible), `keyUsage keyCertSign, cRLSign` (critical) and a
    /// `subjectKeyIdentifier` that issued certificates reference.
    package static func generate(
        commonName: String = defaultCommonName,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> CertificateAuthority {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let validity = CertificateValidity.years(defaultValidityYears, from: now)
        let certificate = try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            let name = try DistinguishedName { CommonName(commonName) }
            return try Certificate(
                version: .v3,
                serialNumber: .randomPositive(),
                publicKey: key.publicKey,
                notValidBefore: validity.notValidBefore,
                notValidAfter: validity.notValidAfter,
                issuer: name,
                subject: name,
                extensions: Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                    SubjectKeyIdentifier(hash: key.publicKey)
                },
                issuerPrivateKey: key
            )
        }
        return try CertificateAuthority(identity: CertifiedKey(certificate: certificate, privateKey: key))
    }

    /// Signs a non-CA certificate for `publicKey`.
    ///
    /// The authority owns the chain-related extensions and adds them itself:
    /// `basicConstraints CA:FALSE` (critical), `subjectKeyIdentifier` and `authorityKeyIdentifier`.
    /// `extensions` carries the profile-specific ones (key usage, extended key usage, subject
    /// alternative names, Apple's APNs extensions, ...) and must not repeat the three above.
    package func issue(
        subject: DistinguishedName,
        publicKey: Certificate.PublicKey,
        validity: CertificateValidity,
        extensions profileExtensions: Certificate.Extensions
    ) throws(APNsMockCertificateError) -> Certificate {
        try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            var extensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: authorityKeyIdentifier)
            }
            for profileExtension in profileExtensions {
                try extensions.append(profileExtension)
            }
            return try Certificate(
                version: .v3,
                serialNumber: .randomPositive(),
                publicKey: publicKey,
                notValidBefore: validity.notValidBefore,
                notValidAfter: validity.notValidAfter,
                issuer: certificate.subject,
                subject: subject,
                extensions: extensions,
                issuerPrivateKey: privateKey
            )
        }
    }

    /// Generates a P-256 key and a TLS server certificate for it, described by `profile`.
    package func issueServerCertificate(
        _ profile: ServerCertificateProfile = .apnsMock,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> CertifiedKey {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let subject = try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            try DistinguishedName { CommonName(profile.commonName) }
        }
        let certificate = try issue(
            subject: subject,
            publicKey: key.publicKey,
            validity: .days(profile.validityDays, from: now),
            extensions: profile.extensions()
        )
        return try CertifiedKey(certificate: certificate, privateKey: key)
    }

    /// The CA's own subject key identifier, or — for a loaded CA made elsewhere without one —
    /// the RFC 5280 SHA-1 hash of its key, which is how such an identifier would have been made.
    private var authorityKeyIdentifier: ArraySlice<UInt8> {
        if let ski = try? certificate.extensions.subjectKeyIdentifier {
            return ski.keyIdentifier
        }
        return SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier
    }
}

extension Certificate.SerialNumber {
    /// 16 random bytes with the top bit clear and the next bit set: always positive, always
    /// exactly 16 octets, well inside RFC 5280's 20-octet limit. (`SerialNumber()` uses 20 random
    /// bytes, which becomes 21 octets whenever the top bit is set, and strict verifiers reject that.)
    static func randomPositive() -> Certificate.SerialNumber {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        return Certificate.SerialNumber(bytes: bytes)
    }
}
