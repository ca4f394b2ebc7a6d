import Foundation
/// The outcome of authenticating one request.
package struct AuthenticationOutcome: Sendable {
    package var record: AuthenticationRecord
    /// Set when the request is refused (403, 429).
    package var rejection: Reason?
    /// The topic used when the request has no `apns-topic` (a single-topic certificate's).
    package var defaultTopic: String?
    /// The topics these credentials may push to, or `nil` for any.
    package var allowedTopics: TopicAllowance?
    /// The connection's certificate is for the other environment: APNs answers with GOAWAY and closes.
    package var wrongCertificateEnvironment: Bool = false
    /// The first valid token on a gated connection: raise SETTINGS_MAX_CONCURRENT_STREAMS now.
    package var raiseStreamLimit: Bool = false
    /// Which acceptance of a token on this connection gave `record` (0: none). Two outcomes of one connection with
    /// the same non-zero value have the same record, so a recording can share the previous one's without comparing
    /// them field by field (which copied both records, with every string in them, on every request).
    package var acceptance: UInt64 = 0
}

/// Which topics a credential may push to.
package enum TopicAllowance: Sendable, Equatable {
    /// Exactly these topics (a certificate's).
    case exactly([String])
    /// These bundle IDs, with or without a push-type suffix (a topic-specific key's).
    case bundles([String])

    package func allows(_ topic: String) -> Bool {
        switch self {
        case .exactly(let topics): return topics.contains(topic)
        case .bundles(let bundles): return bundles.contains { topic == $0 || topic.hasPrefix($0 + ".") }
        }
    }
}

