import Crypto
import Foundation
import Testing

@testable import APNsMock

/// The connection's clock starts here (seconds since the epoch).
private let start: Int64 = 1_700_000_000
private let minute: Int64 = 60
private let teamA = "TEAM000001"
private let teamB = "TEAM000002"

/// One configured key and the means to sign tokens with it.
private struct TestKey {
    let key: ProviderKey
    let signer: ProviderTokenSigner

    init(_ keyID: String, team: String = teamA, environment: APNsEnvironment? = nil, topics: [String]? = nil) {
        let privateKey = P256.Signing.PrivateKey()
        key = ProviderKey(keyID: keyID, teamID: team, publicKey: privateKey.publicKey, environment: environment, topics: topics)
        signer = ProviderTokenSigner(keyID: keyID, teamID: team, privateKey: privateKey)
    }

    /// `bearer <jwt>` issued at `iat` (seconds).
    func bearer(_ iat: Int64, scheme: String = "bearer") -> String {
        // Signing with a fresh P-256 key does not fail.
        scheme + " " + (try! signer.token(issuedAt: iat))
    }
}

/// A set of keys covering Apple's kinds: legacy (both environments), team-scoped per environment,
/// topic-specific, and another team's.
private struct Keys {
    let legacyA = TestKey("LEGACYAAAA")
    let legacyB = TestKey("LEGACYBBBB")
    let teamDev = TestKey("TEAMDEV001", environment: .development)
    let teamDev2 = TestKey("TEAMDEV002", environment: .development)
    let teamProd = TestKey("TEAMPROD01", environment: .production)
    let topicA = TestKey("TOPICA0001", environment: .development, topics: ["com.a"])
    let topicB = TestKey("TOPICB0001", environment: .development, topics: ["com.b"])
    let otherTeam = TestKey("OTHERTEAMK", team: teamB)

    var all: [TestKey] { [legacyA, legacyB, teamDev, teamDev2, teamProd, topicA, topicB, otherTeam] }

    func policy(
        mode: AuthenticationMode = .either,
        acceptUnknownKeys: Bool = false,
        environmentKeyReason: Reason = .badEnvironmentKeyInToken,
        poisons: Bool = true
    ) -> AuthenticationPolicy {
        AuthenticationPolicy(
            mode: mode,
            verifier: ProviderTokenVerifier(keys: all.map(\.key), acceptUnknownKeys: acceptUnknownKeys),
            environmentKeyReason: environmentKeyReason,
            expiredTokenPoisonsConnection: poisons
        )
    }
}

/// A connection under test: its state, the policy, and a clock in seconds.
private struct Connection {
    var state: ConnectionAuthState
    var policy: AuthenticationPolicy
    var environment: APNsEnvironment

    init(
        _ policy: AuthenticationPolicy,
        certificate: CertificateIdentity? = nil,
        environment: APNsEnvironment = .development
    ) {
        self.state = ConnectionAuthState(certificate: certificate, mode: policy.mode)
        self.policy = policy
        self.environment = environment
    }

    mutating func send(_ authorization: String?, at seconds: Int64, extraMilliseconds: Int64 = 0) -> AuthenticationOutcome {
        state.authenticate(
            authorization: authorization,
            policy: policy,
            environment: environment,
            nowMilliseconds: seconds * 1000 + extraMilliseconds
        )
    }
}

private func tokenError(_ record: AuthenticationRecord) -> String? {
    guard case .token(_, _, _, _, let error) = record else { return nil }
    return error
}

private let devCertificate = CertificateIdentity(
    subject: "UID=com.example.app, CN=Apple Development IOS Push Services: com.example.app",
    topics: ["com.example.app"],
    environments: [.development]
)
private let multiTopicCertificate = CertificateIdentity(
    subject: "UID=com.example.app, CN=Apple Push Services: com.example.app",
    topics: ["com.example.app", "com.example.app.voip", "com.example.app.complication"],
    environments: [.development, .production]
)

@Suite("ConnectionAuthState")
struct ConnectionAuthStateTests {
    private let keys = Keys()

    // MARK: The authorization header

    @Test func missingAuthorizationIsMissingProviderToken() {
        var connection = Connection(keys.policy())
        let outcome = connection.send(nil, at: start)
        #expect(outcome.rejection == .missingProviderToken)
        #expect(outcome.record == .missing)
        #expect(outcome.raiseStreamLimit == false)
        #expect(connection.state.isStreamGated)
    }

    @Test func emptyAuthorizationIsMissingProviderToken() {
        var connection = Connection(keys.policy(mode: .token))
        let outcome = connection.send("", at: start)
        #expect(outcome.rejection == .missingProviderToken)
        #expect(outcome.record == .missing)
    }

