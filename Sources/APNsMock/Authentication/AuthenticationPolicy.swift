/// How the provider port authenticates requests (`--auth`).
package enum AuthenticationMode: String, Sendable, CaseIterable {
    /// Provider tokens (JWT) only; a client certificate is not looked at.
    case token
    /// Client certificates only.
    case certificate
    /// Whichever the connection presents, as APNs does: a certificate if it sent one, else a token. The default.
    case either
    /// Accept every request without credentials.
    case none
}

/// The rules of provider authentication, with APNs' numbers as defaults.
package struct AuthenticationPolicy: Sendable {
    package var mode: AuthenticationMode
    package var verifier: ProviderTokenVerifier
    /// A token older than this (from its `iat`) is answered 403 `ExpiredProviderToken`. Apple: one hour.
    package var tokenLifetimeSeconds: Int64
    /// A connection may switch to a new token at most this often, or get 429 `TooManyProviderTokenUpdates`.
    /// Apple: 20 minutes.
    package var minimumRefreshSeconds: Int64
    /// How far in the future an `iat` may be (clock skew) before the token is 403 `InvalidProviderToken`.
    package var clockSkewSeconds: Int64
    /// The spelling of the environment-key reason: the real service sends `BadEnvironmentKeyInToken`,
    /// Apple's documentation says `BadEnvironmentKeyIdInToken`.
    package var environmentKeyReason: Reason
    /// After `ExpiredProviderToken`, keep rejecting on that connection even with a fresh token, as APNs
    /// was seen doing; clients are expected to reconnect.
    package var expiredTokenPoisonsConnection: Bool

    package init(
        mode: AuthenticationMode = .either,
        verifier: ProviderTokenVerifier = ProviderTokenVerifier(),
        tokenLifetimeSeconds: Int64 = 3600,
        minimumRefreshSeconds: Int64 = 1200,
        clockSkewSeconds: Int64 = 60,
        environmentKeyReason: Reason = .badEnvironmentKeyInToken,
        expiredTokenPoisonsConnection: Bool = true
    ) {
        self.mode = mode
        self.verifier = verifier
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.minimumRefreshSeconds = minimumRefreshSeconds
        self.clockSkewSeconds = clockSkewSeconds
        self.environmentKeyReason = environmentKeyReason
        self.expiredTokenPoisonsConnection = expiredTokenPoisonsConnection
    }
}

/// What a client certificate says about its holder: the facts the provider port needs, read by the TLS layer.
package struct CertificateIdentity: Sendable, Equatable {
    package var subject: String
    /// The subject UID, then the topics of the APNs topics extension; the first is the default topic.
    package var topics: [String]
    package var environments: Set<APNsEnvironment>

    package init(subject: String, topics: [String], environments: Set<APNsEnvironment>) {
        self.subject = subject
        self.topics = topics
        self.environments = environments
    }
}

/// How a recorded request was authenticated, for tests to assert on.
package enum AuthenticationRecord: Sendable, Equatable {
    /// `--auth none`.
    case none
    /// A provider token; `keyID`/`teamID` as the token claimed them, `error` when it was rejected.
    case token(keyID: String?, teamID: String?, issuedAt: Int64?, signatureVerified: Bool, error: String?)
    case certificate(subject: String, topics: [String])
    /// No credentials at all (403 `MissingProviderToken`).
    case missing

    package var method: String {
        switch self {
        case .none: return "none"
        case .token: return "token"
        case .certificate: return "certificate"
        case .missing: return "missing"
        }
    }
}
