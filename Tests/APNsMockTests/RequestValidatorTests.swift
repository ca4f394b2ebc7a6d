import Testing

@testable import APNsMock

/// A well-formed request that every default policy accepts; each test changes one thing.
private enum Fixture {
    static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
    static let topic = "com.example.MyApp"
    static let payload = #"{"aps":{"alert":"Hello"}}"#
    static let path = "/3/device/" + token
}

private func makeRequest(
    method: String = "POST",
    path: String = Fixture.path,
    headers: [(String, String)] = [("apns-topic", Fixture.topic)],
    payload: String = Fixture.payload,
    headerListTooLarge: Bool = false
) -> APNsRequest {
    APNsRequest(
        method: method,
        path: path,
        headers: headers.map { HeaderField(name: $0.0, value: $0.1) },
        payload: Array(payload.utf8),
        headerListTooLarge: headerListTooLarge
    )
}

/// The fixture's topic plus `extra` headers.
private func makeRequest(adding extra: [(String, String)], payload: String = Fixture.payload) -> APNsRequest {
    makeRequest(headers: [("apns-topic", Fixture.topic)] + extra, payload: payload)
}

private func verdict(_ request: APNsRequest, policy: ValidationPolicy = ValidationPolicy()) -> RequestValidator.Verdict {
    RequestValidator(policy: policy).validate(request)
}

private func hexToken(digits: Int) -> String {
    String(String(repeating: "0123456789abcdef", count: digits / 16 + 1).prefix(digits))
}

/// A JSON object exactly `bytes` long: `{"a":"xxx…"}`.
private func jsonPayload(bytes: Int) -> String {
    #"{"a":""# + String(repeating: "x", count: bytes - 8) + #""}"#
}

@Suite("RequestValidator")
struct RequestValidatorTests {
    /// The lookup by last byte finds every push type's suffix, and only a whole suffix.
    @Test func everyTopicSuffixIsFoundAndOnlyWhole() {
        for pushType in PushType.allCases {
            guard let suffix = pushType.requiredTopicSuffix else { continue }
            #expect(PushType.hasAnyTopicSuffix(Fixture.topic + suffix), "\(suffix)")
            #expect(!PushType.hasAnyTopicSuffix(Fixture.topic + suffix + "x"), "\(suffix) extended")
            #expect(!PushType.hasAnyTopicSuffix(Fixture.topic + String(suffix.dropFirst(2))), "\(suffix) cut")
        }
        for topic in ["", "p", "com.example.app", "com.example.voipx", "com.example.Voip", Fixture.topic] {
            #expect(!PushType.hasAnyTopicSuffix(topic), "\(topic)")
        }
    }

    @Test func acceptsTheWellFormedFixture() {
        #expect(verdict(makeRequest()) == .accepted)
    }

    // MARK: Method and path

    @Test(arguments: ["GET", "PUT", "DELETE", "post"])
    func rejectsAnyMethodButPOSTWithMethodNotAllowed(method: String) {
        #expect(verdict(makeRequest(method: method)) == .rejected(.methodNotAllowed))
        #expect(Reason.methodNotAllowed.status == 405)
    }

    @Test(arguments: [
        "/3/device/\(Fixture.token)/extra",
        "/4/device/\(Fixture.token)",
        "/3/devices/\(Fixture.token)",
        "/3/device",
        "/",
        "",
    ])
    func rejectsPathsOutsideDeviceResourceWithBadPath(path: String) {
        #expect(verdict(makeRequest(path: path)) == .rejected(.badPath))
        #expect(Reason.badPath.status == 404)
    }

    @Test func rejectsEmptyTokenWithMissingDeviceToken() {
        #expect(verdict(makeRequest(path: "/3/device/")) == .rejected(.missingDeviceToken))
    }

    // MARK: Device token

    @Test func rejectsOddLengthTokenWithBadDeviceToken() {
        #expect(verdict(makeRequest(path: "/3/device/" + hexToken(digits: 65))) == .rejected(.badDeviceToken))
    }

