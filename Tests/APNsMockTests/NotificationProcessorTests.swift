import Testing

@testable import APNsMock

private let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
private let fixedNow: Int64 = 1_700_000_000_123

private func makeRequest(path: String = "/3/device/" + token, extra: [(String, String)] = []) -> APNsRequest {
    APNsRequest(
        method: "POST",
        path: path,
        headers: ([("apns-topic", "com.example.MyApp")] + extra).map { HeaderField(name: $0.0, value: $0.1) },
        payload: Array(#"{"aps":{"alert":"Hello"}}"#.utf8)
    )
}

private func makeProcessor(
    environment: APNsEnvironment = .development,
    policy: ValidationPolicy = ValidationPolicy()
) -> NotificationProcessor {
    NotificationProcessor(
        validator: RequestValidator(policy: policy),
        environment: environment,
        now: { fixedNow }
    )
}

private func isUpperCaseUUID(_ id: String) -> Bool {
    RequestValidator.isCanonicalUUID(id) && id == id.uppercased()
}

private func isLowerCaseUUID(_ id: String) -> Bool {
    RequestValidator.isCanonicalUUID(id) && id == id.lowercased()
}

@Suite("NotificationProcessor")
struct NotificationProcessorTests {
    private func process(
        _ request: APNsRequest,
        with processor: NotificationProcessor = makeProcessor(),
        streamID: Int32 = 1,
        connection: ConnectionInfo = ConnectionInfo(id: 1),
        recordingTo recorder: Recorder? = nil
    ) throws -> APNsResponse {
        var ids = APNsIDGenerator()
        var auth = processor.makeAuthState(certificate: nil)
        let decision = processor.process(request, streamID: streamID, connection: connection, auth: &auth, ids: &ids)
        var context = RecordingContext()
        recorder?.record(request, streamID: streamID, connection: connection, outcome: decision.outcome, context: &context)
        return try #require(decision.response)
    }

    // MARK: What reaches the simulated devices

    /// Only a 200 to a registered token (or a scripted 200 to one, which skips the registry's check) is marked for
    /// the devices: the store copies and hands over nothing else, so pushes to unknown tokens cost what they cost
    /// with no device registered.
    @Test func onlyAcceptedPushesToRegisteredTokensReachTheDevices() throws {
        let scenario = try ScenarioLoader.load(
            text: "rules:\n  - name: scripted-ok\n    match: {pushType: background}\n    status: 200\n", source: "scripted.yaml"
        )
        let active = ActiveScenario(scenario, now: { fixedNow })
        active.devices.add(Device(token: token, topic: "com.example.MyApp", environment: .development))
        let processor = NotificationProcessor(scenario: active, now: { fixedNow })
        let unknown = String(repeating: "ab", count: 32)
        func reaches(_ request: APNsRequest) -> (Int?, Bool) {
            var ids = APNsIDGenerator()
            var auth = processor.makeAuthState(certificate: nil)
            let decision = processor.process(request, streamID: 1, connection: ConnectionInfo(id: 1), auth: &auth, ids: &ids)
            return (decision.outcome.response?.status, decision.outcome.reachesDevices)
        }
        let background = [("apns-push-type", "background"), ("apns-priority", "5")]
        #expect(reaches(makeRequest()) == (200, true))
        #expect(reaches(makeRequest(path: "/3/device/" + unknown)) == (200, false))
        #expect(reaches(makeRequest(extra: background)) == (200, true), "a scripted 200 to a registered token")
        #expect(reaches(makeRequest(path: "/3/device/" + unknown, extra: background)) == (200, false))
        #expect(reaches(makeRequest(extra: [("apns-topic", "com.example.Other")])) == (400, false))
    }

    // MARK: The device-push path

    /// Device pushes no scenario rule touches take a path of their own (`decideDevicePush`); a scenario whose only
    /// content is a default latency sends the same pushes through the general one (its decision carries the
    /// delay). Both must give the same answers, recordings and connection actions, request after request on one
    /// connection (the warnings memo and shared extras carry over between requests).
    @Test func theDevicePushPathDecidesAsTheGeneralPathDoes() throws {
        let delayed = try ScenarioLoader.load(text: "defaults: {latency: 1ms}", source: "latency.yaml")
        let requests: [APNsRequest] = [
            makeRequest(),
            makeRequest(extra: [("apns-push-type", "alert"), ("apns-priority", "10")]),
            makeRequest(extra: [("apns-id", "7b4c5a50-0f3c-4b1d-9a4e-1c2d3e4f5a6b")]),
            makeRequest(extra: [("apns-priority", "7")]),
            makeRequest(extra: [("apns-push-type", "background"), ("apns-priority", "10")]),
            makeRequest(extra: [("apns-expiration", "soon")]),
            makeRequest(extra: [("apns-push-type", "voip")]),
            makeRequest(extra: [("apns-topic", "com.example.Other")]),
            makeRequest(extra: [("x-one", "1"), ("x-one", "2")]),
            makeRequest(path: "/3/device/" + String(token.dropLast())),
            makeRequest(path: "/3/device/"),
            APNsRequest(method: "POST", path: "/3/device/" + token, headers: [HeaderField(name: "apns-topic", value: "com.example.MyApp")]),
            APNsRequest(
                method: "POST", path: "/3/device/" + token, headers: [HeaderField(name: "apns-topic", value: "com.example.MyApp")],
                payload: Array(#"{"aps":{"alert":"Hello"}"#.utf8)
            ),
            APNsRequest(
                method: "POST", path: "/3/device/" + token, headers: [HeaderField(name: "apns-topic", value: "com.example.MyApp")],
                payload: Array(repeating: UInt8(ascii: " "), count: 4097)
            ),
            makeRequest(),
        ]
        for authentication in [AuthenticationPolicy(mode: .none), AuthenticationPolicy(mode: .certificate)] {
            let direct = NotificationProcessor(authentication: authentication, now: { fixedNow })
            let general = NotificationProcessor(authentication: authentication, scenario: ActiveScenario(delayed, now: { fixedNow }), now: { fixedNow })
            var directState = direct.makeConnectionState(certificate: nil)
            var generalState = general.makeConnectionState(certificate: nil)
            var directIDs = APNsIDGenerator(seed: (1, 2, 3, 4))
            var generalIDs = APNsIDGenerator(seed: (1, 2, 3, 4))
            for (index, request) in requests.enumerated() {
                let one = direct.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &directState, ids: &directIDs)
                let other = general.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &generalState, ids: &generalIDs)
                #expect(one.delay == nil && other.delay == .milliseconds(1), "request \(index): the general path was not taken")
                #expect(one.outcome == other.outcome, "request \(index)")
                #expect(one.outcome.warnings == other.outcome.warnings, "request \(index)")
                #expect(one.actions == other.actions && one.streamFault == other.streamFault, "request \(index)")
                #expect(one.pushType == other.pushType && one.broadcastKind == other.broadcastKind, "request \(index)")
            }
        }
    }

    /// A connection's recordings share one extras object while what it says stays the same (the authentication,
    /// the payload's warnings), and get a new one, shared in turn, when it changes.
    @Test func aConnectionsRecordingsShareTheirExtrasWhileTheyStayTheSame() throws {
        let processor = makeProcessor()
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        func extras(_ request: APNsRequest) -> RecordExtras? {
            processor.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &state, ids: &ids).outcome.extras
        }
        let plain = try #require(extras(makeRequest()))
        #expect(extras(makeRequest()) === plain)
        let warned = makeRequest(extra: [("apns-push-type", "background"), ("apns-priority", "10")])
        let withWarnings = try #require(extras(warned))
        #expect(withWarnings !== plain && !withWarnings.warnings.isEmpty)
        #expect(extras(warned) === withWarnings)
        let plainAgain = try #require(extras(makeRequest()))
        #expect(plainAgain !== withWarnings && plainAgain.warnings.isEmpty)
        #expect(extras(makeRequest()) === plainAgain)
    }

    // MARK: Payload warnings on one connection

    /// A connection remembers the last payload's warnings; the same payload with a topic or push type that changes
    /// its size limit (VoIP's 5120 bytes against 4096) must be looked at again, and a repeat must give the same.
    @Test func theWarningsMemoFollowsWhatDecidesTheSizeLimit() {
        let processor = makeProcessor()
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        let near = Array(("{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 3950) + "\"}}").utf8)
        func warnings(topic: String, pushType: String) -> [String] {
            let request = APNsRequest(
                method: "POST", path: "/3/device/" + token,
                headers: [HeaderField(name: "apns-topic", value: topic), HeaderField(name: "apns-push-type", value: pushType)],
                payload: near
            )
            let decision = processor.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &state, ids: &ids)
            return decision.outcome.warnings.map(\.code)
        }
        #expect(warnings(topic: "com.example.MyApp", pushType: "alert") == ["payload-near-limit"])
        #expect(warnings(topic: "com.example.MyApp", pushType: "alert") == ["payload-near-limit"])
        #expect(warnings(topic: "com.example.MyApp.voip", pushType: "voip").contains("payload-near-limit") == false)
        #expect(warnings(topic: "com.example.MyApp.voip", pushType: "voip").contains("payload-near-limit") == false)
        #expect(warnings(topic: "com.example.MyApp", pushType: "alert") == ["payload-near-limit"])
    }

    // MARK: apns-id

    @Test func echoesLowerCaseApnsIDExactly() throws {
        let sent = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
        #expect(try process(makeRequest(extra: [("apns-id", sent)])).apnsID == sent)
    }

    @Test func echoesUpperCaseApnsIDExactly() throws {
        let sent = "07C0F2E2-7CE0-71EC-D0D6-E7089220F778"
        #expect(try process(makeRequest(extra: [("apns-id", sent)])).apnsID == sent)
    }

    @Test func echoesValidApnsIDOnRejectedRequest() throws {
        let sent = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
        let response = try process(makeRequest(path: "/3/device/nothex", extra: [("apns-id", sent)]))
        #expect(response.reason == .badDeviceToken)
        #expect(response.apnsID == sent)
    }

    @Test func generatesUpperCaseApnsIDWhenAbsent() throws {
        let response = try process(makeRequest())
        #expect(isUpperCaseUUID(response.apnsID), "\(response.apnsID)")
    }

    @Test func generatesUpperCaseApnsIDWhenInvalid() throws {
        let response = try process(makeRequest(extra: [("apns-id", "not-a-uuid")]))
        #expect(response.reason == .badMessageId)
        #expect(response.apnsID != "not-a-uuid")
        #expect(isUpperCaseUUID(response.apnsID), "\(response.apnsID)")
    }

    @Test func generatesADifferentApnsIDForEachRequest() throws {
        let processor = makeProcessor()
        var ids = APNsIDGenerator()
        var auth = processor.makeAuthState(certificate: nil)
        let connection = ConnectionInfo(id: 1)
        let first = processor.process(makeRequest(), streamID: 1, connection: connection, auth: &auth, ids: &ids)
        let second = processor.process(makeRequest(), streamID: 3, connection: connection, auth: &auth, ids: &ids)
        let firstID = try #require(first.response?.apnsID)
        let secondID = try #require(second.response?.apnsID)
        #expect(firstID != secondID)
    }

    // MARK: apns-unique-id

    @Test func sendsLowerCaseUniqueIDInDevelopment() throws {
        let response = try process(makeRequest(), with: makeProcessor(environment: .development))
        let uniqueID = try #require(response.uniqueID)
        #expect(isLowerCaseUUID(uniqueID), "\(uniqueID)")
        #expect(uniqueID.uppercased() != response.apnsID)
    }

    @Test func sendsUniqueIDInDevelopmentEvenOnRejection() throws {
        let response = try process(makeRequest(path: "/3/device/"), with: makeProcessor(environment: .development))
        #expect(response.status == 400)
        #expect(response.uniqueID != nil)
    }

    @Test func sendsNoUniqueIDInProduction() throws {
        let processor = makeProcessor(environment: .production)
        #expect(try process(makeRequest(), with: processor).uniqueID == nil)
        #expect(try process(makeRequest(path: "/3/device/"), with: processor).uniqueID == nil)
    }

    // MARK: Status, reason, timestamp

    @Test func answersAcceptedRequestWith200AndNoReason() throws {
        let response = try process(makeRequest())
        #expect(response.status == 200)
        #expect(response.reason == nil)
        #expect(response.body == nil)
    }

    @Test func answersRejectedRequestWithTheReasonsStatus() throws {
        let response = try process(makeRequest(path: "/4/device/x"))
        #expect(response.status == 404)
        #expect(response.reason == .badPath)
        #expect(response.body == #"{"reason":"BadPath"}"#)
    }

    @Test func setsNoTimestampOnNon410Answers() throws {
        #expect(try process(makeRequest()).timestamp == nil)
        #expect(try process(makeRequest(extra: [("apns-priority", "7")])).timestamp == nil)
        #expect(try process(makeRequest(path: "/4/")).timestamp == nil)
    }

    @Test func answersOversizedHeaderListWith431AndNoReason() throws {
        var request = makeRequest()
        request.headerListTooLarge = true
        let response = try process(request)
        #expect(response.status == 431)
        #expect(response.reason == nil)
        #expect(response.body == nil)
    }

    @Test func appliesTheValidatorsPolicy() throws {
        let processor = makeProcessor(policy: ValidationPolicy(requireTopic: false))
        let request = APNsRequest(method: "POST", path: "/3/device/" + token, payload: Array("{}".utf8))
        #expect(try process(request, with: processor).status == 200)
        #expect(try process(request).reason == .missingTopic)
    }

    // MARK: Recording

    @Test func decidingRecordsNothing() throws {
        // The decision carries its outcome; only the connection records, once the wire has said what was sent.
        let recorder = Recorder()
        let decision = try process(makeRequest(), with: makeProcessor())
        #expect(decision.status == 200)
        #expect(recorder.store.statistics().received == 0)
    }

    @Test func recordsEachRequestWithItsResponse() throws {
        let processor = makeProcessor()
        let recorder = Recorder()
        let request = makeRequest(extra: [("apns-priority", "7")])
        let response = try process(request, with: processor, streamID: 5, connection: ConnectionInfo(id: 42), recordingTo: recorder)
        let recorded = try #require(recorder.store.list().notifications.first)
        #expect(recorder.store.list().total == 1)
        #expect(recorded.request == request)
        #expect(recorded.response == response)
        #expect(recorded.streamID == 5)
        #expect(recorded.connectionID == 42)
        #expect(recorded.receivedAt == fixedNow)
        #expect(recorded.sequence == 1)
    }

    @Test func recordsRequestsInTheOrderProcessed() throws {
        let processor = makeProcessor()
        let recorder = Recorder()
        for streamID in [1, 3, 5] as [Int32] {
            _ = try process(makeRequest(), with: processor, streamID: streamID, recordingTo: recorder)
        }
        #expect(recorder.store.list().notifications.map { $0.streamID } == [1, 3, 5])
        #expect(recorder.store.statistics().byStatus == [200: 3])
    }

    @Test func anAnswerThatWasNotSentIsRecordedAsAbandonedWithTheAnswerItWouldHaveBeen() throws {
        let processor = makeProcessor()
        let recorder = Recorder()
        var ids = APNsIDGenerator()
        var auth = processor.makeAuthState(certificate: nil)
        let request = makeRequest(path: "/3/device/zz")
        let decision = processor.process(request, streamID: 3, connection: ConnectionInfo(id: 1), auth: &auth, ids: &ids)
        var context = RecordingContext()
        recorder.record(
            request, streamID: 3, connection: ConnectionInfo(id: 1), outcome: decision.outcome,
            delivery: .notSent(because: "the connection closed"), context: &context
        )
        let recorded = try #require(recorder.store.list().notifications.first)
        #expect(recorded.response == nil)
        #expect(recorded.status == nil)
        #expect(recorded.abandonedBecause == "answer 400 BadDeviceToken not sent: the connection closed")
        #expect(recorder.store.statistics().abandoned == 1)
        #expect(recorder.store.statistics().byStatus.isEmpty)
    }

    @Test func recordsAbandonedRequestWithoutResponse() throws {
        let recorder = Recorder()
        let request = makeRequest()
        recorder.recordAbandoned(request, streamID: 9, connection: ConnectionInfo(id: 3), at: fixedNow, because: "stream reset by client")
        let recorded = try #require(recorder.store.list().notifications.first)
        #expect(recorded.response == nil)
        #expect(recorded.abandonedBecause == "stream reset by client")
        #expect(recorded.request == request)
        #expect(recorded.streamID == 9)
        #expect(recorded.connectionID == 3)
        #expect(recorded.receivedAt == fixedNow)
        #expect(recorder.store.statistics().abandoned == 1)
        #expect(recorder.store.statistics().byStatus.isEmpty)
    }
}
