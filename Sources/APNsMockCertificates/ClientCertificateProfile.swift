import SwiftASN1
import X509

/// What goes into an APNs client certificate, modelled on Apple's
/// "Apple Push Notification service SSL (Sandbox & Production)" certificates (fact sheet §5).
///
/// The issued certificate has:
/// - subject `UID=<bundle>, CN=Apple Push Services: <bundle>, OU=<team ID>, O=<organization>, C=US`,
///   in that (Apple's) encoding order; RFC 4514 prints it reversed, `C=US,O=…,OU=…,CN=…,UID=…`.
///   Every attribute but `C` is a UTF8String, as in Apple's certificates.
/// - `keyUsage digitalSignature` (plus `keyEncipherment` for RSA keys), critical; `extendedKeyUsage clientAuth`.
/// - for each environment, Apple's environment extension (`1.2.840.113635.100.6.3.1` development,
///   `.3.2` production), non-critical, value ASN.1 `NULL` — as in Apple-issued certificates.
/// - the topics extension `1.2.840.113635.100.6.3.6`, non-critical:
///   `SEQUENCE { UTF8String topic, SEQUENCE { UTF8String label }, ... }` with the bundle ID first,
///   labelled by ``topicLabel(for:bundleID:)``.
package struct ClientCertificateProfile: Sendable, Hashable {
    /// The key pair generated for the certificate.
    package enum KeyAlgorithm: String, Sendable, Hashable, CaseIterable {
        /// ECDSA P-256: fast to generate, accepted by every current TLS stack. The default.
        case p256
        /// RSA 2048, like the keys Keychain Access creates for Apple's certificate requests.
        case rsa2048
    }

    /// Apple's limit for TLS certificates; Apple's own push certificates last one year.
    package static let maximumValidityDays = 825
    /// A made-up 10-character team ID for the subject's `OU`.
    package static let defaultTeamID = "TEAM000001"
    /// The subject's `O` when none is given.
    package static let defaultOrganization = "apns-mock"
    /// The prefix of the subject common name of Apple's universal push certificates.
    package static let commonNamePrefix = "Apple Push Services: "

    /// The app's bundle ID: the subject `UID` and the first topic.
    package var bundleID: String
    /// Further topics for the `.3.6` extension, e.g. `<bundle>.voip`, `<bundle>.complication`.
    package var additionalTopics: [String]
    /// The environments the certificate is valid for; must not be empty.
    package var environments: Set<APNsCertificateEnvironment>
    /// The subject's `OU`.
    package var teamID: String
    /// The subject's `O` (Apple puts the developer's name here).
    package var organization: String
    /// Lifetime in days, at most ``maximumValidityDays``.
    package var validityDays: Int
    package var keyAlgorithm: KeyAlgorithm

    package init(
        bundleID: String,
        additionalTopics: [String] = [],
        environments: Set<APNsCertificateEnvironment> = Set(APNsCertificateEnvironment.allCases),
        teamID: String = defaultTeamID,
        organization: String = defaultOrganization,
        validityDays: Int = maximumValidityDays,
        keyAlgorithm: KeyAlgorithm = .p256
    ) {
        self.bundleID = bundleID
        self.additionalTopics = additionalTopics
        self.environments = environments
        self.teamID = teamID
        self.organization = organization
        self.validityDays = validityDays
        self.keyAlgorithm = keyAlgorithm
    }

    /// A profile for a list of topics; the first one is the bundle ID.
    /// An empty list gives an empty bundle ID, which issuing rejects.
    package init(
        topics: [String],
        environments: Set<APNsCertificateEnvironment> = Set(APNsCertificateEnvironment.allCases),
        teamID: String = defaultTeamID,
        organization: String = defaultOrganization,
        validityDays: Int = maximumValidityDays,
        keyAlgorithm: KeyAlgorithm = .p256
    ) {
        self.init(
            bundleID: topics.first ?? "",
            additionalTopics: Array(topics.dropFirst()),
            environments: environments,
            teamID: teamID,
            organization: organization,
            validityDays: validityDays,
            keyAlgorithm: keyAlgorithm
        )
    }

    /// The bundle plus its `.voip` and `.complication` topics, as a certificate with
    /// VoIP and WatchKit services enabled has.
    package static func standard(
        bundleID: String,
        environments: Set<APNsCertificateEnvironment> = Set(APNsCertificateEnvironment.allCases)
    ) -> ClientCertificateProfile {
        ClientCertificateProfile(
            bundleID: bundleID,
            additionalTopics: [bundleID + ".voip", bundleID + ".complication"],
            environments: environments
        )
    }

    /// `Apple Push Services: <bundle>`.
    package var commonName: String { Self.commonNamePrefix + bundleID }

    /// The bundle ID followed by the additional topics, without duplicates or empty strings.
    package var topics: [String] {
        var seen: Set<String> = []
        return ([bundleID] + additionalTopics).filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// The label Apple pairs with a topic in the `.3.6` extension, from the topic's suffix after the
    /// bundle ID: none → `app`, `.voip` → `voip`, `.complication` → `complication`, `.voip-ptt` → `voip-ptt`,
    /// `.pushkit.fileprovider` → `fileprovider`. Any other topic is labelled `app`.
    package static func topicLabel(for topic: String, bundleID: String) -> String {
        guard topic.hasPrefix(bundleID + ".") else { return "app" }
        switch topic.dropFirst(bundleID.count + 1) {
        case "voip": return "voip"
        case "complication": return "complication"
        case "voip-ptt": return "voip-ptt"
        case "pushkit.fileprovider": return "fileprovider"
        default: return "app"
        }
    }

    func validate() throws(APNsMockCertificateError) {
        if bundleID.isEmpty {
            throw .invalidClientCertificateProfile(reason: "the bundle ID (first topic) is empty")
        }
        if let bad = topics.first(where: { $0.contains(where: \.isWhitespace) }) {
            throw .invalidClientCertificateProfile(reason: "topic \"\(bad)\" contains white space")
        }
        if environments.isEmpty {
            throw .invalidClientCertificateProfile(reason: "no environment (development, production or both) given")
        }
        if !(1...Self.maximumValidityDays).contains(validityDays) {
            throw .invalidClientCertificateProfile(
                reason: "validity of \(validityDays) days is outside 1...\(Self.maximumValidityDays)"
            )
        }
    }

    /// The subject in Apple's order: UID, CN, OU, O, C.
    func subject() throws(APNsMockCertificateError) -> DistinguishedName {
        try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            try DistinguishedName([
                RelativeDistinguishedName.Attribute(type: APNsCertificateOID.userID, utf8String: bundleID),
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, utf8String: commonName),
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationalUnitName, utf8String: teamID),
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationName, utf8String: organization),
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.countryName, printableString: "US"),
            ])
        }
    }

    /// Key usage, extended key usage, environment and topic extensions.
    func extensions() throws(APNsMockCertificateError) -> Certificate.Extensions {
        let null: [UInt8] = [0x05, 0x00]
        let topicsValue = try encodedTopicsExtension()
        return try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            var extensions = try Certificate.Extensions {
                // RSA keys can also encipher (RSA key transport); ECDSA keys only sign.
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: keyAlgorithm == .rsa2048))
                try ExtendedKeyUsage([.clientAuth])
            }
            for environment in environments.sorted() {
                try extensions.append(Certificate.Extension(oid: environment.extensionOID, critical: false, value: null[...]))
            }
            try extensions.append(Certificate.Extension(oid: APNsCertificateOID.topics, critical: false, value: topicsValue[...]))
            return extensions
        }
    }

    /// `SEQUENCE { UTF8String topic, SEQUENCE { UTF8String label }, ... }`.
    func encodedTopicsExtension() throws(APNsMockCertificateError) -> [UInt8] {
        try APNsMockCertificateError.converting(APNsMockCertificateError.certificateCreationFailed) {
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { coder in
                for topic in topics {
                    try coder.serialize(ASN1UTF8String(topic))
                    try coder.appendConstructedNode(identifier: .sequence) { label in
                        try label.serialize(ASN1UTF8String(Self.topicLabel(for: topic, bundleID: bundleID)))
                    }
                }
            }
            return serializer.serializedBytes
        }
    }
}