    @Test(arguments: ["Bearer", "bearer", "BEARER", "bEaReR"])
    func bearerSchemeIsCaseInsensitive(scheme: String) {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.legacyA.bearer(start, scheme: scheme), at: start)
        #expect(outcome.rejection == nil)
        #expect(outcome.record == .token(keyID: "LEGACYAAAA", teamID: teamA, issuedAt: start, signatureVerified: true, error: nil))
    }

    @Test func theSameTokenUnderEitherSchemeSpellingIsOneToken() {
        var connection = Connection(keys.policy())
        let jwt = try! keys.legacyA.signer.token(issuedAt: start)
        #expect(connection.send("bearer " + jwt, at: start).rejection == nil)
        #expect(connection.send("Bearer " + jwt, at: start + minute).rejection == nil)
    }

    /// "No provider token is specified" (APNs' wording for MissingProviderToken): the scheme alone counts as none.
    @Test(arguments: ["bearer", "bearer ", "Bearer    ", "  BEARER"])
    func bearerWithoutATokenIsMissingProviderToken(authorization: String) {
        var connection = Connection(keys.policy())
        let outcome = connection.send(authorization, at: start)
        #expect(outcome.rejection == .missingProviderToken)
        #expect(outcome.record == .missing)
    }

    @Test(arguments: ["Basic dXNlcjpwYXNz", "Token abc", "bearerx", "JWT x.y.z"])
    func nonBearerAuthorizationIsInvalidProviderToken(authorization: String) {
        var connection = Connection(keys.policy())
        let outcome = connection.send(authorization, at: start)
        #expect(outcome.rejection == .invalidProviderToken)
        guard case .token(let keyID, let teamID, _, let verified, let error) = outcome.record else {
            Issue.record("expected a token record, got \(outcome.record)")
            return
        }
        #expect(keyID == nil)
        #expect(teamID == nil)
        #expect(verified == false)
        #expect(error != nil)
    }

    @Test func bearerTokenIsReadFromTheHeaderValue() {
        #expect(ConnectionAuthState.bearerToken("bearer a.b.c") == "a.b.c")
        #expect(ConnectionAuthState.bearerToken("  BeArEr    a.b.c") == "a.b.c")
        #expect(ConnectionAuthState.bearerToken("bearer a.b.c ") == "a.b.c ")
        #expect(ConnectionAuthState.bearerToken("bearer é.ü") == "é.ü")
        #expect(ConnectionAuthState.bearerToken("bearer a.b.c", known: "a.b.c") == "a.b.c")
        #expect(ConnectionAuthState.bearerToken("bearer a.b.d", known: "a.b.c") == "a.b.d")
        for invalid in ["bearera.b.c", "bearer", "bearer   ", "", "   ", "béarer a.b.c", "Basic a.b.c", "bearer\ta.b.c"] {
            #expect(ConnectionAuthState.bearerToken(invalid) == nil, "\(invalid)")
        }
    }

    @Test func bareJWTWithoutSchemeIsInvalidProviderToken() throws {
        var connection = Connection(keys.policy())
        let jwt = try keys.legacyA.signer.token(issuedAt: start)
        #expect(connection.send(jwt, at: start).rejection == .invalidProviderToken)
    }

    @Test func invalidTokenRecordsWhatTheTokenClaimed() {
        var connection = Connection(keys.policy())
        let stranger = TestKey("ZZZZ999999", team: "TEAM999999")
        let outcome = connection.send(stranger.bearer(start), at: start)
        #expect(outcome.rejection == .invalidProviderToken)
        guard case .token(let keyID, let teamID, let iat, let verified, let error) = outcome.record else {
            Issue.record("expected a token record, got \(outcome.record)")
            return
        }
        #expect(keyID == "ZZZZ999999")
        #expect(teamID == "TEAM999999")
        #expect(iat == start)
        #expect(verified == false)
        #expect(error?.contains("ZZZZ999999") == true)
    }

    // MARK: Token age

    @Test func tokenOlderThanAnHourIsExpired() {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.legacyA.bearer(start - 3601), at: start)
        #expect(outcome.rejection == .expiredProviderToken)
        #expect(tokenError(outcome.record) != nil)
    }

    @Test func tokenExactlyAnHourOldIsStillAccepted() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start - 3600), at: start).rejection == nil)
    }

    @Test func expiredTokenPoisonsTheConnection() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start - 4000), at: start).rejection == .expiredProviderToken)

        // A fresh token, then another fresh one much later: still refused on this connection.
        let fresh = connection.send(keys.legacyA.bearer(start), at: start + 1)
        #expect(fresh.rejection == .expiredProviderToken)
        #expect(tokenError(fresh.record)?.contains("earlier") == true)
        #expect(connection.send(keys.legacyB.bearer(start + 30 * minute), at: start + 30 * minute).rejection == .expiredProviderToken)
        #expect(connection.send(keys.legacyA.bearer(start + 2 * 60 * minute), at: start + 2 * 60 * minute).rejection == .expiredProviderToken)

        // A new connection is fine.
        var reconnected = Connection(keys.policy())
        #expect(reconnected.send(keys.legacyA.bearer(start), at: start + 1).rejection == nil)
    }

    @Test func tokenThatAgesPastAnHourInUseExpiresAndPoisons() {
        var connection = Connection(keys.policy())
        let token = keys.legacyA.bearer(start)
        #expect(connection.send(token, at: start).rejection == nil)
        #expect(connection.send(token, at: start + 60 * minute).rejection == nil)
        #expect(connection.send(token, at: start + 60 * minute + 1).rejection == .expiredProviderToken)
        // Refreshing now is too late for this connection.
        #expect(connection.send(keys.legacyA.bearer(start + 61 * minute), at: start + 61 * minute).rejection == .expiredProviderToken)
    }

    /// The current token sent again answers as its acceptance did (what it gave is kept), until its age runs out;
    /// without poisoning it is then refused each time, until a fresh token comes.
    @Test func theCurrentTokenAgainAnswersAsItsAcceptanceUntilItsAgeRunsOut() {
        var connection = Connection(keys.policy(poisons: false))
        let token = keys.topicA.bearer(start)
        let first = connection.send(token, at: start)
        let again = connection.send(token, at: start + 10 * minute)
        #expect(first.rejection == nil && again.rejection == nil)
        #expect(again.record == first.record && again.allowedTopics == .bundles(["com.a"]))
        #expect(first.raiseStreamLimit && !again.raiseStreamLimit)
        #expect(connection.send(token, at: start + 60 * minute, extraMilliseconds: 999).rejection == nil)
        #expect(connection.send(token, at: start + 60 * minute + 1).rejection == .expiredProviderToken)
        #expect(connection.send(token, at: start + 62 * minute).rejection == .expiredProviderToken)
        #expect(connection.send(keys.topicA.bearer(start + 62 * minute), at: start + 62 * minute).rejection == nil)
        // A token from the future is refused when sent again too, not only the first time.
        var early = Connection(keys.policy())
        let future = keys.topicA.bearer(start + 61)
        #expect(early.send(future, at: start + 1).rejection == nil)
        #expect(early.send(future, at: start).rejection == .invalidProviderToken)
    }

    /// An acceptance's number names one record on the connection (recordings share extras by it): the current
    /// token again keeps it, a rejection has none, and a new token, or the same one after a rejection of its age,
    /// gets a new number.
    @Test func eachAcceptanceOfATokenHasANumberOfItsOwn() {
        var connection = Connection(keys.policy(poisons: false))
        let token = keys.legacyA.bearer(start)
        let first = connection.send(token, at: start)
        #expect(first.rejection == nil && first.acceptance != 0)
        #expect(connection.send(token, at: start + 1).acceptance == first.acceptance)
        #expect(connection.send(nil, at: start + 2).acceptance == 0)
        #expect(connection.send("bearer x.y.z", at: start + 3).acceptance == 0)
        #expect(connection.send(token, at: start + 4).acceptance == first.acceptance)
        let refreshed = connection.send(keys.legacyA.bearer(start + 21 * minute), at: start + 21 * minute)
        #expect(refreshed.rejection == nil && ![0, first.acceptance].contains(refreshed.acceptance))
        let expired = connection.send(keys.legacyA.bearer(start + 21 * minute), at: start + 82 * minute)
        #expect(expired.rejection == .expiredProviderToken && expired.acceptance == 0)
        // Certificates and --auth none have no acceptance to share by: their records are compared.
        var certified = Connection(keys.policy(), certificate: devCertificate)
        #expect(certified.send(nil, at: start).acceptance == 0)
        var open = Connection(keys.policy(mode: .none))
        #expect(open.send(nil, at: start).acceptance == 0)
    }

    @Test func withoutPoisoningAFreshTokenRecovers() {
        var connection = Connection(keys.policy(poisons: false))
        #expect(connection.send(keys.legacyA.bearer(start - 4000), at: start).rejection == .expiredProviderToken)
        let outcome = connection.send(keys.legacyA.bearer(start), at: start + 1)
        #expect(outcome.rejection == nil)
        #expect(outcome.raiseStreamLimit, "the first valid token still opens the stream gate")
    }

    @Test func iatTooFarInTheFutureIsInvalid() {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.legacyA.bearer(start + 120), at: start)
        #expect(outcome.rejection == .invalidProviderToken)
        #expect(tokenError(outcome.record)?.contains("future") == true)
        #expect(outcome.raiseStreamLimit == false)
    }

    @Test func iatSlightlyInTheFutureIsWithinClockSkew() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start + 30), at: start).rejection == nil)
        var edge = Connection(keys.policy())
        #expect(edge.send(keys.legacyA.bearer(start + 60), at: start).rejection == nil)
    }

    @Test func clockSkewIsASetting() {
        var policy = keys.policy()
        policy.clockSkewSeconds = 0
        var strict = Connection(policy)
        #expect(strict.send(keys.legacyA.bearer(start + 30), at: start).rejection == .invalidProviderToken)
        policy.clockSkewSeconds = 300
        var lax = Connection(policy)
        #expect(lax.send(keys.legacyA.bearer(start + 120), at: start).rejection == nil)
    }

    @Test func futureTokenDoesNotPoisonTheConnection() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start + 600), at: start).rejection == .invalidProviderToken)
        #expect(connection.send(keys.legacyA.bearer(start), at: start + 1).rejection == nil)
    }

    // MARK: Refresh rate

    @Test func sameTokenReusedFor59MinutesIsAcceptedEveryTime() {
        var connection = Connection(keys.policy())
        let token = keys.legacyA.bearer(start)
        for offset in [0, 1, 5, 19, 20, 21, 40, 59] as [Int64] {
            let outcome = connection.send(token, at: start + offset * minute)
            #expect(outcome.rejection == nil, "at \(offset) min")
        }
    }

    @Test func switchingTokensAfter5MinutesIsTooManyUpdates() {
        var connection = Connection(keys.policy())
        let first = keys.legacyA.bearer(start)
        let second = keys.legacyA.bearer(start + 5 * minute)
        #expect(connection.send(first, at: start).rejection == nil)

        let outcome = connection.send(second, at: start + 5 * minute)
        #expect(outcome.rejection == .tooManyProviderTokenUpdates)
        #expect(outcome.rejection?.status == 429)
        #expect(tokenError(outcome.record) != nil)

        // The token in use keeps working; the refused one did not become current.
        #expect(connection.send(first, at: start + 6 * minute).rejection == nil)
        // The same new token, once 20 minutes have passed since the connection's last switch, is fine.
        #expect(connection.send(second, at: start + 21 * minute).rejection == nil)
        #expect(connection.send(second, at: start + 22 * minute).rejection == nil)
    }

    /// `currentAuthorization` (what the next request's header is matched against before any parsing) is the value
    /// last accepted: a refused switch leaves it, an accepted spelling of the same token takes its place.
    @Test func theCurrentAuthorizationIsTheValueLastAccepted() {
        var connection = Connection(keys.policy())
        let jwt = try! keys.legacyA.signer.token(issuedAt: start)
        let first = "bearer " + jwt
        #expect(connection.state.currentAuthorization == nil)
        #expect(connection.send(first, at: start).rejection == nil)
        #expect(connection.state.currentAuthorization == first)
        #expect(connection.send(keys.legacyA.bearer(start + 5 * minute), at: start + 5 * minute).rejection == .tooManyProviderTokenUpdates)
        #expect(connection.state.currentAuthorization == first)
        #expect(connection.send("Bearer  " + jwt, at: start + 6 * minute).rejection == nil)
        #expect(connection.state.currentAuthorization == "Bearer  " + jwt)
        // The same value still goes through the token's rules: an hour on, it has expired.
        #expect(connection.send("Bearer  " + jwt, at: start + 61 * minute).rejection == .expiredProviderToken)
        #expect(connection.send(first, at: start + 62 * minute).rejection == .expiredProviderToken)
    }

    @Test func switchingTokensAfter21MinutesIsAccepted() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        let outcome = connection.send(keys.legacyA.bearer(start + 21 * minute), at: start + 21 * minute)
        #expect(outcome.rejection == nil)
        #expect(outcome.raiseStreamLimit == false)
        // And the 20-minute window restarts from that switch.
        #expect(connection.send(keys.legacyA.bearer(start + 30 * minute), at: start + 30 * minute).rejection == .tooManyProviderTokenUpdates)
        #expect(connection.send(keys.legacyA.bearer(start + 42 * minute), at: start + 42 * minute).rejection == nil)
    }

    @Test func refreshBoundaryIsTwentyMinutes() {
        var early = Connection(keys.policy())
        #expect(early.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(
            early.send(keys.legacyA.bearer(start + 1), at: start + 20 * minute, extraMilliseconds: -1).rejection
                == .tooManyProviderTokenUpdates
        )
        var onTime = Connection(keys.policy())
        #expect(onTime.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(onTime.send(keys.legacyA.bearer(start + 1), at: start + 20 * minute).rejection == nil)
    }

    @Test func goingBackToAnEarlierTokenIsAlsoASwitch() {
        var connection = Connection(keys.policy())
        let first = keys.legacyA.bearer(start)
        let second = keys.legacyA.bearer(start + 21 * minute)
        #expect(connection.send(first, at: start).rejection == nil)
        #expect(connection.send(second, at: start + 21 * minute).rejection == nil)
        #expect(connection.send(first, at: start + 25 * minute).rejection == .tooManyProviderTokenUpdates)
    }

    @Test func rejectedFirstTokenDoesNotStartTheRefreshWindow() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start + 600), at: start).rejection == .invalidProviderToken)
        #expect(connection.send(keys.legacyA.bearer(start + 1), at: start + 1).rejection == nil)
    }

    // MARK: Teams and key mixing

    @Test func tokenForAnotherTeamOnTheSameConnectionIsInvalid() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        let outcome = connection.send(keys.otherTeam.bearer(start + 25 * minute), at: start + 25 * minute)
        #expect(outcome.rejection == .invalidProviderToken)
        #expect(tokenError(outcome.record)?.contains(teamA) == true)
        // The other team is fine on its own connection.
        var other = Connection(keys.policy())
        #expect(other.send(keys.otherTeam.bearer(start), at: start).rejection == nil)
    }

    @Test func anotherTeamsTokenSoonAfterIsStillInvalidNotTooMany() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.otherTeam.bearer(start), at: start + minute).rejection == .invalidProviderToken)
    }

    @Test func teamScopedThenTopicSpecificIsUnrelated() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.teamDev.bearer(start), at: start).rejection == nil)
        let outcome = connection.send(keys.topicA.bearer(start + 25 * minute), at: start + 25 * minute)
        #expect(outcome.rejection == .unrelatedKeyIdInToken)
        #expect(tokenError(outcome.record)?.contains("TEAMDEV001") == true)
    }

    @Test func legacyThenTopicSpecificIsUnrelated() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.topicA.bearer(start + 25 * minute), at: start + 25 * minute).rejection == .unrelatedKeyIdInToken)
    }

    @Test func topicSpecificThenAnotherTopicKeyIsUnrelated() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.topicA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.topicB.bearer(start + 25 * minute), at: start + 25 * minute).rejection == .unrelatedKeyIdInToken)
    }

    @Test func topicSpecificThenTeamKeyIsUnrelated() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.topicA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.teamDev.bearer(start + 25 * minute), at: start + 25 * minute).rejection == .unrelatedKeyIdInToken)
        #expect(connection.send(keys.legacyA.bearer(start + 26 * minute), at: start + 26 * minute).rejection == .unrelatedKeyIdInToken)
    }

    @Test func topicSpecificKeyMayRefreshItsOwnToken() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.topicA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.topicA.bearer(start + 25 * minute), at: start + 25 * minute).rejection == nil)
    }

    @Test func keyMixingIsDecidedOnTheFirstKeyNotTheCurrentOne() {
        // legacyA first, legacyB later (allowed), then a topic key: unrelated to legacyA.
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.legacyB.bearer(start + 21 * minute), at: start + 21 * minute).rejection == nil)
        #expect(connection.send(keys.topicA.bearer(start + 45 * minute), at: start + 45 * minute).rejection == .unrelatedKeyIdInToken)
    }

    @Test func teamScopedDevThenProdIsUnrelatedWhenBothHaveEnvironments() throws {
        // On one mock (one environment) the environment check answers first; the mixing rule itself:
        let devToken = try keys.policy().verifier.verify(try keys.teamDev.signer.token(issuedAt: start)).get()
        let prodToken = try keys.policy().verifier.verify(try keys.teamProd.signer.token(issuedAt: start)).get()
        let legacyToken = try keys.policy().verifier.verify(try keys.legacyA.signer.token(issuedAt: start)).get()
        let dev2Token = try keys.policy().verifier.verify(try keys.teamDev2.signer.token(issuedAt: start)).get()
        #expect(ConnectionAuthState.keysMayShareConnection(first: devToken, next: prodToken) == false)
        #expect(ConnectionAuthState.keysMayShareConnection(first: prodToken, next: devToken) == false)
        #expect(ConnectionAuthState.keysMayShareConnection(first: devToken, next: legacyToken))
        #expect(ConnectionAuthState.keysMayShareConnection(first: legacyToken, next: devToken))
        #expect(ConnectionAuthState.keysMayShareConnection(first: devToken, next: dev2Token))
        #expect(ConnectionAuthState.keysMayShareConnection(first: devToken, next: devToken))

        // Through a connection: the production key on the development service is refused for its environment.
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.teamDev.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.teamProd.bearer(start + 25 * minute), at: start + 25 * minute).rejection == .badEnvironmentKeyInToken)
    }

    @Test func twoTeamScopedKeysOfTheSameEnvironmentMayShareAfter20Minutes() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.teamDev.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.teamDev2.bearer(start + 5 * minute), at: start + 5 * minute).rejection == .tooManyProviderTokenUpdates)
        #expect(connection.send(keys.teamDev2.bearer(start + 21 * minute), at: start + 21 * minute).rejection == nil)
    }

    @Test func twoLegacyKeysMayShareAfter20Minutes() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
        #expect(connection.send(keys.legacyB.bearer(start + 5 * minute), at: start + 5 * minute).rejection == .tooManyProviderTokenUpdates)
        let outcome = connection.send(keys.legacyB.bearer(start + 21 * minute), at: start + 21 * minute)
        #expect(outcome.rejection == nil)
        #expect(outcome.record == .token(keyID: "LEGACYBBBB", teamID: teamA, issuedAt: start + 21 * minute, signatureVerified: true, error: nil))
    }

    @Test func unknownKeysAreTeamBoundToo() {
        var connection = Connection(keys.policy(acceptUnknownKeys: true))
        let stranger = TestKey("ZZZZ999999", team: "TEAM999999")
        let outcome = connection.send(stranger.bearer(start), at: start)
        #expect(outcome.rejection == nil)
        #expect(outcome.record == .token(keyID: "ZZZZ999999", teamID: "TEAM999999", issuedAt: start, signatureVerified: false, error: nil))
        #expect(outcome.allowedTopics == nil)
        #expect(connection.send(keys.legacyA.bearer(start + 25 * minute), at: start + 25 * minute).rejection == .invalidProviderToken)
    }

    @Test func unknownKeysStillFollowAgeAndRefreshRules() {
        var connection = Connection(keys.policy(acceptUnknownKeys: true))
        let stranger = TestKey("ZZZZ999999", team: "TEAM999999")
        #expect(connection.send(stranger.bearer(start - 4000), at: start).rejection == .expiredProviderToken)
        var other = Connection(keys.policy(acceptUnknownKeys: true))
        #expect(other.send(stranger.bearer(start), at: start).rejection == nil)
        #expect(other.send(stranger.bearer(start + 60), at: start + 60).rejection == .tooManyProviderTokenUpdates)
    }

    // MARK: Environments

    @Test func productionKeyOnDevelopmentIsBadEnvironmentKey() {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.teamProd.bearer(start), at: start)
        #expect(outcome.rejection == .badEnvironmentKeyInToken)
        #expect(outcome.rejection?.status == 403)
        #expect(outcome.raiseStreamLimit == false)
    }

    @Test func developmentKeyOnProductionIsBadEnvironmentKey() {
        var connection = Connection(keys.policy(), environment: .production)
        #expect(connection.send(keys.teamDev.bearer(start), at: start).rejection == .badEnvironmentKeyInToken)
        #expect(connection.send(keys.topicA.bearer(start), at: start).rejection == .badEnvironmentKeyInToken)
        var prod = Connection(keys.policy(), environment: .production)
        #expect(prod.send(keys.teamProd.bearer(start), at: start).rejection == nil)
    }

    @Test func documentedSpellingOfTheEnvironmentReasonIsAnOption() {
        var connection = Connection(keys.policy(environmentKeyReason: .badEnvironmentKeyIdInToken))
        #expect(connection.send(keys.teamProd.bearer(start), at: start).rejection == .badEnvironmentKeyIdInToken)
    }

    @Test(arguments: APNsEnvironment.allCases)
    func legacyKeysWorkInBothEnvironments(environment: APNsEnvironment) {
        var connection = Connection(keys.policy(), environment: environment)
        #expect(connection.send(keys.legacyA.bearer(start), at: start).rejection == nil)
    }

    // MARK: Topics

    @Test func topicSpecificKeyAllowsItsBundleAndSuffixedTopics() throws {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.topicA.bearer(start), at: start)
        #expect(outcome.rejection == nil)
        let allowed = try #require(outcome.allowedTopics)
        #expect(allowed == .bundles(["com.a"]))
        #expect(allowed.allows("com.a"))
        #expect(allowed.allows("com.a.voip"))
        #expect(allowed.allows("com.a.complication"))
        #expect(allowed.allows("com.b") == false)
        #expect(allowed.allows("com.ab") == false)
        #expect(allowed.allows("com") == false)
    }

    @Test func topicSpecificKeyAllowanceHoldsOnReusedTokens() {
        var connection = Connection(keys.policy())
        let token = keys.topicA.bearer(start)
        _ = connection.send(token, at: start)
        #expect(connection.send(token, at: start + minute).allowedTopics == .bundles(["com.a"]))
    }

    @Test func teamScopedKeyAllowsAnyTopic() {
        var connection = Connection(keys.policy())
        let outcome = connection.send(keys.teamDev.bearer(start), at: start)
        #expect(outcome.allowedTopics == nil)
        #expect(outcome.defaultTopic == nil)
    }

    @Test func providerKeyAllowsTopic() {
        let key = keys.topicA.key
        #expect(key.isTopicSpecific)
        #expect(key.allows(topic: "com.a"))
        #expect(key.allows(topic: "com.a.voip"))
        #expect(key.allows(topic: "com.b") == false)
        #expect(key.allows(topic: "com.ab") == false)
        #expect(keys.legacyA.key.isTopicSpecific == false)
        #expect(keys.legacyA.key.allows(topic: "anything.at.all"))
    }

    // MARK: Stream gating

    @Test(arguments: [AuthenticationMode.token, .either])
    func tokenConnectionsStartGatedAndOpenOnce(mode: AuthenticationMode) {
        var connection = Connection(keys.policy(mode: mode))
        #expect(connection.state.isStreamGated)

        // Rejected requests do not open the gate.
        #expect(connection.send(nil, at: start).raiseStreamLimit == false)
        #expect(connection.send("Basic x", at: start).raiseStreamLimit == false)
        #expect(connection.send(keys.teamProd.bearer(start), at: start).raiseStreamLimit == false)
        #expect(connection.state.isStreamGated)

        let token = keys.legacyA.bearer(start)
        let first = connection.send(token, at: start)
        #expect(first.rejection == nil)
        #expect(first.raiseStreamLimit)
        #expect(connection.state.isStreamGated == false)

        #expect(connection.send(token, at: start + 1).raiseStreamLimit == false)
        #expect(connection.send(keys.legacyB.bearer(start + 21 * minute), at: start + 21 * minute).raiseStreamLimit == false)
        #expect(connection.send(nil, at: start + 22 * minute).raiseStreamLimit == false)
        #expect(connection.state.isStreamGated == false)
    }

    @Test func expiredFirstTokenDoesNotOpenTheGate() {
        var connection = Connection(keys.policy())
        #expect(connection.send(keys.legacyA.bearer(start - 4000), at: start).raiseStreamLimit == false)
        #expect(connection.state.isStreamGated)
    }

    @Test func certificateConnectionsAreNotGated() {
        let either = ConnectionAuthState(certificate: devCertificate, mode: .either)
        #expect(either.isStreamGated == false)
        let certificate = ConnectionAuthState(certificate: devCertificate, mode: .certificate)
        #expect(certificate.isStreamGated == false)
        let none = ConnectionAuthState(certificate: nil, mode: .none)
        #expect(none.isStreamGated == false)
        let certificateModeNoCert = ConnectionAuthState(certificate: nil, mode: .certificate)
        #expect(certificateModeNoCert.isStreamGated == false)

        var connection = Connection(keys.policy(), certificate: devCertificate)
        #expect(connection.send(nil, at: start).raiseStreamLimit == false)
    }

    @Test func tokenModeGatesEvenWithACertificate() {
        var connection = Connection(keys.policy(mode: .token), certificate: devCertificate)
        #expect(connection.state.isStreamGated)
        // The certificate is not looked at in token mode.
        #expect(connection.send(nil, at: start).rejection == .missingProviderToken)
        #expect(connection.send(keys.legacyA.bearer(start), at: start).raiseStreamLimit)
    }

    // MARK: Modes

    @Test func modeNoneNeverRejects() {
        var connection = Connection(keys.policy(mode: .none))
        let authorizations: [String?] = [nil, "", "Basic x", keys.teamProd.bearer(start), keys.legacyA.bearer(start - 99_999)]
        for authorization in authorizations {
            let outcome = connection.send(authorization, at: start)
            #expect(outcome.rejection == nil)
            #expect(outcome.record == .none)
            #expect(outcome.record.method == "none")
            #expect(outcome.allowedTopics == nil)
            #expect(outcome.raiseStreamLimit == false)
            #expect(outcome.wrongCertificateEnvironment == false)
        }
    }

    @Test func certificateModeWithoutCertificateIsMissingProviderToken() {
        var connection = Connection(keys.policy(mode: .certificate))
        for authorization in [nil, keys.legacyA.bearer(start)] {
            let outcome = connection.send(authorization, at: start)
            #expect(outcome.rejection == .missingProviderToken)
            #expect(outcome.record == .missing)
        }
    }

    // MARK: Certificates

    @Test(arguments: [AuthenticationMode.certificate, .either])
    func certificateForTheOtherEnvironmentIsFlagged(mode: AuthenticationMode) {
        var connection = Connection(keys.policy(mode: mode), certificate: devCertificate, environment: .production)
        let outcome = connection.send(nil, at: start)
        #expect(outcome.wrongCertificateEnvironment)
        #expect(outcome.record == .certificate(subject: devCertificate.subject, topics: ["com.example.app"]))
        #expect(outcome.defaultTopic == nil)
    }

    @Test func certificateForThisEnvironmentIsFine() {
        var connection = Connection(keys.policy(mode: .certificate), certificate: devCertificate)
        let outcome = connection.send(nil, at: start)
        #expect(outcome.wrongCertificateEnvironment == false)
        #expect(outcome.rejection == nil)
        #expect(outcome.record.method == "certificate")
    }

    @Test(arguments: APNsEnvironment.allCases)
    func universalCertificateWorksInBothEnvironments(environment: APNsEnvironment) {
        var connection = Connection(keys.policy(), certificate: multiTopicCertificate, environment: environment)
        let outcome = connection.send(nil, at: start)
        #expect(outcome.wrongCertificateEnvironment == false)
        #expect(outcome.rejection == nil)
    }

    @Test func singleTopicCertificateGivesADefaultTopic() {
        var connection = Connection(keys.policy(), certificate: devCertificate)
        let outcome = connection.send(nil, at: start)
        #expect(outcome.defaultTopic == "com.example.app")
        #expect(outcome.allowedTopics == .exactly(["com.example.app"]))
    }

    @Test func multiTopicCertificateHasNoDefaultTopic() throws {
        var connection = Connection(keys.policy(), certificate: multiTopicCertificate)
        let outcome = connection.send(nil, at: start)
        #expect(outcome.defaultTopic == nil)
        let allowed = try #require(outcome.allowedTopics)
        #expect(allowed == .exactly(multiTopicCertificate.topics))
        #expect(allowed.allows("com.example.app.voip"))
        // A certificate lists topics exactly: no suffix wildcard.
        #expect(allowed.allows("com.example.app.pushkit.fileprovider") == false)
        #expect(allowed.allows("com.example") == false)
    }

    @Test func authorizationIsIgnoredWhenACertificateIsPresentInEither() {
        var connection = Connection(keys.policy(mode: .either), certificate: devCertificate)
        let authorizations: [String?] = [
            nil, "garbage", keys.teamProd.bearer(start), keys.legacyA.bearer(start - 99_999),
            keys.otherTeam.bearer(start), keys.legacyA.bearer(start + 10),
        ]
        for authorization in authorizations {
            let outcome = connection.send(authorization, at: start)
            #expect(outcome.rejection == nil)
            #expect(outcome.record == .certificate(subject: devCertificate.subject, topics: devCertificate.topics))
            #expect(outcome.raiseStreamLimit == false)
        }
    }

    @Test func recordMethods() {
        #expect(AuthenticationRecord.missing.method == "missing")
        #expect(AuthenticationRecord.none.method == "none")
        #expect(AuthenticationRecord.certificate(subject: "s", topics: []).method == "certificate")
        #expect(AuthenticationRecord.token(keyID: nil, teamID: nil, issuedAt: nil, signatureVerified: false, error: nil).method == "token")
    }

    @Test func defaultPolicyHasApplesNumbers() {
        let policy = AuthenticationPolicy()
        #expect(policy.mode == .either)
        #expect(policy.tokenLifetimeSeconds == 3600)
        #expect(policy.minimumRefreshSeconds == 1200)
        #expect(policy.environmentKeyReason == .badEnvironmentKeyInToken)
        #expect(policy.expiredTokenPoisonsConnection)
    }
}

