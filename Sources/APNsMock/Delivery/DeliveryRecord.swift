/// One accepted push's delivery log: what it was, and each state it went through, in the Push Notifications
/// Console's words.
package struct DeliveryRecord: Sendable, Equatable {
    /// The device token, as registered.
    package var token: String
    package var topic: String?
    /// The answer's `apns-id`.
    package var apnsID: String?
    /// The answer's `apns-unique-id` (development only): the Console's look-up key.
    package var uniqueID: String?
    /// `apns-push-type` as sent (`alert` when absent).
    package var pushType: String
    /// `apns-priority` (10 when absent).
    package var priority: Int
    package var collapseID: String?
    /// `apns-expiration` as sent: seconds since the epoch, `0` (try once), or `nil` (APNs' own limit).
    package var expiration: Int64?
    /// When storage gives up on it, on the mock's clock; `nil` for a push that is tried once.
    package var expiresAt: Int64?
    /// In order; the first is always `received`.
    package var events: [DeliveryEvent]
    /// The recording, for previews built from what was delivered.
    package var recording: RecordedNotification?
    /// The recording's sequence, as saved, until `recording` is found again after a restart.
    var savedSequence: UInt64?
    /// The broadcast channel it came through (a broadcast's log).
    package var channelID: String?

    package init(
        token: String,
        topic: String?,
        apnsID: String?,
        uniqueID: String?,
        pushType: String,
        priority: Int,
        collapseID: String?,
        expiration: Int64?,
        expiresAt: Int64?,
        events: [DeliveryEvent],
        recording: RecordedNotification? = nil
    ) {
        self.token = token
        self.topic = topic
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.expiration = expiration
        self.expiresAt = expiresAt
        self.events = events
        self.recording = recording
    }

    /// The latest state.
    package var state: DeliveryState { events.last?.state ?? .received }
    /// The recording's sequence number (`nil` for a log whose recording is unknown).
    package var sequence: UInt64? { recording?.sequence ?? savedSequence }
    /// The IDs the Console's look-up finds it by: `apns-unique-id`, `apns-id`.
    var ids: [String] { [uniqueID, apnsID].compactMap { $0 } }
    /// When it reached the device, if it did.
    package var deliveredAt: Int64? { events.last(where: { $0.state.isDelivery })?.at }
    /// When APNs accepted it, on the mock's clock.
    package var receivedAt: Int64 { events.first?.at ?? 0 }
    /// An alert (or absent push type): what Settings' notification switch turns off.
    var isAlert: Bool { pushType == "alert" }
    var isBackground: Bool { pushType == "background" }
}

extension DeliveryRecord {
    /// A push as APNs accepted it, from its recording: the headers that decide its delivery, read once.
    /// - Parameter offset: the mock clock's offset when it arrived; `apns-expiration`, written against the
    ///   provider's wall clock, is moved by it, so "an hour from now" stays an hour after the push.
    package init?(accepted recording: RecordedNotification, offset: Int64, policy: DeliveryPolicy) {
        guard recording.status == 200, recording.broadcast == nil, let token = recording.deviceToken else { return nil }
        let receivedAt = recording.receivedAt &+ offset
        let pushType = recording.pushType ?? "alert"
        let expiration = recording.storage.header(named: "apns-expiration").flatMap { Int64($0) }
        let expiresAt: Int64? = switch expiration {
        case 0?: nil
        case let seconds?: seconds &* 1000 &+ offset
        case nil: receivedAt &+ policy.maximumStorage
        }
        let response = recording.response
        self.init(
            token: token,
            topic: recording.topic,
            apnsID: response?.apnsID,
            uniqueID: response?.uniqueID,
            pushType: pushType,
            priority: recording.storage.header(named: "apns-priority").flatMap { Int($0) } ?? 10,
            collapseID: recording.storage.header(named: "apns-collapse-id"),
            expiration: expiration,
            expiresAt: expiresAt,
            events: [DeliveryEvent(.received, at: receivedAt)],
            recording: recording
        )
    }
}

