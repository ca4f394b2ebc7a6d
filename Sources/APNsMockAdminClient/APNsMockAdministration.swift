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
}