    @Test func rejectsNonHexTokenWithBadDeviceToken() {
        let token = String(Fixture.token.dropLast()) + "g"
        #expect(verdict(makeRequest(path: "/3/device/" + token)) == .rejected(.badDeviceToken))
    }

    @Test func rejectsTokenOf62DigitsWithBadDeviceToken() {
        #expect(verdict(makeRequest(path: "/3/device/" + hexToken(digits: 62))) == .rejected(.badDeviceToken))
    }

    @Test func rejectsTokenOf202DigitsWithBadDeviceToken() {
        #expect(verdict(makeRequest(path: "/3/device/" + hexToken(digits: 202))) == .rejected(.badDeviceToken))
    }

    @Test func rejectsTokenFollowedByQueryStringWithBadDeviceToken() {
        #expect(verdict(makeRequest(path: Fixture.path + "?x=1")) == .rejected(.badDeviceToken))
    }

    @Test(arguments: [64, 108, 160, 200])
    func acceptsTokenLengthsSeenInTheWild(digits: Int) {
        #expect(verdict(makeRequest(path: "/3/device/" + hexToken(digits: digits))) == .accepted)
    }

    @Test func acceptsUpperCaseToken() {
        #expect(verdict(makeRequest(path: "/3/device/" + Fixture.token.uppercased())) == .accepted)
    }

    @Test func honoursCustomTokenLengthBounds() {
        let policy = ValidationPolicy(deviceToken: DeviceTokenRules(minimumHexDigits: 8, maximumHexDigits: 16))
        #expect(verdict(makeRequest(path: "/3/device/0123abcd"), policy: policy) == .accepted)
        #expect(verdict(makeRequest(path: "/3/device/" + hexToken(digits: 18)), policy: policy) == .rejected(.badDeviceToken))
        #expect(verdict(makeRequest(), policy: policy) == .rejected(.badDeviceToken))
    }

    // MARK: apns-id

    @Test(arguments: [
        "not-a-uuid",
        "",
        "eabeae5414a811e5b60b1697f925ec7b",  // 32 hex digits, no hyphens
        "eabeae54-14a8-11e5-b60b-1697f925ec7",  // one digit short
        "eabeae54-14a8-11e5-b60b-1697f925ec7bb",  // one digit long
        "eabeae5414-a8-11e5-b60b-1697f925ec7b",  // hyphen in the wrong place
        "gabeae54-14a8-11e5-b60b-1697f925ec7b",  // not hex
        "{eabeae54-14a8-11e5-b60b-1697f925ec7}",
    ])
    func rejectsMalformedApnsIDWithBadMessageId(apnsID: String) {
        #expect(verdict(makeRequest(adding: [("apns-id", apnsID)])) == .rejected(.badMessageId))
    }

    @Test(arguments: ["eabeae54-14a8-11e5-b60b-1697f925ec7b", "07C0F2E2-7CE0-71EC-D0D6-E7089220F778"])
    func acceptsCanonicalApnsIDInEitherCase(apnsID: String) {
        #expect(verdict(makeRequest(adding: [("apns-id", apnsID)])) == .accepted)
    }

    // MARK: apns-priority

    @Test(arguments: ["0", "2", "11", "100", "", "high", " 10", "10 ", "+5"])
    func rejectsUnknownPriorityWithBadPriority(priority: String) {
        #expect(verdict(makeRequest(adding: [("apns-priority", priority)])) == .rejected(.badPriority))
    }

    @Test(arguments: ["10", "5", "1"])
    func acceptsDocumentedPriorities(priority: String) {
        #expect(verdict(makeRequest(adding: [("apns-priority", priority)])) == .accepted)
    }

    // MARK: apns-expiration

    @Test(arguments: ["-1", "abc", "", "1.5", "1e9", " 0", "12345678901234567890"])
    func rejectsNonEpochExpirationWithBadExpirationDate(expiration: String) {
        #expect(verdict(makeRequest(adding: [("apns-expiration", expiration)])) == .rejected(.badExpirationDate))
    }

