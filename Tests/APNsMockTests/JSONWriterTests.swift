import Foundation
import Testing

@testable import APNsMock

/// The one JSON encoder: output that any parser reads back as what was written.
@Suite("JSON writer")
struct JSONWriterTests {
    private func parse(_ bytes: [UInt8]) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    @Test func escapesWhatJSONRequiresAndKeepsUnicode() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} é 日本 🚀 /"
        var writer = JSONWriter()
        writer.string(text)
        #expect(try parse(writer.bytes) as? String == text)
        #expect(!writer.bytes.contains(0x0A), "a record file line must not contain a raw newline")
    }

    @Test func everyControlCharacterHasItsShortOrSixCharacterEscape() throws {
        let short: [UInt8: String] = [0x09: #"\t"#, 0x0A: #"\n"#, 0x0D: #"\r"#]
        for byte in UInt8(0)..<0x20 {
            var writer = JSONWriter()
            writer.string(String(UnicodeScalar(byte)))
            let expected = short[byte] ?? "\\u00" + String(byte, radix: 16).leftPadding(to: 2)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"\(expected)\"", "byte \(byte)")
        }
    }

    @Test func invalidUTF8BecomesTheReplacementCharacter() throws {
        let bytes: [UInt8] = [0x61, 0xFF, 0x62, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0xF0, 0x9F, 0x9A]
        var writer = JSONWriter()
        bytes.withUnsafeBufferPointer { writer.string(utf8: $0) }
        let decoded = try #require(try parse(writer.bytes) as? String)
        #expect(decoded.hasPrefix("a\u{FFFD}b\u{FFFD}("))
        #expect(!decoded.unicodeScalars.contains { (0xD800...0xDFFF).contains($0.value) })
    }

    @Test func numbersAndLiterals() throws {
        var writer = JSONWriter()
        writer.beginArray()
        writer.int(Int64.min)
        writer.int(0)
        writer.uint(UInt64.max)
        writer.double(1.5)
        writer.double(-2)
        writer.double(.nan)
        writer.bool(true)
        writer.bool(false)
        writer.null()
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "[-9223372036854775808,0,18446744073709551615,1.5,-2,null,true,false,null]")
    }

    @Test func nestedContainersGetTheirCommas() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a")
        writer.beginArray()
        writer.beginObject()
        writer.endObject()
        writer.beginArray()
        writer.endArray()
        writer.int(1)
        writer.endArray()
        writer.key("b")
        writer.string("c")
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":[{},[],1],"b":"c"}"#)
        writer.newline()
        writer.beginObject()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"a\":[{},[],1],\"b\":\"c\"}\n{}")
    }

    @Test func dictionariesAreWrittenWithSortedKeysAndNullsKept() throws {
        let tree: [String: Any] = ["b": [1, "two", true, 2.5] as [Any], "a": ["nested": Optional<String>.none as Any], "c": NSNull()]
        #expect(String(decoding: JSONWriter.encode(any: tree), as: UTF8.self) == #"{"a":{"nested":null},"b":[1,"two",true,2.5],"c":null}"#)
    }

    @Test func numbersParsedByJSONSerializationKeepTheirKind() throws {
        let parsed = try JSONSerialization.jsonObject(with: Data(#"{"t":true,"i":3,"d":0.25}"#.utf8))
        #expect(String(decoding: JSONWriter.encode(any: parsed), as: UTF8.self) == #"{"d":0.25,"i":3,"t":true}"#)
    }

    /// From 1906 on: before 1582 Foundation counts in the Julian calendar, ISO 8601 in the proleptic Gregorian.
    @Test func iso8601TimesMatchFoundationToTheMillisecond() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var generator = SystemRandomNumberGenerator()
        let samples: [Int64] = [0, -1, 951_782_400_000, 1_709_164_800_123, 4_102_444_799_999]
            + (0..<2000).map { _ in Int64.random(in: -2_000_000_000_000...8_000_000_000_000, using: &generator) }
        for milliseconds in samples {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            #expect(ISO8601Time.format(milliseconds: milliseconds) == expected, "\(milliseconds)")
        }
    }

    /// The record file writes times into fixed scratch space (`ISO8601Time.maximumLength`): the extremes of
    /// `Int64` must fit it, and the memo of the second must give the same text as the full computation.
    @Test func iso8601TimesFitTheirBoundAtTheExtremesAndTheMemoAgrees() {
        var memo = ISO8601Time.SecondMemo()
        let samples: [Int64] = [.min, .min + 999, .max, .max - 999, -62_135_596_800_001, 253_402_300_800_000, -1, 0, 999, 1000, -1000, -1001]
        for milliseconds in samples {
            let text = ISO8601Time.format(milliseconds: milliseconds)
            #expect(text.utf8.count <= ISO8601Time.maximumLength, "\(milliseconds): \(text)")
            #expect(text.hasSuffix("Z"))
            var plain = JSONWriter()
            plain.iso8601(milliseconds: milliseconds)
            var memoized = JSONWriter()
            memoized.iso8601(milliseconds: milliseconds, memo: &memo)
            memoized.iso8601(milliseconds: milliseconds, memo: &memo)
            #expect(String(decoding: plain.bytes, as: UTF8.self) == "\"\(text)\"")
            #expect(String(decoding: memoized.bytes, as: UTF8.self) == "\"\(text)\",\"\(text)\"")
        }
        #expect(ISO8601Time.format(milliseconds: .min) == "-292275055-05-16T16:47:04.192Z")
        #expect(ISO8601Time.format(milliseconds: .max) == "292278994-08-17T07:12:55.807Z")
    }

    /// Tokens and IDs are written eight digits at a time: every length (not only multiples of four), both cases,
    /// every nibble.
    @Test func hexadecimalTextMatchesAByteAtATimeFormatting() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<40 {
            let bytes = (0..<length).map { index in index < 16 ? UInt8(index * 17) : UInt8.random(in: 0...255, using: &generator) }
            for uppercase in [false, true] {
                let expected = bytes.map { String(format: uppercase ? "%02X" : "%02x", $0) }.joined()
                var writer = JSONWriter()
                bytes.withUnsafeBytes { writer.hexString(prefix: "/3/device/", bytes: $0, uppercase: uppercase) }
                #expect(String(decoding: writer.bytes, as: UTF8.self) == "\"/3/device/\(expected)\"")
            }
        }
    }

    /// A recording's head and answer are written into fixed scratch space: the largest numbers and the extreme
    /// times must fit it (a bound too small stops the process), through the record file's path and the admin API's.
    @Test func aRecordingWithExtremeValuesFitsTheBoundsOfItsTokens() throws {
        let token = String(repeating: "ab", count: 100)
        let request = APNsRequest(method: "POST", path: "/3/device/" + token, authority: nil, headers: [], payload: Array("{}".utf8))
        for receivedAt in [Int64.min, Int64.max] {
            let recording = RecordedNotification(
                sequence: .max, receivedAt: receivedAt, connectionID: .max, streamID: .min, request: request,
                response: APNsResponse(status: Int(Int32.max), reason: .unregistered, apnsID: "A", timestamp: .min)
            )
            var shapes = RecordShapeJSONCache()
            var cached = JSONWriter()
            recording.writeJSON(into: &cached, shapes: &shapes)
            #expect(cached.bytes == recording.jsonBytes())
            let object = try #require(try parse(cached.bytes) as? [String: Any])
            #expect(object["receivedAt"] as? String == ISO8601Time.format(milliseconds: receivedAt))
            #expect(object["deviceToken"] as? String == token)
        }
    }

    /// Tokens appended at once (a recording's head, its answer) get their commas from the writer around them.
    @Test func tokensWrittenAtOnceJoinTheWriterAroundThem() {
        var together = JSONWriter()
        together.beginArray()
        together.bounded(atMost: 200) { tokens in
            tokens.beginObject()
            tokens.key("a")
            tokens.int(-42)
            tokens.key("b")
            tokens.uint(7)
            tokens.key("c")
            tokens.null()
            tokens.key("d")
            tokens.bool(false)
            tokens.key("e")
            tokens.string(static: "x")
            tokens.key("f")
            tokens.uuid(high: 0x0123_4567_89AB_4DEF, low: 0x8123_4567_89AB_CDEF, uppercase: true)
            tokens.endObject()
        }
        together.int(1)
        together.endArray()
        #expect(
            String(decoding: together.bytes, as: UTF8.self)
                == #"[{"a":-42,"b":7,"c":null,"d":false,"e":"x","f":"01234567-89AB-4DEF-8123-456789ABCDEF"},1]"#
        )
    }

    @Test func aRecordingIsOneLineOfJSONWithItsPayloadAsAnObject() throws {
        let request = APNsRequest(
            method: "POST",
            path: "/3/device/00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0",
            authority: "api.sandbox.push.apple.com",
            headers: [HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "x-note", value: "line\nbreak")],
            payload: Array("{\"aps\":{\"alert\":\"Hi\\n\"},\"n\":12345678901}".utf8)
        )
        let recording = RecordedNotification(
            sequence: 7, receivedAt: 1_700_000_000_123, connectionID: 2, streamID: 5, request: request,
            response: APNsResponse(status: 400, reason: .badDeviceToken, apnsID: "07C0F2E2-7CE0-71EC-D0D6-E7089220F778"),
            authentication: .token(keyID: "K", teamID: "T", issuedAt: 1, signatureVerified: true, error: nil)
        )
        let bytes = recording.jsonBytes()
        #expect(!bytes.contains(0x0A))
        let object = try #require(try parse(bytes) as? [String: Any])
        #expect(object["sequence"] as? Int == 7)
        #expect(object["receivedAt"] as? String == "2023-11-14T22:13:20.123Z")
        #expect(object["topic"] as? String == "com.example.app")
        #expect(((object["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? String == "Hi\n")
        #expect((object["payload"] as? [String: Any])?["n"] as? Int == 12_345_678_901)
        #expect((object["response"] as? [String: Any])?["reason"] as? String == "BadDeviceToken")
        #expect((object["authentication"] as? [String: Any])?["keyId"] as? String == "K")
        #expect((object["headers"] as? [[String: String]])?.last?["value"] == "line\nbreak")
    }
}