extension DeliveryRecord {
    /// How long a channel with storage policy 1 keeps its most recent message (Apple: up to 8 hours).
    package static let channelStorage: Int64 = 8 * 3_600_000

    /// A broadcast APNs accepted, as the log each subscribed device gets (`token` is filled in per device): a
    /// channel with storage policy 1 keeps it for 8 hours (less when `apns-expiration` says so); policy 0, or
    /// `apns-expiration: 0`, tries it once.
    package init?(broadcast recording: RecordedNotification, channel: BroadcastChannel?, offset: Int64) {
        guard recording.status == 200, let broadcast = recording.broadcast, broadcast.kind == .broadcast else { return nil }
        let receivedAt = recording.receivedAt &+ offset
        let expiration = recording.storage.header(named: "apns-expiration").flatMap { Int64($0) }
        var expiresAt: Int64? = receivedAt &+ Self.channelStorage
        if channel?.storagePolicy == .noMessageStored || expiration == 0 {
            expiresAt = nil
        } else if let seconds = expiration {
            expiresAt = min(expiresAt!, seconds &* 1000 &+ offset)
        }
        let response = recording.response
        self.init(
            token: "",
            topic: broadcast.bundleID,
            apnsID: response?.apnsID,
            uniqueID: response?.uniqueID,
            pushType: "liveactivity",
            priority: recording.storage.header(named: "apns-priority").flatMap { Int($0) } ?? 10,
            collapseID: nil,
            expiration: expiration,
            expiresAt: expiresAt,
            events: [DeliveryEvent(.received, at: receivedAt)],
            recording: recording
        )
        channelID = broadcast.channelID
    }

    /// The log of an accepted push to a token no one simulates: such a device is online, so it was delivered as it
    /// arrived.
    package init?(implied recording: RecordedNotification, offset: Int64) {
        guard var record = DeliveryRecord(accepted: recording, offset: offset, policy: DeliveryPolicy()) else { return nil }
        record.events.append(DeliveryEvent(.delivered, at: record.receivedAt))
        self = record
    }
}

extension DeliveryRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case token, topic, apnsID, uniqueID, pushType, priority, collapseID, expiration, expiresAt, events, sequence, channelID
    }

    /// Saved without its recording, which the store keeps: `sequence` finds it again (see `relink`).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encodeIfPresent(topic, forKey: .topic)
        try container.encodeIfPresent(apnsID, forKey: .apnsID)
        try container.encodeIfPresent(uniqueID, forKey: .uniqueID)
        try container.encode(pushType, forKey: .pushType)
        try container.encode(priority, forKey: .priority)
        try container.encodeIfPresent(collapseID, forKey: .collapseID)
        try container.encodeIfPresent(expiration, forKey: .expiration)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encode(events, forKey: .events)
        try container.encodeIfPresent(sequence, forKey: .sequence)
        try container.encodeIfPresent(channelID, forKey: .channelID)
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            token: try container.decode(String.self, forKey: .token),
            topic: try container.decodeIfPresent(String.self, forKey: .topic),
            apnsID: try container.decodeIfPresent(String.self, forKey: .apnsID),
            uniqueID: try container.decodeIfPresent(String.self, forKey: .uniqueID),
            pushType: try container.decode(String.self, forKey: .pushType),
            priority: try container.decode(Int.self, forKey: .priority),
            collapseID: try container.decodeIfPresent(String.self, forKey: .collapseID),
            expiration: try container.decodeIfPresent(Int64.self, forKey: .expiration),
            expiresAt: try container.decodeIfPresent(Int64.self, forKey: .expiresAt),
            events: try container.decode([DeliveryEvent].self, forKey: .events)
        )
        savedSequence = try container.decodeIfPresent(UInt64.self, forKey: .sequence)
        channelID = try container.decodeIfPresent(String.self, forKey: .channelID)
    }
}
