import Foundation
import SwiftASN1
import X509

/// What an APNs client certificate grants: its topics and environments, read the way APNs reads them.
///
/// Tolerant by design, so certificates from Apple, from this module and from openssl scripts all work:
/// - subject attributes may be UTF8String, PrintableString, IA5String, T61String, BMPString or
///   UniversalString; unknown attributes and extensions are ignored;
/// - a topics extension that does not parse is skipped rather than failing the certificate;
/// - DER bytes swift-certificates rejects (duplicate extensions, exotic key algorithms) are read with a
///   minimal fallback parser that needs only the subject and the extensions.
package struct ClientCertificateIdentity: Sendable, Equatable {
    /// The string in ``environments`` for the development (sandbox) service.
    package static let development = APNsCertificateEnvironment.development.rawValue
    /// The string in ``environments`` for the production service.
    package static let production = APNsCertificateEnvironment.production.rawValue

    /// The subject as an RFC 4514 string, most specific attribute last in the encoding and therefore
    /// first here: `C=US,O=apns-mock,OU=TEAM000001,CN=Apple Push Services: com.example.app,UID=com.example.app`.
    /// Attribute types without an RFC 4514 short name are written as dotted OIDs with a `#`-hex DER value.
    package var subject: String
    /// The subject `CN`, e.g. `Apple Push Services: com.example.app`.
    package var commonName: String?
    /// The subject `UID` (the bundle ID).
    package var uid: String?
    /// The subject `OU` (Apple's team ID).
    package var teamID: String?
    /// The topics the certificate may push to: the `UID` first, then the topics of the
    /// `1.2.840.113635.100.6.3.6` extension, then those of the VoIP `.3.4` extension; without
    /// duplicates, in that order.
    ///
    /// Without a `UID`, the bundle ID is taken from a common name of the form `…Push Services: <bundle>`.
    /// A `.3.4` extension with no topic strings in it (older VoIP certificates) contributes `<bundle>.voip`.
    package var topics: [String]
    /// `"development"` and/or `"production"`, from the `.3.1` and `.3.2` extensions (their values are
    /// not inspected). A certificate with neither extension is read from its common name
    /// (`Apple Development IOS Push Services: …` → development, `Apple Production IOS Push Services: …`
    /// → production) and is otherwise treated as valid for **both**, as a universal certificate would be.
    package var environments: Set<String>

    package init(
        subject: String,
        commonName: String?,
        uid: String?,
        teamID: String? = nil,
        topics: [String],
        environments: Set<String>
    ) {
        self.subject = subject
        self.commonName = commonName
        self.uid = uid
        self.teamID = teamID
        self.topics = topics
        self.environments = environments
    }

    /// Reads the identity of a parsed certificate. Never fails: missing parts are `nil` or empty.
    package init(certificate: Certificate) {
        self.init(subject: certificate.subject, extensions: certificate.extensions.map { ($0.oid, $0.value) })
    }

    /// Reads the identity of a DER certificate, e.g. the peer certificate NIOSSL hands over.
    package init(derBytes: [UInt8]) throws(APNsMockCertificateError) {
        if let certificate = try? Certificate(derEncoded: derBytes) {
            self.init(certificate: certificate)
            return
        }
        let (subject, extensions) = try RawCertificate.subjectAndExtensions(derBytes)
        self.init(subject: subject, extensions: extensions)
    }

    /// Reads the identity of the first certificate in PEM text.
    package init(pem: String) throws(APNsMockCertificateError) {
        self.init(certificate: try PEMCertificates.first(in: pem))
    }

    /// Whether ``environments`` contains `environment`.
    package func allows(_ environment: APNsCertificateEnvironment) -> Bool {
        environments.contains(environment.rawValue)
    }

    /// The topic APNs uses when a request has no `apns-topic`: the only topic of a single-topic
    /// certificate; `nil` for a multi-topic certificate (APNs answers `MissingTopic`).
    package var defaultTopic: String? {
        topics.count == 1 ? topics[0] : nil
    }

    init(subject: DistinguishedName, extensions: [(oid: ASN1ObjectIdentifier, value: ArraySlice<UInt8>)]) {
        let attributes = subject.flatMap { $0 }
        func first(_ type: ASN1ObjectIdentifier) -> String? {
            attributes.first { $0.type == type }.flatMap { ASN1Text.string(of: $0.value) }
        }
        let commonName = first(.RDNAttributeType.commonName)
        let uid = first(APNsCertificateOID.userID)
        let bundleID = uid ?? commonName.flatMap(Self.bundleID(fromCommonName:))

        var topics: [String] = []
        var seen: Set<String> = []
        func add(_ topic: String) {
            if !topic.isEmpty, seen.insert(topic).inserted { topics.append(topic) }
        }
        bundleID.map(add)
        for (oid, value) in extensions where oid == APNsCertificateOID.topics {
            TopicsExtension.topics(in: value).forEach(add)
        }
        for (oid, value) in extensions where oid == APNsCertificateOID.voipTopics {
            let listed = TopicsExtension.topics(in: value)
            if listed.isEmpty, let bundleID, !bundleID.hasSuffix(".voip") {
                add(bundleID + ".voip")
            } else {
                listed.forEach(add)
            }
        }

        var environments: Set<String> = []
        for environment in APNsCertificateEnvironment.allCases
        where extensions.contains(where: { $0.oid == environment.extensionOID }) {
            environments.insert(environment.rawValue)
        }
        if environments.isEmpty {
            environments = Self.environments(fromCommonName: commonName)
        }

        self.init(
            subject: RFC4514.string(subject),
            commonName: commonName,
            uid: uid,
            teamID: first(.RDNAttributeType.organizationalUnitName),
            topics: topics,
            environments: environments
        )
    }

    /// `Apple Push Services: com.x` / `Apple Development IOS Push Services: com.x` → `com.x`.
    static func bundleID(fromCommonName commonName: String) -> String? {
        guard let range = commonName.range(of: "Push Services: ") else { return nil }
        let bundle = commonName[range.upperBound...].trimmingCharacters(in: .whitespaces)
        return bundle.isEmpty ? nil : bundle
    }

    static func environments(fromCommonName commonName: String?) -> Set<String> {
        let name = commonName ?? ""
        if name.hasPrefix("Apple Development IOS Push Services") || name.hasPrefix("Apple Development Mac Push Services") {
            return [development]
        }
        if name.hasPrefix("Apple Production IOS Push Services") || name.hasPrefix("Apple Production Mac Push Services") {
            return [production]
        }
        return [development, production]
    }
}