/// The recording's JSON written from its stored bytes says what its public properties say.
@Suite("Recording JSON from stored bytes")
struct RecordingJSONTests {
    private static let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"

    /// The JSON object the public properties describe, as the admin API promises it.
    private func reference(_ recording: RecordedNotification) -> [String: Any] {
        let request = recording.request
        var object: [String: Any] = [
            "sequence": Int(recording.sequence), "receivedAt": ISO8601Time.format(milliseconds: recording.receivedAt),
            "receivedAtMillis": Int(recording.receivedAt), "connectionId": Int(recording.connectionID), "streamId": Int(recording.streamID),
            "kind": recording.kind, "warnings": [Any](),
            "method": request.method, "path": request.path, "authority": request.authority as Any? ?? NSNull(),
            "deviceToken": recording.deviceToken as Any? ?? NSNull(), "topic": recording.topic as Any? ?? NSNull(),
            "pushType": recording.pushType as Any? ?? NSNull(),
            "headers": request.headers.map { ["name": $0.name, "value": $0.value] },
            "payloadSize": request.payloadSize, "payloadTruncated": request.payload.count < request.payloadSize,
            "payloadText": String(decoding: request.payload, as: UTF8.self),
            "payload": (try? JSONSerialization.jsonObject(with: Data(request.payload))).flatMap { $0 as? [String: Any] } as Any? ?? NSNull(),
            // (no sample here has a trailing comma, which Foundation on Linux takes and the strict check does not)
            "authentication": NSNull(), "scenarioRule": NSNull(),
        ]
        if let response = recording.response {
            var answer: [String: Any] = [
                "status": response.status, "reason": response.reason?.rawValue as Any? ?? NSNull(), "apnsId": response.apnsID,
                "apnsUniqueId": response.uniqueID as Any? ?? NSNull(),
            ]
            if let timestamp = response.timestamp, response.reason?.carriesTimestamp == true { answer["timestamp"] = Int(timestamp) }
            object["response"] = answer
        } else {
            object["response"] = NSNull()
            object["abandoned"] = recording.abandonedBecause ?? "no answer"
        }
        return object
    }

