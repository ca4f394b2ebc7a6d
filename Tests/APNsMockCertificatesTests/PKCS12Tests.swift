import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import APNsMockCertificates

/// The PKCS#12 writer, checked by two independent readers: OpenSSL and Python's `cryptography`.
@Suite("PKCS#12")
struct PKCS12Tests {
    static let client: CertifiedKey = {
        do {
            return try sharedSet.authority.issueClientCertificate(.standard(bundleID: "com.example.app"), now: fixedNow)
        } catch {
            fatalError("could not issue the client certificate: \(error)")
        }
    }()

    private func write(_ bytes: [UInt8], in directory: URL, name: String = "client.p12") throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Public key of a PEM key or certificate, as openssl prints it.
    private func publicKey(ofPEM text: String, certificate: Bool, in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent(UUID().uuidString + ".pem").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = certificate
            ? try await Tools.runOpenSSL("x509", "-in", path, "-noout", "-pubkey")
            : try await Tools.runOpenSSL("pkey", "-in", path, "-pubout")
        try #require(result.status == 0, "\(result.output)")
        return result.output
    }

    /// Splits openssl PEM output into its blocks.
    private func pemBlocks(_ text: String, type: String) -> [String] {
        let begin = "-----BEGIN \(type)-----", end = "-----END \(type)-----"
        var blocks: [String] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin), let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) {
            blocks.append(String(rest[start.lowerBound..<stop.upperBound]) + "\n")
            rest = rest[stop.upperBound...]
        }
        return blocks
    }

    @Test(
        .enabled(if: Tools.hasOpenSSL, "openssl not found"),
        arguments: ["apns-mock", "", "pässwörd ✓ with spaces"]
    )
    func openSSLReadsItBack(password: String) async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(try Self.client.pkcs12(password: password), in: directory)
        let environment = ["P12_PASSWORD": password]

        let info = try await Tools.runOpenSSL("pkcs12", "-in", path, "-passin", "env:P12_PASSWORD", "-info", "-noout", environment: environment)
        #expect(info.status == 0, "\(info.output)")
        for fragment in ["MAC: sha256", "PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC", "Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC"] {
            #expect(info.output.contains(fragment), "missing \"\(fragment)\" in:\n\(info.output)")
        }

        let dump = try await Tools.runOpenSSL("pkcs12", "-in", path, "-passin", "env:P12_PASSWORD", "-nodes", environment: environment)
        #expect(dump.status == 0, "\(dump.output)")
        #expect(dump.output.contains("friendlyName: Apple Push Services: com.example.app"), "\(dump.output)")
        #expect(dump.output.contains("localKeyID:"), "\(dump.output)")

        let certificates = pemBlocks(dump.output, type: "CERTIFICATE")
        let keys = pemBlocks(dump.output, type: "PRIVATE KEY")
        #expect(certificates.count == 1)
        #expect(keys.count == 1)
        let certificate = try Certificate(pemEncoded: try #require(certificates.first))
        #expect(certificate == Self.client.certificate)
        let key = try Certificate.PrivateKey(pemEncoded: try #require(keys.first))
        #expect(key.publicKey == Self.client.certificate.publicKey)
    }

    @Test(.enabled(if: Tools.hasOpenSSL, "openssl not found"))
    func openSSLRejectsAWrongPassword() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try write(try Self.client.pkcs12(password: "apns-mock"), in: directory)
        let result = try await Tools.runOpenSSL("pkcs12", "-in", path, "-passin", "pass:wrong", "-nodes")
        #expect(result.status != 0)
        #expect(result.output.lowercased().contains("mac verify"), "\(result.output)")
    }

    @Test(.enabled(if: Tools.hasOpenSSL, "openssl not found"))
    func rsaKeyAndChain() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rsa = try sharedSet.authority.issueClientCertificate(
            ClientCertificateProfile(bundleID: "com.example.rsa", keyAlgorithm: .rsa2048),
            now: fixedNow
        )
        let path = try write(
            try rsa.pkcs12(password: "apns-mock", friendlyName: "My Push Cert", chain: [sharedSet.authority.certificate]),
            in: directory
        )
        let dump = try await Tools.runOpenSSL("pkcs12", "-in", path, "-passin", "pass:apns-mock", "-nodes")
        #expect(dump.status == 0, "\(dump.output)")
        #expect(dump.output.contains("friendlyName: My Push Cert"))
        let certificates = try pemBlocks(dump.output, type: "CERTIFICATE").map { try Certificate(pemEncoded: $0) }
        #expect(certificates == [rsa.certificate, sharedSet.authority.certificate])
        let keyPEM = try #require(pemBlocks(dump.output, type: "PRIVATE KEY").first)
        await #expect(try publicKey(ofPEM: keyPEM, certificate: false, in: directory)
            == (try publicKey(ofPEM: rsa.certificatePEM, certificate: true, in: directory)))
    }

    @Test(.enabled("python3 with the cryptography package not found") { await Tools.hasPythonCryptography() })
    func pythonCryptographyReadsItBack() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rsa = try sharedSet.authority.issueClientCertificate(
            ClientCertificateProfile(bundleID: "com.example.rsa", keyAlgorithm: .rsa2048),
            now: fixedNow
        )
        let script = """
            import sys
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.serialization import pkcs12
            data = open(sys.argv[1], "rb").read()
            key, cert, extra = pkcs12.load_key_and_certificates(data, sys.argv[2].encode("utf-8"))
            bundle = pkcs12.load_pkcs12(data, sys.argv[2].encode("utf-8"))
            spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            print("key-matches", key.public_key().public_bytes(*spki) == cert.public_key().public_bytes(*spki))
            print("cert", cert.public_bytes(serialization.Encoding.DER).hex())
            print("extra", len(extra))
            print("name", bundle.cert.friendly_name.decode("utf-8"))
            from cryptography.hazmat.primitives.asymmetric import ec, rsa
            print("key-type", "ec" if isinstance(key, ec.EllipticCurvePrivateKey) else "rsa" if isinstance(key, rsa.RSAPrivateKey) else "other")
            try:
                pkcs12.load_key_and_certificates(data, b"wrong")
                print("wrong-password accepted")
            except ValueError:
                print("wrong-password rejected")
            """
        for (name, client, password) in [("ec", Self.client, "apns-mock"), ("rsa", rsa, "pässwörd")] {
            let path = try write(try client.pkcs12(password: password), in: directory, name: "\(name).p12")
            let result = try await Tools.runPython(script, [path, password])
            #expect(result.status == 0, "\(result.output)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.contains("key-matches True"), "\(result.output)")
            #expect(lines.contains("cert " + (try client.certificate.derBytes()).map { String(format: "%02x", $0) }.joined()))
            #expect(lines.contains("extra 0"))
            #expect(lines.contains("name Apple Push Services: com.example.\(name == "ec" ? "app" : "rsa")"), "\(result.output)")
            #expect(lines.contains("wrong-password rejected"))
            #expect(lines.contains("key-type \(name)"), "\(result.output)")
        }
    }

    /// The structure, checked with our own ASN.1 parser: PFX version 3, MAC SHA-256, 2048 iterations.
    @Test func pfxStructure() throws {
        let bytes = try Self.client.pkcs12(password: "apns-mock")
        let pfx = try DER.parse(bytes)
        guard case .constructed(let fields) = pfx.content else {
            Issue.record("PFX is not a SEQUENCE")
            return
        }
        let parts = Array(fields)
        #expect(parts.count == 3)
        #expect(try Int(derEncoded: parts[0]) == 3)
        let macData = try DER.sequence(parts[2], identifier: .sequence) { nodes in
            let digestInfo = try DER.sequence(nodes.next()!, identifier: .sequence) { digest in
                let algorithm = try DER.sequence(digest.next()!, identifier: .sequence) { algorithm in
                    let oid = try ASN1ObjectIdentifier(derEncoded: &algorithm)
                    _ = algorithm.next()
                    return oid
                }
                let value = try ASN1OctetString(derEncoded: &digest)
                return (algorithm, value.bytes.count)
            }
            let salt = try ASN1OctetString(derEncoded: &nodes)
            let iterations = try Int(derEncoded: &nodes)
            return (digestInfo, salt.bytes.count, iterations)
        }
        #expect(macData.0.0 == PKCS12.OID.sha256)
        #expect(macData.0.1 == 32)
        #expect(macData.1 == 16)
        #expect(macData.2 == 2048)

        // Fresh salts each time.
        #expect(try Self.client.pkcs12(password: "apns-mock") != bytes)
    }

    /// RFC 7292 appendix B.2: the KDF output must be a prefix-stable function of its inputs, and
    /// I-block arithmetic must carry across bytes (checked against an independent Python implementation).
    @Test(.enabled("python3 not found") { await Tools.hasPythonCryptography() })
    func kdfMatchesAnIndependentImplementation() async throws {
        let script = """
            import hashlib, sys
            def kdf(idb, pw, salt, it, n):
                v, u = 64, 32
                D = bytes([idb]) * v
                def fill(x):
                    if not x:
                        return b""
                    n = v * ((len(x) + v - 1) // v)
                    return (x * (n // len(x) + 1))[:n]
                I = bytearray(fill(salt) + fill(pw))
                out = b""
                while len(out) < n:
                    A = hashlib.sha256(D + bytes(I)).digest()
                    for _ in range(it - 1):
                        A = hashlib.sha256(A).digest()
                    out += A
                    B = fill(A)
                    Bn = int.from_bytes(B, "big") + 1
                    for j in range(0, len(I), v):
                        x = (int.from_bytes(I[j:j+v], "big") + Bn) % (1 << (8 * v))
                        I[j:j+v] = x.to_bytes(v, "big")
                return out[:n]
            pw = ("pässwörd".encode("utf-16-be")) + b"\\x00\\x00"
            print(kdf(3, pw, bytes(range(20)), 5, 32).hex())
            print(kdf(1, pw, bytes(range(20)), 1, 80).hex())
            print(kdf(2, b"\\x00\\x00", bytes([0xFF]) * 8, 2048, 16).hex())
            """
        let result = try await Tools.runPython(script)
        try #require(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        let password = PKCS12.bmpPassword("pässwörd")
        #expect(lines.count == 3)
        #expect(lines.first == hex(PKCS12.deriveKey(id: 3, password: password, salt: Array(0..<20), iterations: 5, length: 32)))
        #expect(lines.dropFirst().first == hex(PKCS12.deriveKey(id: 1, password: password, salt: Array(0..<20), iterations: 1, length: 80)))
        #expect(lines.last == hex(PKCS12.deriveKey(id: 2, password: PKCS12.bmpPassword(""), salt: [UInt8](repeating: 0xFF, count: 8), iterations: 2048, length: 16)))
    }
}
