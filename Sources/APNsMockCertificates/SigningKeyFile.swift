import Crypto
import Foundation

/// A provider-token signing key as Apple hands it out (fact sheet §4): a P-256 private key in a PKCS#8
/// PEM file named `AuthKey_<KEYID>.p8`, plus its 10-character key ID.
package struct SigningKeyFile: Sendable {
    /// The key ID apns-mock's development credentials use, so that it can be copied into client
    /// configurations once and survive regeneration.
    package static let defaultKeyID = "APNSMOCK01"
    /// Apple's key IDs: 10 characters, upper-case letters and digits.
    package static let keyIDLength = 10
    private static let keyIDAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

    /// The key ID (`kid` in the token header).
    package let keyID: String
    package let privateKey: P256.Signing.PrivateKey
    /// The key as a PKCS#8 PEM `PRIVATE KEY`, like Apple's `.p8` files.
    package let pem: String

    /// `AuthKey_<KEYID>.p8`.
    package var fileName: String { Self.fileName(keyID: keyID) }
    /// The public half, which the mock server checks token signatures with.
    package var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    /// Wraps a key, checking the key ID.
    package init(keyID: String, privateKey: P256.Signing.PrivateKey) throws(APNsMockCertificateError) {
        guard Self.isValidKeyID(keyID) else { throw .invalidKeyID(keyID) }
        self.keyID = keyID
        self.privateKey = privateKey
        self.pem = privateKey.pemRepresentation
    }

    /// Parses a `.p8` file's text: PKCS#8 `PRIVATE KEY` (Apple's format) or SEC1 `EC PRIVATE KEY`,
    /// P-256 only. ``pem`` is the key re-encoded as PKCS#8.
    package init(pem: String, keyID: String) throws(APNsMockCertificateError) {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .invalidSigningKey(reason: String(describing: error))
        }
        try self.init(keyID: keyID, privateKey: key)
    }

    /// A fresh P-256 key. With no `keyID`, a random Apple-style one is made.
    package static func generate(keyID: String? = nil) throws(APNsMockCertificateError) -> SigningKeyFile {
        try SigningKeyFile(keyID: keyID ?? randomKeyID(), privateKey: P256.Signing.PrivateKey())
    }

    /// Loads a `.p8` file. The key ID is `keyID` if given, else taken from an `AuthKey_<KEYID>.p8` file name.
    package static func load(path: String, keyID: String? = nil) throws(APNsMockCertificateError) -> SigningKeyFile {
        guard let id = keyID ?? Self.keyID(fromFileName: URL(fileURLWithPath: path).lastPathComponent) else {
            throw .missingKeyID(path: path)
        }
        return try SigningKeyFile(pem: PEMFiles.read(path), keyID: id)
    }

    /// Loads every `AuthKey_<KEYID>.p8` file in `directory`, sorted by key ID. Other files are ignored;
    /// a matching file that does not load is an error.
    package static func loadAll(in directory: String) throws(APNsMockCertificateError) -> [SigningKeyFile] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .fileReadFailed(path: directory, reason: error.localizedDescription)
        }
        var keys: [SigningKeyFile] = []
        for name in names.sorted() where keyID(fromFileName: name) != nil {
            keys.append(try load(path: PEMFiles.path(name, in: directory)))
        }
        return keys
    }

    /// Writes ``pem`` to `directory/AuthKey_<KEYID>.p8` (directory created if needed) and returns the path.
    @discardableResult
    package func write(to directory: String) throws(APNsMockCertificateError) -> String {
        try PEMFiles.createDirectory(directory)
        let path = PEMFiles.path(fileName, in: directory)
        try PEMFiles.write(pem, to: path)
        return path
    }

    /// A provider authentication token (JWT, ES256, raw `r‖s` signature) for `teamID`, as APNs clients send
    /// in `authorization: bearer <token>`: header `{"alg":"ES256","kid":"<keyID>"}`,
    /// claims `{"iss":"<teamID>","iat":<seconds>}`.
    package func providerToken(teamID: String, issuedAt: Date = Date()) throws(APNsMockCertificateError) -> String {
        let header = #"{"alg":"ES256","kid":"\#(keyID)"}"#
        let claims = #"{"iss":"\#(teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970.rounded(.down)))}"#
        let signingInput = Self.base64URL(Array(header.utf8)) + "." + Self.base64URL(Array(claims.utf8))
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try privateKey.signature(for: Array(signingInput.utf8))
        } catch {
            throw .invalidSigningKey(reason: String(describing: error))
        }
        return signingInput + "." + Self.base64URL(Array(signature.rawRepresentation))
    }

    /// `AuthKey_<KEYID>.p8`.
    package static func fileName(keyID: String) -> String { "AuthKey_\(keyID).p8" }

    /// The key ID in an `AuthKey_<KEYID>.p8` file name, if the name has that form and the ID is valid.
    package static func keyID(fromFileName name: String) -> String? {
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = String(name.dropFirst("AuthKey_".count).dropLast(".p8".count))
        return isValidKeyID(id) ? id : nil
    }

    /// 10 characters, each `A`–`Z` or `0`–`9`.
    package static func isValidKeyID(_ keyID: String) -> Bool {
        keyID.count == keyIDLength && keyID.allSatisfy { keyIDAlphabet.contains($0) }
    }

    static func randomKeyID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<keyIDLength).map { _ in keyIDAlphabet[Int.random(in: 0..<keyIDAlphabet.count, using: &generator)] })
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
