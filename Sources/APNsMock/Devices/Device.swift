/// A device the mock knows: its token belongs to one topic in one environment and may have been unregistered
/// (the app uninstalled) at some time, after which APNs answers `410 Unregistered` with that time.
package struct Device: Sendable, Equatable, Codable {
    /// A label for scenarios and the admin API.
    package var name: String?
    /// As given; the registry compares tokens case-insensitively.
    package var token: String
    /// The one topic this token is for. VoIP, Live Activity and other PushKit-style tokens are distinct tokens in
    /// APNs too: register them with their suffixed topic (`com.example.app.voip`).
    package var topic: String
    package var environment: APNsEnvironment
    /// Milliseconds since the epoch; from then on pushes get 410 `Unregistered` with this timestamp.
    package var unregisteredAt: Int64?
    /// What the simulated device is doing: given, the state it starts in; read back, its state now.
    package var state: DeviceState
    /// Changes of state to come (a scenario's timeline), on the mock's clock; past ones are in force at once.
    package var stateChanges: [DeviceStateChange]
    /// The broadcast channels its Live Activities subscribe to (channel ids).
    package var subscriptions: [String] = []

    package init(
        name: String? = nil,
        token: String,
        topic: String,
        environment: APNsEnvironment = .development,
        unregisteredAt: Int64? = nil,
        state: DeviceState = .online,
        stateChanges: [DeviceStateChange] = []
    ) {
        self.name = name
        self.token = token
        self.topic = topic
        self.environment = environment
        self.unregisteredAt = unregisteredAt
        self.state = state
        self.stateChanges = stateChanges
    }

    /// The changes of state the simulation follows: the declared ones, and the app's removal at `unregisteredAt`.
    func timeline() -> [DeviceStateChange] {
        stateChanges + (unregisteredAt.map { [DeviceStateChange(at: $0, state: .appRemoved)] } ?? [])
    }

    /// Whether pushes at `now` get 410.
    package func isUnregistered(at now: Int64) -> Bool {
        unregisteredAt.map { $0 <= now } ?? false
    }

    /// A token must be an even number of hexadecimal digits (case does not matter).
    static func isWellFormedToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count % 2 == 0 && token.utf8.allSatisfy(ASCII.isHexDigit)
    }

    /// The token in lower case, without allocating when it already is (the usual case on the hot path).
    package static func normalizedToken(_ token: String) -> String {
        token.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) ? token.lowercased() : token
    }
}
