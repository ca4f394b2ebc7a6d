import Foundation

/// Everything a test does with a mock's admin side: read and await recordings, script failures, manage devices.
///
/// Two implementations, one API, so a suite switches between them with one line: `MockAPNs` (module
/// `APNsMockTesting`) runs the mock in the test's own process and answers without HTTP; ``APNsMockAdminClient``
/// drives a mock running elsewhere (the binary, the container) over its admin API.
public protocol APNsMockAdministration: Sendable {
    /// Every recording that matches, oldest first (`limit`: at most that many, the oldest).
    func notifications(matching filter: NotificationFilter, limit: Int?) async throws -> [MockRecording]
    /// The recording of the push with this `apns-id` (sent or generated), `nil` when there is none.
    func notification(apnsID: String) async throws -> MockRecording?
    /// Returns the first `count` recordings that match, as soon as there are that many (also when they arrived
    /// before the call); throws ``NotificationWaitTimeout``, which lists what was received, after `timeout`.
    func waitForNotifications(count: Int, matching filter: NotificationFilter, timeout: Duration) async throws -> [MockRecording]
    /// Forgets every recording (the counts of ``statistics()`` too).
    func clearNotifications() async throws
    /// Back to the start state: no scenario, no devices, no channels, no recordings.
    func reset() async throws
    /// Puts a scenario (YAML or JSON, as in `Scenarios/`) in force on every connection; throws
    /// ``ScenarioRejected`` with each problem's line and column, and then the previous one stays.
    @discardableResult
    func setScenario(yaml: String) async throws -> MockScenarioState
    /// No scenario: every well-formed request is accepted.
    func clearScenario() async throws
    /// The scenario in force and its rules' hits.
    func scenario() async throws -> MockScenarioState
    /// Adds a device to the registry (replacing one with the same token).
    func register(_ device: MockDevice) async throws
    /// Marks a device as uninstalled at `date`: its pushes get `410 Unregistered` with that timestamp.
    @discardableResult
    func unregister(token: String, at date: Date) async throws -> MockDevice
    /// Takes a device out of the registry.
    func removeDevice(token: String) async throws
    /// The registered devices.
    func devices() async throws -> [MockDevice]
    /// Counts of what was received and answered.
    func statistics() async throws -> MockStatistics
    /// Changes a simulated device's state now, on the mock's clock (`appRemoved` also unregisters it).
    @discardableResult
    func setState(_ state: MockDeviceState, ofDevice token: String) async throws -> MockDevice
    /// The device's Live Activities subscribe to a broadcast channel (by id); a message the channel keeps (storage
    /// policy 1, at most 8 hours old) reaches it now.
    @discardableResult
    func subscribe(device token: String, toChannel channelID: String) async throws -> MockDevice
    /// The device's Live Activities leave a broadcast channel.
    @discardableResult
    func unsubscribe(device token: String, fromChannel channelID: String) async throws -> MockDevice
    /// What reached the device, in the order it arrived.
    func received(by token: String) async throws -> [MockDelivery]
    /// What is stored for the device now, oldest first.
    func stored(for token: String) async throws -> [MockDelivery]
    /// The delivery log of one push, by its `apns-unique-id` or `apns-id`: the Console's look-up; `nil` when
    /// no accepted push has it.
    func delivery(id: String) async throws -> MockDelivery?
    /// Returns what reached the device once `count` pushes have (also before the call); throws
    /// ``DeliveryWaitTimeout``, with what was received and stored, after `timeout`.
    func waitForDelivery(to token: String, count: Int, timeout: Duration) async throws -> [MockDelivery]
    /// The mock's clock.
    func clockState() async throws -> MockClockState
    /// Moves the mock's clock forward: what storage held past its time is discarded, scheduled changes happen.
    @discardableResult
    func advanceClock(by duration: Duration) async throws -> MockClockState
}