/// Reading the topic list out of the `.3.6` (and `.3.4`) extension value.
enum TopicsExtension {
    /// Apple's layout is `SEQUENCE { topic, SEQUENCE { label }, topic, SEQUENCE { label }, ... }`.
    /// Read tolerantly: every string directly inside the outer SEQUENCE (or SET) is a topic; a
    /// constructed node right after a topic is that topic's label wrapper and is skipped; any other
    /// constructed node is searched the same way (a nested topic group). A bare string is one topic.
    /// Malformed values give no topics.
    static func topics(in value: ArraySlice<UInt8>) -> [String] {
        guard let node = (try? DER.parse(value)) ?? (try? BER.parse(value)) else { return [] }
        return topics(in: node, depth: 0)
    }

    private static func topics(in node: ASN1Node, depth: Int) -> [String] {
        switch node.content {
        case .primitive:
            return ASN1Text.string(of: node).map { [$0] } ?? []
        case .constructed(let children):
            guard depth < 8 else { return [] }
            var result: [String] = []
            var previousWasTopic = false
            for child in children {
                if let topic = ASN1Text.string(of: child) {
                    result.append(topic)
                    previousWasTopic = true
                } else if case .constructed = child.content {
                    if !previousWasTopic {
                        result += topics(in: child, depth: depth + 1)
                    }
                    previousWasTopic = false
                } else {
                    previousWasTopic = false
                }
            }
            return result
        }
    }
}

/// Decoding of the ASN.1 character-string types that appear in certificates.
enum ASN1Text {
    static func string(of value: RelativeDistinguishedName.Attribute.Value) -> String? {
        if let string = String(value) { return string }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(ASN1Any(value))) != nil,
            let node = try? DER.parse(serializer.serializedBytes)
        else { return nil }
        return string(of: node)
    }

    /// The text of a primitive string node, or `nil` for other types and invalid contents.
    static func string(of node: ASN1Node) -> String? {
        guard case .primitive(let bytes) = node.content else { return nil }
        switch node.identifier {
        case .utf8String, .printableString, .ia5String, .visibleString, .numericString:
            return String(validating: bytes, as: UTF8.self)
        case .teletexString:
            // T.61 in theory, Latin-1 in practice.
            return String(bytes.map { Character(Unicode.Scalar($0)) })
        case .bmpString:
            guard bytes.count % 2 == 0 else { return nil }
            let units = stride(from: bytes.startIndex, to: bytes.endIndex, by: 2).map {
                UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
            }
            return String(validating: units, as: UTF16.self)
        case .universalString:
            guard bytes.count % 4 == 0 else { return nil }
            var scalars = String.UnicodeScalarView()
            for offset in stride(from: bytes.startIndex, to: bytes.endIndex, by: 4) {
                let code = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(code) else { return nil }
                scalars.append(scalar)
            }
            return String(scalars)
        default:
            return nil
        }
    }
}