// MARK: Hostile iat values (run in a child process: an arithmetic overflow traps and would kill the test run)

/// Authenticates, on a fresh `.either` connection at `start`, a token whose claims are `claims` (JSON, verbatim).
/// With `configured`, the token is signed by a configured legacy key; otherwise its kid is unknown, the signature
/// is garbage and the policy accepts unknown keys (`--accept-unknown-keys`).
private func authenticateRawClaims(_ claims: String, configured: Bool) -> Reason? {
    let privateKey = P256.Signing.PrivateKey()
    let keyID = configured ? "LEGACYAAAA" : "ZZZZ999999"
    let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
    let input = header + "." + Base64URL.encode(Array(claims.utf8))
    let signature: [UInt8] =
        configured ? Array(try! privateKey.signature(for: Array(input.utf8)).rawRepresentation) : Array(repeating: 7, count: 64)
    let policy = AuthenticationPolicy(
        verifier: ProviderTokenVerifier(
            keys: [ProviderKey(keyID: "LEGACYAAAA", teamID: teamA, publicKey: privateKey.publicKey)],
            acceptUnknownKeys: !configured
        )
    )
    var state = ConnectionAuthState(certificate: nil, mode: .either)
    return state.authenticate(
        authorization: "bearer " + input + "." + Base64URL.encode(signature),
        policy: policy,
        environment: .development,
        nowMilliseconds: start * 1000
    ).rejection
}

