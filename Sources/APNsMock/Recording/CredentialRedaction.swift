import Crypto

/// What a recording keeps of a provider's credentials. A provider token is valid at Apple's real APNs for up to an
/// hour, for every app of its team: a shared mock must not hand it out.
package enum RecordCredentials: String, Sendable, Equatable, CaseIterable {
    /// The token's header and claims (`kid`, `iss`, `iat`: what tests assert on) and a fingerprint; never the
    /// signature. The default.
    case redacted
    /// The `authorization` header as sent (`--record-credentials full`).
    case full
}

/// The `authorization` header as a recording shows it by default: `bearer <header>.<claims>.REDACTED-<fingerprint>`,
/// still a JWT in form (the last part is base64url text), so a tool that decodes a token without verifying it still
/// reads `kid`, `iss` and `iat`. The fingerprint is the first 16 hex digits of the SHA-256 of the token as sent, so
/// "the provider switched tokens" still shows; a value that is not three dot-separated parts keeps only its scheme
/// and the fingerprint.
package enum CredentialRedaction {
    package static let marker = "REDACTED-"

    package static func redacted(_ value: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: value, as: UTF8.self)
        let scheme = text.prefix { $0 != " " }
        let hasScheme = scheme.count < text.count
        let token = hasScheme ? text[text.index(after: scheme.endIndex)...].drop { $0 == " " } : Substring(text)
        let fingerprint = Hex.encode(SHA256.hash(data: Array(token.utf8)).prefix(8))
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        let kept = parts.count == 3 ? parts[0] + "." + parts[1] + "." : ""
        return (hasScheme ? scheme + " " : "") + kept + marker + fingerprint
    }

    /// Whether a header is the credential: `authorization`, in any case.
    package static func isCredential(name: UnsafeBufferPointer<UInt8>) -> Bool {
        let literal: StaticString = "authorization"
        return name.count == 13 && ASCII.equalIgnoringCase(name, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
