import Crypto
import Testing

@testable import APNsMock

private let deviceToken = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
private let nowSeconds: Int64 = 1_700_000_000

private func push(
    topic: String? = "com.example.app", authorization: String? = nil, authority: String? = nil, path: String = "/3/device/" + deviceToken
) -> APNsRequest {
    var headers: [HeaderField] = []
    if let authorization { headers.append(HeaderField(name: "authorization", value: authorization)) }
    if let topic { headers.append(HeaderField(name: "apns-topic", value: topic)) }
    return APNsRequest(method: "POST", path: path, authority: authority, headers: headers, payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8))
}

private func bearer(team: String) -> String {
    let signer = ProviderTokenSigner(keyID: "KEY\(team.suffix(7))", teamID: team, privateKey: P256.Signing.PrivateKey())
    return "bearer " + (try! signer.token(issuedAt: nowSeconds))
}

/// A processor and recorder with tenants, deciding and recording as the server does, one connection at a time.
private struct TenantHarness {
    let primary = ActiveScenario(now: { nowSeconds * 1000 })
    let tenants: TenantDirectory
    let processor: NotificationProcessor
    let recorder: Recorder
    var context = RecordingContext()
    var ids = APNsIDGenerator()
    var stream: Int32 = 1

    init(mode: TenantMode, limit: Int = 1000, start: Scenario? = nil, auth: AuthenticationMode = .none) {
        tenants = TenantDirectory(mode: mode, limit: limit, primary: primary, startScenario: start) {
            ActiveScenario(now: { nowSeconds * 1000 })
        }
        processor = NotificationProcessor(
            authentication: AuthenticationPolicy(mode: auth, verifier: ProviderTokenVerifier(keys: [], acceptUnknownKeys: true)),
            scenario: primary,
            tenants: tenants,
            now: { nowSeconds * 1000 }
        )
        recorder = Recorder(devices: primary.devices, tenants: tenants)
    }

    mutating func send(_ request: APNsRequest, on state: inout ProviderConnectionState, connection: UInt64 = 1) -> ProviderDecision {
        defer { stream += 2 }
        let decision = processor.process(request, streamID: stream, connection: ConnectionInfo(id: connection), state: &state, ids: &ids)
        recorder.record(request, streamID: stream, connection: ConnectionInfo(id: connection), outcome: decision.outcome, context: &context)
        return decision
    }

    func connection(certificate: CertificateIdentity? = nil) -> ProviderConnectionState {
        processor.makeConnectionState(certificate: certificate)
    }
}

@Suite("Tenants")
struct TenantTests {
    // MARK: Finding the tenant

    @Test func byTeamReadsTheTokensIssuerOrTheCertificatesTeam() {
        let resolver = TenantResolver(mode: .byTeam)
        #expect(resolver.tenant(of: push(authorization: bearer(team: "TEAM00000A"))) == "TEAM00000A")
        let certificate = CertificateIdentity(
            subject: "C=US,O=apns-mock,OU=TEAM00000B,CN=Apple Push Services: com.b.app,UID=com.b.app", topics: ["com.b.app"],
            environments: [.development]
        )
        #expect(resolver.tenant(of: push(), certificate: certificate) == "TEAM00000B")
        // Nothing names a team: the unidentified tenant, never a crash.
        #expect(resolver.tenant(of: push()) == TenantResolver.unidentified)
        #expect(resolver.tenant(of: push(authorization: "bearer not.a.jwt")) == TenantResolver.unidentified)
    }

    @Test func byTopicTakesTheBundleIDWithoutThePushTypesSuffix() {
        let resolver = TenantResolver(mode: .byTopic)
        #expect(resolver.tenant(of: push(topic: "com.example.app")) == "com.example.app")
        #expect(resolver.tenant(of: push(topic: "com.example.app.voip")) == "com.example.app")
        #expect(resolver.tenant(of: push(topic: "com.example.app.push-type.liveactivity")) == "com.example.app")
        #expect(resolver.tenant(of: push(topic: nil, path: "/4/broadcasts/apps/com.live.app")) == "com.live.app")
        #expect(resolver.tenant(of: push(topic: nil, path: "/1/apps/com.live.app/channels")) == "com.live.app")
        #expect(resolver.tenant(of: push(topic: nil)) == TenantResolver.unidentified)
        let certificate = CertificateIdentity(subject: "UID=com.cert.app", topics: ["com.cert.app"], environments: [.development])
        #expect(resolver.tenant(of: push(topic: nil), certificate: certificate) == "com.cert.app")
    }

    @Test func byHostTakesTheFirstLabelOrAWholeAddress() {
        let resolver = TenantResolver(mode: .byHost)
        #expect(resolver.tenant(of: push(authority: "team-a.apns.staging:2197")) == "team-a")
        #expect(resolver.tenant(of: push(authority: "Team-B.apns.staging")) == "team-b")
        #expect(resolver.tenant(of: push(authority: "127.0.0.1:2197")) == "127.0.0.1")
        #expect(resolver.tenant(of: push(authority: "[::1]:2197")) == "::1")
        #expect(resolver.tenant(of: push(authority: nil)) == TenantResolver.unidentified)
    }

    // MARK: Each tenant its own

    @Test func eachTenantDecidesWithItsOwnScenario() throws {
        var harness = TenantHarness(mode: .byTopic)
        let failing = try ScenarioLoader.load(text: "name: a-fails\nrules:\n  - name: down\n    reason: ServiceUnavailable\n", source: "a.yaml")
        harness.tenants.scenario(for: "com.a.app").replace(with: failing)
        var connection = harness.connection()
        #expect(harness.send(push(topic: "com.a.app"), on: &connection).response?.status == 503)
        #expect(harness.send(push(topic: "com.b.app"), on: &connection).response?.status == 200)
        // Back to A on the same connection: A's scenario again.
        #expect(harness.send(push(topic: "com.a.app.voip"), on: &connection).response?.status == 503)
        let recordings = harness.recorder.store.list().notifications
        #expect(recordings.map(\.tenant) == ["com.a.app", "com.b.app", "com.a.app"])
        #expect(recordings.map(\.status) == [503, 200, 503])
    }

