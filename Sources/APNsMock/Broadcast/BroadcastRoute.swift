/// Which broadcast resource a path names. Broadcasts go to the provider port; channel management has a listener
/// of its own (APNs serves it on other hosts and ports).
package enum BroadcastRoute: Sendable, Equatable {
    /// `/4/broadcasts/apps/<bundle-id>` on the provider port.
    case broadcast(bundleID: String)
    /// `/1/apps/<bundle-id>/channels` on the channel-management port: create (POST), read (GET), delete (DELETE).
    case channels(bundleID: String)
    /// `/1/apps/<bundle-id>/all-channels` on the channel-management port: list (GET).
    case allChannels(bundleID: String)

    static let channelsPrefix = "/1/apps/"

    /// The route of a provider-port path, or `nil` for any other path (`/3/device/…` included).
    package init?(providerPath path: String) {
        guard let route = ASCII.withUTF8(of: path, { Self(providerPath: $0) }) else { return nil }
        self = route
    }

    /// The route of a provider-port path given as its bytes (a request's, read where it lies): a broadcast's path
    /// made into a `String`, then a substring and a prefix test, allocated and copied on every broadcast.
    init?(providerPath path: UnsafeBufferPointer<UInt8>) {
        let prefix: StaticString = "/4/broadcasts/apps/"
        let prefixLength = prefix.utf8CodeUnitCount
        guard path.count > prefixLength, ASCII.sameBytes(path.baseAddress!, prefix.utf8Start, count: prefixLength) else { return nil }
        let bundle = UnsafeBufferPointer(rebasing: path[prefixLength...])
        guard !bundle.contains(UInt8(ascii: "/")), !bundle.contains(UInt8(ascii: "?")) else { return nil }
        self = .broadcast(bundleID: String(decoding: bundle, as: UTF8.self))
    }

    /// The route of a channel-management path, or `nil` (answered 404 `BadPath`).
    package init?(channelPath path: String) {
        guard path.hasPrefix(Self.channelsPrefix) else { return nil }
        let parts = path.dropFirst(Self.channelsPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[0].utf8.contains(UInt8(ascii: "?")) else { return nil }
        switch parts[1] {
        case "channels": self = .channels(bundleID: String(parts[0]))
        case "all-channels": self = .allChannels(bundleID: String(parts[0]))
        default: return nil
        }
    }

    package var bundleID: String {
        switch self {
        case .broadcast(let bundle), .channels(let bundle), .allChannels(let bundle): return bundle
        }
    }
}

/// What a recording of the broadcast API was: the operation, and the app and channel it was about.
package struct BroadcastRecord: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    package enum Kind: String, Sendable, CaseIterable {
        case broadcast
        case channelCreate = "channel-create"
        case channelRead = "channel-read"
        case channelDelete = "channel-delete"
        case channelList = "channel-list"
        /// A request on the channel-management port that named no operation (404, 405).
        case channelOther = "channel-other"
    }

    package var kind: Kind
    package var bundleID: Optional<String>

    /// The channel-management operation a method names on a route (`channelOther` for none).
    static func kind(of route: BroadcastRoute, method: String) -> Kind {
        switch (route, method) {
        case (.broadcast, _): return .broadcast
        case (.channels, "POST"): return .channelCreate
        case (.channels, "GET"): return .channelRead
        case (.channels, "DELETE"): return .channelDelete
        case (.allChannels, "GET"): return .channelList
        default: return .channelOther
        }
    }
    /// The channel the request named (`apns-channel-id`), or the one a create made.
    package var channelID: Optional<String>

    package init(kind: Kind, bundleID: String?, channelID: String?) {
        self.kind = kind
        self.bundleID = bundleID
        self.channelID = channelID
    }
}

/// The broadcast API's settings where Apple's documentation is silent or contradicts itself.
package struct BroadcastPolicy: Sendable, Equatable {
    /// The reason for a create whose `message-storage-policy` is missing or not 0/1. Undocumented; client
    /// libraries have seen `MissingChannelQueueSize`.
    package var missingStoragePolicyReason: Reason
    /// Channel ids longer than this get `BadChannelId` ("longer than allowed"; Apple gives no number, its own
    /// ids are 24 characters).
    package var maxChannelIDLength: Int
    /// The largest broadcast payload (5120 bytes, documented).
    package var maxPayloadBytes: Int
    /// Whether a broadcast without `apns-expiration` is refused (`BadExpirationDate`): Apple's header table says
    /// "required", its own curl examples leave it out. Default: accepted.
    package var requireExpiration: Bool

    package init(
        missingStoragePolicyReason: Reason = .missingChannelQueueSize,
        maxChannelIDLength: Int = 256,
        maxPayloadBytes: Int = 5120,
        requireExpiration: Bool = false
    ) {
        self.missingStoragePolicyReason = missingStoragePolicyReason
        self.maxChannelIDLength = maxChannelIDLength
        self.maxPayloadBytes = maxPayloadBytes
        self.requireExpiration = requireExpiration
    }
}
