/// What a simulated device is doing, as far as APNs' delivery cares: the part of the Push Notifications Console's
/// story that happens on the phone.
package enum DeviceState: String, Sendable, Equatable, CaseIterable, Codable {
    /// Connected: pushes are delivered as they arrive (the state of every device nobody said otherwise of).
    case online
    /// Not connected: pushes are stored (one per app, by default) until it comes back or they expire.
    case offline
    /// Connected, saving power: priority 10 arrives, priority 5 and 1 wait until it leaves low power.
    case lowPower
    /// The app's notifications are turned off in Settings: APNs still answers 200, and discards alert pushes.
    case notificationsDisabled
    /// The app is gone: from the moment the device says so, pushes get `410 Unregistered` with that time.
    case appRemoved

    /// The names accepted, for error messages.
    package static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// Whether the device takes pushes as they arrive (those priority and budget allow).
    var isConnected: Bool { self == .online || self == .lowPower || self == .notificationsDisabled }
}

/// A change of a device's state at a time: a scenario's timeline, or a change made through the admin API.
package struct DeviceStateChange: Sendable, Equatable, Codable {
    /// On the mock's clock, in milliseconds since the epoch.
    package var at: Int64
    package var state: DeviceState

    package init(at: Int64, state: DeviceState) {
        self.at = at
        self.state = state
    }
}
