import Testing

@testable import APNsMock

/// A recording is stored compactly; what is read back must be exactly what was recorded.
@Suite("Recording storage")
struct RecordStorageTests {
    static let lower = String(repeating: "ab", count: 32)

    static func roundTrip(_ request: APNsRequest, _ response: APNsResponse? = nil) -> RecordedNotification {
        RecordedNotification(sequence: 1, receivedAt: 2, connectionID: 3, streamID: 5, request: request, response: response)
    }

    static let requests: [APNsRequest] = [
        APNsRequest(
            method: "POST", path: "/3/device/" + lower, authority: "localhost:2197",
            headers: [
                HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "x-custom", value: "v"),
                HeaderField(name: "apns-topic", value: "duplicate"), HeaderField(name: "authorization", value: "bearer " + String(repeating: "j", count: 300)),
            ],
            payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        ),
        APNsRequest(method: "POST", path: "/3/device/" + lower.uppercased(), scheme: nil, headers: [], payload: []),
        APNsRequest(method: "POST", path: "/3/device/aBab", headers: []),
        APNsRequest(method: "GET", path: "/3/device/", headers: [HeaderField(name: "", value: "")]),
        APNsRequest(method: "POST", path: "/3/device/abc", headers: []),
        APNsRequest(method: "POST", path: "/3/device/zz11", headers: []),
        APNsRequest(method: "POST", path: "/3/device/ab/cd", headers: []),
        APNsRequest(method: "POST", path: "/3/devic", headers: []),
        APNsRequest(method: "POST", path: "/3/device/0123456789ABCDEF", headers: [HeaderField(name: "content-type", value: "")]),
        APNsRequest(method: "POST", path: "/4/broadcasts/apps/com.x", headers: [], payload: [0, 255, 10], payloadSize: 9000, headerListTooLarge: true),
        APNsRequest(method: "", path: "", scheme: "", authority: "", headers: [HeaderField(name: "é", value: "ü")]),
    ]

    /// A device token's bytes, written eight digits at a time, are the digits' values: every even length up to the
    /// limit, both cases, every digit in every position.
    @Test func deviceTokenBytesAreTheDigitsValues() {
        let digits = Array("0123456789abcdef".utf8)
        for uppercase in [false, true] {
            for length in stride(from: 2, through: 2 * RecordFields.maxTokenBytes, by: 2) {
                for shift in 0..<16 {
                    let text = (0..<length).map { index -> UInt8 in
                        let digit = digits[(index &* 7 &+ shift &+ index / 3) % 16]
                        return uppercase && digit >= UInt8(ascii: "a") ? digit - 0x20 : digit
                    }
                    let expected = stride(from: 0, to: length, by: 2).map { index -> UInt8 in
                        UInt8(String(decoding: text[index..<index + 2], as: UTF8.self), radix: 16)!
                    }
                    let path = Array("/3/device/".utf8) + text
                    var written = [UInt8](repeating: 0xAA, count: RecordFields.maxTokenBytes + 4)
                    let count = path.withUnsafeBufferPointer { path in
                        written.withUnsafeMutableBytes { RecordStorage.writeDeviceToken(of: path, to: $0.baseAddress!) }
                    }
                    #expect(count == length / 2)
                    #expect(Array(written[..<count]) == expected, "\(String(decoding: text, as: UTF8.self))")
                    #expect(written[count...].allSatisfy { $0 == 0xAA }, "wrote past the token")
                }
            }
        }
    }

    @Test(arguments: requests)
    func requestsReadBackExactly(request: APNsRequest) {
        #expect(Self.roundTrip(request).request == request)
    }

    @Test func deviceTokenIsReadBackInItsOwnCase() {
        #expect(Self.roundTrip(APNsRequest(method: "POST", path: "/3/device/" + Self.lower)).deviceToken == Self.lower)
        #expect(Self.roundTrip(APNsRequest(method: "POST", path: "/3/device/" + Self.lower.uppercased())).deviceToken == Self.lower.uppercased())
        #expect(Self.roundTrip(APNsRequest(method: "POST", path: "/3/device/aBab")).deviceToken == "aBab")
        #expect(Self.roundTrip(APNsRequest(method: "POST", path: "/3/other")).deviceToken == nil)
    }

    @Test func responsesReadBackExactlyWhateverTheirIDsLookLike() {
        let request = APNsRequest(method: "POST", path: "/3/device/" + Self.lower, headers: [HeaderField(name: "apns-id", value: "0a1b2c3d-0000-4000-8000-00000000abcd")])
        let responses = [
            APNsResponse(status: 200, apnsID: "0a1b2c3d-0000-4000-8000-00000000abcd", uniqueID: "4084a6e4-9ea8-6d2a-ca49-9a344a152da7"),
            APNsResponse(status: 410, reason: .unregistered, apnsID: "ACDFB3EB-0000-4000-8000-00000000ABCD", timestamp: 1_496_371_306_210),
            APNsResponse(status: 400, reason: .badDeviceToken, apnsID: "not-a-uuid", uniqueID: "Mixed-Case"),
            APNsResponse(status: 431, apnsID: "AbCdEf00-0000-4000-8000-000000000000"),
        ]
        for response in responses {
            let recorded = Self.roundTrip(request, response)
            #expect(recorded.response == response)
            #expect(recorded.status == response.status)
            #expect(recorded.reason == response.reason)
        }
    }

    /// Recordings made one after another on one connection, sharing request bytes where the shape repeats.
    static func recordInSequence(_ requests: [APNsRequest]) -> [RecordedNotification] {
        var shapes = RecordShapeCache()
        return requests.enumerated().map { index, request in
            let response = APNsResponse(status: 200, apnsID: APNsIDGenerator.format(high: UInt64(index), low: 7, uppercase: true))
            return RecordedNotification(
                sequence: UInt64(index + 1), receivedAt: 2, connectionID: 3, streamID: Int32(2 * index + 1),
                request: request, response: response, extras: nil, shapes: &shapes
            )
        }
    }

    @Test func aRepeatedShapeIsSharedAndEveryRecordingReadsBackItsOwnRequest() {
        let alert = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        let headers = [HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "user-agent", value: "h2load")]
        func push(_ token: String, payload: [UInt8] = alert, headers: [HeaderField] = headers, authority: String? = "localhost:2197") -> APNsRequest {
            APNsRequest(method: "POST", path: "/3/device/" + token, authority: authority, headers: headers, payload: payload)
        }
        let requests = [
            push(Self.lower),
            push(Self.lower.uppercased()),  // same shape, other token and case: shared
            push("not-hex"),  // a path kept as text: a storage of its own
            push(Self.lower, payload: Array(#"{"aps":{"alert":"ho"}}"#.utf8)),  // one byte differs: its own
            push(Self.lower, payload: Array(#"{"aps":{"alert":"ho"}}"#.utf8)),  // shares with the previous one
            push(Self.lower, headers: headers + [HeaderField(name: "apns-id", value: "x")]),  // one more header
            push(Self.lower, headers: [headers[1], headers[0]]),  // same fields, other order
            push(Self.lower, headers: [headers[1], headers[0]], authority: nil),  // no authority
            push(Self.lower, headers: [headers[1], headers[0]], authority: nil),
            APNsRequest(method: "GET", path: "/3/device/" + Self.lower, authority: nil, headers: [headers[1], headers[0]], payload: alert),
            push(Self.lower, payload: []),
            push(Self.lower, payload: []),
        ]
        let recorded = Self.recordInSequence(requests)
        #expect(recorded.map(\.sharesRequestBytes) == [false, true, false, false, true, false, false, false, true, false, false, true])
        for (request, recording) in zip(requests, recorded) {
            #expect(recording.request == request)
        }
        #expect(recorded[1].deviceToken == Self.lower.uppercased())
        #expect(recorded[1].topic == "com.example.app")
        #expect(recorded[2].deviceToken == "not-hex")
    }

    /// The record file writes a shared shape's members once and copies them for every recording that shares it:
    /// each line must be byte for byte what the admin API writes for that recording on its own. The same for a
    /// store's rows.
    @Test func jsonWithTheShapeCacheIsByteForByteTheSame() {
        let alert = Array(#"{"aps":{"alert":"hi \"there\""}}"#.utf8)
        let headers = [HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "host", value: "example.test")]
        func push(_ token: String, payload: [UInt8] = alert, authority: String? = nil) -> APNsRequest {
            APNsRequest(method: "POST", path: "/3/device/" + token, authority: authority, headers: headers, payload: payload)
        }
        let requests = [
            push(Self.lower), push(Self.lower.uppercased()), push("not-hex"), push(Self.lower, authority: "localhost:2197"),
            push(Self.lower, authority: "localhost:2197"), push(Self.lower, payload: Array("not json".utf8)),
            push(Self.lower, payload: Array("not json".utf8)), push(Self.lower), push(Self.lower.uppercased()),
        ]
        // More recordings than the cache holds, so entries are replaced while their storage is still in use.
        var recorded = (0..<3).flatMap { _ in Self.recordInSequence(requests) }
        // Extras shared or not (`--auth none`, a token, a rule, a fault, an abandonment) and times on both sides of
        // a second and of the epoch.
        let token = AuthenticationRecord.token(keyID: "KEY", teamID: "TEAM", issuedAt: 1, signatureVerified: true, error: nil)
        let extras: [(AuthenticationRecord?, String?, [String], String?)] = [
            (AuthenticationRecord.none, nil, [], nil), (token, nil, [], nil), (token, nil, [], nil), (nil, nil, [], nil),
            (token, "rule-1", ["GOAWAY"], nil), (nil, nil, [], "the client reset the stream"), (AuthenticationRecord.none, nil, [], nil),
        ]
        for (index, (authentication, rule, faults, abandoned)) in (extras + extras).enumerated() {
            let times: [Int64] = [1_795_639_655_089, 1_795_639_655_999, 1_795_639_656_000, -1, -1_000, 0, 1_795_639_655_089]
            recorded.append(RecordedNotification(
                sequence: UInt64(100 + index), receivedAt: times[index % times.count], connectionID: 1, streamID: 1,
                request: requests[index % requests.count],
                response: abandoned == nil ? APNsResponse(status: 200, apnsID: "A") : nil,
                abandonedBecause: abandoned, authentication: authentication, scenarioRule: rule, faults: faults
            ))
        }
        var shapes = RecordShapeJSONCache()
        var rows = RecordingRowCache()
        var cached = JSONWriter()
        for recording in recorded {
            cached.removeAll()
            recording.writeJSON(into: &cached, shapes: &shapes)
            #expect(String(decoding: cached.bytes, as: UTF8.self) == String(decoding: recording.jsonBytes(), as: UTF8.self))
            // A store's rows, made the same way.
            #expect(RecordingRow(recording, cache: &rows) == RecordingRow(recording))
        }
        #expect(recorded.filter(\.sharesRequestBytes).count > 3)
    }

    @Test func aRecordingStaysSmall() {
        // A recording whose storage is shared is only this: every byte here is touched, fresh, for every request
        // a growing recorder keeps.
        #expect(MemoryLayout<RecordFields>.size <= 96)
        #expect(MemoryLayout<RecordedNotification>.stride <= 136)
    }

    @Test func tokensUpToThirtyTwoBytesStayInTheRecordingLongerOnesAreText() {
        let long = String(repeating: "ab", count: 33)
        for token in [Self.lower, Self.lower.uppercased(), "ab", long, long.uppercased(), String(Self.lower.dropLast())] {
            let recorded = Self.roundTrip(APNsRequest(method: "POST", path: "/3/device/" + token))
            #expect(recorded.deviceToken == token)
            #expect(recorded.request.path == "/3/device/" + token)
        }
    }

    @Test func textIDsLiveBesideASharedShape() {
        let request = APNsRequest(method: "POST", path: "/3/device/" + Self.lower, headers: [HeaderField(name: "apns-topic", value: "t")], payload: [1])
        var shapes = RecordShapeCache()
        let responses = [
            APNsResponse(status: 200, apnsID: "not-a-uuid", uniqueID: "Mixed-Case"),
            APNsResponse(status: 410, reason: .unregistered, apnsID: "x", uniqueID: "4084a6e4-9ea8-6d2a-ca49-9a344a152da7", timestamp: 0),
            APNsResponse(status: 400, reason: .badDeviceToken, apnsID: "ACDFB3EB-0000-4000-8000-00000000ABCD", uniqueID: "ü"),
        ]
        for response in responses {
            let recorded = RecordedNotification(
                sequence: 1, receivedAt: 2, connectionID: 3, streamID: 5, request: request, response: response, extras: nil, shapes: &shapes
            )
            #expect(recorded.response == response)
            #expect(recorded.request == request)
            #expect(recorded.status == response.status)
            #expect(recorded.reason == response.reason)
        }
    }

    @Test func aSharedShapeOutlivesTheRecordingThatHeldIt() {
        var recorded = Self.recordInSequence([
            APNsRequest(method: "POST", path: "/3/device/" + Self.lower, headers: [HeaderField(name: "apns-topic", value: "t")], payload: [1, 2, 3]),
            APNsRequest(method: "POST", path: "/3/device/" + Self.lower.uppercased(), headers: [HeaderField(name: "apns-topic", value: "t")], payload: [1, 2, 3]),
        ])
        recorded.removeFirst()  // as an evicted or cleared recording
        #expect(recorded[0].sharesRequestBytes)
        #expect(recorded[0].request.payload == [1, 2, 3])
        #expect(recorded[0].topic == "t")
    }
}
