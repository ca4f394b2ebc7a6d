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
