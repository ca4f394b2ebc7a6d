import Foundation

/// What a simulated device is doing (see docs/devices.md).
public enum MockDeviceState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Connected: pushes arrive as they are sent.
    case online
    /// Not connected: pushes are stored until it comes back or they expire.
    case offline
    /// Saving power: priority 10 arrives, priority 5 and 1 wait.
    case lowPower
    /// Notifications turned off in Settings: alert pushes are accepted and discarded.
    case notificationsDisabled
    /// The app is gone: pushes get `410 Unregistered` from then on.
    case appRemoved
}

/// A state of a push's delivery log, in the Push Notifications Console's vocabulary.
public enum MockDeliveryState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Received by APNs.
    case received
    /// Delivered to Device.
    case delivered
    /// Delivered to Device (From Storage).
    case deliveredFromStorage
    /// Stored – Device Offline.
    case storedOffline
    /// Stored – Power Considerations.
    case storedPower
    /// Discarded – Token Unregistered.
    case discardedUnregistered
    /// Discarded – Token Unregistered (From Storage).
    case discardedUnregisteredFromStorage
    /// Discarded – Expired.
    case discardedExpired
    /// Discarded – Disabled.
    case discardedDisabled
    /// Discarded – Disabled (From Storage).
    case discardedDisabledFromStorage
    /// Replaced in storage by a newer push for the same app (or with the same `apns-collapse-id`).
    case discardedCoalesced
}

/// One push's delivery log: what it was and each state it went through.
public struct MockDelivery: Sendable, Hashable, Decodable {
    /// One data point of the log.
    public struct Event: Sendable, Hashable, Decodable {
        /// The state entered.
        public var state: MockDeliveryState
        /// The Console's name for it, e.g. `Stored – Device Offline`.
        public var console: String
        /// On the mock's clock, in milliseconds since the epoch.
        public var at: Int64
        /// `at` in ISO 8601.
        public var time: String
    }

    /// The device token.
    public var token: String
    /// `apns-topic`.
    public var topic: String?
    /// The answer's `apns-id`.
    public var apnsId: String?
    /// The answer's `apns-unique-id` (development only).
    public var apnsUniqueId: String?
    /// `apns-push-type` (`alert` when absent).
    public var pushType: String
    /// `apns-priority` (10 when absent).
    public var priority: Int
    /// `apns-collapse-id`.
    public var collapseId: String?
    /// The broadcast channel it came through (a Live Activity broadcast's log).
    public var channelId: String?
    /// `apns-expiration` as sent.
    public var expiration: Int64?
    /// When storage gives up on it, on the mock's clock (absent for a push tried once).
    public var expiresAt: Int64?
    /// The latest state.
    public var state: MockDeliveryState
    /// The Console's name for the latest state.
    public var console: String
    /// When APNs accepted it, on the mock's clock.
    public var receivedAt: Int64
    /// When it reached the device, if it did.
    public var deliveredAt: Int64?
    /// The recording's sequence number.
    public var sequence: UInt64?
    /// Every data point, in order.
    public var events: [Event]
    /// `false` for a push to a token the mock does not simulate (delivered as it arrived).
    public var simulated: Bool?

    /// The states, in order.
    public var states: [MockDeliveryState] { events.map(\.state) }
}

/// The mock's clock, which the simulated devices, storage expiry and scenario times read.
public struct MockClockState: Sendable, Hashable, Decodable {
    /// Milliseconds since the epoch.
    public var now: Int64
    /// `now` in ISO 8601.
    public var time: String
    /// How far ahead of the wall clock, as a duration (`31d`).
    public var offset: String
    /// How far ahead of the wall clock, in milliseconds.
    public var offsetMilliseconds: Int64
}

/// `waitForDelivery` ran out of time: what the device had received, and what was stored for it, by then.
public struct DeliveryWaitTimeout: Error, Sendable, CustomStringConvertible {
    /// The device token.
    public var token: String
    /// How many deliveries were awaited.
    public var expected: Int
    /// How long it waited.
    public var timeout: Duration
    /// What reached the device.
    public var received: [MockDelivery]
    /// What is stored for it.
    public var stored: [MockDelivery]

    /// Creates the error from what was seen.
    public init(token: String, expected: Int, timeout: Duration, received: [MockDelivery], stored: [MockDelivery]) {
        self.token = token
        self.expected = expected
        self.timeout = timeout
        self.received = received
        self.stored = stored
    }

    public var description: String {
        var lines = ["timed out after \(timeout) waiting for \(expected) deliveries to \(token): \(received.count) received, \(stored.count) stored"]
        for delivery in stored {
            lines.append("  stored: \(delivery.apnsId ?? "?") \(delivery.console)")
        }
        return lines.joined(separator: "\n")
    }
}