    @Test func aScenarioPutInForceForEveryoneReachesTenantsToCome() throws {
        let start = try ScenarioLoader.load(text: "name: start\nrules:\n  - name: all\n    reason: InternalServerError\n", source: "s.yaml")
        var harness = TenantHarness(mode: .byHost, start: start)
        var connection = harness.connection()
        #expect(harness.send(push(authority: "new-team.apns.test"), on: &connection).response?.status == 500)
        harness.tenants.replaceAll(with: .empty)
        #expect(harness.send(push(authority: "new-team.apns.test"), on: &connection).response?.status == 200)
        #expect(harness.send(push(authority: "later-team.apns.test"), on: &connection).response?.status == 200)
    }

    @Test func eachTenantHasItsOwnDevices() throws {
        var harness = TenantHarness(mode: .byHost)
        let a = harness.tenants.scenario(for: "team-a")
        a.devices.add(Device(token: deviceToken, topic: "com.example.app", environment: .development))
        _ = try a.devices.setState(token: deviceToken, to: .offline)
        var connection = harness.connection()
        _ = harness.send(push(authority: "team-a.test"), on: &connection)
        _ = harness.send(push(authority: "team-b.test"), on: &connection)
        // A's device stored A's push; B has no such device, and its push never reached A's.
        #expect(a.devices.stored(token: deviceToken)?.count == 1)
        #expect(harness.tenants.scenario(for: "team-b").devices.stored(token: deviceToken) == nil)
    }

    @Test func pastTheLimitNewTenantsShareTheOverflowTenant() {
        var harness = TenantHarness(mode: .byHost, limit: 2)
        var connection = harness.connection()
        _ = harness.send(push(authority: "a.test"), on: &connection)
        _ = harness.send(push(authority: "b.test"), on: &connection)
        _ = harness.send(push(authority: "c.test"), on: &connection)
        #expect(harness.recorder.store.list().notifications.map(\.tenant) == ["a", TenantDirectory.overflow, TenantDirectory.overflow])
        #expect(Set(harness.tenants.all.map(\.name)) == ["a", TenantResolver.unidentified, TenantDirectory.overflow])
    }

    @Test func oneConnectionsRecordingsShareExtrasPerTenant() {
        var harness = TenantHarness(mode: .byTopic)
        var connection = harness.connection()
        for _ in 0..<3 { _ = harness.send(push(topic: "com.a.app"), on: &connection) }
        let recordings = harness.recorder.store.list().notifications
        // One extras object for the run: tenants cost no allocation per push.
        #expect(recordings.map { ObjectIdentifier($0.fields.extras!) }.count == 3)
        #expect(Set(recordings.map { ObjectIdentifier($0.fields.extras!) }).count == 1)
    }

    @Test func withoutTenantsRecordingsCarryNone() {
        let processor = NotificationProcessor(tenants: TenantDirectory(mode: .off, primary: ActiveScenario()) { ActiveScenario() })
        #expect(processor.tenants == nil)
        let recorder = Recorder()
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        var context = RecordingContext()
        let decision = processor.process(push(), streamID: 1, connection: ConnectionInfo(id: 1), state: &state, ids: &ids)
        recorder.record(push(), streamID: 1, connection: ConnectionInfo(id: 1), outcome: decision.outcome, context: &context)
        let recording = recorder.store.list().notifications[0]
        #expect(recording.tenant == nil)
        #expect(!String(decoding: recording.jsonBytes(), as: UTF8.self).contains("tenant"))
    }

    // MARK: The store

    @Test func aTenantsClearLeavesTheOthersRecordings() async {
        var harness = TenantHarness(mode: .byTopic)
        var connection = harness.connection()
        for index in 0..<10 { _ = harness.send(push(topic: index % 2 == 0 ? "com.a.app" : "com.b.app"), on: &connection) }
        var onlyA = NotificationQuery()
        onlyA.tenant = "com.a.app"
        var onlyB = NotificationQuery()
        onlyB.tenant = "com.b.app"
        #expect(harness.recorder.store.list(onlyA).total == 5)
        #expect(harness.recorder.store.statistics(matching: onlyB).byStatus == [200: 5])
        harness.recorder.clear(tenant: "com.a.app")
        #expect(harness.recorder.store.list(onlyA).total == 0)
        #expect(harness.recorder.store.list(onlyB).total == 5)
        #expect(harness.recorder.store.list().notifications.allSatisfy { $0.tenant == "com.b.app" })
        // A waiter of A's counts from the clear.
        let waiting = await harness.recorder.store.wait(for: onlyA, count: 1, timeout: .milliseconds(1))
        #expect(!waiting.satisfied)
    }

    @Test func aRecordingsTenantSurvivesAStoresRow() throws {
        var harness = TenantHarness(mode: .byTeam)
        var connection = harness.connection()
        _ = harness.send(push(authorization: bearer(team: "TEAM00000A")), on: &connection)
        let recording = harness.recorder.store.list().notifications[0]
        #expect(recording.tenant == "TEAM00000A")
        let back = try RecordedNotification(row: RecordingRow(recording))
        #expect(back.tenant == "TEAM00000A")
        #expect(String(decoding: back.jsonBytes(), as: UTF8.self).contains(#""tenant":"TEAM00000A""#))
    }
}
