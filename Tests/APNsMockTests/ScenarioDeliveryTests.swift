import Foundation
import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

/// A scenario's `delivery:` settings: its simulated devices follow them instead of the command line's.
@Suite("Scenario delivery settings")
struct ScenarioDeliveryTests {
    @Test func everySettingIsReadWithTheCommandLinesOthersKept() throws {
        let scenario = try F.load("""
            name: patient
            delivery: {storedPerApp: 3, maxStorage: 7d, backgroundBudget: none, lowPriorityInterval: 5m}
            """)
        let delivery = try #require(scenario.delivery)
        let base = DeliveryPolicy(storedPerApp: 1, maximumStorage: 30 * DeliveryPolicy.day, backgroundBudget: 2, recordsPerDevice: 50)
        let applied = delivery.applied(to: base)
        #expect(applied == DeliveryPolicy(
            storedPerApp: 3, maximumStorage: 7 * DeliveryPolicy.day, backgroundBudget: nil, lowPriorityInterval: 5 * 60_000, recordsPerDevice: 50
        ))
        let partial = try #require(try F.load("delivery: {backgroundBudget: 4}").delivery).applied(to: base)
        #expect(partial == DeliveryPolicy(storedPerApp: 1, maximumStorage: 30 * DeliveryPolicy.day, backgroundBudget: 4, recordsPerDevice: 50))
        // The JSON form reads back as the same scenario.
        let json = String(decoding: JSONWriter.encode(any: scenario.jsonObject()), as: UTF8.self)
        #expect(try F.load(json).delivery == delivery, "\(json)")
    }

    @Test(arguments: [
        ("delivery: {storedPerApp: 0}", "test.yaml:1:26: delivery.storedPerApp: 0 is out of range; expected a number between 1 and 10000"),
        ("delivery: {maxStorage: 400d}", "delivery.maxStorage: is longer than 366d, the most it may be"),
        ("delivery: {lowPriorityInterval: 0}", "delivery.lowPriorityInterval: must be longer than 0"),
        ("delivery: {backgroundBudget: lots}", "delivery.backgroundBudget: expected a whole number"),
        ("delivery: {storedPerapp: 2}", "did you mean 'storedPerApp'?"),
        ("delivery: {maxStorage: 10}", "'10' has no unit"),
    ])
    func badSettingsAreNamedWithTheirPlace(yaml: String, expected: String) {
        let problems = F.problems(yaml).map(\.description)
        #expect(problems.contains { $0.contains(expected) }, "\(problems)")
    }

    @Test func theScenariosDevicesFollowItsSettingsAndTheNextScenarioTheCommandLines() throws {
        let wall = ScenarioTestClock(F.start)
        let active = ActiveScenario(now: wall.function, delivery: DeliveryPolicy(storedPerApp: 1))
        active.replace(with: try F.load("""
            delivery: {storedPerApp: 2}
            devices:
              - {name: phone, token: \(F.tokenA), topic: com.example.app, state: offline}
            """))
        func push(_ id: String) -> RecordedNotification {
            RecordedNotification(
                sequence: 1, receivedAt: wall.function(), connectionID: 1, streamID: 1, request: F.push(token: F.tokenA),
                response: APNsResponse(status: 200, reason: nil, apnsID: id, uniqueID: nil)
            )
        }
        active.devices.accept([push("A-1"), push("A-2"), push("A-3")])
        // Two kept, the oldest replaced.
        #expect(active.devices.stored(token: F.tokenA)?.map(\.apnsID) == ["A-2", "A-3"])
        #expect(active.devices.policy.storedPerApp == 2)
        active.replace(with: try F.load("devices:\n  - {name: phone, token: \(F.tokenA), topic: com.example.app, state: offline}\n"))
        #expect(active.devices.policy.storedPerApp == 1)
        active.devices.accept([push("B-1"), push("B-2")])
        #expect(active.devices.stored(token: F.tokenA)?.map(\.apnsID) == ["B-2"])
    }
}
