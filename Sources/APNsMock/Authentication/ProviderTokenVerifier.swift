import Crypto

/// A provider token whose structure, key and signature were checked (its age is checked per request).
package struct VerifiedProviderToken: Sendable {
    package var token: ProviderToken
    /// The configured key, or `nil` when the key id was unknown and `acceptUnknownKeys` let it through.
    package var keyID: String
    package var teamID: String
    /// False when the key was unknown and the signature could not be checked (`--accept-unknown-keys`).
    package var signatureVerified: Bool
    package var key: ProviderKey?
}

/// Checks provider tokens (JWT, ES256) against the configured keys, as APNs does.
package struct ProviderTokenVerifier: Sendable {
    package var keys: [String: ProviderKey]
    /// Let tokens from unconfigured keys through (structure, `alg`, age and refresh rules still apply;
    /// the signature cannot be checked): for staging with a team's real Apple key.
    package var acceptUnknownKeys: Bool

    package init(keys: [ProviderKey] = [], acceptUnknownKeys: Bool = false) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
        self.acceptUnknownKeys = acceptUnknownKeys
    }

    package enum Failure: Error, Equatable {
        /// Answered 403 `InvalidProviderToken`; `detail` says what was wrong, for the recording and logs.
        case invalid(detail: String)
    }

    package func verify(_ text: String) -> Result<VerifiedProviderToken, Failure> {
        let token: ProviderToken
        do {
            token = try ProviderToken(text)
        } catch {
            return .failure(.invalid(detail: error.detail))
        }
        guard token.algorithm == "ES256" else {
            return .failure(.invalid(detail: "the JWT alg is \(token.algorithm.map { "'\($0)'" } ?? "missing"), APNs accepts only ES256"))
        }
        guard let key = keys[token.keyID] else {
            if acceptUnknownKeys {
                return .success(
                    VerifiedProviderToken(token: token, keyID: token.keyID, teamID: token.issuer, signatureVerified: false, key: nil)
                )
            }
            return .failure(.invalid(detail: "unknown key id '\(token.keyID)'"))
        }
        guard token.issuer == key.teamID else {
            return .failure(.invalid(detail: "iss '\(token.issuer)' is not the team of key '\(key.keyID)' (\(key.teamID))"))
        }
        guard Self.signatureIsValid(token.signature, for: token.signingInput, key: key.publicKey) else {
            return .failure(.invalid(detail: "the ES256 signature does not verify with key '\(key.keyID)'"))
        }
        return .success(VerifiedProviderToken(token: token, keyID: key.keyID, teamID: key.teamID, signatureVerified: true, key: key))
    }

    /// Raw `r‖s` (64 bytes, JOSE) or DER, as APNs accepts both.
    static func signatureIsValid(_ signature: [UInt8], for input: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        let parsed: P256.Signing.ECDSASignature?
        if signature.count == 64 {
            parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        } else {
            parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature)
        }
        guard let parsed else { return false }
        return key.isValidSignature(parsed, for: input)
    }
}
