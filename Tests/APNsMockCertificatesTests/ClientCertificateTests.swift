import Crypto
import Foundation
import SwiftASN1
import Testing
@_spi(FixedExpiryValidationTime) import X509

@testable import APNsMockCertificates

/// Issued client certificates: profile, extensions and the identity read back from them.
@Suite("Client certificates")
struct ClientCertificateTests {
    let authority = sharedSet.authority

    @Test func standardProfileRoundTripsThroughTheIdentity() throws {
        let client = try authority.issueClientCertificate(.standard(bundleID: "com.example.app"), now: fixedNow)
        let identity = ClientCertificateIdentity(certificate: client.certificate)

        #expect(identity.uid == "com.example.app")
        #expect(identity.commonName == "Apple Push Services: com.example.app")
        #expect(identity.teamID == ClientCertificateProfile.defaultTeamID)
        #expect(identity.topics == ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
        #expect(identity.environments == ["development", "production"])
        #expect(identity.allows(.development) && identity.allows(.production))
        #expect(identity.defaultTopic == nil)
        #expect(identity.subject == "C=US,O=apns-mock,OU=TEAM000001,CN=Apple Push Services: com.example.app,UID=com.example.app")

        // The same from DER and from PEM.
        #expect(try ClientCertificateIdentity(derBytes: client.certificate.derBytes()) == identity)
        #expect(try ClientCertificateIdentity(pem: client.certificatePEM) == identity)
    }

    @Test(arguments: zip(
        [[.development], [.production], [.development, .production]] as [Set<APNsCertificateEnvironment>],
        [["development"], ["production"], ["development", "production"]] as [Set<String>]
    ))
    func environmentExtensions(environments: Set<APNsCertificateEnvironment>, expected: Set<String>) throws {
        let profile = ClientCertificateProfile(bundleID: "com.example.env", environments: environments)
        let certificate = try authority.issueClientCertificate(profile, now: fixedNow).certificate
        #expect(ClientCertificateIdentity(certificate: certificate).environments == expected)

        for environment in APNsCertificateEnvironment.allCases {
            let found = certificate.extensions[oid: environment.extensionOID]
            if environments.contains(environment) {
                let value = try #require(found)
                #expect(value.critical == false)
                #expect(Array(value.value) == [0x05, 0x00], "ASN.1 NULL")
            } else {
                #expect(found == nil)
            }
        }
    }

