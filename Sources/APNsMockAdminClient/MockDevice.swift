import Foundation

/// A device in the mock's registry: pushes to its token for another topic or environment are refused as APNs
/// would (`DeviceTokenNotForTopic`, `BadDeviceToken`), and once unregistered they get `410 Unregistered` with
/// `timestamp`. It is also a simulated device: online or not, with what it received and what is stored for it.
public struct MockDevice: Sendable, Hashable, Codable {
    /// The device token (hex).
    public var token: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// `development` or `production`.
    public var environment: String
    /// A name for logs and the inspector.
    public var name: String?
    /// When the app was uninstalled, in milliseconds since the epoch; `nil` while it is installed.
    public var unregisteredAt: Int64?
    /// What the simulated device is doing: registered, the state it starts in; read back, its state now.
    public var state: MockDeviceState?
    /// The broadcast channels its Live Activities subscribe to (read back; change them with `subscribe`).
    public var subscriptions: [String]?

    /// A device for `register(_:)`: its token and topic, the environment it belongs to, an optional name, when
    /// its app was removed (pushes then get `410 Unregistered` with that time), and the state it starts in.
    public init(
        token: String,
        topic: String,
        environment: String = "development",
        name: String? = nil,
        unregisteredAt: Date? = nil,
        state: MockDeviceState? = nil
    ) {
        self.token = token
        self.topic = topic
        self.environment = environment
        self.name = name
        self.unregisteredAt = unregisteredAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) }
        self.state = state
    }
}
