import Testing

@testable import APNsMock

/// A persistent store's row gives back the recording it was made from: the same JSON, byte for byte.
@Suite("Recording rows")
struct RecordingRowTests {
    static func recording(
        path: String = "/3/device/" + String(repeating: "ab", count: 32),
        headers: [HeaderField] = [HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "apns-priority", value: "5")],
        payload: String = #"{"aps":{"alert":"Hi"}}"#,
        response: APNsResponse? = APNsResponse(status: 200, apnsID: "9D3B5C8E-0000-4000-8000-000000000001", uniqueID: "a1b2c3d4-0000-4000-8000-000000000002"),
        extras: RecordExtras? = nil
    ) -> RecordedNotification {
        var shapes = RecordShapeCache()
        return RecordedNotification(
            sequence: 42, receivedAt: 1_764_000_000_123, connectionID: 7, streamID: 13,
            request: APNsRequest(method: "POST", path: path, authority: "127.0.0.1:2197", headers: headers, payload: Array(payload.utf8)),
            response: response, extras: extras, shapes: &shapes
        )
    }

    static let cases: [RecordedNotification] = [
        recording(),
        recording(response: APNsResponse(status: 410, reason: .unregistered, apnsID: "9D3B5C8E-0000-4000-8000-000000000003", timestamp: 1_700_000_000_000),
                  extras: RecordExtras(abandonedBecause: nil, authentication: .token(keyID: "APNSMOCK01", teamID: "TEAM000001", issuedAt: 1_764_000_000, signatureVerified: true, error: nil), scenarioRule: "gone", faults: [])),
        recording(response: nil, extras: RecordExtras(abandonedBecause: "stream reset by the client", authentication: .certificate(subject: "CN=x", topics: ["com.example.app", "com.example.app.voip"]), scenarioRule: nil, faults: ["RST_STREAM CANCEL"])),
        recording(payload: "not json \u{1}", extras: RecordExtras(abandonedBecause: nil, authentication: .missing, scenarioRule: nil, faults: [])),
        recording(
            path: "/4/broadcasts/apps/com.example.app",
            headers: [HeaderField(name: "apns-channel-id", value: "dHN0LXNyY2gtY2hubA=="), HeaderField(name: "apns-push-type", value: "LiveActivity")],
            payload: #"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#,
            response: APNsResponse(status: 200, apnsID: "9D3B5C8E-0000-4000-8000-000000000004"),
            extras: RecordExtras(
                abandonedBecause: nil, authentication: AuthenticationRecord.none, scenarioRule: nil, faults: [],
                broadcast: BroadcastRecord(kind: .broadcast, bundleID: "com.example.app", channelID: "dHN0LXNyY2gtY2hubA=="),
                warnings: [PayloadWarning(code: "liveactivity-missing-stale-date", path: "$.aps", message: "no \"stale-date\"")]
            )
        ),
    ]

    @Test(arguments: cases)
    func aRowGivesBackTheSameRecording(recording: RecordedNotification) throws {
        let row = RecordingRow(recording)
        let back = try RecordedNotification(row: row)
        #expect(String(decoding: back.jsonBytes(), as: UTF8.self) == String(decoding: recording.jsonBytes(), as: UTF8.self))
        #expect(back.sequence == 42)
        #expect(row.priority == (recording.broadcast == nil ? 5 : nil))
        #expect(row.warningCodes == recording.warnings.map(\.code).joined(separator: ","))
    }

    @Test func aDamagedRowIsAnErrorNamingTheField() {
        var row = RecordingRow(Self.recording())
        row.headersJSON = "[[\"apns-topic\"]]"
        #expect(throws: RecordingRowError.self) { try RecordedNotification(row: row) }
        row = RecordingRow(Self.recording())
        row.extrasJSON = #"{"authentication":{"method":"telepathy"}}"#
        do {
            _ = try RecordedNotification(row: row)
            Issue.record("a row with an unknown authentication method was read")
        } catch {
            #expect(error.field == "authentication")
        }
    }
}