/// One connection's authentication state: the team it is bound to, the token in use and since when,
/// and whether it is still limited to one stream. APNs applies its token rules per connection.
///
/// A plain value owned by the connection's handler, so the rules are unit-tested without sockets.
package struct ConnectionAuthState: Sendable {
    package let certificate: CertificateIdentity?
    private var currentToken: String?
    private var currentVerified: VerifiedProviderToken?
    /// The whole `authorization` value that carried `currentToken`: a request with the same value (usually the
    /// same string, see `APNsHeaders(_:knownAuthorization:)`) carries the same token, without parsing it again.
    package private(set) var currentAuthorization: String?
    /// When the current token was first used, in milliseconds since the epoch.
    private var currentSince: Int64 = 0
    /// What the current token's acceptance gave (its record and topics) and its `iat` (`nil`: no acceptance to
    /// reuse): a request carrying it again needs only its age checked. Copying the verified token and rebuilding the
    /// record per request redid, on every token push, work whose result cannot change while the token is current.
    /// Kept apart rather than as one optional tuple, which was copied whole to be read.
    private var acceptedIssuedAt: Int64?
    private var acceptedRecord: AuthenticationRecord = .none
    private var acceptedTopics: TopicAllowance?
    /// Counts this connection's acceptances; the current one's number (see `AuthenticationOutcome.acceptance`).
    private var acceptance: UInt64 = 0
    private var firstKey: VerifiedProviderToken?
    private var poisoned = false
    /// Still limited to one stream until a request with a valid token arrives.
    package private(set) var isStreamGated: Bool

    package init(certificate: CertificateIdentity?, mode: AuthenticationMode) {
        self.certificate = certificate
        switch mode {
        case .token: isStreamGated = true
        case .either: isStreamGated = certificate == nil
        case .certificate, .none: isStreamGated = false
        }
    }

    package mutating func authenticate(
        authorization: String?,
        policy: AuthenticationPolicy,
        environment: APNsEnvironment,
        nowMilliseconds: Int64
    ) -> AuthenticationOutcome {
        switch policy.mode {
        case .none:
            return AuthenticationOutcome(record: .none)
        case .certificate:
            guard let certificate else { return AuthenticationOutcome(record: .missing, rejection: .missingProviderToken) }
            return authenticate(certificate: certificate, environment: environment)
        case .either:
            if let certificate { return authenticate(certificate: certificate, environment: environment) }
            return authenticateToken(authorization, policy: policy, environment: environment, now: nowMilliseconds)
        case .token:
            return authenticateToken(authorization, policy: policy, environment: environment, now: nowMilliseconds)
        }
    }

    private func authenticate(certificate: CertificateIdentity, environment: APNsEnvironment) -> AuthenticationOutcome {
        var outcome = AuthenticationOutcome(
            record: .certificate(subject: certificate.subject, topics: certificate.topics),
            allowedTopics: .exactly(certificate.topics)
        )
        if !certificate.environments.contains(environment) {
            outcome.wrongCertificateEnvironment = true
            return outcome
        }
        // A single-topic certificate's topic is the default (Apple's legacy rule); a multi-topic one needs apns-topic.
        if certificate.topics.count == 1 { outcome.defaultTopic = certificate.topics[0] }
        return outcome
    }

    private mutating func authenticateToken(
        _ authorization: String?,
        policy: AuthenticationPolicy,
        environment: APNsEnvironment,
        now: Int64
    ) -> AuthenticationOutcome {
        func reject(_ reason: Reason, _ record: AuthenticationRecord) -> AuthenticationOutcome {
            AuthenticationOutcome(record: record, rejection: reason)
        }
        guard let authorization, !authorization.isEmpty else { return reject(.missingProviderToken, .missing) }
        // The current token again, still within its age: the answer its acceptance gave. Anything else (an age out
        // of bounds, a poisoned connection) takes the full path below, which says why.
        if !poisoned, let issuedAt = acceptedIssuedAt, authorization == currentAuthorization {
            let age = now / 1000 - issuedAt
            if age <= policy.tokenLifetimeSeconds, -age <= policy.clockSkewSeconds, !isStreamGated {
                return AuthenticationOutcome(record: acceptedRecord, allowedTopics: acceptedTopics, acceptance: acceptance)
            }
        }
        // The same value as the last accepted one (equal strings of the same storage compare in constant time).
        let jwt: String
        if let currentToken, authorization == currentAuthorization {
            jwt = currentToken
        } else if let parsed = Self.bearerToken(authorization, known: currentToken) {
            jwt = parsed
        } else {
            // `bearer` with nothing after it: no token is specified, in APNs' words (and both peer mocks' answer).
            if Self.isSchemeWithoutToken(authorization) { return reject(.missingProviderToken, .missing) }
            return reject(
                .invalidProviderToken,
                .token(keyID: nil, teamID: nil, issuedAt: nil, signatureVerified: false, error: "authorization is not 'bearer <JWT>'")
            )
        }

        let verified: VerifiedProviderToken
        if jwt == currentToken, let currentVerified {
            verified = currentVerified
        } else {
            switch policy.verifier.verify(jwt) {
            case .success(let token): verified = token
            case .failure(.invalid(let detail)):
                let claimed = try? ProviderToken(jwt)
                return reject(
                    .invalidProviderToken,
                    .token(keyID: claimed?.keyID, teamID: claimed?.issuer, issuedAt: claimed?.issuedAt, signatureVerified: false, error: detail)
                )
            }
        }
        func record(_ error: String? = nil) -> AuthenticationRecord {
            .token(
                keyID: verified.keyID,
                teamID: verified.teamID,
                issuedAt: verified.token.issuedAt,
                signatureVerified: verified.signatureVerified,
                error: error
            )
        }

        if poisoned { return reject(.expiredProviderToken, record("an earlier token on this connection expired")) }
        let nowSeconds = now / 1000
        let age = nowSeconds - verified.token.issuedAt
        if age > policy.tokenLifetimeSeconds {
            poisoned = policy.expiredTokenPoisonsConnection
            return reject(.expiredProviderToken, record("iat is \(age) s old, more than \(policy.tokenLifetimeSeconds) s"))
        }
        if -age > policy.clockSkewSeconds {
            return reject(.invalidProviderToken, record("iat is \(-age) s in the future (allowed clock skew \(policy.clockSkewSeconds) s)"))
        }
        if let key = verified.key, let keyEnvironment = key.environment, keyEnvironment != environment {
            return reject(policy.environmentKeyReason, record("key '\(key.keyID)' is for \(keyEnvironment.rawValue)"))
        }

        if jwt != currentToken {
            if let first = firstKey {
                if verified.teamID != first.teamID {
                    // Apple does not document this reason; Pushy's mock, the most faithful so far, uses it.
                    return reject(.invalidProviderToken, record("this connection is bound to team '\(first.teamID)'"))
                }
                if !Self.keysMayShareConnection(first: first, next: verified) {
                    return reject(.unrelatedKeyIdInToken, record("key '\(verified.keyID)' is unrelated to '\(first.keyID)', the first key on this connection"))
                }
            }
            if currentToken != nil, now - currentSince < policy.minimumRefreshSeconds * 1000 {
                let seconds = (now - currentSince) / 1000
                return reject(
                    .tooManyProviderTokenUpdates,
                    record("a new token \(seconds) s after the last switch; at most one per \(policy.minimumRefreshSeconds) s")
                )
            }
            if firstKey == nil { firstKey = verified }
            currentToken = jwt
            currentVerified = verified
            currentSince = now
        }
        // Compared first: storing the same string again would change its reference count twice per request.
        if authorization != currentAuthorization { currentAuthorization = authorization }

        var outcome = AuthenticationOutcome(record: record())
        if let topics = verified.key?.topics { outcome.allowedTopics = .bundles(topics) }
        // The token's key, team and environment were checked above for this connection: what it gave holds for it.
        acceptance &+= 1
        outcome.acceptance = acceptance
        acceptedRecord = outcome.record
        acceptedTopics = outcome.allowedTopics
        acceptedIssuedAt = verified.token.issuedAt
        if isStreamGated {
            isStreamGated = false
            outcome.raiseStreamLimit = true
        }
        return outcome
    }

    /// Apple's key-mixing rules: after a team-scoped key, no topic-specific key and no team key of the other
    /// environment; after a topic-specific key, no other key.
    static func keysMayShareConnection(first: VerifiedProviderToken, next: VerifiedProviderToken) -> Bool {
        if first.keyID == next.keyID { return true }
        let firstKey = first.key
        let nextKey = next.key
        if firstKey?.isTopicSpecific ?? false { return false }
        if nextKey?.isTopicSpecific ?? false { return false }
        if let a = firstKey?.environment, let b = nextKey?.environment, a != b { return false }
        return true
    }

    /// `bearer` (any case) with nothing but spaces around it.
    static func isSchemeWithoutToken(_ authorization: String) -> Bool {
        authorization.trimmingCharacters(in: .whitespaces).lowercased() == "bearer"
    }

    /// `bearer <jwt>`; the scheme's case is not checked (HTTP auth schemes are case-insensitive, and Apple's is undocumented).
    /// - Parameter known: returned instead of a new string when the token is this one (the connection's
    ///   current token, sent again with every request).
    ///
    /// On UTF-8 bytes: this runs on every token-authenticated request, and counting and lower-casing `Character`s
    /// here (grapheme by grapheme) showed in its profiles.
    static func bearerToken(_ authorization: String, known: String? = nil) -> String? {
        return ASCII.withUTF8(of: authorization) { bytes -> String? in
            var start = 0
            while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
            let scheme: StaticString = "bearer "
            guard bytes.count - start > scheme.utf8CodeUnitCount else { return nil }
            for index in 0..<scheme.utf8CodeUnitCount {
                let byte = bytes[start + index]
                let lower = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                if lower != scheme.utf8Start[index] { return nil }
            }
            var tokenStart = start + scheme.utf8CodeUnitCount
            while tokenStart < bytes.count, bytes[tokenStart] == UInt8(ascii: " ") { tokenStart += 1 }
            guard tokenStart < bytes.count else { return nil }
            let token = UnsafeBufferPointer(rebasing: bytes[tokenStart...])
            if var known, known.utf8.count == token.count, known.withUTF8({ ASCII.equal($0, token) }) { return known }
            return String(decoding: token, as: UTF8.self)
        }
    }
}