/// Exits 0 when the token is refused as a bad or stale token, 1 when it is accepted or refused otherwise.
private func exitUnlessRefused(_ claims: String, configured: Bool) -> Never {
    let rejection = authenticateRawClaims(claims, configured: configured)
    exit(rejection == .invalidProviderToken || rejection == .expiredProviderToken ? 0 : 1)
}

extension ConnectionAuthStateTests {
    @Test func extremeButHarmlessIatValuesAreRefused() async {
        // These do not overflow: iat far in the future, or merely ancient.
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM000001","iat":"9223372036854775807"}"#, configured: true)
        }
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM000001","iat":-1}"#, configured: true)
        }
    }

    /// Regression: `ConnectionAuthState.authenticateToken` computed `nowSeconds - verified.token.issuedAt` with
    /// trapping arithmetic, so an `iat` near `Int64.min` overflows and crashes the whole server (SIGILL).
    @Test func iatNearInt64MinFromAConfiguredKeyDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM000001","iat":"-9223372036854775808"}"#, configured: true)
        }
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM000001","iat":-9223372036854775000}"#, configured: true)
        }
    }

    /// Regression: with `--accept-unknown-keys` no key is needed at all. `iat: 1e20` (a JSON number beyond Int64)
    /// comes out of `NSNumber.int64Value` as `Int64.min`, and the same subtraction traps: any client can
    /// crash the mock with one request.
    @Test func hugeIatWithAcceptUnknownKeysDoesNotCrash() async {
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM999999","iat":1e20}"#, configured: false)
        }
        await #expect(processExitsWith: .success) {
            exitUnlessRefused(#"{"iss":"TEAM999999","iat":-1e20}"#, configured: false)
        }
    }
}
