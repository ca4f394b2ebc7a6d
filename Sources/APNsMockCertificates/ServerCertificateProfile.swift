import SwiftASN1
import X509

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What goes into a TLS server certificate: names, lifetime and usages.
package struct ServerCertificateProfile: Sendable, Hashable {
    /// Apple platforms refuse TLS server certificates valid for longer than this.
    package static let maximumValidityDaysAcceptedByApple = 825

    /// The certificate apns-mock serves: every host name an APNs client may be pointed at
    /// (the real APNs hosts, for clients redirected via `/etc/hosts` or DNS), plus loopback, plus one name per team
    /// for `--tenants by-host` (`team-a.apns.localhost`, `team-a.apns.staging`: a wildcard covers one label, and
    /// TLS clients refuse one over a single-label name, hence the two labels after it).
    package static let apnsMock = ServerCertificateProfile(
        commonName: "apns-mock",
        dnsNames: [
            "localhost",
            "api.sandbox.push.apple.com",
            "api.push.apple.com",
            "api.development.push.apple.com",
            "apns-mock",
            "*.apns.localhost",
            "*.apns.staging",
        ],
        ipAddresses: ["127.0.0.1", "::1"]
    )

    /// Subject common name. Informational only: TLS clients match against the SANs.
    package var commonName: String
    /// `dNSName` subject alternative names.
    package var dnsNames: [String]
    /// `iPAddress` subject alternative names, as IPv4 or IPv6 text.
    package var ipAddresses: [String]
    /// Lifetime in days.
    package var validityDays: Int

    package init(
        commonName: String,
        dnsNames: [String],
        ipAddresses: [String],
        validityDays: Int = maximumValidityDaysAcceptedByApple
    ) {
        self.commonName = commonName
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
        self.validityDays = validityDays
    }

    /// The profile-specific extensions: `keyUsage digitalSignature` (critical; ECDSA keys only sign),
    /// `extendedKeyUsage serverAuth` (required by Apple) and the subject alternative names.
    func extensions() throws(APNsMockCertificateError) -> Certificate.Extensions {
        let names = try dnsNames.map { GeneralName.dnsName($0) }
            + ipAddresses.map { text throws(APNsMockCertificateError) in
                GeneralName.ipAddress(ASN1OctetString(contentBytes: try IPAddressBytes.parse(text)[...]))
            }
        return try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
            }
        }
    }
}

/// Text-to-bytes conversion for `iPAddress` SANs, which hold 4 (IPv4) or 16 (IPv6) raw octets.
enum IPAddressBytes {
    static func parse(_ text: String) throws(APNsMockCertificateError) -> [UInt8] {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        throw .invalidIPAddress(text)
    }
}