    @Test(arguments: ["0", "300", "1735689600", "4102444800", "9223372036854775807"])
    func acceptsZeroAndLargeEpochSeconds(expiration: String) {
        #expect(verdict(makeRequest(adding: [("apns-expiration", expiration)])) == .accepted)
    }

    // MARK: apns-push-type

    @Test(arguments: ["sms", "", "Alert", "VOIP", "live-activity", "alert "])
    func rejectsUnknownPushTypeWithInvalidPushType(pushType: String) {
        #expect(verdict(makeRequest(adding: [("apns-push-type", pushType)])) == .rejected(.invalidPushType))
    }

    @Test(arguments: [
        (PushType.alert, "com.example.MyApp"),
        (.background, "com.example.MyApp"),
        (.location, "com.example.MyApp.location-query"),
        (.voip, "com.example.MyApp.voip"),
        (.complication, "com.example.MyApp.complication"),
        (.fileprovider, "com.example.MyApp.pushkit.fileprovider"),
        (.mdm, "com.apple.mgmt.External.7f8e2c9a-0c3e-4b1e-9d1a-2b3c4d5e6f70"),
        (.liveactivity, "com.example.MyApp.push-type.liveactivity"),
        (.pushtotalk, "com.example.MyApp.voip-ptt"),
        (.widgets, "com.example.MyApp.push-type.widgets"),
        (.controls, "com.example.MyApp.push-type.controls"),
    ])
    func acceptsEachPushTypeWithItsTopicSuffix(pushType: PushType, topic: String) {
        let request = makeRequest(headers: [
            ("apns-topic", topic), ("apns-push-type", pushType.rawValue), ("apns-priority", "5"),
        ])
        #expect(verdict(request) == .accepted)
    }

    @Test func coversAllElevenPushTypes() {
        #expect(PushType.allCases.count == 11)
    }

    /// `PushType(rawValue:)` picks a candidate by length and first byte: each value names its own case, and every
    /// string one change away from a value (a byte changed, added or dropped, a letter's case) names none.
    @Test func pushTypeIsReadOnlyFromItsExactValue() {
        for pushType in PushType.allCases {
            let value = pushType.rawValue
            #expect(PushType(rawValue: value) == pushType)
            #expect(PushType(rawValue: value.uppercased()) == nil)
            #expect(PushType(rawValue: value + "s") == nil)
            #expect(PushType(rawValue: String(value.dropLast())) == nil)
            #expect(PushType(rawValue: " " + value) == nil)
            let bytes = Array(value.utf8)
            for index in bytes.indices {
                var changed = bytes
                changed[index] = changed[index] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                #expect(PushType(rawValue: String(decoding: changed, as: UTF8.self)) == nil, "\(value) at \(index)")
            }
        }
        for other in ["", "a", "alerts", "liveactivitie", "liveactivityy", "complicatio", "push-to-talk", "ALERT", "alért"] {
            #expect(PushType(rawValue: other) == nil, "\(other)")
        }
    }

    // MARK: apns-topic

    @Test func rejectsAbsentTopicWithMissingTopic() {
        #expect(verdict(makeRequest(headers: [])) == .rejected(.missingTopic))
    }

    @Test func rejectsEmptyTopicWithMissingTopic() {
        #expect(verdict(makeRequest(headers: [("apns-topic", "")])) == .rejected(.missingTopic))
    }

    @Test func acceptsAbsentTopicWhenPolicyDoesNotRequireIt() {
        let policy = ValidationPolicy(requireTopic: false)
        #expect(verdict(makeRequest(headers: []), policy: policy) == .accepted)
    }

