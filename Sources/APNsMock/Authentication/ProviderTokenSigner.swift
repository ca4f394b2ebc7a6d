import Crypto

/// Makes provider tokens as Apple's documentation describes them: `{"alg":"ES256","kid":…}`,
/// `{"iss":…,"iat":…}`, a raw `r‖s` signature. For `apns-mock token`, tests and examples.
package struct ProviderTokenSigner: Sendable {
    package var keyID: String
    package var teamID: String
    package var privateKey: P256.Signing.PrivateKey

    package init(keyID: String, teamID: String, privateKey: P256.Signing.PrivateKey) {
        self.keyID = keyID
        self.teamID = teamID
        self.privateKey = privateKey
    }

    package enum SignatureEncoding: Sendable {
        /// JOSE's 64-byte `r‖s` (what most clients send).
        case raw
        /// DER, as `openssl dgst -sha256 -sign` makes it (APNs accepts it too).
        case der
    }

    /// A signed token issued at `issuedAt` (seconds since the epoch).
    package func token(issuedAt: Int64, signature encoding: SignatureEncoding = .raw) throws -> String {
        let header = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Base64URL.encode(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8))
        let input = Array((header + "." + claims).utf8)
        let signature = try privateKey.signature(for: input)
        let bytes: [UInt8] = encoding == .raw ? Array(signature.rawRepresentation) : Array(signature.derRepresentation)
        return header + "." + claims + "." + Base64URL.encode(bytes)
    }
}
