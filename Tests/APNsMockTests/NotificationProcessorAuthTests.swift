import Crypto
import Testing

@testable import APNsMock

private let deviceToken = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
private let nowSeconds: Int64 = 1_700_000_000
private let authKeyID = "KEYID00001"
private let authTeamID = "TEAM000001"
private let topicKeyID = "TOPICKEY01"

private let singleTopicCertificate = CertificateIdentity(
    subject: "UID=com.example.app, CN=Apple Development IOS Push Services: com.example.app",
    topics: ["com.example.app"],
    environments: [.development]
)
private let multiTopicCertificate = CertificateIdentity(
    subject: "UID=com.example.app, CN=Apple Push Services: com.example.app",
    topics: ["com.example.app", "com.example.app.voip", "com.example.app.complication"],
    environments: [.development]
)
private let productionCertificate = CertificateIdentity(
    subject: "UID=com.example.app, CN=Apple Production IOS Push Services: com.example.app",
    topics: ["com.example.app"],
    environments: [.production]
)

private func request(
    method: String = "POST",
    path: String = "/3/device/" + deviceToken,
    topic: String? = "com.example.app",
    authorization: String? = nil,
    extra: [(String, String)] = []
) -> APNsRequest {
    var headers: [HeaderField] = []
    if let authorization { headers.append(HeaderField(name: "authorization", value: authorization)) }
    if let topic { headers.append(HeaderField(name: "apns-topic", value: topic)) }
    headers += extra.map { HeaderField(name: $0.0, value: $0.1) }
    return APNsRequest(method: method, path: path, headers: headers, payload: Array(#"{"aps":{"alert":"Hello"}}"#.utf8))
}

/// A processor with one team-scoped key and one topic-specific key (for `com.topic`), and its connection.
private struct Harness {
    let teamSigner: ProviderTokenSigner
    let topicSigner: ProviderTokenSigner
    let processor: NotificationProcessor
    var auth: ConnectionAuthState
    var ids = APNsIDGenerator()
    var stream: Int32 = 1
    let recorder = Recorder()
    var recordingContext = RecordingContext()

    init(
        mode: AuthenticationMode = .either,
        certificate: CertificateIdentity? = nil,
        environment: APNsEnvironment = .development,
        acceptUnknownKeys: Bool = false,
        maxConcurrentStreams: UInt32 = 1000
    ) {
        let teamKey = P256.Signing.PrivateKey()
        let topicKey = P256.Signing.PrivateKey()
        teamSigner = ProviderTokenSigner(keyID: authKeyID, teamID: authTeamID, privateKey: teamKey)
        topicSigner = ProviderTokenSigner(keyID: topicKeyID, teamID: authTeamID, privateKey: topicKey)
        let verifier = ProviderTokenVerifier(
            keys: [
                ProviderKey(keyID: authKeyID, teamID: authTeamID, publicKey: teamKey.publicKey),
                ProviderKey(
                    keyID: topicKeyID,
                    teamID: authTeamID,
                    publicKey: topicKey.publicKey,
                    environment: .development,
                    topics: ["com.topic"]
                ),
            ],
            acceptUnknownKeys: acceptUnknownKeys
        )
        processor = NotificationProcessor(
            authentication: AuthenticationPolicy(mode: mode, verifier: verifier),
            environment: environment,
            maxConcurrentStreams: maxConcurrentStreams,
            now: { nowSeconds * 1000 }
        )
        auth = processor.makeAuthState(certificate: certificate)
    }

    func bearer(_ signer: ProviderTokenSigner? = nil, issuedAt: Int64 = nowSeconds) -> String {
        "bearer " + (try! (signer ?? teamSigner).token(issuedAt: issuedAt))
    }

    mutating func send(_ request: APNsRequest) -> ProviderDecision {
        defer { stream += 2 }
        let decision = processor.process(request, streamID: stream, connection: ConnectionInfo(id: 7), auth: &auth, ids: &ids)
        recorder.record(request, streamID: stream, connection: ConnectionInfo(id: 7), outcome: decision.outcome, context: &recordingContext)
        return decision
    }

    /// Pushes with these `authorization` values, in order, on one new connection of the processor's own state
    /// (connection 9), each decided and recorded as the server does.
    mutating func sendOnOneConnection(_ authorizations: [String?]) {
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        for (index, authorization) in authorizations.enumerated() {
            let sent = request(authorization: authorization)
            let streamID = Int32(2 * index + 1)
            let decision = processor.process(sent, streamID: streamID, connection: ConnectionInfo(id: 9), state: &state, ids: &ids)
            recorder.record(sent, streamID: streamID, connection: ConnectionInfo(id: 9), outcome: decision.outcome, context: &recordingContext)
        }
    }

    var recordings: [RecordedNotification] { recorder.store.list().notifications }
}

private func reason(_ decision: ProviderDecision) -> Reason? { decision.response?.reason }

@Suite("NotificationProcessor authentication")
struct NotificationProcessorAuthTests {
    // MARK: Order of checks

    @Test func badPathIsAnsweredBeforeAuthentication() throws {
        var harness = Harness(mode: .token)
        let decision = harness.send(request(path: "/3/devices/" + deviceToken))
        #expect(decision.response?.status == 404)
        #expect(reason(decision) == .badPath)
        #expect(decision.actions.isEmpty)
        let recording = try #require(harness.recordings.last)
        #expect(recording.authentication == nil)
        // Not counted as a request with a valid token: the gate stays shut.
        #expect(harness.auth.isStreamGated)
    }

    @Test func methodNotAllowedIsAnsweredBeforeAuthentication() {
        var harness = Harness(mode: .token)
        let decision = harness.send(request(method: "GET"))
        #expect(decision.response?.status == 405)
        #expect(reason(decision) == .methodNotAllowed)
        #expect(harness.recordings.last?.authentication == nil)
    }

    @Test func authenticationIsAnsweredBeforeBadDeviceToken() {
        var harness = Harness(mode: .token)
        let decision = harness.send(request(path: "/3/device/not-hex"))
        #expect(decision.response?.status == 403)
        #expect(reason(decision) == .missingProviderToken)
        #expect(harness.recordings.last?.authentication == .missing)

        let bad = harness.send(request(path: "/3/device/not-hex", authorization: "bearer a.b.c"))
        #expect(reason(bad) == .invalidProviderToken)
    }

    @Test func authenticationIsAnsweredBeforeMissingTopicAndPayloadErrors() {
        var harness = Harness(mode: .token)
        var empty = request(topic: nil)
        empty.payload = []
        empty.payloadSize = 0
        #expect(reason(harness.send(empty)) == .missingProviderToken)
    }

    @Test func validTokenThenBadDeviceTokenGetsTheValidationReason() {
        var harness = Harness(mode: .token)
        let decision = harness.send(request(path: "/3/device/not-hex", authorization: harness.bearer()))
        #expect(reason(decision) == .badDeviceToken)
    }

    @Test func missingTopicComesBeforeTopicDisallowedForTokens() {
        var harness = Harness()
        let decision = harness.send(request(topic: nil, authorization: harness.bearer(harness.topicSigner)))
        #expect(reason(decision) == .missingTopic)
        #expect(decision.response?.status == 400)
    }

    @Test func topicSpecificKeyRestrictsTopics() {
        var harness = Harness()
        let token = harness.bearer(harness.topicSigner)
        #expect(harness.send(request(topic: "com.topic", authorization: token)).response?.status == 200)
        #expect(harness.send(request(topic: "com.topic.voip", authorization: token, extra: [("apns-push-type", "voip")])).response?.status == 200)
        let other = harness.send(request(topic: "com.example.app", authorization: token))
        #expect(reason(other) == .topicDisallowed)
        #expect(other.response?.status == 400)
    }

    @Test func teamScopedKeyAllowsAnyTopic() {
        var harness = Harness()
        let token = harness.bearer()
        #expect(harness.send(request(topic: "com.example.app", authorization: token)).response?.status == 200)
        #expect(harness.send(request(topic: "org.other.app", authorization: token)).response?.status == 200)
    }

    @Test func tokenRequestWithoutTopicIsMissingTopic() {
        var harness = Harness()
        #expect(reason(harness.send(request(topic: nil, authorization: harness.bearer()))) == .missingTopic)
    }

    // MARK: Certificates

    @Test func multiTopicCertificateWithoutTopicIsMissingTopic() {
        var harness = Harness(certificate: multiTopicCertificate)
        #expect(reason(harness.send(request(topic: nil))) == .missingTopic)
    }

    @Test func certificateTopicNotInTheCertificateIsDisallowed() {
        var harness = Harness(certificate: multiTopicCertificate)
        let decision = harness.send(request(topic: "com.other.app"))
        #expect(reason(decision) == .topicDisallowed)
        #expect(decision.response?.status == 400)
        // Listed topics pass.
        #expect(harness.send(request(topic: "com.example.app.voip", extra: [("apns-push-type", "voip")])).response?.status == 200)
        #expect(harness.send(request(topic: "com.example.app")).response?.status == 200)
    }

    @Test func singleTopicCertificateTopicIsCheckedToo() {
        var harness = Harness(certificate: singleTopicCertificate)
        #expect(reason(harness.send(request(topic: "com.example.app.voip", extra: [("apns-push-type", "voip")]))) == .topicDisallowed)
    }

    @Test func singleTopicCertificateWithoutTopicIsAcceptedAndRecorded() throws {
        var harness = Harness(certificate: singleTopicCertificate)
        let decision = harness.send(request(topic: nil))
        #expect(decision.response?.status == 200)
        #expect(decision.response?.reason == nil)
        #expect(decision.actions.isEmpty, "certificate connections are not stream-gated")
        let recording = try #require(harness.recordings.last)
        #expect(recording.authentication == .certificate(subject: singleTopicCertificate.subject, topics: ["com.example.app"]))
        #expect(recording.authentication?.method == "certificate")
        #expect(recording.response?.status == 200)
    }

    @Test func authorizationHeaderIsIgnoredOnCertificateConnections() throws {
        var harness = Harness(certificate: singleTopicCertificate)
        let decision = harness.send(request(authorization: "bearer garbage"))
        #expect(decision.response?.status == 200)
        #expect(harness.recordings.last?.authentication?.method == "certificate")
    }

    @Test func wrongEnvironmentCertificateIsRefusedWithGoAway() throws {
        var harness = Harness(certificate: productionCertificate, environment: .development)
        let decision = harness.send(request())
        #expect(decision.response == nil)
        #expect(
            decision.actions == [
                .goAway(errorCode: 0, lastStreamID: 0, debugData: #"{"reason":"BadCertificateEnvironment"}"#),
                .goAway(errorCode: 0, lastStreamID: 0, debugData: ""),
                .close,
            ]
        )
        let recording = try #require(harness.recordings.last)
        #expect(recording.response == nil)
        #expect(recording.status == nil)
        let abandoned = try #require(recording.abandonedBecause)
        #expect(abandoned.contains("BadCertificateEnvironment"), "\(abandoned)")
        #expect(recording.authentication == .certificate(subject: productionCertificate.subject, topics: ["com.example.app"]))
        #expect(harness.recorder.store.statistics().abandoned == 1)
    }

    @Test func wrongEnvironmentCertificateWinsOverRequestFaults() {
        var harness = Harness(mode: .certificate, certificate: productionCertificate)
        let decision = harness.send(request(path: "/3/device/not-hex", topic: "com.other"))
        #expect(decision.response == nil)
        #expect(decision.actions.last == .close)
    }

    @Test func wrongEnvironmentCertificateStillLosesToBadPath() {
        var harness = Harness(certificate: productionCertificate)
        let decision = harness.send(request(path: "/4/device/" + deviceToken))
        #expect(reason(decision) == .badPath)
    }

    @Test func certificateModeWithoutCertificateIsMissingProviderToken() {
        var harness = Harness(mode: .certificate)
        let decision = harness.send(request(authorization: harness.bearer()))
        #expect(reason(decision) == .missingProviderToken)
        #expect(decision.actions.isEmpty)
    }

    // MARK: Stream gating

    @Test func firstValidTokenRaisesTheStreamLimit() {
        var harness = Harness(mode: .token)
        #expect(harness.processor.initialMaxConcurrentStreams(for: harness.auth) == 1)

        // A rejected request first: no SETTINGS change.
        let missing = harness.send(request())
        #expect(reason(missing) == .missingProviderToken)
        #expect(missing.actions.isEmpty)

        let token = harness.bearer()
        let first = harness.send(request(authorization: token))
        #expect(first.response?.status == 200)
        #expect(first.actions == [.setMaxConcurrentStreams(1000)])
        #expect(harness.processor.initialMaxConcurrentStreams(for: harness.auth) == 1000)

        let second = harness.send(request(authorization: token))
        #expect(second.response?.status == 200)
        #expect(second.actions.isEmpty)
    }

    @Test func raisedLimitIsTheConfiguredOne() {
        var harness = Harness(maxConcurrentStreams: 1500)
        #expect(harness.send(request(authorization: harness.bearer())).actions == [.setMaxConcurrentStreams(1500)])
    }

    @Test func validTokenWithARejectedNotificationStillOpensTheGate() {
        // The token was valid; the notification was not. APNs raises the limit after a valid token.
        var harness = Harness()
        let decision = harness.send(request(path: "/3/device/not-hex", authorization: harness.bearer()))
        #expect(reason(decision) == .badDeviceToken)
        #expect(decision.actions == [.setMaxConcurrentStreams(1000)])
    }

    @Test func certificateAndNoneConnectionsStartUngated() {
        let certificate = Harness(certificate: singleTopicCertificate)
        #expect(certificate.processor.initialMaxConcurrentStreams(for: certificate.auth) == 1000)
        let none = Harness(mode: .none)
        #expect(none.processor.initialMaxConcurrentStreams(for: none.auth) == 1000)
        let either = Harness(mode: .either)
        #expect(either.processor.initialMaxConcurrentStreams(for: either.auth) == 1)
    }

    // MARK: Recorded authentication

    @Test func recordingsCarryTheTokenAuthentication() throws {
        var harness = Harness()
        #expect(harness.send(request(authorization: harness.bearer())).response?.status == 200)
        let recording = try #require(harness.recordings.last)
        #expect(
            recording.authentication
                == .token(keyID: authKeyID, teamID: authTeamID, issuedAt: nowSeconds, signatureVerified: true, error: nil)
        )

        var query = NotificationQuery()
        query.authMethod = "token"
        query.keyID = authKeyID
        query.teamID = authTeamID
        #expect(harness.recorder.store.list(query).total == 1)
    }

    /// A connection's recordings share their authentication extras while the token stays the same; each must
    /// still carry its own request's authentication when the token changes.
    @Test func recordingsOnOneConnectionEachCarryTheirOwnToken() throws {
        var harness = Harness(acceptUnknownKeys: true)
        let valid = harness.bearer()
        harness.sendOnOneConnection([valid, valid, nil, "bearer not.a.token", valid])
        let keys = harness.recordings.map { recording -> String? in
            guard case .token(let keyID, _, _, _, let error) = recording.authentication else {
                return recording.authentication.map { "\($0)" }
            }
            return error == nil ? keyID : "error"
        }
        #expect(keys == [authKeyID, authKeyID, "missing", "error", authKeyID])
    }

    /// A connection's pushes with its current token share one extras object, found by the token's acceptance
    /// without comparing records; a push between them with other credentials keeps each recording right.
    @Test func tokenPushesOnOneConnectionShareTheirAcceptancesExtras() throws {
        var harness = Harness(acceptUnknownKeys: true)
        let token = harness.bearer()
        harness.sendOnOneConnection([token, token, nil, token, token])
        let accepted = AuthenticationRecord.token(keyID: authKeyID, teamID: authTeamID, issuedAt: nowSeconds, signatureVerified: true, error: nil)
        let recordings = harness.recordings
        #expect(recordings.map(\.authentication) == [accepted, accepted, .missing, accepted, accepted])
        let extras = recordings.map { $0.fields.extras }
        #expect(extras[0] === extras[1])
        #expect(extras[2] !== extras[1])
        // The missing token's extras replaced the connection's shared ones: a new object, then shared again.
        #expect(extras[3] !== extras[2] && extras[3] !== extras[1] && extras[3] === extras[4])
    }

    @Test func recordingsOfUnknownKeysSayTheSignatureWasNotChecked() throws {
        var harness = Harness(acceptUnknownKeys: true)
        let stranger = ProviderTokenSigner(keyID: "ZZZZ999999", teamID: "TEAM999999", privateKey: P256.Signing.PrivateKey())
        #expect(harness.send(request(authorization: harness.bearer(stranger))).response?.status == 200)
        let recording = try #require(harness.recordings.last)
        #expect(
            recording.authentication
                == .token(keyID: "ZZZZ999999", teamID: "TEAM999999", issuedAt: nowSeconds, signatureVerified: false, error: nil)
        )
    }

    @Test func recordingsOfRejectedTokensCarryTheError() throws {
        var harness = Harness()
        let decision = harness.send(request(authorization: harness.bearer(issuedAt: nowSeconds - 7200)))
        #expect(reason(decision) == .expiredProviderToken)
        #expect(decision.response?.status == 403)
        let recording = try #require(harness.recordings.last)
        guard case .token(let keyID, let teamID, let iat, let verified, let error) = recording.authentication else {
            Issue.record("expected a token record, got \(String(describing: recording.authentication))")
            return
        }
        #expect(keyID == authKeyID)
        #expect(teamID == authTeamID)
        #expect(iat == nowSeconds - 7200)
        #expect(verified)
        #expect(error != nil)
    }

    @Test func modeNoneRecordsNone() throws {
        var harness = Harness(mode: .none)
        let decision = harness.send(request())
        #expect(decision.response?.status == 200)
        #expect(decision.actions.isEmpty)
        #expect(harness.recordings.last?.authentication == AuthenticationRecord.none)
    }

    // MARK: Token rules through the processor

    @Test func tooManyProviderTokenUpdatesIs429() {
        var harness = Harness()
        #expect(harness.send(request(authorization: harness.bearer())).response?.status == 200)
        let decision = harness.send(request(authorization: harness.bearer(issuedAt: nowSeconds - 10)))
        #expect(decision.response?.status == 429)
        #expect(reason(decision) == .tooManyProviderTokenUpdates)
        #expect(decision.response?.body == #"{"reason":"TooManyProviderTokenUpdates"}"#)
    }

    @Test func developmentKeyOnProductionIsBadEnvironmentKey() {
        var harness = Harness(environment: .production)
        let decision = harness.send(request(topic: "com.topic", authorization: harness.bearer(harness.topicSigner)))
        #expect(reason(decision) == .badEnvironmentKeyInToken)
        #expect(decision.response?.status == 403)
    }
}