    private func check(_ recording: RecordedNotification, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let written = try JSONSerialization.jsonObject(with: Data(recording.jsonBytes())) as? NSDictionary
        #expect(written == reference(recording) as NSDictionary, "\(String(decoding: recording.jsonBytes(), as: UTF8.self))", sourceLocation: sourceLocation)
    }

    private func recording(
        path: String = "/3/device/" + token,
        authority: String? = "api.push.apple.com",
        headers: [(String, String)] = [("apns-topic", "com.example.app"), ("apns-push-type", "alert")],
        payload: [UInt8] = Array(#"{"aps":{"alert":"Hi"}}"#.utf8),
        payloadSize: Int? = nil,
        response: APNsResponse? = APNsResponse(status: 200, apnsID: "07C0F2E2-7CE0-71EC-D0D6-E7089220F778")
    ) -> RecordedNotification {
        RecordedNotification(
            sequence: 3, receivedAt: 1_795_513_431_234, connectionID: 9, streamID: 41,
            request: APNsRequest(
                method: "POST", path: path, authority: authority, headers: headers.map { HeaderField(name: $0.0, value: $0.1) },
                payload: payload, payloadSize: payloadSize
            ),
            response: response
        )
    }

    @Test func aPlainPush() throws {
        try check(recording())
    }

    @Test func tokensAndPaths() throws {
        try check(recording(path: "/3/device/" + Self.token.uppercased()))
        try check(recording(path: "/3/device/abc"))
        try check(recording(path: "/3/devices/" + Self.token))
        try check(recording(path: "/3/device/" + String(repeating: "ab", count: 50)))
    }

    @Test func hostInsteadOfAuthorityAndOddHeaders() throws {
        try check(recording(authority: nil, headers: [("host", "localhost:2197"), ("x-odd", "tab\there \"quoted\" é"), ("apns-topic", "a"), ("apns-topic", "b")]))
        try check(recording(authority: nil, headers: []))
    }

    @Test func payloadsThatAreNotCleanJSONObjects() throws {
        for payload in [
            Array("[1,2]".utf8), Array("not json".utf8), [], Array("{\"a\":\"\u{01}\"}".utf8), [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D],
            Array(" {\"n\": -1.5e3, \"t\": [true, false, null], \"s\": \"\\u00e9\\n\"} ".utf8), Array("{\"a\":1}x".utf8), Array("{\"a\":01}".utf8),
        ] {
            try check(recording(payload: payload))
        }
        try check(recording(payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8.prefix(10)), payloadSize: 5000))
    }

