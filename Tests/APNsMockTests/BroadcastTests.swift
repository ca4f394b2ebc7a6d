import Foundation
import Testing

@testable import APNsMock

/// The broadcast API decided without sockets: channel management on its own service, broadcasts on the provider
/// service, every reason of Apple's table that applies, and what the recordings say.
@Suite("Broadcast and channel management")
struct BroadcastTests {
    static let bundle = "com.example.app"
    let processor = NotificationProcessor(scenario: ActiveScenario(channels: ChannelRegistry(limitPerApp: 3)), now: { 1_800_000_000_000 })

    func decide(
        _ method: String,
        _ path: String,
        headers: [(String, String)] = [],
        body: String = "",
        service: ConnectionInfo.Service = .provider,
        certificate: CertificateIdentity? = nil,
        recorder: Recorder? = nil,
        processor: NotificationProcessor? = nil
    ) -> APNsResponse? {
        let processor = processor ?? self.processor
        let request = APNsRequest(
            method: method, path: path, headers: headers.map { HeaderField(name: $0.0, value: $0.1) }, payload: Array(body.utf8)
        )
        var state = processor.makeConnectionState(certificate: certificate)
        var ids = APNsIDGenerator()
        let connection = ConnectionInfo(id: 1, service: service)
        let decision = processor.process(request, streamID: 1, connection: connection, state: &state, ids: &ids)
        var context = RecordingContext()
        recorder?.record(request, streamID: 1, connection: connection, outcome: decision.outcome, context: &context)
        return decision.response
    }

    func create(_ body: String = #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, bundle: String = bundle) -> APNsResponse? {
        decide("POST", "/1/apps/\(bundle)/channels", body: body, service: .channelManagement)
    }

    func broadcast(channel: String?, _ extra: [(String, String)] = [("apns-push-type", "LiveActivity")], body: String = #"{"aps":{"event":"update"}}"#, bundle: String = bundle) -> APNsResponse? {
        decide("POST", "/4/broadcasts/apps/\(bundle)", headers: (channel.map { [("apns-channel-id", $0)] } ?? []) + extra, body: body)
    }

    @Test func theChannelLifecycle() throws {
        let created = try #require(create())
        #expect(created.status == 201 && created.idHeader == .requestID && created.uniqueID == nil && created.body == nil)
        let id = try #require(created.channelID)
        #expect(ChannelRegistry.isWellFormedID(id))
        let read = try #require(decide("GET", "/1/apps/\(Self.bundle)/channels", headers: [("apns-channel-id", id)], service: .channelManagement))
        #expect(read.status == 200 && read.body == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        let list = try #require(decide("GET", "/1/apps/\(Self.bundle)/all-channels", service: .channelManagement))
        #expect(list.body == #"{"channels":["\#(id)"]}"#)
        let sent = try #require(broadcast(channel: id))
        #expect(sent.status == 200 && sent.idHeader == .requestID && sent.uniqueID != nil)
        let deleted = try #require(decide("DELETE", "/1/apps/\(Self.bundle)/channels", headers: [("apns-channel-id", id)], service: .channelManagement))
        #expect(deleted.status == 204 && deleted.body == nil)
        #expect(broadcast(channel: id)?.reason == .channelNotRegistered)
    }

