import Foundation
import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

@Suite("DeviceRegistry")
struct DeviceRegistryTests {
    private let now: Int64 = 1_700_000_000_000

    private func registry() -> DeviceRegistry {
        DeviceRegistry([
            Device(name: "a", token: F.tokenA, topic: "com.example.app", environment: .development),
            Device(name: "b", token: F.tokenB.uppercased(), topic: "com.example.App", environment: .production),
        ])
    }

    /// The provider port asks first from the path's bytes: a token whose last two digits no registered token has
    /// is surely unknown; one that shares them is looked up, and still not judged; case does not matter.
    @Test func aTokenNobodyRegisteredIsToldFromItsLastDigits() {
        func push(_ token: String) -> APNsRequest { APNsRequest(method: "POST", path: "/3/device/" + token, headers: []) }
        let stem = String(repeating: "ab", count: 31)
        let devices = DeviceRegistry([Device(name: "a", token: stem + "f0", topic: "com.example.app", environment: .development)])
        #expect(devices.mayKnow(tokenOf: push(stem + "f0")))
        #expect(devices.mayKnow(tokenOf: push((stem + "f0").uppercased())))
        #expect(!devices.mayKnow(tokenOf: push(stem + "f1")))
        #expect(!devices.mayKnow(tokenOf: APNsRequest(method: "POST", path: "/3/broadcasts/apps/com.example.app", headers: [])))
        // 0xb0 and 0xf0 share their low six bits: looked up, and unknown.
        #expect(devices.mayKnow(tokenOf: push(stem + "b0")))
        var known = true
        #expect(devices.check(token: stem + "b0", topic: nil, environment: .development, now: now, known: &known) == nil && !known)
        devices.add(Device(name: "b", token: stem + "F1", topic: "com.example.app", environment: .development))
        #expect(devices.mayKnow(tokenOf: push(stem + "f1")))
        devices.removeAll()
        #expect(!devices.mayKnow(tokenOf: push(stem + "f0")))
    }

    @Test func unknownTokensAreNotJudged() {
        #expect(registry().check(token: F.tokenC, topic: "com.example.app", environment: .development, now: now) == nil)
    }

    @Test func registeredTokenPushedCorrectlyPasses() {
        #expect(registry().check(token: F.tokenA, topic: "com.example.app", environment: .development, now: now) == nil)
    }

