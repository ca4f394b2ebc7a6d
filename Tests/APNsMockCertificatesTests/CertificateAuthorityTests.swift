import Foundation
import Testing
import X509

@testable import APNsMockCertificates

@Suite("CertificateAuthority")
struct CertificateAuthorityTests {
    @Test func reloadedAuthorityIssuesCertificatesThatVerify() async throws {
        let original = sharedSet
        let reloaded = try CertificateAuthority(
            certificatePEM: original.caCertificatePEM,
            privateKeyPEM: original.caPrivateKeyPEM
        )
        #expect(reloaded.certificate == original.authority.certificate)

        let renewed = try DevelopmentCertificateSet.generate(authority: reloaded, now: fixedNow)
        #expect(renewed.caCertificatePEM == original.caCertificatePEM)
        #expect(renewed.serverCertificatePEM != original.serverCertificatePEM)

        let server = try Certificate(pemEncoded: renewed.serverCertificatePEM)
        let result = await validate(server, root: original.authority.certificate, hostname: "localhost", ip: nil, at: fixedNow)
        #expect(result.isValid, "\(result)")
    }

    @Test func loadsFromWrittenFiles() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try sharedSet.write(to: directory.path)

        let authority = try CertificateAuthority(
            certificateFile: directory.appendingPathComponent(DevelopmentCertificateSet.FileName.caCertificate).path,
            privateKeyFile: directory.appendingPathComponent(DevelopmentCertificateSet.FileName.caPrivateKey).path
        )
        #expect(authority.certificatePEM == sharedSet.caCertificatePEM)
    }

    @Test func rejectsMismatchedKey() {
        #expect(throws: APNsMockCertificateError.privateKeyDoesNotMatchCertificate(
            subject: sharedSet.authority.certificate.subject.description
        )) {
            try CertificateAuthority(certificatePEM: sharedSet.caCertificatePEM, privateKeyPEM: sharedSet.serverPrivateKeyPEM)
        }
    }

    @Test func rejectsNonCACertificate() {
        #expect(throws: APNsMockCertificateError.notACertificateAuthority(
            subject: sharedSet.server.certificate.subject.description
        )) {
            try CertificateAuthority(certificatePEM: sharedSet.serverCertificatePEM, privateKeyPEM: sharedSet.serverPrivateKeyPEM)
        }
    }

    @Test func rejectsGarbage() {
        let notPEM = #expect(throws: APNsMockCertificateError.self) {
            try CertificateAuthority(certificatePEM: "hello", privateKeyPEM: sharedSet.caPrivateKeyPEM)
        }
        #expect(notPEM?.isInvalidCertificatePEM == true)

        let badKey = #expect(throws: APNsMockCertificateError.self) {
            try CertificateAuthority(
                certificatePEM: sharedSet.caCertificatePEM,
                privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
            )
        }
        guard case .invalidPrivateKeyPEM = badKey else {
            Issue.record("unexpected error \(String(describing: badKey))")
            return
        }

        let missing = #expect(throws: APNsMockCertificateError.self) {
            try CertificateAuthority(certificateFile: "/nonexistent/ca.pem", privateKeyFile: "/nonexistent/ca-key.pem")
        }
        guard case .fileReadFailed(let path, _) = missing else {
            Issue.record("unexpected error \(String(describing: missing))")
            return
        }
        #expect(path == "/nonexistent/ca.pem")
    }

    @Test func issueRejectsExtensionsTheAuthorityOwns() throws {
        let duplicate = try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) }
        let subject = try DistinguishedName { CommonName("intruder") }
        let error = #expect(throws: APNsMockCertificateError.self) {
            try sharedSet.authority.issue(
                subject: subject,
                publicKey: sharedSet.server.certificate.publicKey,
                validity: .days(1, from: fixedNow),
                extensions: duplicate
            )
        }
        guard case .certificateCreationFailed = error else {
            Issue.record("unexpected error \(String(describing: error))")
            return
        }
    }

    @Test func invalidIPAddressInProfileIsReported() {
        let profile = ServerCertificateProfile(commonName: "x", dnsNames: [], ipAddresses: ["300.1.1.1"])
        #expect(throws: APNsMockCertificateError.invalidIPAddress("300.1.1.1")) {
            try sharedSet.authority.issueServerCertificate(profile, now: fixedNow)
        }
    }

    @Test func errorsDescribeThemselves() {
        let error = APNsMockCertificateError.fileWriteFailed(path: "/tmp/x.pem", reason: "disk full")
        #expect(error.description == "Could not write /tmp/x.pem: disk full")
    }
}

@Suite("CertificateExpiry")
struct CertificateExpiryTests {
    @Test func readsNotValidAfter() throws {
        let expected = sharedSet.server.certificate.notValidAfter
        #expect(try CertificateExpiry.notValidAfter(pemCertificate: sharedSet.serverCertificatePEM) == expected)
    }

    @Test func usesTheFirstCertificateOfAChain() throws {
        let chain = sharedSet.serverCertificatePEM + sharedSet.caCertificatePEM
        #expect(try CertificateExpiry.notValidAfter(pemCertificate: chain) == sharedSet.server.certificate.notValidAfter)
    }

    @Test func warnsWithinThirtyDays() throws {
        let pem = sharedSet.serverCertificatePEM
        let expiry = try CertificateExpiry.notValidAfter(pemCertificate: pem)
        #expect(try !CertificateExpiry.isExpiring(pemCertificate: pem, now: fixedNow))
        #expect(try !CertificateExpiry.isExpiring(pemCertificate: pem, now: expiry - 31 * 86_400))
        #expect(try CertificateExpiry.isExpiring(pemCertificate: pem, now: expiry - 29 * 86_400))
        #expect(try CertificateExpiry.isExpiring(pemCertificate: pem, now: expiry + 1))
    }

    @Test func rejectsTextWithoutCertificate() {
        let error = #expect(throws: APNsMockCertificateError.self) {
            try CertificateExpiry.notValidAfter(pemCertificate: sharedSet.serverPrivateKeyPEM)
        }
        #expect(error?.isInvalidCertificatePEM == true)
    }
}

extension APNsMockCertificateError {
    var isInvalidCertificatePEM: Bool {
        if case .invalidCertificatePEM = self { return true }
        return false
    }
}