    @Test func aPrettyPrintedPayloadStaysOnOneLine() throws {
        let pretty = Array("\n{\n  \"aps\" : {\r\n    \"alert\" : \"Hi\\n\"\n  }\n}\n\n".utf8)
        let written = recording(payload: pretty)
        try check(written)
        #expect(!written.jsonBytes().contains(0x0A) && !written.jsonBytes().contains(0x0D))
    }

    @Test func answers() throws {
        var generated = APNsIDGenerator()
        var error = APNsResponse(status: 410, reason: .unregistered, apnsID: "07c0f2e2-7ce0-71ec-d0d6-e7089220f778", timestamp: 1_700_000_000_000)
        error.uniqueIDValue = generated.nextID(uppercase: false)
        try check(recording(response: error))
        try check(recording(response: APNsResponse(status: 200, apnsID: generated.nextID(uppercase: true))))
        try check(recording(response: APNsResponse(status: 400, reason: .badDeviceToken, apnsID: "not-a-uuid")))
        try check(recording(headers: [("apns-id", "07C0F2E2-7CE0-71EC-D0D6-E7089220F778")]))
        try check(recording(response: nil))
    }

    @Test func theStrictSyntaxCheckAgreesWithJSONSerializationOnObjects() {
        let samples = [
            #"{}"#, #"{"a":1}"#, #"{"a":[1,2,{"b":null}]}"#, #"{"a":01}"#, #"{"a":-0.5e-3}"#, #"{"a":.5}"#, #"{"a":1.}"#,
            #"{"a":"\u12"}"#, #"{"a":"\x"}"#, #"{a:1}"#, #"{"a":tru}"#, #"{"a":1}}"#, #" { "a" : "b" } "#, #"{"a":"\/"}"#, #"{"a":1e}"#,
            #"{"a":-}"#, #"{"a":[]}"#, #"{"a":[,]}"#, #"{"":""}"#,
        ]
        for sample in samples {
            let expected = (try? JSONSerialization.jsonObject(with: Data(sample.utf8))) is [String: Any]
            let checked = Array(sample.utf8).withUnsafeBufferPointer { JSONSyntax.isCleanObject($0) }
            #expect(checked == expected, "\(sample)")
        }
        // Stricter than Foundation on Linux, which takes a trailing comma.
        #expect(!Array(#"{"a":1,}"#.utf8).withUnsafeBufferPointer { JSONSyntax.isCleanObject($0) })
    }

    @Test func escapingHoldsAtEveryPositionOfTheEightByteScan() throws {
        for length in 0..<24 {
            for position in 0..<max(length, 1) {
                for special in ["\"", "\\", "\n", "\u{1F}", "é", "\u{7F}"] {
                    var characters = Array(repeating: "a", count: length)
                    if length > 0 { characters[position] = special }
                    let text = characters.joined()
                    var writer = JSONWriter()
                    writer.string(text)
                    #expect(try JSONSerialization.jsonObject(with: Data(writer.bytes), options: .fragmentsAllowed) as? String == text)
                }
            }
        }
    }
}

private extension String {
    func leftPadding(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
