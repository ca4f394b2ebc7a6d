import Crypto
import Foundation
import Testing

@testable import APNsMockCertificates

@Suite("Signing key files (.p8)")
struct SigningKeyFileTests {
    @Test func generateWithAndWithoutKeyID() throws {
        let fixed = try SigningKeyFile.generate(keyID: "APNSMOCK01")
        #expect(fixed.keyID == "APNSMOCK01")
        #expect(fixed.fileName == "AuthKey_APNSMOCK01.p8")
        #expect(fixed.pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(fixed.publicKey.rawRepresentation == fixed.privateKey.publicKey.rawRepresentation)

        let random = try SigningKeyFile.generate()
        #expect(SigningKeyFile.isValidKeyID(random.keyID))
        #expect(random.keyID.count == 10)
        #expect(random.keyID.allSatisfy { ($0.isUppercase || $0.isNumber) && $0.isASCII })
        #expect(try SigningKeyFile.generate().keyID != random.keyID)
    }

    @Test func keyIDValidation() {
        #expect(SigningKeyFile.isValidKeyID("ABCDE12345"))
        #expect(!SigningKeyFile.isValidKeyID("abcde12345"))
        #expect(!SigningKeyFile.isValidKeyID("ABCDE1234"))
        #expect(!SigningKeyFile.isValidKeyID("ABCDE123456"))
        #expect(!SigningKeyFile.isValidKeyID("ABCDE-1234"))
        #expect(!SigningKeyFile.isValidKeyID("ÄBCDE12345"))
        #expect(throws: APNsMockCertificateError.invalidKeyID("short")) {
            try SigningKeyFile.generate(keyID: "short")
        }
        #expect(SigningKeyFile.keyID(fromFileName: "AuthKey_ABCDE12345.p8") == "ABCDE12345")
        #expect(SigningKeyFile.keyID(fromFileName: "AuthKey_abcde12345.p8") == nil)
        #expect(SigningKeyFile.keyID(fromFileName: "key.p8") == nil)
        #expect(SigningKeyFile.keyID(fromFileName: "AuthKey_ABCDE12345.pem") == nil)
    }

    @Test func pemRoundTripAndLoading() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try SigningKeyFile.generate(keyID: "ROUNDTRIP1")
        let path = try key.write(to: directory.appendingPathComponent("keys").path)
        #expect(URL(fileURLWithPath: path).lastPathComponent == "AuthKey_ROUNDTRIP1.p8")

        let loaded = try SigningKeyFile.load(path: path)
        #expect(loaded.keyID == "ROUNDTRIP1")
        #expect(loaded.privateKey.rawRepresentation == key.privateKey.rawRepresentation)
        #expect(loaded.pem == key.pem)

        let renamed = directory.appendingPathComponent("my-key.p8").path
        try FileManager.default.copyItem(atPath: path, toPath: renamed)
        #expect(throws: APNsMockCertificateError.missingKeyID(path: renamed)) {
            try SigningKeyFile.load(path: renamed)
        }
        #expect(try SigningKeyFile.load(path: renamed, keyID: "OVERRIDE01").keyID == "OVERRIDE01")

        let all = try SigningKeyFile.loadAll(in: directory.appendingPathComponent("keys").path)
        #expect(all.map(\.keyID) == ["ROUNDTRIP1"])

        #expect(throws: APNsMockCertificateError.self) {
            try SigningKeyFile(pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", keyID: "ABCDE12345")
        }
        // A P-256 *certificate* key from this module is fine; an RSA key is not.
        #expect(try SigningKeyFile(pem: sharedSet.serverPrivateKeyPEM, keyID: "SERVERKEY1").keyID == "SERVERKEY1")
    }

    @Test func providerTokenHasApplesShape() throws {
        let key = try SigningKeyFile.generate(keyID: "APNSMOCK01")
        let token = try key.providerToken(teamID: "TEAM000001", issuedAt: fixedNow)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        #expect(try decodeBase64URL(parts[0]) == Array(#"{"alg":"ES256","kid":"APNSMOCK01"}"#.utf8))
        #expect(try decodeBase64URL(parts[1]) == Array(#"{"iss":"TEAM000001","iat":1750000000}"#.utf8))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: decodeBase64URL(parts[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    /// openssl reads the .p8, verifies our ES256 signature, and its own signature verifies with our key.
    @Test(.enabled(if: Tools.hasOpenSSL, "openssl not found"))
    func interoperatesWithOpenSSL() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

        let key = try SigningKeyFile.generate(keyID: "OPENSSL001")
        let path = try key.write(to: directory.path)

        let check = try await Tools.runOpenSSL("pkey", "-in", path, "-noout", "-check")
        #expect(check.status == 0, "\(check.output)")
        let text = try await Tools.runOpenSSL("pkey", "-in", path, "-noout", "-text")
        #expect(text.output.contains("prime256v1"), "\(text.output)")
        let publicKey = try await Tools.runOpenSSL("pkey", "-in", path, "-pubout", "-out", file("public.pem"))
        #expect(publicKey.status == 0, "\(publicKey.output)")

        // Our signature (DER form, which openssl dgst uses) verifies with openssl.
        let message = Array(#"eyJhbGciOiJFUzI1NiIsImtpZCI6Ik9QRU5TU0wwMDEifQ.eyJpc3MiOiJNT0NLVEVBTTAxIiwiaWF0IjoxfQ"#.utf8)
        try Data(message).write(to: URL(fileURLWithPath: file("message")))
        let ours = try key.privateKey.signature(for: message)
        try ours.derRepresentation.write(to: URL(fileURLWithPath: file("ours.sig")))
        let verify = try await Tools.runOpenSSL("dgst", "-sha256", "-verify", file("public.pem"), "-signature", file("ours.sig"), file("message"))
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.contains("Verified OK"))

        // Apple's command-line recipe: openssl dgst -sha256 -sign AuthKey.p8 makes a DER signature.
        let sign = try await Tools.runOpenSSL("dgst", "-sha256", "-sign", path, "-out", file("theirs.sig"), file("message"))
        #expect(sign.status == 0, "\(sign.output)")
        let theirs = try P256.Signing.ECDSASignature(derRepresentation: Data(contentsOf: URL(fileURLWithPath: file("theirs.sig"))))
        #expect(key.publicKey.isValidSignature(theirs, for: message))

        // A key openssl made, the way Pushy's script makes one, loads with its ID from the file name.
        let made = try await Tools.run("/bin/sh", ["-c",
            "\(Tools.openssl) ecparam -name prime256v1 -genkey -noout | \(Tools.openssl) pkcs8 -topk8 -nocrypt -out '\(file("AuthKey_MADEBYSSL1.p8"))'"])
        #expect(made.status == 0, "\(made.output)")
        let loaded = try SigningKeyFile.load(path: file("AuthKey_MADEBYSSL1.p8"))
        #expect(loaded.keyID == "MADEBYSSL1")
        let token = try loaded.providerToken(teamID: "TEAM000001", issuedAt: fixedNow)
        #expect(token.split(separator: ".").count == 3)

        // So does a SEC1 "EC PRIVATE KEY".
        let sec1 = try await Tools.runOpenSSL("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file("sec1.pem"))
        #expect(sec1.status == 0)
        let sec1Key = try SigningKeyFile.load(path: file("sec1.pem"), keyID: "SEC1KEY001")
        #expect(sec1Key.pem.hasPrefix("-----BEGIN PRIVATE KEY-----"), "re-encoded as PKCS#8")

        let all = try SigningKeyFile.loadAll(in: directory.path)
        #expect(all.map(\.keyID) == ["MADEBYSSL1", "OPENSSL001"])
    }

    private func decodeBase64URL(_ text: String) throws -> [UInt8] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Array(try #require(Data(base64Encoded: base64)))
    }
}
