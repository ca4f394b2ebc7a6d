import Foundation

/// The `notBefore` / `notAfter` window of a certificate.
package struct CertificateValidity: Sendable, Hashable {
    /// How far `notValidBefore` is moved into the past, so that a peer whose clock lags slightly
    /// (a container, a simulator, a CI runner) does not see a brand-new certificate as "not yet valid".
    package static let clockSkewAllowance: TimeInterval = 60 * 60

    package var notValidBefore: Date
    package var notValidAfter: Date

    /// A window with explicit bounds.
    package init(notValidBefore: Date, notValidAfter: Date) {
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
    }

    /// A window of exactly `days` × 24 h that starts ``clockSkewAllowance`` before `now`.
    ///
    /// The length is measured from the back-dated start so the total never exceeds `days`;
    /// Apple platforms reject TLS server certificates whose window is longer than 825 days.
    package static func days(_ days: Int, from now: Date) -> CertificateValidity {
        let start = backdatedStart(now)
        return CertificateValidity(notValidBefore: start, notValidAfter: start + TimeInterval(days) * 86_400)
    }

    /// A window of `years` calendar years (UTC, Gregorian) that starts ``clockSkewAllowance`` before `now`.
    package static func years(_ years: Int, from now: Date) -> CertificateValidity {
        let start = backdatedStart(now)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let end = calendar.date(byAdding: .year, value: years, to: start) ?? start + TimeInterval(years) * 365.25 * 86_400
        return CertificateValidity(notValidBefore: start, notValidAfter: end)
    }

    /// X.509 times carry whole seconds only; truncating up front makes the dates we hold equal to
    /// the ones read back from the encoded certificate.
    private static func backdatedStart(_ now: Date) -> Date {
        Date(timeIntervalSince1970: (now.timeIntervalSince1970 - clockSkewAllowance).rounded(.down))
    }
}
