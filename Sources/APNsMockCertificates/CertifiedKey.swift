import Foundation
import X509

/// A certificate together with its private key, and both in PEM form.
///
/// The PEM text is produced once, at construction, so that reading it later cannot fail.
package struct CertifiedKey: Sendable {
    package let certificate: Certificate
    package let privateKey: Certificate.PrivateKey
    /// The certificate as a PEM `CERTIFICATE` block.
    package let certificatePEM: String
    /// The private key as a PEM block: PKCS#8 (`PRIVATE KEY`) for EC, RSA and Ed25519 keys.
    package let privateKeyPEM: String

    /// Pairs a certificate with its key, checking that they belong together.
    package init(certificate: Certificate, privateKey: Certificate.PrivateKey) throws(APNsMockCertificateError) {
        guard privateKey.publicKey == certificate.publicKey else {
            throw .privateKeyDoesNotMatchCertificate(subject: certificate.subject.description)
        }
        self.certificate = certificate
        self.privateKey = privateKey
        self.certificatePEM = try APNsMockCertificateError.converting(APNsMockCertificateError.pemEncodingFailed) {
            try certificate.serializeAsPEM().pemString
        }
        self.privateKeyPEM = try PKCS8.normalizedPEM(of: privateKey)
    }

    /// Parses a PEM certificate and PEM private key (PKCS#8, SEC1 `EC PRIVATE KEY` or PKCS#1 RSA).
    package init(certificatePEM: String, privateKeyPEM: String) throws(APNsMockCertificateError) {
        let certificate = try PEMCertificates.first(in: certificatePEM)
        let privateKey = try APNsMockCertificateError.converting(APNsMockCertificateError.invalidPrivateKeyPEM) {
            try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        }
        try self.init(certificate: certificate, privateKey: privateKey)
    }

    /// Reads and parses a PEM certificate file and a PEM private-key file.
    package init(certificateFile: String, privateKeyFile: String) throws(APNsMockCertificateError) {
        try self.init(
            certificatePEM: PEMFiles.read(certificateFile),
            privateKeyPEM: PEMFiles.read(privateKeyFile)
        )
    }
}
