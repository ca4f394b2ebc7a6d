import Foundation
import Testing

@testable import APNsMock

/// Each store-and-forward rule of the delivery facts (docs/devices.md), on one simulated device, without sockets
/// or clocks: every event brings its time.
@Suite("SimulatedDevice")
struct SimulatedDeviceTests {
    private static let t0: Int64 = 1_800_000_000_000
    private static let second: Int64 = 1000
    private static let minute: Int64 = 60_000
    private static let hour: Int64 = 3_600_000
    private static let day = DeliveryPolicy.day

    /// A push as `DeliveryRecord(accepted:)` makes it: `expiration` in seconds since the epoch, `0`, or absent.
    private static func push(
        _ id: String,
        at time: Int64,
        priority: Int = 10,
        pushType: String = "alert",
        collapseID: String? = nil,
        expiration: Int64? = nil,
        policy: DeliveryPolicy = DeliveryPolicy()
    ) -> DeliveryRecord {
        let expiresAt: Int64? = switch expiration {
        case 0?: nil
        case let seconds?: seconds * 1000
        case nil: time + policy.maximumStorage
        }
        return DeliveryRecord(
            token: "a1", topic: "com.example.app", apnsID: id, uniqueID: "u-" + id, pushType: pushType, priority: priority,
            collapseID: collapseID, expiration: expiration, expiresAt: expiresAt, events: [DeliveryEvent(.received, at: time)]
        )
    }

    private static func device(_ state: DeviceState = .online, policy: DeliveryPolicy = DeliveryPolicy(), timeline: [DeviceStateChange] = []) -> SimulatedDevice {
        SimulatedDevice(state: state, timeline: timeline, at: t0, policy: policy)
    }

    /// Each push's log as (state, time after t0).
    private static func log(_ device: SimulatedDevice, _ id: String) -> [(DeliveryState, Int64)] {
        (device.record(id: id)?.events ?? []).map { ($0.state, $0.at - t0) }
    }

    private static func expectLog(_ device: SimulatedDevice, _ id: String, _ expected: [(DeliveryState, Int64)], sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = log(device, id)
        #expect(actual.map(\.0) == expected.map(\.0), "states of \(id)", sourceLocation: sourceLocation)
        #expect(actual.map(\.1) == expected.map(\.1), "times of \(id)", sourceLocation: sourceLocation)
    }

    @Test func anOnlineDeviceTakesAPushAtOnce() {
        var device = Self.device()
        _ = device.accept(Self.push("p", at: Self.t0 + Self.second))
        Self.expectLog(device, "p", [(.received, Self.second), (.delivered, Self.second)])
        #expect(device.received.map(\.apnsID) == ["p"])
        #expect(device.stored.isEmpty)
    }