    /// A channel id is checked without decoding it when it is canonical base64, and by Foundation's decoder
    /// otherwise: the two together must accept exactly what Foundation alone does.
    @Test func channelIDsAreWellFormedExactlyWhenFoundationDecodesThem() {
        var generator = SystemRandomNumberGenerator()
        var samples = ["", "=", "==", "A", "AA", "AAA", "AAAA", "AA==", "AAA=", "A===", "====", "QQ==", "QR==", "QUE=", "QUF=",
                       "YXBucy1tb2NrLWJlbmNoIQ==", "YXBucy1tb2NrLWJlbmNoIQ", "YXBucy1tb2NrLWJlbmNoIQ=", " YXBj", "YX\nBj", "YX-_",
                       "AAAA====", "AA==AAAA", "ab/+", "ab+/cd==", "é===", "AAA\u{0}"]
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ .".utf8)
        for _ in 0..<3000 {
            let length = Int.random(in: 1...12, using: &generator)
            samples.append(String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self))
        }
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            samples.append(Data(bytes).base64EncodedString())
        }
        for sample in samples {
            #expect(ChannelRegistry.isWellFormedID(sample) == (!sample.isEmpty && Data(base64Encoded: sample) != nil), "\(sample.debugDescription)")
        }
        // What an encoder writes is read without Foundation.
        for length in 1...40 {
            var encoded = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
            #expect(encoded.withUTF8 { ChannelRegistry.isCanonicalBase64($0) }, "\(encoded)")
        }
    }

    /// The provider path's route from its bytes.
    @Test func aBroadcastRouteIsReadFromThePath() {
        #expect(BroadcastRoute(providerPath: "/4/broadcasts/apps/com.example.app") == .broadcast(bundleID: "com.example.app"))
        #expect(BroadcastRoute(providerPath: "/4/broadcasts/apps/Com.Example.App") == .broadcast(bundleID: "Com.Example.App"))
        for path in ["/4/broadcasts/apps/", "/4/broadcasts/apps", "/4/broadcasts/apps/a/b", "/4/broadcasts/apps/a?x=1", "/3/device/abc",
                     "/4/broadcasts/app/com.example.app", "/4/Broadcasts/apps/com.example.app", "", "/"] {
            #expect(BroadcastRoute(providerPath: path) == nil, "\(path)")
        }
    }

    @Test func theRequestIDIsEchoedWhenItIsAUUID() {
        let sent = "a7d0c2f4-2b4e-4a8f-9c1d-0e5f6a7b8c9d"
        let answer = decide("GET", "/1/apps/\(Self.bundle)/all-channels", headers: [("apns-request-id", sent)], service: .channelManagement)
        #expect(answer?.apnsID == sent && answer?.idHeader == .requestID)
        #expect(decide("GET", "/1/apps/\(Self.bundle)/all-channels", headers: [("apns-request-id", "nope")], service: .channelManagement)?.apnsID != "nope")
    }

    @Test(arguments: [
        ("not json", Reason.badRequestPayload),
        (#"{"message-storage-policy":1,"push-type":"LiveActivity","extra":1}"#, .badRequestParams),
        (#"{"push-type":"LiveActivity"}"#, .missingChannelQueueSize),
        (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, .missingChannelQueueSize),
        (#"{"message-storage-policy":true,"push-type":"LiveActivity"}"#, .missingChannelQueueSize),
        (#"{"message-storage-policy":0}"#, .missingPushType),
        (#"{"message-storage-policy":0,"push-type":"alert"}"#, .invalidPushType),
    ])
    func aBadCreateGetsItsReason(body: String, reason: Reason) {
        let answer = create(body)
        #expect(answer?.reason == reason && answer?.status == 400 && answer?.idHeader == .requestID, "\(body)")
    }

    @Test func theChannelLimitIsPerAppAndEnvironment() {
        for _ in 0..<3 { #expect(create()?.status == 201) }
        #expect(create()?.reason == .cannotCreateChannelConfig)
        #expect(create(bundle: "com.example.other")?.status == 201)
    }

    @Test func channelManagementRoutesAndMethods() {
        #expect(decide("PUT", "/1/apps/\(Self.bundle)/channels", service: .channelManagement)?.reason == .methodNotAllowed)
        #expect(decide("GET", "/1/apps/\(Self.bundle)/nothing", service: .channelManagement)?.reason == .badPath)
        #expect(decide("GET", "/3/device/abcd", service: .channelManagement)?.reason == .badPath)
        // Channel management is not served on the provider port.
        #expect(decide("GET", "/1/apps/\(Self.bundle)/all-channels")?.reason == .methodNotAllowed)
        #expect(decide("POST", "/1/apps/\(Self.bundle)/channels", body: "{}")?.reason == .badPath)
    }

    @Test func broadcastReasonsInOrder() throws {
        let id = try #require(create(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)?.channelID)
        #expect(broadcast(channel: id, bundle: Self.bundle + ".push-type.liveactivity")?.reason == .topicDisallowed)
        #expect(broadcast(channel: nil)?.reason == .missingChannelId)
        #expect(broadcast(channel: "not base64!")?.reason == .badChannelId)
        #expect(broadcast(channel: String(repeating: "AAAA", count: 100))?.reason == .badChannelId)
        #expect(broadcast(channel: "dHN0LXNyY2gtY2hubA==")?.reason == .channelNotRegistered)
        #expect(broadcast(channel: id, bundle: "com.example.other")?.reason == .channelNotRegistered)
        #expect(broadcast(channel: id, [("apns-push-type", "LiveActivity"), ("apns-id", "x")])?.reason == .badMessageId)
        #expect(broadcast(channel: id, [])?.reason == .missingPushType)
        #expect(broadcast(channel: id, [("apns-push-type", "liveactivity")])?.status == 200)
        #expect(broadcast(channel: id, [("apns-push-type", "alert")])?.reason == .invalidPushType)
        #expect(broadcast(channel: id, [("apns-push-type", "LiveActivity"), ("apns-priority", "7")])?.reason == .badPriority)
        #expect(broadcast(channel: id, [("apns-push-type", "LiveActivity"), ("apns-expiration", "soon")])?.reason == .badExpirationDate)
        // A no-message-stored channel takes only apns-expiration 0.
        #expect(broadcast(channel: id, [("apns-push-type", "LiveActivity"), ("apns-expiration", "1800000000")])?.reason == .badExpirationDate)
        #expect(broadcast(channel: id, [("apns-push-type", "LiveActivity"), ("apns-expiration", "0")])?.status == 200)
        #expect(broadcast(channel: id, body: "")?.reason == .payloadEmpty)
        #expect(broadcast(channel: id, body: String(repeating: "x", count: 5121))?.reason == .payloadTooLarge)
        #expect(broadcast(channel: id, body: String(repeating: "x", count: 5120))?.status == 200)
        #expect(decide("GET", "/4/broadcasts/apps/\(Self.bundle)")?.reason == .methodNotAllowed)
    }

    @Test func aCertificateForAnotherAppIsTopicMismatch() throws {
        let byCertificate = NotificationProcessor(authentication: AuthenticationPolicy(mode: .certificate), scenario: ActiveScenario(channels: processor.channels))
        let other = CertificateIdentity(subject: "other", topics: ["com.example.other"], environments: [.development])
        let mine = CertificateIdentity(subject: "mine", topics: [Self.bundle], environments: [.development])
        #expect(decide("GET", "/1/apps/\(Self.bundle)/all-channels", service: .channelManagement, certificate: other, processor: byCertificate)?.reason == .topicMismatch)
        #expect(decide("GET", "/1/apps/\(Self.bundle)/all-channels", service: .channelManagement, certificate: mine, processor: byCertificate)?.status == 200)
        let id = try #require(create()?.channelID)
        let headers = [("apns-channel-id", id), ("apns-push-type", "LiveActivity")]
        #expect(decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: headers, body: "{}", certificate: other, processor: byCertificate)?.reason == .topicMismatch)
        #expect(decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: headers, body: "{}", certificate: mine, processor: byCertificate)?.status == 200)
    }

    @Test func aScenarioRuleMatchingTheChannelHeaderScriptsABroadcastAnswer() throws {
        let scenario = try ScenarioLoader.load(text: """
            name: broadcast-faults
            rules:
              - match: {headers: {apns-channel-id: dHN0LXNyY2gtY2hubA==}}
                status: 503
                reason: ServiceUnavailable
            """, source: "test.yaml")
        let scripted = NotificationProcessor(scenario: ActiveScenario(scenario, channels: processor.channels))
        let recorder = Recorder()
        let answer = decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: [("apns-channel-id", "dHN0LXNyY2gtY2hubA==")], body: "{}", recorder: recorder, processor: scripted)
        #expect(answer?.status == 503 && answer?.reason == .serviceUnavailable && answer?.idHeader == .requestID)
        #expect(recorder.store.list().notifications.first?.kind == "broadcast")
    }

    @Test func recordingsSayWhatEachOperationWas() throws {
        let recorder = Recorder()
        let created = try #require(decide("POST", "/1/apps/\(Self.bundle)/channels", body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, service: .channelManagement, recorder: recorder))
        let id = try #require(created.channelID)
        _ = decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: [("apns-channel-id", id), ("apns-push-type", "LiveActivity")], body: "{}", recorder: recorder)
        _ = decide("POST", "/3/device/" + String(repeating: "ab", count: 32), headers: [("apns-topic", Self.bundle)], body: "{}", recorder: recorder)
        let recordings = recorder.store.list().notifications
        #expect(recordings.map(\.kind) == ["channel-create", "broadcast", "push"])
        #expect(recordings[0].broadcast?.channelID == id && recordings[1].broadcast?.channelID == id)
        #expect(recordings[0].response?.channelID == id && recordings[0].response?.idHeader == .requestID)
        let json = String(decoding: recordings[1].jsonBytes(), as: UTF8.self)
        #expect(json.contains(#""kind":"broadcast","bundleId":"com.example.app","channelId":"\#(id)""#) && json.contains(#""requestId":"#), "\(json)")
        var query = NotificationQuery()
        query.kind = "broadcast"
        #expect(recorder.store.list(query).notifications.count == 1)
        query = try NotificationQuery(parameters: [("channel-id", id)])
        #expect(recorder.store.list(query).notifications.count == 2)
        #expect(throws: AdminInputError.self) { try NotificationQuery(parameters: [("kind", "pushes")]) }
    }

    @Test func aScenarioDeclaresChannelsAndRulesMatchThemByNameAndBundle() throws {
        let scenario = try ScenarioLoader.load(text: """
            name: live
            channels:
              - {name: scores, bundleId: com.example.app, messageStoragePolicy: 0}
              - {name: news, bundleId: com.example.app, id: dHN0LXNyY2gtY2hubA==}
            rules:
              - match: {channel: scores, bundleId: COM.example.app}
                status: 429
              - match: {bundleId: com.example.other}
                reason: FeatureNotEnabled
            """, source: "live.yaml")
        #expect(scenario.channels.map(\.name) == ["scores", "news"])
        let scores = scenario.channels[0].id
        #expect(scores == ScenarioChannel.derivedID(scenario: "live", channel: "scores") && ChannelRegistry.isWellFormedID(scores))
        #expect(scenario.channels[1].id == "dHN0LXNyY2gtY2hubA==" && scenario.channels[0].storagePolicy == .noMessageStored)
        let active = ActiveScenario(scenario)
        let scripted = NotificationProcessor(scenario: active)
        #expect(active.channels.list().map(\.id) == [scores, "dHN0LXNyY2gtY2hubA=="])
        let throttled = decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: [("apns-channel-id", scores), ("apns-push-type", "LiveActivity")], body: "{}", processor: scripted)
        #expect(throttled?.status == 429 && throttled?.reason == .tooManyRequests)
        let news = decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: [("apns-channel-id", "dHN0LXNyY2gtY2hubA=="), ("apns-push-type", "LiveActivity")], body: "{}", processor: scripted)
        #expect(news?.status == 200)
        let other = decide("GET", "/1/apps/com.example.other/all-channels", service: .channelManagement, processor: scripted)
        #expect(other?.reason == .featureNotEnabled && other?.idHeader == .requestID)
        // A channel made at run time stays when the scenario goes; the scenario's go with it.
        let made = try active.channels.create(bundleID: Self.bundle, environment: .development, storagePolicy: .mostRecentMessageStored)
        active.replace(with: .empty)
        #expect(active.channels.list().map(\.id) == [made.id])
        active.resetToStart()
        #expect(active.channels.count == 0)
    }

    @Test func aRuleNamingAnUndeclaredChannelIsAnError() {
        #expect(throws: ScenarioLoadError.self) {
            try ScenarioLoader.load(text: "rules:\n  - match: {channel: scorez}\n    status: 500\n", source: "x.yaml")
        }
        let error = #expect(throws: ScenarioLoadError.self) {
            try ScenarioLoader.load(text: "channels:\n  - {name: scores, bundleId: com.example.app}\nrules:\n  - match: {channel: scorez}\n    status: 500\n", source: "x.yaml")
        }
        #expect(error?.description.contains("x.yaml:4") == true && error?.description.contains("scores") == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        (#"{"aps":{"event":"update","timestamp":1800000000,"content-state":{"score":1}}}"#, [String]()),
        (#"{"aps":{"event":"end","timestamp":1800000000,"content-state":{}}}"#, []),
        (#"{"aps":{"event":"start","timestamp":1800000000,"content-state":{},"attributes-type":"A","attributes":{}}}"#, ["broadcast-start"]),
        (#"{"aps":{"timestamp":1800000000,"content-state":{}}}"#, ["liveactivity-missing-event"]),
        (#"{"aps":{"event":"update","content-state":{}}}"#, ["liveactivity-missing-timestamp"]),
        (#"{"aps":{"event":"update","timestamp":1800000000000,"content-state":{}}}"#, ["timestamp-milliseconds"]),
        (#"{"aps":{"event":"update","timestamp":1800000000}}"#, ["liveactivity-missing-content-state"]),
        ("not json", []),
    ])
    func broadcastPayloadWarningsNeverChangeTheAnswer(payload: String, codes: [String]) throws {
        let id = try #require(create()?.channelID)
        let recorder = Recorder()
        let answer = decide("POST", "/4/broadcasts/apps/\(Self.bundle)", headers: [("apns-channel-id", id), ("apns-push-type", "LiveActivity")], body: payload, recorder: recorder)
        #expect(answer?.status == 200)
        let recording = try #require(recorder.store.list().notifications.first)
        #expect(recording.warnings.map(\.code) == codes, "\(payload)")
        if !codes.isEmpty {
            #expect(try recorder.store.list(NotificationQuery(parameters: [("warning", codes[0])])).notifications.count == 1)
            #expect(try recorder.store.list(NotificationQuery(parameters: [("warnings", "none")])).notifications.isEmpty)
        }
    }
}

/// Every payload warning: a payload that triggers it and one that does not, in the context the rule is about.
@Suite("Payload warnings")
struct PayloadLintTests {
    typealias Context = PayloadLint.Context
    static let alert = Context(pushType: "alert", priority: "10", sizeLimit: 4096)
    static let background = Context(pushType: "background", priority: "5", sizeLimit: 4096)
    static let liveActivity = Context(pushType: "liveactivity", priority: "10", sizeLimit: 4096)
    static let broadcast = Context(pushType: "LiveActivity", priority: "10", sizeLimit: 5120, isBroadcast: true)
    static let update = #""event":"update","timestamp":1800000000,"content-state":{}"#

    static let cases: [(code: String, context: Context, triggers: String, clean: String)] = [
        ("aps-missing", alert, #"{"data":1}"#, #"{"aps":{"alert":"hi"},"data":1}"#),
        ("aps-unknown-key", alert, #"{"aps":{"alert":"hi","custom":1}}"#, #"{"aps":{"alert":"hi"},"custom":1}"#),
        ("summary-arg-ignored", alert, #"{"aps":{"alert":{"body":"hi","summary-arg":"Bob"}}}"#, #"{"aps":{"alert":{"body":"hi"}}}"#),
        ("background-with-alert", background, #"{"aps":{"content-available":1,"badge":1}}"#, #"{"aps":{"content-available":1}}"#),
        ("background-priority-10", Context(pushType: "background", priority: nil, sizeLimit: 4096), #"{"aps":{"content-available":1}}"#, #"{"aps":{"content-available":1}}"#),
        ("alert-low-priority", Context(pushType: "alert", priority: "5", sizeLimit: 4096), #"{"aps":{"alert":"hi"}}"#, #"{"aps":{"badge":2}}"#),
        ("nothing-visible", alert, #"{"aps":{"thread-id":"t"}}"#, #"{"aps":{"thread-id":"t","sound":"default"}}"#),
        ("mutable-content-without-alert", alert, #"{"aps":{"mutable-content":1,"badge":1}}"#, #"{"aps":{"mutable-content":1,"alert":"hi"}}"#),
        ("sound-critical-not-1", alert, #"{"aps":{"alert":"hi","sound":{"critical":true,"name":"a.caf"}}}"#, #"{"aps":{"alert":"hi","sound":{"critical":1,"name":"a.caf"}}}"#),
        ("sound-volume-out-of-range", alert, #"{"aps":{"alert":"hi","sound":{"critical":1,"volume":5}}}"#, #"{"aps":{"alert":"hi","sound":{"critical":1,"volume":0.5}}}"#),
        ("critical-without-critical-sound", alert, #"{"aps":{"alert":"hi","interruption-level":"critical","sound":"default"}}"#, #"{"aps":{"alert":"hi","interruption-level":"critical","sound":{"critical":1,"name":"a.caf"}}}"#),
        ("interruption-level-unknown", alert, #"{"aps":{"alert":"hi","interruption-level":"urgent"}}"#, #"{"aps":{"alert":"hi","interruption-level":"time-sensitive"}}"#),
        ("relevance-score-out-of-range", alert, #"{"aps":{"alert":"hi","relevance-score":7}}"#, #"{"aps":{"alert":"hi","relevance-score":0.7}}"#),
        ("loc-args-not-strings", alert, #"{"aps":{"alert":{"loc-key":"K","loc-args":["a",2]}}}"#, #"{"aps":{"alert":{"loc-key":"K","loc-args":["a","2"]}}}"#),
        ("liveactivity-missing-event", liveActivity, #"{"aps":{"timestamp":1800000000,"content-state":{}}}"#, "{\"aps\":{\(update)}}"),
        ("liveactivity-unknown-event", liveActivity, #"{"aps":{"event":"refresh","timestamp":1800000000,"content-state":{}}}"#, "{\"aps\":{\(update)}}"),
        ("liveactivity-missing-timestamp", liveActivity, #"{"aps":{"event":"update","content-state":{}}}"#, "{\"aps\":{\(update)}}"),
        ("liveactivity-missing-content-state", liveActivity, #"{"aps":{"event":"update","timestamp":1800000000}}"#, "{\"aps\":{\(update)}}"),
        ("liveactivity-start-incomplete", liveActivity, #"{"aps":{"event":"start","timestamp":1800000000,"content-state":{},"attributes-type":"A"}}"#,
         #"{"aps":{"event":"start","timestamp":1800000000,"content-state":{},"attributes-type":"A","attributes":{},"alert":{"title":"t","body":"b"}}}"#),
        ("broadcast-start", broadcast, #"{"aps":{"event":"start","timestamp":1800000000,"content-state":{}}}"#, "{\"aps\":{\(update)}}"),
        ("timestamp-milliseconds", liveActivity, #"{"aps":{"event":"end","timestamp":1800000000,"content-state":{},"dismissal-date":1800000000000}}"#,
         #"{"aps":{"event":"end","timestamp":1800000000,"content-state":{},"dismissal-date":1800000000}}"#),
    ]

    @Test(arguments: cases.indices)
    func eachRuleFiresOnItsMistakeAndNotOnTheFix(index: Int) {
        let (code, context, triggers, clean) = Self.cases[index]
        let fired = PayloadLint.warnings(Array(triggers.utf8), payloadSize: triggers.utf8.count, context: context)
        #expect(fired.map(\.code).contains(code), "\(code): \(fired)")
        let fixed = PayloadLint.warnings(Array(clean.utf8), payloadSize: clean.utf8.count, context: context)
        if code == "background-priority-10" {
            // The fix is the header, not the payload.
            let atFive = PayloadLint.warnings(Array(clean.utf8), payloadSize: clean.utf8.count, context: Self.background)
            #expect(!atFive.map(\.code).contains(code), "\(code): \(atFive)")
        } else {
            #expect(!fixed.map(\.code).contains(code), "\(code) on the fix: \(fixed)")
        }
    }

    @Test func theSizeRuleAndEveryCodeIsTested() {
        let near = "{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 3900) + "\"}}"
        #expect(PayloadLint.warnings(Array(near.utf8), payloadSize: near.utf8.count, context: Self.alert).map(\.code) == ["payload-near-limit"])
        #expect(PayloadLint.warnings(Array(near.utf8), payloadSize: near.utf8.count, context: Self.broadcast).map(\.code).contains("payload-near-limit") == false)
        let tested = Set(Self.cases.map(\.code) + ["payload-near-limit"])
        #expect(Set(PayloadLint.codes.map(\.code)) == tested)
    }

    @Test func aCleanPushHasNoWarningAndNonJSONHasNone() {
        for payload in [#"{"aps":{"alert":{"title":"Hi","body":"There"},"badge":1,"sound":"default","thread-id":"a"}}"#, "not json", "[1]"] {
            #expect(PayloadLint.warnings(Array(payload.utf8), payloadSize: payload.utf8.count, context: Self.alert).isEmpty, "\(payload)")
        }
    }
}