extension APNsMockAdministration {
    /// Every recording that matches, oldest first.
    public func notifications(matching filter: NotificationFilter = .all) async throws -> [MockRecording] {
        try await notifications(matching: filter, limit: nil)
    }

    /// Waits for `count` matching recordings, for at most `timeout` (5 s unless given).
    public func waitForNotifications(
        count: Int = 1,
        matching filter: NotificationFilter = .all,
        timeout: Duration = .seconds(5)
    ) async throws -> [MockRecording] {
        try await waitForNotifications(count: count, matching: filter, timeout: timeout)
    }

    /// Marks a device as uninstalled now.
    @discardableResult
    public func unregister(token: String) async throws -> MockDevice {
        try await unregister(token: token, at: Date())
    }

    /// Waits for one delivery (or `count`), for at most `timeout` (5 s unless given).
    public func waitForDelivery(to token: String, count: Int = 1, timeout: Duration = .seconds(5)) async throws -> [MockDelivery] {
        try await waitForDelivery(to: token, count: count, timeout: timeout)
    }

    /// A registered device, to drive and read: `try await mock.device(token).goOffline()`.
    public func device(_ token: String) -> MockDeviceHandle { MockDeviceHandle(administration: self, token: token) }

    /// The mock's clock: `try await mock.clock.advance(by: .seconds(31 * 86_400))`.
    public var clock: MockClockHandle { MockClockHandle(administration: self) }
}

/// One simulated device of a mock, by token.
public struct MockDeviceHandle: Sendable {
    let administration: any APNsMockAdministration
    /// The device token.
    public let token: String

    /// The device disconnects: pushes are stored for it from now on.
    @discardableResult public func goOffline() async throws -> MockDevice { try await administration.setState(.offline, ofDevice: token) }
    /// The device connects again: what was stored for it arrives.
    @discardableResult public func comeOnline() async throws -> MockDevice { try await administration.setState(.online, ofDevice: token) }
    /// The device saves power: priority 5 and 1 wait until it comes online.
    @discardableResult public func enterLowPower() async throws -> MockDevice { try await administration.setState(.lowPower, ofDevice: token) }
    /// The user turns the app's notifications off: alert pushes are accepted and discarded.
    @discardableResult public func disableNotifications() async throws -> MockDevice {
        try await administration.setState(.notificationsDisabled, ofDevice: token)
    }
    /// The app is removed: pushes get `410 Unregistered` with this time from now on, and stored ones are discarded.
    @discardableResult public func removeApp() async throws -> MockDevice { try await administration.setState(.appRemoved, ofDevice: token) }
    /// The device's Live Activities subscribe to a broadcast channel.
    @discardableResult public func subscribe(toChannel channelID: String) async throws -> MockDevice {
        try await administration.subscribe(device: token, toChannel: channelID)
    }
    /// The device's Live Activities leave a broadcast channel.
    @discardableResult public func unsubscribe(fromChannel channelID: String) async throws -> MockDevice {
        try await administration.unsubscribe(device: token, fromChannel: channelID)
    }
    /// What reached the device, in the order it arrived.
    public func received() async throws -> [MockDelivery] { try await administration.received(by: token) }
    /// What is stored for the device now.
    public func stored() async throws -> [MockDelivery] { try await administration.stored(for: token) }
    /// Waits until `count` pushes have reached the device.
    public func waitForDelivery(count: Int = 1, timeout: Duration = .seconds(5)) async throws -> [MockDelivery] {
        try await administration.waitForDelivery(to: token, count: count, timeout: timeout)
    }
}

/// A mock's clock.
public struct MockClockHandle: Sendable {
    let administration: any APNsMockAdministration

    /// The clock's time and offset.
    public func now() async throws -> MockClockState { try await administration.clockState() }
    /// Moves the clock forward by `duration`.
    @discardableResult public func advance(by duration: Duration) async throws -> MockClockState {
        try await administration.advanceClock(by: duration)
    }
}