    @Test func rejectsVoIPToBareTopicWithDeviceTokenNotForTopic() {
        let request = makeRequest(headers: [("apns-topic", Fixture.topic), ("apns-push-type", "voip")])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func rejectsAlertToVoIPTopicWithDeviceTokenNotForTopic() {
        let request = makeRequest(headers: [("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "alert")])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func rejectsLiveActivityToBareTopicWithDeviceTokenNotForTopic() {
        let request = makeRequest(headers: [("apns-topic", Fixture.topic), ("apns-push-type", "liveactivity")])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func rejectsPushToTalkToVoIPTopicWithDeviceTokenNotForTopic() {
        let request = makeRequest(headers: [("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "pushtotalk")])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func rejectsTopicThatIsOnlyTheSuffixWithDeviceTokenNotForTopic() {
        let request = makeRequest(headers: [("apns-topic", ".voip"), ("apns-push-type", "voip")])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func acceptsMismatchedTopicWhenPolicyAcceptsMismatches() {
        let policy = ValidationPolicy(topicMismatch: .accept)
        let voipToBare = makeRequest(headers: [("apns-topic", Fixture.topic), ("apns-push-type", "voip")])
        let alertToVoIP = makeRequest(headers: [("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "alert")])
        #expect(verdict(voipToBare, policy: policy) == .accepted)
        #expect(verdict(alertToVoIP, policy: policy) == .accepted)
    }

    @Test func acceptsSuffixedTopicWithoutPushType() {
        #expect(verdict(makeRequest(headers: [("apns-topic", Fixture.topic + ".voip")])) == .accepted)
    }

    // MARK: Topics the credentials allow

    @Test func rejectsTopicOutsideAllowedTopicsWithTopicDisallowed() {
        let request = makeRequest(headers: [("apns-topic", "com.other.App")])
        let verdict = RequestValidator().validate(
            request, headers: APNsHeaders(request.headers), allowedTopics: .exactly([Fixture.topic]))
        #expect(verdict == .rejected(.topicDisallowed))
    }

    @Test func usesDefaultTopicWhenTopicIsAbsent() {
        let request = makeRequest(headers: [])
        let verdict = RequestValidator().validate(request, headers: APNsHeaders(request.headers), defaultTopic: Fixture.topic)
        #expect(verdict == .accepted)
    }

    @Test func checksDefaultTopicAgainstPushType() {
        let request = makeRequest(headers: [("apns-push-type", "voip")])
        let verdict = RequestValidator().validate(request, headers: APNsHeaders(request.headers), defaultTopic: Fixture.topic)
        #expect(verdict == .rejected(.deviceTokenNotForTopic))
    }

    @Test func reportsTopicDisallowedBeforeTopicMismatch() {
        let request = makeRequest(headers: [("apns-topic", "com.other.App"), ("apns-push-type", "voip")])
        let verdict = RequestValidator().validate(
            request, headers: APNsHeaders(request.headers), allowedTopics: .exactly([Fixture.topic]))
        #expect(verdict == .rejected(.topicDisallowed))
    }

    // MARK: background at priority 10

    @Test func acceptsBackgroundAtPriority10ByDefault() {
        #expect(verdict(makeRequest(adding: [("apns-push-type", "background"), ("apns-priority", "10")])) == .accepted)
    }

    @Test func rejectsBackgroundAtPriority10WithBadPriorityWhenPolicyRejects() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        let request = makeRequest(adding: [("apns-push-type", "background"), ("apns-priority", "10")])
        #expect(verdict(request, policy: policy) == .rejected(.badPriority))
    }

    @Test func rejectsBackgroundWithoutPriorityWhenPolicyRejectsBecauseTheDefaultIs10() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        #expect(verdict(makeRequest(adding: [("apns-push-type", "background")]), policy: policy) == .rejected(.badPriority))
    }

    @Test func acceptsBackgroundAtPriority5WhenPolicyRejects10() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        let request = makeRequest(adding: [("apns-push-type", "background"), ("apns-priority", "5")])
        #expect(verdict(request, policy: policy) == .accepted)
    }

    @Test func acceptsAlertAtPriority10WhenPolicyRejectsBackgroundAt10() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        let request = makeRequest(adding: [("apns-push-type", "alert"), ("apns-priority", "10")])
        #expect(verdict(request, policy: policy) == .accepted)
    }

    // MARK: apns-collapse-id

    @Test func acceptsCollapseIDOf64Bytes() {
        #expect(verdict(makeRequest(adding: [("apns-collapse-id", String(repeating: "c", count: 64))])) == .accepted)
    }

    @Test func rejectsCollapseIDOf65BytesWithBadCollapseId() {
        let request = makeRequest(adding: [("apns-collapse-id", String(repeating: "c", count: 65))])
        #expect(verdict(request) == .rejected(.badCollapseId))
    }

    @Test func countsCollapseIDInUTF8BytesNotCharacters() {
        let fits = String(repeating: "é", count: 32)  // 32 characters, 64 bytes
        let tooLong = String(repeating: "é", count: 33)  // 33 characters, 66 bytes
        let emoji = String(repeating: "😀", count: 16) + "a"  // 17 characters, 65 bytes
        #expect(verdict(makeRequest(adding: [("apns-collapse-id", fits)])) == .accepted)
        #expect(verdict(makeRequest(adding: [("apns-collapse-id", tooLong)])) == .rejected(.badCollapseId))
        #expect(verdict(makeRequest(adding: [("apns-collapse-id", emoji)])) == .rejected(.badCollapseId))
    }

    // MARK: Duplicate headers

    @Test func rejectsTopicSentTwiceWithDuplicateHeaders() {
        let request = makeRequest(headers: [("apns-topic", Fixture.topic), ("apns-topic", Fixture.topic)])
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    @Test func rejectsAnyHeaderSentTwiceWithDuplicateHeaders() {
        let request = makeRequest(adding: [("user-agent", "a"), ("x-custom", "1"), ("x-custom", "2")])
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    /// A known name that is not an APNs header (`content-type` has a one-byte code in the header block) sent twice.
    @Test func rejectsAKnownNonAPNsHeaderSentTwiceWithDuplicateHeaders() {
        let request = makeRequest(adding: [("content-type", "application/json"), ("user-agent", "a"), ("content-type", "text/plain")])
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    @Test func rejectsDuplicateAmongMoreThanSixteenHeaders() {
        let many = (1...20).map { ("x-header-\($0)", "v") }
        let request = makeRequest(adding: many + [("x-header-3", "again")])
        #expect(request.headers.count > 16)
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    @Test func acceptsMoreThanSixteenDistinctHeaders() {
        let request = makeRequest(adding: (1...20).map { ("x-header-\($0)", "v") })
        #expect(verdict(request) == .accepted)
    }

    @Test func judgesDuplicatedHeaderByItsFirstValueBeforeReportingDuplicate() {
        let firstValid = makeRequest(adding: [("apns-priority", "10"), ("apns-priority", "bogus")])
        let firstInvalid = makeRequest(adding: [("apns-priority", "bogus"), ("apns-priority", "10")])
        #expect(verdict(firstValid) == .rejected(.duplicateHeaders))
        #expect(verdict(firstInvalid) == .rejected(.badPriority))
    }

    // MARK: Payload

    @Test func rejectsEmptyBodyWithPayloadEmpty() {
        #expect(verdict(makeRequest(payload: "")) == .rejected(.payloadEmpty))
    }

    @Test func acceptsPayloadOf4096Bytes() {
        let payload = jsonPayload(bytes: 4096)
        #expect(payload.utf8.count == 4096)
        #expect(verdict(makeRequest(payload: payload)) == .accepted)
    }

    @Test func rejectsPayloadOf4097BytesWithPayloadTooLarge() {
        #expect(verdict(makeRequest(payload: jsonPayload(bytes: 4097))) == .rejected(.payloadTooLarge))
        #expect(Reason.payloadTooLarge.status == 413)
    }

    @Test func acceptsVoIPPayloadOf5120Bytes() {
        let request = makeRequest(
            headers: [("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "voip")],
            payload: jsonPayload(bytes: 5120)
        )
        #expect(verdict(request) == .accepted)
    }

    @Test func rejectsVoIPPayloadOf5121BytesWithPayloadTooLarge() {
        let request = makeRequest(
            headers: [("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "voip")],
            payload: jsonPayload(bytes: 5121)
        )
        #expect(verdict(request) == .rejected(.payloadTooLarge))
    }

    @Test func grantsVoIPLimitToVoIPTopicWithoutPushType() {
        let fits = makeRequest(headers: [("apns-topic", Fixture.topic + ".voip")], payload: jsonPayload(bytes: 5120))
        let over = makeRequest(headers: [("apns-topic", Fixture.topic + ".voip")], payload: jsonPayload(bytes: 5121))
        #expect(verdict(fits) == .accepted)
        #expect(verdict(over) == .rejected(.payloadTooLarge))
    }

    @Test func doesNotGrantVoIPLimitToPushToTalkTopic() {
        let request = makeRequest(
            headers: [("apns-topic", Fixture.topic + ".voip-ptt"), ("apns-push-type", "pushtotalk")],
            payload: jsonPayload(bytes: 4097)
        )
        #expect(verdict(request) == .rejected(.payloadTooLarge))
    }

    @Test func measuresPayloadBySizeSentNotBytesKept() {
        var request = makeRequest()
        request.payloadSize = 4097
        #expect(verdict(request) == .rejected(.payloadTooLarge))
    }

    @Test func honoursConfiguredPayloadLimits() {
        let policy = ValidationPolicy(maxPayloadBytes: 100, maxVoIPPayloadBytes: 200)
        let validator = RequestValidator(policy: policy)
        #expect(validator.payloadLimit(pushType: .alert, topic: Fixture.topic) == 100)
        #expect(validator.payloadLimit(pushType: .voip, topic: Fixture.topic + ".voip") == 200)
        #expect(validator.payloadLimit(pushType: nil, topic: nil) == 100)
        #expect(verdict(makeRequest(payload: jsonPayload(bytes: 101)), policy: policy) == .rejected(.payloadTooLarge))
    }

    @Test func acceptsInvalidJSONByDefault() {
        #expect(verdict(makeRequest(payload: "not json")) == .accepted)
    }

    @Test(arguments: ["not json", "[1,2,3]", #""string""#, "42", "{\"aps\":", "{} trailing"])
    func rejectsNonObjectPayloadWithBadRequestPayloadWhenPolicyRejects(payload: String) {
        let policy = ValidationPolicy(invalidPayload: .reject)
        #expect(verdict(makeRequest(payload: payload), policy: policy) == .rejected(.badRequestPayload))
    }

    @Test func acceptsJSONObjectWithSurroundingWhitespaceWhenPolicyRejectsInvalidJSON() {
        let policy = ValidationPolicy(invalidPayload: .reject)
        #expect(verdict(makeRequest(payload: " \n\t{\"aps\":{}}\r\n"), policy: policy) == .accepted)
    }

    // MARK: Header list too large

    @Test func answersOversizedHeaderListWithHeaderListTooLargeVerdict() {
        #expect(verdict(makeRequest(headerListTooLarge: true)) == .headerListTooLarge)
    }

    // MARK: Order when a request has several faults

    @Test func reportsOversizedHeaderListBeforeBadMethod() {
        #expect(verdict(makeRequest(method: "GET", headerListTooLarge: true)) == .headerListTooLarge)
    }

    @Test func reportsBadMethodBeforeBadPath() {
        #expect(verdict(makeRequest(method: "GET", path: "/4/nowhere")) == .rejected(.methodNotAllowed))
    }

    @Test func reportsBadPathBeforeEverythingInTheHeaders() {
        let request = makeRequest(path: "/4/device/x", headers: [("apns-id", "bad"), ("apns-priority", "9")], payload: "")
        #expect(verdict(request) == .rejected(.badPath))
    }

    @Test func reportsMissingDeviceTokenBeforeBadMessageId() {
        let request = makeRequest(path: "/3/device/", headers: [("apns-topic", Fixture.topic), ("apns-id", "bad")])
        #expect(verdict(request) == .rejected(.missingDeviceToken))
    }

    @Test func reportsBadDeviceTokenBeforeBadMessageId() {
        let request = makeRequest(path: "/3/device/xyz", headers: [("apns-topic", Fixture.topic), ("apns-id", "bad")])
        #expect(verdict(request) == .rejected(.badDeviceToken))
    }

    @Test func reportsBadMessageIdBeforeBadPriority() {
        #expect(verdict(makeRequest(adding: [("apns-priority", "9"), ("apns-id", "bad")])) == .rejected(.badMessageId))
    }

    @Test func reportsBadPriorityBeforeBadExpirationDate() {
        #expect(verdict(makeRequest(adding: [("apns-expiration", "x"), ("apns-priority", "9")])) == .rejected(.badPriority))
    }

    @Test func reportsBadExpirationDateBeforeInvalidPushType() {
        let request = makeRequest(adding: [("apns-push-type", "sms"), ("apns-expiration", "x")])
        #expect(verdict(request) == .rejected(.badExpirationDate))
    }

    @Test func reportsInvalidPushTypeBeforeMissingTopic() {
        #expect(verdict(makeRequest(headers: [("apns-push-type", "sms")])) == .rejected(.invalidPushType))
    }

    @Test func reportsMissingTopicBeforeBadCollapseId() {
        let request = makeRequest(headers: [("apns-collapse-id", String(repeating: "c", count: 65))])
        #expect(verdict(request) == .rejected(.missingTopic))
    }

    @Test func reportsTopicMismatchBeforeBadCollapseId() {
        let request = makeRequest(headers: [
            ("apns-topic", Fixture.topic), ("apns-push-type", "voip"),
            ("apns-collapse-id", String(repeating: "c", count: 65)),
        ])
        #expect(verdict(request) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func reportsTopicMismatchBeforeBackgroundPriority() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        let request = makeRequest(headers: [
            ("apns-topic", Fixture.topic + ".voip"), ("apns-push-type", "background"), ("apns-priority", "10"),
        ])
        #expect(verdict(request, policy: policy) == .rejected(.deviceTokenNotForTopic))
    }

    @Test func reportsBackgroundPriorityBeforeBadCollapseId() {
        let policy = ValidationPolicy(backgroundPriority10: .reject)
        let request = makeRequest(adding: [
            ("apns-push-type", "background"), ("apns-collapse-id", String(repeating: "c", count: 65)),
        ])
        #expect(verdict(request, policy: policy) == .rejected(.badPriority))
    }

    @Test func reportsBadCollapseIdBeforeDuplicateHeaders() {
        let request = makeRequest(adding: [
            ("apns-collapse-id", String(repeating: "c", count: 65)), ("x-custom", "1"), ("x-custom", "2"),
        ])
        #expect(verdict(request) == .rejected(.badCollapseId))
    }

    @Test func reportsDuplicateHeadersBeforePayloadEmpty() {
        let request = makeRequest(adding: [("x-custom", "1"), ("x-custom", "2")], payload: "")
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    @Test func reportsDuplicateHeadersBeforePayloadTooLarge() {
        let request = makeRequest(adding: [("x-custom", "1"), ("x-custom", "2")], payload: jsonPayload(bytes: 4097))
        #expect(verdict(request) == .rejected(.duplicateHeaders))
    }

    @Test func reportsPayloadTooLargeBeforeInvalidJSON() {
        let policy = ValidationPolicy(invalidPayload: .reject)
        let request = makeRequest(payload: String(repeating: "x", count: 4097))
        #expect(verdict(request, policy: policy) == .rejected(.payloadTooLarge))
    }
}
