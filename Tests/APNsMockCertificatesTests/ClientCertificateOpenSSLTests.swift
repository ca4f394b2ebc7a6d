import Foundation
import Testing
import X509

@testable import APNsMockCertificates

/// Client certificates against OpenSSL: certificates made by `openssl req -x509 -addext …` (as users'
/// scripts make them) must read correctly, and ours must look right to OpenSSL.
@Suite("Client certificates and OpenSSL", .enabled(if: Tools.hasOpenSSL, "openssl not found at /usr/bin/openssl"))
struct ClientCertificateOpenSSLTests {
    /// An openssl config with the subject and the `.3.6` topic sequences the `-addext` options refer to.
    private static let config = """
        [ req ]
        distinguished_name = dn
        prompt = no
        string_mask = utf8only

        [ dn ]
        UID = com.example.openssl
        CN = Apple Push Services: com.example.openssl
        OU = ABCDE12345
        O = Example Org
        C = US

        [ apns_topics ]
        t.0 = UTF8String:com.example.openssl
        t.1 = SEQWRAP,UTF8String:app
        t.2 = UTF8String:com.example.openssl.voip
        t.3 = SEQWRAP,UTF8String:voip
        t.4 = UTF8String:com.example.openssl.complication
        t.5 = SEQWRAP,UTF8String:complication

        [ printable_topics ]
        t.0 = PRINTABLESTRING:com.example.printable
        t.1 = SEQWRAP,PRINTABLESTRING:app
        t.2 = IA5STRING:com.example.printable.voip-ptt
        t.3 = SEQWRAP,UTF8String:voip-ptt
        """

    private func makeCertificate(
        in directory: URL,
        name: String,
        keyAlgorithm: [String] = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
        subject: String? = nil,
        stringMask: String = "utf8only",
        extensions: [String]
    ) async throws -> (pem: String, der: [UInt8]) {
        let configPath = directory.appendingPathComponent("\(name).cnf").path
        try Self.config.replacingOccurrences(of: "string_mask = utf8only", with: "string_mask = \(stringMask)")
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let certificatePath = directory.appendingPathComponent("\(name).pem").path
        var arguments = ["req", "-x509", "-new", "-nodes", "-config", configPath, "-days", "30",
                         "-keyout", directory.appendingPathComponent("\(name)-key.pem").path,
                         "-out", certificatePath] + keyAlgorithm
        if let subject { arguments += ["-subj", subject] }
        for addext in extensions { arguments += ["-addext", addext] }
        let result = try await Tools.run(Tools.openssl, arguments)
        try #require(result.status == 0, "openssl req failed: \(result.output)")
        let derPath = directory.appendingPathComponent("\(name).der").path
        let convert = try await Tools.runOpenSSL("x509", "-in", certificatePath, "-outform", "DER", "-out", derPath)
        try #require(convert.status == 0, "\(convert.output)")
        return (
            try String(contentsOfFile: certificatePath, encoding: .utf8),
            Array(try Data(contentsOf: URL(fileURLWithPath: derPath)))
        )
    }

    @Test func readsAnAppleStyleCertificateMadeByOpenSSL() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await makeCertificate(in: directory, name: "apple-style", extensions: [
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature",
            "extendedKeyUsage=clientAuth,1.2.840.113635.100.4.14",
            "1.2.840.113635.100.6.3.1=ASN1:NULL",
            "1.2.840.113635.100.6.3.2=ASN1:NULL",
            "1.2.840.113635.100.6.3.6=ASN1:SEQUENCE:apns_topics",
            // Unknown Apple extensions, one of them critical.
            "1.2.840.113635.100.6.1.16=critical,DER:0C03616263",
            "1.2.840.113635.100.6.3.3=ASN1:NULL",
        ])

        let expected = ClientCertificateIdentity(
            subject: "C=US,O=Example Org,OU=ABCDE12345,CN=Apple Push Services: com.example.openssl,UID=com.example.openssl",
            commonName: "Apple Push Services: com.example.openssl",
            uid: "com.example.openssl",
            teamID: "ABCDE12345",
            topics: ["com.example.openssl", "com.example.openssl.voip", "com.example.openssl.complication"],
            environments: ["development", "production"]
        )
        #expect(try ClientCertificateIdentity(derBytes: made.der) == expected)
        #expect(try ClientCertificateIdentity(pem: made.pem) == expected)

