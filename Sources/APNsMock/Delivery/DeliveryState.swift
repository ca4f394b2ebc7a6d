/// What became of a push after APNs accepted it, in the Push Notifications Console's words (`console`), with a
/// short code for filters and JSON (`rawValue`).
package enum DeliveryState: String, Sendable, Equatable, CaseIterable, Codable {
    case received
    case delivered
    case deliveredFromStorage
    case storedOffline
    case storedPower
    case discardedUnregistered
    case discardedUnregisteredFromStorage
    case discardedExpired
    case discardedDisabled
    case discardedDisabledFromStorage
    /// Not a state the Console names: a stored push that a newer one for the same app (or with the same
    /// `apns-collapse-id`) replaced in storage, which Apple calls coalescing.
    case discardedCoalesced

    /// The Console's name for the state.
    package var console: String {
        switch self {
        case .received: "Received by APNs"
        case .delivered: "Delivered to Device"
        case .deliveredFromStorage: "Delivered to Device (From Storage)"
        case .storedOffline: "Stored – Device Offline"
        case .storedPower: "Stored – Power Considerations"
        case .discardedUnregistered: "Discarded – Token Unregistered"
        case .discardedUnregisteredFromStorage: "Discarded – Token Unregistered (From Storage)"
        case .discardedExpired: "Discarded – Expired"
        case .discardedDisabled: "Discarded – Disabled"
        case .discardedDisabledFromStorage: "Discarded – Disabled (From Storage)"
        case .discardedCoalesced: "Discarded – Coalesced"
        }
    }

    /// The push reached the device.
    package var isDelivery: Bool { self == .delivered || self == .deliveredFromStorage }
    /// The push waits in storage.
    package var isStorage: Bool { self == .storedOffline || self == .storedPower }
    /// The push is gone without reaching the device.
    package var isDiscard: Bool { !isDelivery && !isStorage && self != .received }

    /// The codes accepted, for error messages.
    package static let names = allCases.map(\.rawValue).joined(separator: ", ")
}

/// One data point of a push's delivery log.
package struct DeliveryEvent: Sendable, Equatable, Codable {
    package var state: DeliveryState
    /// On the mock's clock, in milliseconds since the epoch.
    package var at: Int64

    package init(_ state: DeliveryState, at: Int64) {
        self.state = state
        self.at = at
    }
}

/// The recordings list's `delivery=` filter: one state, or a family of them (`stored`, `delivered`, `discarded`).
package enum DeliveryStateFilter: Sendable, Equatable {
    case state(DeliveryState)
    case stored
    case delivered
    case discarded

    /// `storedOffline`, `stored`, …; `nil` for anything else.
    package init?(_ text: String) {
        switch text {
        case "stored": self = .stored
        case "delivered": self = .delivered
        case "discarded": self = .discarded
        default:
            guard let state = DeliveryState(rawValue: text) else { return nil }
            self = .state(state)
        }
    }

    package func matches(_ state: DeliveryState) -> Bool {
        switch self {
        case .state(let wanted): state == wanted
        case .stored: state.isStorage
        case .delivered: state.isDelivery
        case .discarded: state.isDiscard
        }
    }

    /// What the filter takes, for error messages.
    static let names = ["stored", "delivered", "discarded"] + DeliveryState.allCases.map(\.rawValue)
}