    @Test func subjectIsEncodedInApplesOrderWithUTF8Strings() throws {
        let client = try authority.issueClientCertificate(
            ClientCertificateProfile(bundleID: "com.example.order", teamID: "ABCDE12345", organization: "Example, Inc."),
            now: fixedNow
        )
        let attributes = client.certificate.subject.flatMap { $0 }
        #expect(attributes.map(\.type) == [
            APNsCertificateOID.userID,
            .RDNAttributeType.commonName,
            .RDNAttributeType.organizationalUnitName,
            .RDNAttributeType.organizationName,
            .RDNAttributeType.countryName,
        ])
        #expect(attributes[0].value == RelativeDistinguishedName.Attribute.Value(utf8String: "com.example.order"))
        #expect(attributes[4].value == (try RelativeDistinguishedName.Attribute.Value(printableString: "US")))
        // RFC 4514 escaping of the comma.
        #expect(ClientCertificateIdentity(certificate: client.certificate).subject
            == "C=US,O=Example\\, Inc.,OU=ABCDE12345,CN=Apple Push Services: com.example.order,UID=com.example.order")
    }

    @Test func topicsExtensionHasApplesLayout() throws {
        let profile = ClientCertificateProfile(
            bundleID: "com.x",
            additionalTopics: ["com.x.voip", "com.x.complication", "com.x.voip-ptt", "com.x.pushkit.fileprovider", "org.other", "com.x"]
        )
        let certificate = try authority.issueClientCertificate(profile, now: fixedNow).certificate
        let topicsExtension = try #require(certificate.extensions[oid: APNsCertificateOID.topics])
        #expect(topicsExtension.critical == false)

        // SEQUENCE { UTF8String topic, SEQUENCE { UTF8String label }, ... }
        let root = try DER.parse(topicsExtension.value)
        #expect(root.identifier == .sequence)
        guard case .constructed(let children) = root.content else {
            Issue.record("not constructed")
            return
        }
        var pairs: [(String, String)] = []
        var iterator = children.makeIterator()
        while let topicNode = iterator.next() {
            #expect(topicNode.identifier == .utf8String)
            let topic = String(try ASN1UTF8String(derEncoded: topicNode))
            let next = iterator.next()
            let labelNode = try #require(next)
            #expect(labelNode.identifier == .sequence)
            let label = try DER.sequence(labelNode, identifier: .sequence) { nodes in
                String(try ASN1UTF8String(derEncoded: &nodes))
            }
            pairs.append((topic, label))
        }
        #expect(pairs.map(\.0) == ["com.x", "com.x.voip", "com.x.complication", "com.x.voip-ptt", "com.x.pushkit.fileprovider", "org.other"])
        #expect(pairs.map(\.1) == ["app", "voip", "complication", "voip-ptt", "fileprovider", "app"])

        #expect(ClientCertificateIdentity(certificate: certificate).topics == pairs.map(\.0))
    }

    @Test func usagesValidityAndChain() async throws {
        let client = try authority.issueClientCertificate(.standard(bundleID: "com.example.app"), now: fixedNow)
        let certificate = client.certificate
        #expect(try certificate.extensions.extendedKeyUsage == ExtendedKeyUsage([.clientAuth]))
        #expect(try certificate.extensions.keyUsage == KeyUsage(digitalSignature: true))
        #expect(certificate.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
        #expect(certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) == 825 * 86_400)
        #expect(certificate.issuer == authority.certificate.subject)
        #expect(P256.Signing.PublicKey(certificate.publicKey) != nil)

        var verifier = Verifier(rootCertificates: CertificateStore([authority.certificate])) {
            RFC5280Policy(fixedExpiryValidationTime: fixedNow)
        }
        let result = await verifier.validate(leaf: certificate, intermediates: CertificateStore())
        #expect(result.isValid, "\(result)")
    }

    @Test func rsaKeysAreSupported() throws {
        let profile = ClientCertificateProfile(bundleID: "com.example.rsa", keyAlgorithm: .rsa2048)
        let client = try authority.issueClientCertificate(profile, now: fixedNow)
        #expect(isRSA(client.certificate.publicKey))
        #expect(try client.certificate.extensions.keyUsage == KeyUsage(digitalSignature: true, keyEncipherment: true))
        // PKCS#8, not PKCS#1, and it parses back.
        #expect(client.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try CertifiedKey(certificatePEM: client.certificatePEM, privateKeyPEM: client.privateKeyPEM)
        #expect(reloaded.privateKey.publicKey == client.certificate.publicKey)
    }

    @Test func singleTopicCertificateHasADefaultTopic() throws {
        let client = try authority.issueClientCertificate(ClientCertificateProfile(bundleID: "com.single"), now: fixedNow)
        let identity = ClientCertificateIdentity(certificate: client.certificate)
        #expect(identity.topics == ["com.single"])
        #expect(identity.defaultTopic == "com.single")
    }

    @Test func profileFromTopicList() {
        let profile = ClientCertificateProfile(topics: ["com.a", "com.a.voip", "com.a", ""], environments: [.production])
        #expect(profile.bundleID == "com.a")
        #expect(profile.topics == ["com.a", "com.a.voip"])
        #expect(profile.commonName == "Apple Push Services: com.a")
    }

    @Test func topicLabels() {
        #expect(ClientCertificateProfile.topicLabel(for: "com.a", bundleID: "com.a") == "app")
        #expect(ClientCertificateProfile.topicLabel(for: "com.a.voip", bundleID: "com.a") == "voip")
        #expect(ClientCertificateProfile.topicLabel(for: "com.a.complication", bundleID: "com.a") == "complication")
        #expect(ClientCertificateProfile.topicLabel(for: "com.a.voip-ptt", bundleID: "com.a") == "voip-ptt")
        #expect(ClientCertificateProfile.topicLabel(for: "com.a.pushkit.fileprovider", bundleID: "com.a") == "fileprovider")
        #expect(ClientCertificateProfile.topicLabel(for: "com.a.widget", bundleID: "com.a") == "app")
        #expect(ClientCertificateProfile.topicLabel(for: "com.ab.voip", bundleID: "com.a") == "app")
    }

    @Test func invalidProfilesAreRejected() {
        let cases: [ClientCertificateProfile] = [
            ClientCertificateProfile(topics: []),
            ClientCertificateProfile(bundleID: "com.a", environments: []),
            ClientCertificateProfile(bundleID: "com.a", validityDays: 826),
            ClientCertificateProfile(bundleID: "com.a", validityDays: 0),
            ClientCertificateProfile(bundleID: "com.a", additionalTopics: ["com.a voip"]),
        ]
        for profile in cases {
            let error = #expect(throws: APNsMockCertificateError.self) {
                try authority.issueClientCertificate(profile, now: fixedNow)
            }
            guard case .invalidClientCertificateProfile = error else {
                Issue.record("unexpected error \(String(describing: error)) for \(profile)")
                continue
            }
        }
    }

    @Test func environmentListParsing() {
        #expect(APNsCertificateEnvironment.parseList("development") == [.development])
        #expect(APNsCertificateEnvironment.parseList("Sandbox") == [.development])
        #expect(APNsCertificateEnvironment.parseList("prod") == [.production])
        #expect(APNsCertificateEnvironment.parseList("both") == [.development, .production])
        #expect(APNsCertificateEnvironment.parseList("development, production") == [.development, .production])
        #expect(APNsCertificateEnvironment.parseList("staging") == nil)
        #expect(APNsCertificateEnvironment.parseList("") == nil)
    }

    @Test func writeClientCertificateForTopics() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let paths = try authority.writeClientCertificate(
            topics: ["com.cli.app", "com.cli.app.voip"],
            environment: [.production],
            to: directory.appendingPathComponent("out").path,
            now: fixedNow
        )
        #expect(paths.map { URL(fileURLWithPath: $0).lastPathComponent }
            == [
                "client-com.cli.app-production.pem", "client-com.cli.app-production-key.pem", "client-com.cli.app-production.p12",
                "client-com.cli.app-production-bundle.pem",
            ])
        let identity = try ClientCertificateIdentity(pem: String(contentsOfFile: paths[0], encoding: .utf8))
        #expect(identity.topics == ["com.cli.app", "com.cli.app.voip"])
        #expect(identity.environments == ["production"])
        let key = try CertifiedKey(certificateFile: paths[0], privateKeyFile: paths[1])
        #expect(key.certificate.subject == (try ClientCertificateProfile(bundleID: "com.cli.app").subject()))

        let named = try authority.writeClientCertificate(
            topics: ["com.cli.app"],
            environment: [.development, .production],
            to: directory.path,
            name: "mine",
            now: fixedNow
        )
        #expect(named.map { URL(fileURLWithPath: $0).lastPathComponent } == ["mine.pem", "mine-key.pem", "mine.p12", "mine-bundle.pem"])
        // The bundle is the certificate, then its key, each ending with a newline (Python's ssl loads it: see
        // ShippedCredentialsTests).
        #expect(try String(contentsOfFile: named[3], encoding: .utf8)
            == String(contentsOfFile: named[0], encoding: .utf8) + String(contentsOfFile: named[1], encoding: .utf8))
        for path in named {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o644, "\(path)")
        }
    }
}

