import Foundation
import Testing

/// What users do with `Certs/`: concatenate a certificate and its key, or load the shipped bundle.
@Suite("Shipped credentials in Certs/")
struct ShippedCredentialsTests {
    static let pemFiles = [
        "ca.pem", "ca-key.pem", "server.pem", "server-key.pem", "client-development.pem", "client-development-key.pem",
        "client-production.pem", "client-production-key.pem", "client-development-bundle.pem", "client-production-bundle.pem",
        "AuthKey_APNSMOCK01.p8",
    ]

    @Test(arguments: pemFiles)
    func everyPEMFileEndsWithANewline(name: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: TestPaths.certsDirectory + "/" + name))
        #expect(bytes.last == 0x0A, "\(name) must end with a newline, or `cat` runs two armour lines together")
    }

    /// Python's `ssl` loads the certificate and key from `cat cert key > bundle`, and from the shipped bundle.
    @Test(arguments: ["development", "production"])
    func pythonLoadsACatOfCertificateAndKeyAndTheShippedBundle(environment: String) async throws {
        let certs = TestPaths.certsDirectory
        let script = """
            import ssl, sys, tempfile
            certs, environment = sys.argv[1], sys.argv[2]
            joined = tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False)
            for part in ("client-%s.pem", "client-%s-key.pem"):
                joined.write(open(certs + "/" + part % environment, "rb").read())
            joined.close()
            for path in (joined.name, certs + "/client-%s-bundle.pem" % environment):
                ssl.create_default_context().load_cert_chain(path)
            print("ok")
            """
        let result = try await ExternalTool.run("python3", ["-c", script, certs, environment])
        #expect(result.exitCode == 0 && result.stdout == "ok\n", "\(result)")
    }

    /// The legacy PKCS#12 files (for Go's pkcs12 package) are 3DES with a SHA-1 MAC, and hold the same
    /// certificate and key as the PEM files: read with OpenSSL and with Python's cryptography.
    @Test(arguments: ["development", "production"])
    func legacyPKCS12IsTheOldFormWithTheSameCertificate(environment: String) async throws {
        let p12 = TestPaths.certsDirectory + "/client-\(environment)-legacy.p12"
        let info = try await ExternalTool.run("openssl", ["pkcs12", "-in", p12, "-info", "-noout", "-passin", "pass:apns-mock"])
        #expect(info.exitCode == 0, "\(info)")
        let text = info.stdout + info.stderr
        #expect(text.contains("MAC: sha1") && text.contains("pbeWithSHA1And3-KeyTripleDES-CBC") && !text.contains("PBES2"), "\(text)")
        let script = """
            import sys
            from cryptography import x509
            from cryptography.hazmat.primitives.serialization import pkcs12, Encoding, PublicFormat
            key, certificate, _ = pkcs12.load_key_and_certificates(open(sys.argv[1], "rb").read(), b"apns-mock")
            pem = x509.load_pem_x509_certificate(open(sys.argv[2], "rb").read())
            assert certificate == pem, "another certificate"
            assert key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo) == pem.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
            print("ok")
            """
        let result = try await ExternalTool.run("python3", ["-c", script, p12, TestPaths.certsDirectory + "/client-\(environment).pem"])
        #expect(result.exitCode == 0 && result.stdout == "ok\n", "\(result)")
    }

    /// aioapns takes one PEM with the certificate and its key: the shipped bundle, as is.
    @Test func aioapnsPushesWithTheShippedBundle() async throws {
        try await withTestServer(configure: { $0.authMode = .either }) { server in
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/aioapns_push.py").path,
                "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
                "--bundle", TestPaths.certsDirectory + "/client-development-bundle.pem",
                "--topic", TestData.topic, "--token", TestData.deviceToken(),
            ], timeout: .seconds(40))
            #expect(result.exitCode == 0 && result.stdout.contains(#""status": "200""#), "\(result)")
        }
    }
}
