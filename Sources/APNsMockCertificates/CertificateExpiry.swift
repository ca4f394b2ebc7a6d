import Foundation

/// Expiry checks for PEM certificates, used to warn at start-up before a certificate lapses.
package enum CertificateExpiry {
    /// How close to expiry a certificate must be for ``isExpiring(pemCertificate:within:now:)`` to say so.
    package static let defaultWarningWindow: TimeInterval = 30 * 86_400

    /// The `notAfter` date of the first certificate in `pemCertificate` (the leaf, for a chain file).
    package static func notValidAfter(pemCertificate: String) throws(APNsMockCertificateError) -> Date {
        try PEMCertificates.first(in: pemCertificate).notValidAfter
    }

    /// Whether the first certificate in `pemCertificate` expires before `now + window` (or already has).
    package static func isExpiring(
        pemCertificate: String,
        within window: TimeInterval = defaultWarningWindow,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> Bool {
        try notValidAfter(pemCertificate: pemCertificate) < now + window
    }
}
