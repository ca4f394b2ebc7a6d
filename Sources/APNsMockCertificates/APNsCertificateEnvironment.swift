import Foundation
import SwiftASN1

/// Object identifiers Apple puts into APNs client certificates (fact sheet §5).
package enum APNsCertificateOID {
    /// Present (value ASN.1 `NULL`) when the certificate may connect to the development (sandbox) service.
    package static let development: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 1]
    /// Present (value ASN.1 `NULL`) when the certificate may connect to the production service.
    package static let production: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 2]
    /// VoIP topics of Apple's older "VoIP Services" certificates.
    package static let voipTopics: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 4]
    /// The topic list of "Apple Push Services" certificates:
    /// `SEQUENCE { UTF8String topic, SEQUENCE { UTF8String label }, ... }`.
    package static let topics: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 3, 6]
    /// The `UID` (userId, RFC 4519) subject attribute, which holds the bundle ID.
    package static let userID: ASN1ObjectIdentifier = [0, 9, 2342, 19_200_300, 100, 1, 1]
}

/// The APNs service a client certificate may connect to.
///
/// The raw values equal those of `APNsEnvironment` in the `APNsMock` module and the strings in
/// ``ClientCertificateIdentity/environments``, so converting is `init(rawValue:)`.
package enum APNsCertificateEnvironment: String, Sendable, Hashable, CaseIterable, Comparable {
    case development
    case production

    /// The extension that marks a certificate as valid for this environment.
    package var extensionOID: ASN1ObjectIdentifier {
        switch self {
        case .development: APNsCertificateOID.development
        case .production: APNsCertificateOID.production
        }
    }

    package static func < (lhs: APNsCertificateEnvironment, rhs: APNsCertificateEnvironment) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// Parses a command-line spelling: `development` (also `dev`, `sandbox`), `production` (also `prod`),
    /// `both` (also `universal`, `all`), or a comma-separated list of those. Case-insensitive.
    /// Returns `nil` for anything else or an empty list.
    package static func parseList(_ text: String) -> Set<APNsCertificateEnvironment>? {
        var result: Set<APNsCertificateEnvironment> = []
        for part in text.split(separator: ",") {
            switch part.trimmingCharacters(in: .whitespaces).lowercased() {
            case "development", "dev", "sandbox": result.insert(.development)
            case "production", "prod": result.insert(.production)
            case "both", "universal", "all": result.formUnion(allCases)
            default: return nil
            }
        }
        return result.isEmpty ? nil : result
    }

    /// `development`, `production`, or `universal` for both; used in default file names.
    static func fileLabel(for environments: Set<APNsCertificateEnvironment>) -> String {
        guard environments.count == 1, let only = environments.first else { return "universal" }
        return only.rawValue
    }
}