/// RFC 4514 string representation of distinguished names.
enum RFC4514 {
    /// The short names RFC 4514 section 3 lists.
    static let shortNames: [ASN1ObjectIdentifier: String] = [
        .RDNAttributeType.commonName: "CN",
        .RDNAttributeType.localityName: "L",
        .RDNAttributeType.stateOrProvinceName: "ST",
        .RDNAttributeType.organizationName: "O",
        .RDNAttributeType.organizationalUnitName: "OU",
        .RDNAttributeType.countryName: "C",
        .RDNAttributeType.streetAddress: "STREET",
        .RDNAttributeType.domainComponent: "DC",
        APNsCertificateOID.userID: "UID",
    ]

    /// RDNs last-to-first separated by `,`; multi-valued RDNs joined with `+`.
    static func string(_ name: DistinguishedName) -> String {
        name.reversed().map { rdn in
            rdn.map(attribute).joined(separator: "+")
        }.joined(separator: ",")
    }

    static func attribute(_ attribute: RelativeDistinguishedName.Attribute) -> String {
        if let key = shortNames[attribute.type], let text = ASN1Text.string(of: attribute.value) {
            return key + "=" + escape(text)
        }
        var serializer = DER.Serializer()
        let der = (try? serializer.serialize(ASN1Any(attribute.value))).map { serializer.serializedBytes } ?? []
        let key = shortNames[attribute.type] ?? attribute.type.description
        return key + "=#" + der.map { String(format: "%02X", $0) }.joined()
    }

    /// RFC 4514 section 2.4 escaping.
    static func escape(_ value: String) -> String {
        var result = ""
        let scalars = Array(value.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "\"", "+", ",", ";", "<", ">", "\\":
                result += "\\" + String(scalar)
            case "#" where index == 0:
                result += "\\#"
            case " " where index == 0 || index == scalars.count - 1:
                result += "\\ "
            case "\u{0}":
                result += "\\00"
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// A minimal certificate reader for DER swift-certificates refuses: only the subject and extensions.
enum RawCertificate {
    private static let extensionsTag = ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)

    static func subjectAndExtensions(
        _ der: [UInt8]
    ) throws(APNsMockCertificateError) -> (DistinguishedName, [(oid: ASN1ObjectIdentifier, value: ArraySlice<UInt8>)]) {
        try APNsMockCertificateError.converting(APNsMockCertificateError.invalidCertificateDER) {
            let root = try (try? DER.parse(der)) ?? BER.parse(der)
            guard case .constructed(let certificateFields) = root.content,
                let tbs = certificateFields.first(where: { _ in true }),
                case .constructed(let tbsFields) = tbs.content
            else {
                throw APNsMockCertificateError.invalidCertificateDER(reason: "not a certificate SEQUENCE")
            }
            // version [0]? serial, signature, issuer, validity, subject, spki, [1]? [2]? [3]?
            var universal: [ASN1Node] = []
            var extensionsNode: ASN1Node?
            for field in tbsFields {
                if field.identifier.tagClass == .universal {
                    universal.append(field)
                } else if field.identifier == extensionsTag {
                    extensionsNode = field
                }
            }
            guard universal.count >= 6 else {
                throw APNsMockCertificateError.invalidCertificateDER(reason: "TBSCertificate has too few fields")
            }
            let subject = try DistinguishedName(derEncoded: universal[4])
            var extensions: [(oid: ASN1ObjectIdentifier, value: ArraySlice<UInt8>)] = []
            if let extensionsNode,
                case .constructed(let wrapper) = extensionsNode.content,
                let list = wrapper.first(where: { _ in true }),
                case .constructed(let entries) = list.content
            {
                for entry in entries {
                    // Skip entries that do not parse rather than losing the whole certificate.
                    if let parsed = try? Certificate.Extension(derEncoded: entry) {
                        extensions.append((parsed.oid, parsed.value))
                    }
                }
            }
            return (subject, extensions)
        }
    }
}