    @Test func anOfflineDeviceGetsItsStoredPushWhenItComesBack() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0))
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0)])
        #expect(device.stored.map(\.record.apnsID) == ["p"])
        #expect(device.received.isEmpty)
        _ = device.change(to: .online, at: Self.t0 + Self.hour)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.deliveredFromStorage, Self.hour)])
        #expect(device.stored.isEmpty)
    }

    @Test func expirationZeroIsTriedOnceAndNeverStored() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0, expiration: 0))
        Self.expectLog(device, "p", [(.received, 0), (.discardedExpired, 0)])
        #expect(device.stored.isEmpty)
        var online = Self.device()
        _ = online.accept(Self.push("q", at: Self.t0, expiration: 0))
        Self.expectLog(online, "q", [(.received, 0), (.delivered, 0)])
    }

    @Test func aStoredPushExpiresAtItsExpirationExactly() {
        var device = Self.device(.offline)
        let expiration = (Self.t0 + Self.hour) / 1000
        _ = device.accept(Self.push("p", at: Self.t0, expiration: expiration))
        _ = device.advance(to: Self.t0 + Self.hour - 1)
        #expect(device.stored.count == 1)
        _ = device.change(to: .online, at: Self.t0 + 2 * Self.hour)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.discardedExpired, Self.hour)])
        #expect(device.received.isEmpty)
    }

    @Test func anExpirationAlreadyPastIsTriedOnce() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0, expiration: (Self.t0 - Self.minute) / 1000))
        Self.expectLog(device, "p", [(.received, 0), (.discardedExpired, 0)])
    }

    @Test func withoutExpirationStorageKeepsAPushThirtyDaysByDefault() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0))
        _ = device.advance(to: Self.t0 + 30 * Self.day - 1)
        #expect(device.stored.count == 1)
        _ = device.advance(to: Self.t0 + 31 * Self.day)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.discardedExpired, 30 * Self.day)])
    }

    @Test func theMaximumStorageIsASetting() {
        let policy = DeliveryPolicy(maximumStorage: Self.day)
        var device = Self.device(.offline, policy: policy)
        _ = device.accept(Self.push("p", at: Self.t0, policy: policy))
        _ = device.advance(to: Self.t0 + 2 * Self.day)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.discardedExpired, Self.day)])
    }

    @Test func fiveUpdatesWhileOfflineLeaveOnlyTheNewest() {
        var device = Self.device(.offline)
        for index in 1...5 { _ = device.accept(Self.push("p\(index)", at: Self.t0 + Int64(index) * Self.second)) }
        for index in 1...4 {
            Self.expectLog(
                device, "p\(index)",
                [(.received, Int64(index) * Self.second), (.storedOffline, Int64(index) * Self.second), (.discardedCoalesced, Int64(index + 1) * Self.second)]
            )
        }
        _ = device.change(to: .online, at: Self.t0 + Self.minute)
        Self.expectLog(device, "p5", [(.received, 5 * Self.second), (.storedOffline, 5 * Self.second), (.deliveredFromStorage, Self.minute)])
        #expect(device.received.map(\.apnsID) == ["p5"])
    }

    @Test func theStoredCountPerAppIsASetting() {
        var device = Self.device(.offline, policy: DeliveryPolicy(storedPerApp: 3))
        for index in 1...5 { _ = device.accept(Self.push("p\(index)", at: Self.t0 + Int64(index))) }
        #expect(device.stored.map(\.record.apnsID) == ["p3", "p4", "p5"])
        _ = device.change(to: .online, at: Self.t0 + Self.minute)
        #expect(device.received.map(\.apnsID) == ["p3", "p4", "p5"])
        #expect(device.record(id: "p1")?.state == .discardedCoalesced)
    }

    @Test func aStoredPushWithTheSameCollapseIDIsReplaced() {
        var device = Self.device(.offline, policy: DeliveryPolicy(storedPerApp: 3))
        _ = device.accept(Self.push("score-1", at: Self.t0, collapseID: "score"))
        _ = device.accept(Self.push("other", at: Self.t0 + 1))
        _ = device.accept(Self.push("score-2", at: Self.t0 + 2, collapseID: "score"))
        #expect(device.stored.map(\.record.apnsID) == ["other", "score-2"])
        Self.expectLog(device, "score-1", [(.received, 0), (.storedOffline, 0), (.discardedCoalesced, 2)])
    }

    @Test func lowPowerHoldsPriorityFiveAndLetsPriorityTenThrough() {
        var device = Self.device(.lowPower)
        _ = device.accept(Self.push("urgent", at: Self.t0, priority: 10))
        _ = device.accept(Self.push("later", at: Self.t0 + 1, priority: 5))
        Self.expectLog(device, "urgent", [(.received, 0), (.delivered, 0)])
        Self.expectLog(device, "later", [(.received, 1), (.storedPower, 1)])
        _ = device.change(to: .online, at: Self.t0 + Self.hour)
        Self.expectLog(device, "later", [(.received, 1), (.storedPower, 1), (.deliveredFromStorage, Self.hour)])
    }

    @Test func anOfflinePushOfPriorityFiveWaitsAgainWhenTheDeviceComesBackInLowPower() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0, priority: 5))
        _ = device.change(to: .lowPower, at: Self.t0 + Self.minute)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.storedPower, Self.minute)])
        _ = device.change(to: .online, at: Self.t0 + Self.hour)
        #expect(device.record(id: "p")?.state == .deliveredFromStorage)
    }

    @Test func priorityOneWaitsForTheNextBurst() {
        let policy = DeliveryPolicy(lowPriorityInterval: 15 * Self.minute)
        var device = Self.device(policy: policy)
        // t0 is a multiple of 15 minutes; the push arrives 1 minute after, so the burst is 14 minutes later.
        #expect(Self.t0 % (15 * Self.minute) == 0)
        _ = device.accept(Self.push("p", at: Self.t0 + Self.minute, priority: 1))
        Self.expectLog(device, "p", [(.received, Self.minute), (.storedPower, Self.minute)])
        _ = device.advance(to: Self.t0 + 15 * Self.minute - 1)
        #expect(device.received.isEmpty)
        _ = device.advance(to: Self.t0 + Self.hour)
        Self.expectLog(device, "p", [(.received, Self.minute), (.storedPower, Self.minute), (.deliveredFromStorage, 15 * Self.minute)])
    }

    @Test func backgroundPushesOverTheDailyBudgetWaitForTheNextWindow() {
        var device = Self.device(policy: DeliveryPolicy(backgroundBudget: 2))
        for index in 1...3 { _ = device.accept(Self.push("b\(index)", at: Self.t0 + Int64(index), priority: 5, pushType: "background")) }
        #expect(device.received.map(\.apnsID) == ["b1", "b2"])
        Self.expectLog(device, "b3", [(.received, 3), (.storedPower, 3)])
        _ = device.advance(to: Self.t0 + 2 * Self.day)
        // The window opened with b1, one millisecond after t0.
        Self.expectLog(device, "b3", [(.received, 3), (.storedPower, 3), (.deliveredFromStorage, 1 + Self.day)])
    }

    @Test func withoutABudgetBackgroundPushesAllArrive() {
        var device = Self.device()
        for index in 1...50 { _ = device.accept(Self.push("b\(index)", at: Self.t0 + Int64(index), priority: 5, pushType: "background")) }
        #expect(device.received.count == 50)
    }

    @Test func notificationsTurnedOffDiscardAlertsAndLetBackgroundPushesThrough() {
        var device = Self.device(.notificationsDisabled)
        _ = device.accept(Self.push("alert", at: Self.t0))
        _ = device.accept(Self.push("silent", at: Self.t0 + 1, priority: 5, pushType: "background"))
        Self.expectLog(device, "alert", [(.received, 0), (.discardedDisabled, 0)])
        Self.expectLog(device, "silent", [(.received, 1), (.delivered, 1)])
    }

    @Test func aStoredAlertIsDiscardedWhenTheDeviceComesBackWithNotificationsOff() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("alert", at: Self.t0))
        _ = device.change(to: .notificationsDisabled, at: Self.t0 + Self.minute)
        Self.expectLog(device, "alert", [(.received, 0), (.storedOffline, 0), (.discardedDisabledFromStorage, Self.minute)])
    }

    @Test func removingTheAppDiscardsWhatIsStoredAndStaysFinal() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0))
        _ = device.change(to: .appRemoved, at: Self.t0 + Self.minute)
        Self.expectLog(device, "p", [(.received, 0), (.storedOffline, 0), (.discardedUnregisteredFromStorage, Self.minute)])
        _ = device.change(to: .online, at: Self.t0 + Self.hour)
        #expect(device.state == .appRemoved)
        // A push a scenario answered 200 all the same finds no app.
        _ = device.accept(Self.push("q", at: Self.t0 + 2 * Self.hour))
        Self.expectLog(device, "q", [(.received, 2 * Self.hour), (.discardedUnregistered, 2 * Self.hour)])
    }

    @Test func aTimelineTakesTheDeviceOfflineForAWindowAndDeliversWhenItEnds() {
        // offline at +10s for 2m: back online at +2m10s.
        let timeline = [
            DeviceStateChange(at: Self.t0 + 10 * Self.second, state: .offline),
            DeviceStateChange(at: Self.t0 + 10 * Self.second + 2 * Self.minute, state: .online),
        ]
        var device = Self.device(timeline: timeline)
        _ = device.accept(Self.push("before", at: Self.t0 + 5 * Self.second))
        _ = device.accept(Self.push("during", at: Self.t0 + 20 * Self.second))
        Self.expectLog(device, "before", [(.received, 5 * Self.second), (.delivered, 5 * Self.second)])
        Self.expectLog(device, "during", [(.received, 20 * Self.second), (.storedOffline, 20 * Self.second)])
        _ = device.advance(to: Self.t0 + Self.hour)
        Self.expectLog(
            device, "during",
            [(.received, 20 * Self.second), (.storedOffline, 20 * Self.second), (.deliveredFromStorage, 10 * Self.second + 2 * Self.minute)]
        )
        #expect(device.state == .online)
    }

    @Test func aTimelineThatStartedInThePastIsInForceAtOnce() {
        let device = SimulatedDevice(
            state: .online, timeline: [DeviceStateChange(at: Self.t0 - Self.minute, state: .offline)], at: Self.t0, policy: DeliveryPolicy()
        )
        #expect(device.state == .offline)
        #expect(device.nextEventTime() == nil)
    }

    @Test func anExpiryAndAReturnAtTheSameInstantExpireFirst() {
        var device = Self.device(.offline)
        _ = device.accept(Self.push("p", at: Self.t0, expiration: (Self.t0 + Self.hour) / 1000))
        _ = device.change(to: .online, at: Self.t0 + Self.hour)
        #expect(device.record(id: "p")?.state == .discardedExpired)
    }

    @Test func aDeviceKeepsTheNewestLogsWithinItsBound() {
        var device = Self.device(policy: DeliveryPolicy(recordsPerDevice: 2))
        for index in 1...3 { _ = device.accept(Self.push("p\(index)", at: Self.t0 + Int64(index))) }
        #expect(device.records.map(\.apnsID) == ["p2", "p3"])
        #expect(device.record(id: "p1") == nil)
    }

    @Test func everyDataPointIsTalliedWithItsPushTypeAndPriority() {
        var device = Self.device(.offline)
        var tallies = device.accept(Self.push("p", at: Self.t0, priority: 5)).events
        tallies += device.change(to: .online, at: Self.t0 + 1).events
        #expect(tallies.map(\.state) == [.received, .storedOffline, .deliveredFromStorage])
        #expect(Set(tallies.map(\.pushType)) == ["alert"])
        #expect(Set(tallies.map(\.priority)) == [5])
    }

    @Test func aChannelsMessageReplacesOnlyTheOneBeforeItFromThatChannel() {
        var device = Self.device(.offline)
        func message(_ id: String, channel: String, at time: Int64) -> DeliveryRecord {
            var record = Self.push(id, at: time, pushType: "liveactivity")
            record.channelID = channel
            record.expiresAt = time + DeliveryRecord.channelStorage
            return record
        }
        _ = device.accept(Self.push("alert", at: Self.t0))
        _ = device.accept(message("a1", channel: "A", at: Self.t0 + 1))
        _ = device.accept(message("b1", channel: "B", at: Self.t0 + 2))
        _ = device.accept(message("a2", channel: "A", at: Self.t0 + 3))
        #expect(device.stored.map(\.record.apnsID) == ["alert", "b1", "a2"])
        #expect(device.record(id: "a1")?.state == .discardedCoalesced)
    }

    @Test func aKeptMessageReachesALateSubscriberFromStorageWhileItLasts() {
        var device = Self.device()
        var kept = Self.push("m", at: Self.t0, pushType: "liveactivity")
        kept.expiresAt = Self.t0 + DeliveryRecord.channelStorage
        _ = device.acceptKept(kept, at: Self.t0 + Self.hour)
        Self.expectLog(device, "m", [(.received, 0), (.deliveredFromStorage, Self.hour)])
        var late = Self.device()
        _ = late.acceptKept(kept, at: Self.t0 + DeliveryRecord.channelStorage)
        #expect(late.records.isEmpty)
        var offline = Self.device(.offline)
        _ = offline.acceptKept(kept, at: Self.t0 + Self.hour)
        Self.expectLog(offline, "m", [(.received, 0), (.storedOffline, Self.hour)])
    }

    @Test func theConsoleNamesEveryState() {
        #expect(DeliveryState.storedOffline.console == "Stored – Device Offline")
        #expect(DeliveryState.deliveredFromStorage.console == "Delivered to Device (From Storage)")
        #expect(DeliveryState.discardedUnregisteredFromStorage.console == "Discarded – Token Unregistered (From Storage)")
        #expect(Set(DeliveryState.allCases.map(\.console)).count == DeliveryState.allCases.count)
    }
}
