import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import APNsMockCertificates

@Suite("DevelopmentCertificateSet")
struct DevelopmentCertificateSetTests {
    let set = sharedSet

    @Test func pemBlocksHaveExpectedTypes() {
        #expect(set.caCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(set.serverCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        // PKCS#8, not SEC1 "EC PRIVATE KEY".
        #expect(set.caPrivateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(set.serverPrivateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }

    @Test func everythingParsesBackAndKeysMatch() throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)
        let caKey = try Certificate.PrivateKey(pemEncoded: set.caPrivateKeyPEM)
        let serverKey = try Certificate.PrivateKey(pemEncoded: set.serverPrivateKeyPEM)

        #expect(ca.publicKey == caKey.publicKey)
        #expect(server.publicKey == serverKey.publicKey)
        #expect(ca.publicKey != server.publicKey)
        #expect(P256.Signing.PublicKey(ca.publicKey) != nil)
        #expect(P256.Signing.PublicKey(server.publicKey) != nil)
        #expect(ca.signatureAlgorithm == .ecdsaWithSHA256)
        #expect(server.signatureAlgorithm == .ecdsaWithSHA256)
    }

    @Test func caCertificateProfile() throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let commonNames = ca.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
        #expect(commonNames.map { String(describing: $0.value) } == ["apns-mock Development CA"])
        #expect(ca.issuer == ca.subject)
        #expect(ca.version == .v3)

        #expect(try ca.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(ca.extensions[oid: .X509ExtensionID.basicConstraints]?.critical == true)

        let keyUsage = try #require(try ca.extensions.keyUsage)
        #expect(keyUsage == KeyUsage(keyCertSign: true, cRLSign: true))
        #expect(ca.extensions[oid: .X509ExtensionID.keyUsage]?.critical == true)

        let ski = try #require(try ca.extensions.subjectKeyIdentifier)
        #expect(ski == SubjectKeyIdentifier(hash: ca.publicKey))
    }

    @Test func serverCertificateProfile() throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)
        let commonNames = server.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }
        #expect(commonNames.map { String(describing: $0.value) } == ["apns-mock"])
        #expect(server.issuer == ca.subject)

        #expect(try server.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try server.extensions.keyUsage == KeyUsage(digitalSignature: true))
        #expect(try server.extensions.extendedKeyUsage == ExtendedKeyUsage([.serverAuth]))

        let aki = try #require(try server.extensions.authorityKeyIdentifier)
        let caSKI = try #require(try ca.extensions.subjectKeyIdentifier)
        #expect(aki.keyIdentifier == caSKI.keyIdentifier)

        // A 20-byte serial with the top bit set would encode as 21 octets, over RFC 5280's limit.
        #expect(server.serialNumber.bytes.count <= 20)
        #expect(server.serialNumber != ca.serialNumber)
    }

    @Test func serverSubjectAlternativeNamesCoverEveryAPNsHost() throws {
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)
        let names = Set(try #require(try server.extensions.subjectAlternativeNames))
        let expected: Set<GeneralName> = [
            .dnsName("localhost"),
            .dnsName("api.sandbox.push.apple.com"),
            .dnsName("api.push.apple.com"),
            .dnsName("api.development.push.apple.com"),
            .dnsName("apns-mock"),
            .dnsName("*.apns.localhost"),
            .dnsName("*.apns.staging"),
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
        ]
        #expect(names == expected)
    }

    @Test func validityPeriods() throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)

        for certificate in [ca, server] {
            // Back-dated by the clock-skew allowance and truncated to whole seconds.
            #expect(certificate.notValidBefore <= fixedNow)
            #expect(fixedNow.timeIntervalSince(certificate.notValidBefore) <= CertificateValidity.clockSkewAllowance + 1)
        }

        #expect(server.notValidAfter.timeIntervalSince(server.notValidBefore) == 825 * 86_400)

        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let caLifetime = calendar.dateComponents([.year, .month, .day, .second], from: ca.notValidBefore, to: ca.notValidAfter)
        #expect(caLifetime.year == 20)
        #expect(caLifetime.month == 0)
        #expect(caLifetime.day == 0)
        #expect(caLifetime.second == 0)
    }

    @Test func serverVerifiesAgainstCAForLocalhostAndLoopbackIP() async throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)

        let byName = await validate(server, root: ca, hostname: "localhost", ip: nil, at: fixedNow)
        #expect(byName.isValid, "\(byName)")
        let byIPv4 = await validate(server, root: ca, hostname: nil, ip: "127.0.0.1", at: fixedNow)
        #expect(byIPv4.isValid, "\(byIPv4)")
        let byIPv6 = await validate(server, root: ca, hostname: nil, ip: "::1", at: fixedNow)
        #expect(byIPv6.isValid, "\(byIPv6)")
        let byAPNsHost = await validate(server, root: ca, hostname: "api.sandbox.push.apple.com", ip: nil, at: fixedNow)
        #expect(byAPNsHost.isValid, "\(byAPNsHost)")
    }

    @Test func serverDoesNotVerifyForOtherNamesTimesOrCAs() async throws {
        let ca = try Certificate(pemEncoded: set.caCertificatePEM)
        let server = try Certificate(pemEncoded: set.serverCertificatePEM)
        let otherCA = try CertificateAuthority.generate(now: fixedNow).certificate

        #expect(await !validate(server, root: ca, hostname: "example.com", ip: nil, at: fixedNow).isValid)
        #expect(await !validate(server, root: ca, hostname: nil, ip: "10.0.0.1", at: fixedNow).isValid)
        #expect(await !validate(server, root: otherCA, hostname: "localhost", ip: nil, at: fixedNow).isValid)
        let afterExpiry = fixedNow + 826 * 86_400
        #expect(await !validate(server, root: ca, hostname: "localhost", ip: nil, at: afterExpiry).isValid)
    }

    @Test func writeCreatesDirectoryAndWorldReadableFiles() throws {
        let base = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let directory = base.appendingPathComponent("nested/certs").path

        let paths = try set.write(to: directory)

        #expect(paths.map { URL(fileURLWithPath: $0).lastPathComponent } == ["ca.pem", "ca-key.pem", "server.pem", "server-key.pem"])
        let expectedContents = [set.caCertificatePEM, set.caPrivateKeyPEM, set.serverCertificatePEM, set.serverPrivateKeyPEM]
        for (path, expected) in zip(paths, expectedContents) {
            // As generated, ended with a newline so that PEM files can be concatenated.
            let written = try String(contentsOfFile: path, encoding: .utf8)
            #expect(written.hasSuffix("\n"))
            #expect(written.trimmingCharacters(in: .newlines) == expected.trimmingCharacters(in: .newlines))
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o644, "\(path)")
        }

        // Overwriting an existing set must work (regeneration at start-up).
        let again = try DevelopmentCertificateSet.generate(now: fixedNow)
        try again.write(to: directory)
        #expect(try String(contentsOfFile: paths[2], encoding: .utf8).trimmingCharacters(in: .newlines)
            == again.serverCertificatePEM.trimmingCharacters(in: .newlines))
    }

    @Test func writeReportsUnwritableDirectory() throws {
        let base = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let file = base.appendingPathComponent("not-a-directory").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))

        let error = #expect(throws: APNsMockCertificateError.self) {
            try set.write(to: file)
        }
        guard case .directoryCreationFailed(let path, _) = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
        #expect(path == file)
    }
}