    @Test func tokensAndTopicsAreComparedCaseInsensitively() {
        let devices = registry()
        #expect(
            devices.check(token: F.tokenA.uppercased(), topic: "COM.example.app", environment: .development, now: now)
                == nil
        )
        #expect(devices.check(token: F.tokenB, topic: "com.example.app", environment: .production, now: now) == nil)
        #expect(devices.device(token: F.tokenB)?.name == "b")
    }

    @Test func wrongTopicIsDeviceTokenNotForTopic() {
        #expect(
            registry().check(token: F.tokenA, topic: "com.example.app.voip", environment: .development, now: now)
                == ScenarioResponse(status: 400, reason: .deviceTokenNotForTopic)
        )
    }

    @Test func noTopicSkipsTheTopicCheck() {
        #expect(registry().check(token: F.tokenA, topic: nil, environment: .development, now: now) == nil)
    }

    @Test func wrongEnvironmentIsBadDeviceTokenBeforeTheTopic() {
        #expect(
            registry().check(token: F.tokenB, topic: "com.example.other", environment: .development, now: now)
                == ScenarioResponse(status: 400, reason: .badDeviceToken)
        )
    }

    @Test func unregisteredDeviceAnswers410WithItsTimeFromThatTimeOn() {
        let devices = registry()
        #expect(devices.unregister(token: F.tokenA.uppercased(), at: now + 1_000)?.unregisteredAt == now + 1_000)
        #expect(devices.check(token: F.tokenA, topic: "com.example.app", environment: .development, now: now) == nil)
        #expect(
            devices.check(token: F.tokenA, topic: "com.example.app", environment: .development, now: now + 1_000)
                == ScenarioResponse(status: 410, reason: .unregistered, timestamp: now + 1_000)
        )
    }

    @Test func unregisteringAnUnknownTokenChangesNothing() {
        let devices = registry()
        #expect(devices.unregister(token: F.tokenC, at: now) == nil)
        #expect(devices.count == 2)
    }

    @Test func addReplacesTheSameTokenInPlaceAndListKeepsInsertionOrder() {
        let devices = registry()
        devices.add(Device(token: F.tokenC, topic: "t"))
        devices.add(Device(name: "a2", token: F.tokenA.uppercased(), topic: "com.example.app"))
        #expect(devices.list().map(\.name) == ["a2", "b", nil])
    }

    @Test func removeForgetsTheDevice() {
        let devices = registry()
        #expect(devices.remove(token: F.tokenA.uppercased())?.name == "a")
        #expect(devices.remove(token: F.tokenA) == nil)
        #expect(devices.list().map(\.name) == ["b"])
        devices.removeAll()
        #expect(devices.count == 0)
    }

    @Test func scenarioDevicesResolveRelativeTimesFromTheStart() throws {
        let engine = ScenarioEngine(
            scenario: try F.load(
                """
                devices:
                  - {name: old, token: \(F.tokenA), topic: t, unregisteredAt: -2d}
                  - {name: new, token: \(F.tokenB), topic: t, unregisteredAt: +30s}
                  - {name: fixed, token: \(F.tokenC), topic: t, unregisteredAt: 1600000000000}
                """
            ),
            startedAt: now,
            now: { 0 }
        )
        #expect(engine.devices.list().map(\.unregisteredAt) == [now - 172_800_000, now + 30_000, 1_600_000_000_000])
    }

    @Test func engineCanShareARegistryAcrossScenarios() throws {
        let devices = DeviceRegistry([Device(name: "runtime", token: F.tokenC, topic: "t")])
        let engine = ScenarioEngine(
            scenario: try F.load("devices: [{name: a, token: \(F.tokenA), topic: t}]"),
            startedAt: now,
            now: { 0 },
            devices: devices
        )
        #expect(engine.devices === devices)
        #expect(devices.list().compactMap(\.name) == ["runtime", "a"])
    }

    // MARK: JSON for the admin API

    @Test func deviceFromJSON() throws {
        let device = try Device(
            json: Array(
                #"{"token":"\#(F.tokenA)","topic":"com.example.app","environment":"production","name":"x"}"#.utf8
            )
        )
        #expect(device == Device(name: "x", token: F.tokenA, topic: "com.example.app", environment: .production))
    }

    @Test func deviceFromJSONDefaultsToDevelopment() throws {
        let device = try Device(jsonObject: ["token": F.tokenA, "topic": "t", "unregisteredAt": 1_700_000_000_000])
        #expect(device.environment == .development)
        #expect(device.unregisteredAt == 1_700_000_000_000)
    }

    @Test func deviceJSONRoundTrips() throws {
        let device = Device(name: "n", token: F.tokenA, topic: "t", environment: .production, unregisteredAt: 5)
        let data = try JSONSerialization.data(withJSONObject: device.jsonObject())
        #expect(try Device(json: Array(data)) == device)
    }

    @Test(arguments: [
        (#"[1]"#, "expected a JSON object with token, topic and environment"),
        (#"{"topic":"t"}"#, "token: is required"),
        (#"{"token":12,"topic":"t"}"#, "token: must be a string"),
        (#"{"token":"xyz","topic":"t"}"#, "token: must be an even number of hexadecimal digits"),
        (#"{"token":"abcd"}"#, "topic: is required"),
        (#"{"token":"abcd","topic":""}"#, "topic: must be a non-empty string"),
        (
            #"{"token":"abcd","topic":"t","environment":"staging"}"#,
            #"environment: must be "development" or "production""#
        ),
        (
            #"{"token":"abcd","topic":"t","unregisteredAt":true}"#,
            "unregisteredAt: must be milliseconds since the epoch, not a boolean"
        ),
        (
            #"{"token":"abcd","topic":"t","unregisteredAt":-1}"#,
            "unregisteredAt: must be a whole number of milliseconds since the epoch, ≥ 0"
        ),
        (
            #"{"token":"abcd","topic":"t","colour":"red"}"#,
            "colour: unknown key; expected name, token, topic, environment, state or unregisteredAt"
        ),
        ("not json", "the body is not JSON"),
    ])
    func deviceJSONErrorsNameTheField(body: String, message: String) {
        #expect(throws: DeviceJSONError.self) { try Device(json: Array(body.utf8)) }
        do {
            _ = try Device(json: Array(body.utf8))
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func unregisterBody() throws {
        #expect(try Device.unregisterTimestamp(json: [], now: now) == now)
        #expect(try Device.unregisterTimestamp(json: Array("{}".utf8), now: now) == now)
        #expect(try Device.unregisterTimestamp(json: Array(#"{"timestamp": 1234}"#.utf8), now: now) == 1234)
        #expect(throws: DeviceJSONError(field: "timestamp", message: "must be a number: milliseconds since the epoch")) {
            try Device.unregisterTimestamp(json: Array(#"{"timestamp": [1]}"#.utf8), now: now)
        }
        #expect(throws: DeviceJSONError.self) {
            try Device.unregisterTimestamp(json: Array(#"{"timestamp": "soon"}"#.utf8), now: now)
        }
        // The scenario files' times: relative to now, now, ISO 8601.
        #expect(try Device.unregisterTimestamp(json: Array(#"{"timestamp": "-2d"}"#.utf8), now: now) == now - 2 * 86_400_000)
        #expect(try Device.unregisterTimestamp(json: Array(#"{"timestamp": "now"}"#.utf8), now: now) == now)
        #expect(try Device.unregisterTimestamp(json: Array(#"{"timestamp": "2023-11-14T22:13:20Z"}"#.utf8), now: now) == 1_700_000_000_000)
        #expect(throws: DeviceJSONError(field: "when", message: "unknown key; expected timestamp")) {
            try Device.unregisterTimestamp(json: Array(#"{"when": 1}"#.utf8), now: now)
        }
    }
}