/// Reading identities from certificates this module did not make.
@Suite("Client certificate identity")
struct ClientCertificateIdentityTests {
    let authority = sharedSet.authority

    /// Issues a certificate with an arbitrary subject and extensions (no APNs profile).
    private func certificate(
        subject: DistinguishedName,
        extensions: [Certificate.Extension]
    ) throws -> Certificate {
        let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
        return try authority.issue(
            subject: subject,
            publicKey: key.publicKey,
            validity: .days(10, from: fixedNow),
            extensions: try Certificate.Extensions(extensions)
        )
    }

    private func der(_ body: (inout DER.Serializer) throws -> Void) throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try body(&serializer)
        return serializer.serializedBytes[...]
    }

    @Test func toleratesOtherStringTypesUnknownExtensionsAndNestedLayouts() throws {
        let subject = try DistinguishedName([
            RelativeDistinguishedName.Attribute(type: APNsCertificateOID.userID, printableString: "com.print"),
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, printableString: "Apple Push Services: com.print"),
        ])
        let topics = try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { outer in
                try outer.serialize(ASN1PrintableString("com.print"))
                try outer.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1PrintableString("app")) }
                try outer.serialize(ASN1IA5String("com.print.voip"))
                try outer.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1UTF8String("voip")) }
                // A nested group without a preceding topic is searched too.
                try outer.appendConstructedNode(identifier: .sequence) { group in
                    try group.serialize(ASN1BMPString("com.print.complication"))
                    try group.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1UTF8String("complication")) }
                }
                try outer.serialize(ASN1Null())
            }
        }
        let certificate = try certificate(subject: subject, extensions: [
            Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 1, 99], critical: true, value: [0x05, 0x00]),
            Certificate.Extension(oid: APNsCertificateOID.topics, critical: true, value: topics),
            Certificate.Extension(oid: APNsCertificateOID.production, critical: true, value: [0x01, 0x01, 0xFF]),
        ])
        let identity = ClientCertificateIdentity(certificate: certificate)
        #expect(identity.uid == "com.print")
        #expect(identity.commonName == "Apple Push Services: com.print")
        #expect(identity.topics == ["com.print", "com.print.voip", "com.print.complication"])
        #expect(identity.environments == ["production"])
    }

    @Test func malformedTopicsExtensionIsIgnored() throws {
        let subject = try DistinguishedName([
            RelativeDistinguishedName.Attribute(type: APNsCertificateOID.userID, utf8String: "com.broken")
        ])
        let certificate = try certificate(subject: subject, extensions: [
            Certificate.Extension(oid: APNsCertificateOID.topics, critical: false, value: [0x30, 0x05, 0x0C]),
            Certificate.Extension(oid: APNsCertificateOID.development, critical: false, value: [0x05, 0x00]),
        ])
        let identity = ClientCertificateIdentity(certificate: certificate)
        #expect(identity.topics == ["com.broken"])
        #expect(identity.environments == ["development"])
    }

    @Test func withoutUIDTheBundleComesFromTheCommonName() throws {
        let subject = try DistinguishedName { CommonName("Apple Production IOS Push Services: com.legacy") }
        let identity = ClientCertificateIdentity(certificate: try certificate(subject: subject, extensions: []))
        #expect(identity.uid == nil)
        #expect(identity.topics == ["com.legacy"])
        #expect(identity.environments == ["production"], "inferred from the legacy common name")
        #expect(identity.defaultTopic == "com.legacy")
    }

    @Test func withoutEnvironmentExtensionsAUniversalCertificateIsBoth() throws {
        let subject = try DistinguishedName { CommonName("Apple Push Services: com.universal") }
        let identity = ClientCertificateIdentity(certificate: try certificate(subject: subject, extensions: []))
        #expect(identity.environments == ["development", "production"])

        let development = try DistinguishedName { CommonName("Apple Development IOS Push Services: com.dev") }
        #expect(ClientCertificateIdentity(certificate: try certificate(subject: development, extensions: [])).environments == ["development"])

        let other = try DistinguishedName { CommonName("some client") }
        let identity2 = ClientCertificateIdentity(certificate: try certificate(subject: other, extensions: []))
        #expect(identity2.topics == [])
        #expect(identity2.environments == ["development", "production"])
    }

    @Test func voipExtension() throws {
        let subject = try DistinguishedName([
            RelativeDistinguishedName.Attribute(type: APNsCertificateOID.userID, utf8String: "com.phone")
        ])
        let flagOnly = try certificate(subject: subject, extensions: [
            Certificate.Extension(oid: APNsCertificateOID.voipTopics, critical: false, value: [0x05, 0x00])
        ])
        #expect(ClientCertificateIdentity(certificate: flagOnly).topics == ["com.phone", "com.phone.voip"])

        let listed = try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { outer in
                try outer.serialize(ASN1UTF8String("com.phone.voip"))
                try outer.appendConstructedNode(identifier: .sequence) { try $0.serialize(ASN1UTF8String("voip")) }
            }
        }
        let withList = try certificate(subject: subject, extensions: [
            Certificate.Extension(oid: APNsCertificateOID.voipTopics, critical: false, value: listed)
        ])
        #expect(ClientCertificateIdentity(certificate: withList).topics == ["com.phone", "com.phone.voip"])
    }

    @Test func rfc4514Formatting() throws {
        let name = try DistinguishedName([
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.countryName, printableString: "US"),
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.organizationName, utf8String: " lead#ing, \"q\"+;<>\\ "),
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, utf8String: "#hash"),
            RelativeDistinguishedName.Attribute(type: .RDNAttributeType.emailAddress, ia5String: "a@b.c"),
        ])
        #expect(RFC4514.string(name)
            == "1.2.840.113549.1.9.1=#16056140622E63,CN=\\#hash,O=\\ lead#ing\\, \\\"q\\\"\\+\\;\\<\\>\\\\\\ ,C=US")

        let multi = DistinguishedName([
            RelativeDistinguishedName([
                RelativeDistinguishedName.Attribute(type: .RDNAttributeType.commonName, utf8String: "a"),
                RelativeDistinguishedName.Attribute(type: APNsCertificateOID.userID, utf8String: "b"),
            ])
        ])
        let text = RFC4514.string(multi)
        #expect(text == "CN=a+UID=b" || text == "UID=b+CN=a", "\(text)")
    }

    @Test func stringDecodingOfEveryTextType() throws {
        func node(_ identifier: ASN1Identifier, _ bytes: [UInt8]) throws -> ASN1Node {
            var serializer = DER.Serializer()
            serializer.appendPrimitiveNode(identifier: identifier) { $0.append(contentsOf: bytes) }
            return try DER.parse(serializer.serializedBytes)
        }
        #expect(ASN1Text.string(of: try node(.utf8String, Array("é".utf8))) == "é")
        #expect(ASN1Text.string(of: try node(.teletexString, [0x63, 0xE9])) == "cé")
        #expect(ASN1Text.string(of: try node(.bmpString, [0x00, 0x63, 0x00, 0xE9])) == "cé")
        #expect(ASN1Text.string(of: try node(.universalString, [0, 0, 0, 0x63, 0, 0x01, 0xF6, 0x00])) == "c😀")
        #expect(ASN1Text.string(of: try node(.bmpString, [0x00])) == nil)
        #expect(ASN1Text.string(of: try node(.octetString, [0x63])) == nil)
        #expect(ASN1Text.string(of: try node(.utf8String, [0xFF])) == nil)
    }

    @Test func garbageDERIsAnError() {
        let error = #expect(throws: APNsMockCertificateError.self) {
            try ClientCertificateIdentity(derBytes: [0x30, 0x03, 0x02, 0x01, 0x01])
        }
        guard case .invalidCertificateDER = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(throws: APNsMockCertificateError.self) {
            try ClientCertificateIdentity(derBytes: [])
        }
    }
}

/// Whether a public key is RSA (the tests do not import `_CryptoExtras`); swift-certificates
/// describes RSA keys as `RSA<bits>.PublicKey`.
func isRSA(_ key: Certificate.PublicKey) -> Bool {
    String(describing: key).hasPrefix("RSA") && P256.Signing.PublicKey(key) == nil
}
