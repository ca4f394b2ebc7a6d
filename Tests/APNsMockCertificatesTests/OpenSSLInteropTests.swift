import ChildProcesses
import Foundation
import Testing

@testable import APNsMockCertificates

private let opensslPath = "/usr/bin/openssl"

/// Cross-checks the generated files with an independent X.509 implementation.
/// openssl is only a test oracle here; the module itself never runs it.
@Suite(
    "OpenSSL interoperability",
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: opensslPath),
        "openssl not found at /usr/bin/openssl; skipping the OpenSSL cross-check"
    )
)
struct OpenSSLInteropTests {
    /// The shared set is dated in the past; openssl verifies against the real clock, so use a fresh one.
    let set: DevelopmentCertificateSet
    let directory: URL

    init() throws {
        set = try DevelopmentCertificateSet.generate()
        directory = try makeTemporaryDirectory()
        try set.write(to: directory.path)
    }

    private func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    @Test func serverVerifiesAgainstCA() async throws {
        defer { cleanUp() }
        let plain = try await openssl("verify", "-CAfile", path("ca.pem"), path("server.pem"))
        #expect(plain.status == 0, "\(plain.output)")
        #expect(plain.output.contains("server.pem: OK"), "\(plain.output)")

        let strict = try await openssl(
            "verify", "-CAfile", path("ca.pem"), "-purpose", "sslserver", "-x509_strict",
            "-verify_hostname", "api.sandbox.push.apple.com", path("server.pem")
        )
        #expect(strict.status == 0, "\(strict.output)")

        let byIP = try await openssl("verify", "-CAfile", path("ca.pem"), "-verify_ip", "127.0.0.1", path("server.pem"))
        #expect(byIP.status == 0, "\(byIP.output)")

        let wrongHost = try await openssl("verify", "-CAfile", path("ca.pem"), "-verify_hostname", "example.com", path("server.pem"))
        #expect(wrongHost.status != 0, "\(wrongHost.output)")
    }

    @Test func serverCertificateText() async throws {
        defer { cleanUp() }
        let result = try await openssl("x509", "-noout", "-text", "-in", path("server.pem"))
        #expect(result.status == 0, "\(result.output)")
        let text = result.output
        for fragment in [
            "Version: 3",
            "ecdsa-with-SHA256",
            "apns-mock Development CA",
            "CN = apns-mock",
            "prime256v1",
            "DNS:localhost",
            "DNS:api.sandbox.push.apple.com",
            "DNS:api.push.apple.com",
            "DNS:api.development.push.apple.com",
            "DNS:apns-mock",
            "IP Address:127.0.0.1",
            "CA:FALSE",
            "TLS Web Server Authentication",
            "Digital Signature",
            "X509v3 Authority Key Identifier",
            "X509v3 Subject Key Identifier",
        ] {
            #expect(text.contains(fragment), "missing \"\(fragment)\" in:\n\(text)")
        }
        // OpenSSL 3.0 spells ::1 out in full; other versions may compress it.
        #expect(text.contains("IP Address:0:0:0:0:0:0:0:1") || text.contains("IP Address:::1"), "\(text)")
        #expect(text.contains("X509v3 Key Usage: critical"), "\(text)")
        #expect(text.contains("X509v3 Basic Constraints: critical"), "\(text)")
    }

    @Test func caCertificateText() async throws {
        defer { cleanUp() }
        let result = try await openssl("x509", "-noout", "-text", "-in", path("ca.pem"))
        #expect(result.status == 0, "\(result.output)")
        let text = result.output
        for fragment in [
            "Subject: CN = apns-mock Development CA",
            "Issuer: CN = apns-mock Development CA",
            "X509v3 Basic Constraints: critical",
            "CA:TRUE",
            "X509v3 Key Usage: critical",
            "Certificate Sign, CRL Sign",
            "X509v3 Subject Key Identifier",
        ] {
            #expect(text.contains(fragment), "missing \"\(fragment)\" in:\n\(text)")
        }
    }

    @Test func privateKeysArePKCS8AndMatchTheirCertificates() async throws {
        defer { cleanUp() }
        for (certificate, key) in [("ca.pem", "ca-key.pem"), ("server.pem", "server-key.pem")] {
            let check = try await openssl("pkey", "-in", path(key), "-noout", "-check")
            #expect(check.status == 0, "\(key): \(check.output)")
            let keyPublic = try await openssl("pkey", "-in", path(key), "-pubout")
            let certificatePublic = try await openssl("x509", "-in", path(certificate), "-noout", "-pubkey")
            #expect(keyPublic.status == 0 && certificatePublic.status == 0)
            #expect(keyPublic.output == certificatePublic.output, "\(key) does not match \(certificate)")
        }
    }

    /// A CA key converted by openssl to SEC1 ("EC PRIVATE KEY") must still load, since users may bring their own.
    @Test func loadsOpenSSLConvertedSEC1Key() async throws {
        defer { cleanUp() }
        let sec1 = try await openssl("ec", "-in", path("ca-key.pem"))
        #expect(sec1.status == 0, "\(sec1.output)")
        let pem = sec1.output.components(separatedBy: "\n")
            .drop { !$0.hasPrefix("-----BEGIN EC PRIVATE KEY-----") }
            .joined(separator: "\n")
        #expect(pem.hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        let authority = try CertificateAuthority(certificatePEM: set.caCertificatePEM, privateKeyPEM: pem)
        #expect(authority.certificate == set.authority.certificate)
    }

    @Test func expiryMatchesOpenSSL() async throws {
        defer { cleanUp() }
        let result = try await openssl("x509", "-noout", "-enddate", "-dateopt", "iso_8601", "-in", path("server.pem"))
        #expect(result.status == 0, "\(result.output)")
        // "notAfter=2027-12-01 12:34:56Z"
        let value = result.output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "notAfter=", with: "")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withSpaceBetweenDateAndTime, .withTime, .withColonSeparatorInTime, .withTimeZone]
        let expected = try #require(formatter.date(from: value), "could not parse \(value)")
        #expect(try CertificateExpiry.notValidAfter(pemCertificate: set.serverCertificatePEM) == expected)
    }

    private func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs openssl and returns its exit status with stdout and stderr combined.
private func openssl(_ arguments: String...) async throws -> (status: Int32, output: String) {
    let result = try await ChildProcess.run(opensslPath, arguments, includingErrors: true)
    return (result.exit.status, result.output)
}
