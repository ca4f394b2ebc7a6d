import Foundation

/// A provider token (JWT) taken apart, before its signature is checked.
///
/// Parsing is as lenient as APNs: header and claims may be pretty-printed JSON with extra members
/// (APNSwift adds a `kid` claim), `iat` may be a number or a string of digits, and the signature may be
/// JOSE's raw `r‖s` or DER (Apple's own command-line recipe makes DER).
package struct ProviderToken: Sendable, Equatable {
    package var algorithm: String?
    package var keyID: String
    package var issuer: String
    /// Seconds since the epoch.
    package var issuedAt: Int64
    /// `header.claims`, the bytes the signature covers.
    package var signingInput: [UInt8]
    package var signature: [UInt8]

    /// Why a token could not even be read.
    package struct Malformed: Error, Equatable, CustomStringConvertible {
        package var detail: String
        package var description: String { detail }
    }

    package init(_ token: String) throws(Malformed) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Malformed(detail: "a JWT has three dot-separated parts, this has \(parts.count)") }
        guard let headerBytes = Base64URL.decode(parts[0]),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any]
        else { throw Malformed(detail: "the JWT header is not base64url-encoded JSON") }
        guard let claimBytes = Base64URL.decode(parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimBytes))) as? [String: Any]
        else { throw Malformed(detail: "the JWT claims are not base64url-encoded JSON") }
        guard let signature = Base64URL.decode(parts[2]), !signature.isEmpty else {
            throw Malformed(detail: "the JWT signature is missing or not base64url")
        }
        guard let keyID = header["kid"] as? String, !keyID.isEmpty else {
            throw Malformed(detail: "the JWT header has no kid (key id)")
        }
        guard let issuer = claims["iss"] as? String, !issuer.isEmpty else {
            throw Malformed(detail: "the JWT claims have no iss (team id)")
        }
        guard let issuedAt = Self.seconds(claims["iat"]) else {
            throw Malformed(detail: "the JWT claims have no iat (issued-at seconds), or it is not a number")
        }
        self.algorithm = header["alg"] as? String
        self.keyID = keyID
        self.issuer = issuer
        self.issuedAt = issuedAt
        self.signingInput = Array((parts[0] + "." + parts[1]).utf8)
        self.signature = signature
    }

    /// Whole seconds since the epoch, within a range where no later arithmetic can overflow.
    private static func seconds(_ value: Any?) -> Int64? {
        let seconds: Int64?
        switch value {
        case let number as NSNumber:
            // JSON booleans arrive as NSNumber too (objCType "c"); `true` is no time.
            guard String(cString: number.objCType) != "c" else { return nil }
            let double = number.doubleValue
            seconds = double.isFinite && abs(double) < 1e15 ? Int64(double) : nil
        case let text as String:
            seconds = Int64(text.trimmingCharacters(in: .whitespaces))
        default:
            seconds = nil
        }
        guard let seconds, (0...validSecondsUpperBound).contains(seconds) else { return nil }
        return seconds
    }

    /// Year 5138: far beyond any real token, far below any overflow.
    static let validSecondsUpperBound: Int64 = 100_000_000_000
}

/// Base64url without padding, as JWTs use it (padding tolerated).
enum Base64URL {
    static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.trimmingCharacters(in: CharacterSet(charactersIn: "="))
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map(Array.init)
    }

    static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