        // OpenSSL's own RFC 2253 view of the subject agrees with ours.
        let rfc2253 = try await Tools.run(Tools.openssl, ["x509", "-noout", "-subject", "-nameopt", "RFC2253",
                                                    "-in", directory.appendingPathComponent("apple-style.pem").path])
        #expect(rfc2253.output.trimmingCharacters(in: .whitespacesAndNewlines) == "subject=" + expected.subject)
    }

    @Test func readsPrintableStringsAndSingleEnvironment() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await makeCertificate(
            in: directory,
            name: "printable",
            subject: "/CN=Apple Push Services: com.example.printable/O=Printable/C=US",
            stringMask: "default",
            extensions: [
                "1.2.840.113635.100.6.3.2=ASN1:NULL",
                "1.2.840.113635.100.6.3.6=ASN1:SEQUENCE:printable_topics",
            ]
        )
        let certificate = try Certificate(derEncoded: made.der)
        let commonName = try #require(certificate.subject.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName })
        #expect(commonName.value == (try RelativeDistinguishedName.Attribute.Value(printableString: "Apple Push Services: com.example.printable")))

        let identity = try ClientCertificateIdentity(derBytes: made.der)
        #expect(identity.uid == nil)
        #expect(identity.topics == ["com.example.printable", "com.example.printable.voip-ptt"])
        #expect(identity.environments == ["production"])
        #expect(identity.subject == "C=US,O=Printable,CN=Apple Push Services: com.example.printable")
    }

    @Test func readsPushyStyleSingleTopicCertificateWithoutAppleExtensions() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // As Pushy's generate-certs.sh makes its single-topic client certificate.
        let made = try await makeCertificate(
            in: directory,
            name: "pushy",
            keyAlgorithm: ["-newkey", "rsa:2048"],
            subject: "/CN=Apple Push Services: com.eatthepath.pushy/UID=com.eatthepath.pushy",
            extensions: ["extendedKeyUsage=clientAuth"]
        )
        let identity = try ClientCertificateIdentity(derBytes: made.der)
        #expect(identity.uid == "com.eatthepath.pushy")
        #expect(identity.topics == ["com.eatthepath.pushy"])
        #expect(identity.defaultTopic == "com.eatthepath.pushy")
        #expect(identity.environments == ["development", "production"], "no environment extension: both")
        #expect(identity.subject == "UID=com.eatthepath.pushy,CN=Apple Push Services: com.eatthepath.pushy")
    }

    /// A key type swift-certificates does not parse still gives an identity (fallback reader).
    @Test func fallsBackForCertificatesSwiftCertificatesRejects() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let made = try await makeCertificate(
            in: directory,
            name: "ed448",
            keyAlgorithm: ["-newkey", "ed448"],
            extensions: [
                "1.2.840.113635.100.6.3.1=ASN1:NULL",
                "1.2.840.113635.100.6.3.6=ASN1:SEQUENCE:apns_topics",
            ]
        )
        #expect(throws: (any Error).self, "swift-certificates should reject Ed448, else this test does not test the fallback") {
            try Certificate(derEncoded: made.der)
        }
        let identity = try ClientCertificateIdentity(derBytes: made.der)
        #expect(identity.uid == "com.example.openssl")
        #expect(identity.topics == ["com.example.openssl", "com.example.openssl.voip", "com.example.openssl.complication"])
        #expect(identity.environments == ["development"])
        #expect(identity.teamID == "ABCDE12345")
    }

    @Test func issuedClientCertificateVerifiesAndLooksRightToOpenSSL() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // openssl verifies against the real clock, so issue "now".
        let paths = try sharedSet.authority.writeClientCertificate(
            .standard(bundleID: "com.example.app"),
            to: directory.path,
            name: "client"
        )
        let caPath = directory.appendingPathComponent("ca.pem").path
        try sharedSet.caCertificatePEM.write(toFile: caPath, atomically: true, encoding: .utf8)

        let verify = try await Tools.runOpenSSL("verify", "-CAfile", caPath, "-purpose", "sslclient", "-x509_strict", paths[0])
        #expect(verify.status == 0, "\(verify.output)")

        let text = try await Tools.runOpenSSL("x509", "-noout", "-text", "-in", paths[0])
        #expect(text.status == 0)
        for fragment in [
            "Subject: UID = com.example.app, CN = Apple Push Services: com.example.app, OU = TEAM000001, O = apns-mock, C = US",
            "TLS Web Client Authentication",
            "1.2.840.113635.100.6.3.1:",
            "1.2.840.113635.100.6.3.2:",
            "1.2.840.113635.100.6.3.6:",
            "X509v3 Key Usage: critical",
        ] {
            #expect(text.output.contains(fragment), "missing \"\(fragment)\" in:\n\(text.output)")
        }
        #expect(!text.output.contains("1.2.840.113635.100.6.3.1: critical"))

        // The topics extension, as openssl's ASN.1 parser sees it.
        let parse = try await Tools.runOpenSSL("asn1parse", "-in", paths[0], "-strparse", try topicsOffset(paths[0]))
        #expect(parse.status == 0, "\(parse.output)")
        let strings = parse.output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "UTF8STRING        :") else { return nil }
            return String(line[range.upperBound...])
        }
        #expect(strings == ["com.example.app", "app", "com.example.app.voip", "voip", "com.example.app.complication", "complication"])

        let keyCheck = try await Tools.runOpenSSL("pkey", "-in", paths[1], "-noout", "-check")
        #expect(keyCheck.status == 0, "\(keyCheck.output)")
    }

    /// The offset of the `.3.6` extension's OCTET STRING in `openssl asn1parse` output.
    private func topicsOffset(_ path: String) async throws -> String {
        let parse = try await Tools.runOpenSSL("asn1parse", "-in", path)
        let lines = parse.output.split(separator: "\n")
        let index = try #require(lines.firstIndex { $0.contains(":1.2.840.113635.100.6.3.6") })
        // With no critical flag the next line is the OCTET STRING: "  off:d=..  hl=.. l=..  prim: OCTET STRING".
        let octetLine = lines[lines.index(after: index)]
        #expect(octetLine.contains("OCTET STRING"))
        return String(octetLine.split(separator: ":")[0]).trimmingCharacters(in: .whitespaces)
    }
}
