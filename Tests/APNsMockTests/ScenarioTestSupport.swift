import Foundation
import Synchronization

@testable import APNsMock

/// A clock the test moves by hand.
final class ScenarioTestClock: Sendable {
    private let milliseconds: Atomic<Int64>

    init(_ start: Int64) { milliseconds = Atomic(start) }

    var now: Int64 { milliseconds.load(ordering: .relaxed) }

    func advance(by delta: Int64) { milliseconds.add(delta, ordering: .relaxed) }

    func set(_ value: Int64) { milliseconds.store(value, ordering: .relaxed) }

    var function: @Sendable () -> Int64 { { self.now } }
}

enum ScenarioFixtures {
    static let start: Int64 = 1_700_000_000_000
    static let tokenA = String(repeating: "a1", count: 32)
    static let tokenB = String(repeating: "b2", count: 32)
    static let tokenC = String(repeating: "c3", count: 32)

    static func push(
        token: String = tokenA,
        topic: String? = "com.example.app",
        pushType: String? = "alert",
        priority: String? = nil,
        extraHeaders: [(String, String)] = [],
        payload: String = #"{"aps":{"alert":"Hello"}}"#
    ) -> APNsRequest {
        var headers: [(String, String)] = []
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", priority)) }
        headers += extraHeaders
        return APNsRequest(
            method: "POST",
            path: "/3/device/" + token,
            headers: headers.map { HeaderField(name: $0.0, value: $0.1) },
            payload: Array(payload.utf8)
        )
    }

    static func load(_ yaml: String, source: String = "test.yaml") throws -> Scenario {
        try ScenarioLoader.load(text: yaml, source: source)
    }

    static func engine(_ yaml: String, clock: ScenarioTestClock = ScenarioTestClock(start)) throws -> ScenarioEngine {
        ScenarioEngine(scenario: try load(yaml), startedAt: clock.now, now: clock.function)
    }

    /// The problems of a scenario that must not load.
    static func problems(_ yaml: String, source: String = "test.yaml") -> [ScenarioProblem] {
        do {
            _ = try ScenarioLoader.load(text: yaml, source: source)
            return []
        } catch {
            return error.problems
        }
    }

    /// `Scenarios/` at the package root, found from this file's path.
    static var scenariosDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // APNsMockTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("Scenarios")
    }
}

extension ScenarioEngine {
    /// Evaluates a request on connection 1 (or the one given).
    func decide(_ request: APNsRequest, connection: UInt64 = 1) -> ScenarioDecision? {
        evaluate(request, headers: APNsHeaders(request.headers), connection: connection)
    }
}
