/// A filter over recorded notifications; every field that is set must match.
package struct NotificationQuery: Sendable, Equatable {
    package var deviceToken: String?
    package var topic: String?
    package var pushType: String?
    package var status: Int?
    package var reason: String?
    package var apnsID: String?
    /// Only notifications received at or after this time (milliseconds since the epoch).
    package var since: Int64?
    /// `token`, `certificate`, `none` or `missing`: how the request was authenticated.
    package var authMethod: String?
    package var keyID: String?
    package var teamID: String?
    /// The scenario rule that answered.
    package var scenarioRule: String?
    /// The provider connection the request came in on.
    package var connectionID: UInt64?
    /// `true`: only requests that got no answer; `false`: only answered ones.
    package var abandoned: Bool?
    /// Headers the request must carry with exactly this value (names in lower case), every one of them.
    package var headers: [HeaderField] = []
    /// Values the payload must hold at JSON paths (as scenario rules' `payload` conditions), every one of them.
    package var payload: [PayloadCondition] = []
    /// Only recordings after (`after`) or before (`before`) this sequence number: the cursor of paged lists.
    package var afterSequence: UInt64?
    package var beforeSequence: UInt64?
    /// At most this many, in `order`.
    package var limit: Int?
    /// `push` (a device push) or a broadcast-API operation (`broadcast`, `channel-create`, …).
    package var kind: String?
    /// The broadcast channel a broadcast or channel operation named or made.
    package var channelID: String?
    /// The app of a broadcast or channel operation (case-insensitive).
    package var bundleID: String?
    /// Only recordings with a warning of this code.
    package var warningCode: String?
    /// `true`: only recordings with some warning; `false`: only those with none.
    package var hasWarnings: Bool?
    /// `oldest` first (arrival order, the default) or `newest` first.
    package var newestFirst = false
    /// Only recordings whose simulated device's delivery log is in such a state now (the store resolves it into
    /// `sequences` when it lists).
    package var delivery: DeliveryStateFilter?
    /// Only recordings with these sequence numbers.
    package var sequences: Set<UInt64>?
    /// Only this tenant's recordings (`--tenants`): set from `?tenant=` or forced by a tenant's admin token.
    package var tenant: String?

    package init(
        deviceToken: String? = nil,
        topic: String? = nil,
        pushType: String? = nil,
        status: Int? = nil,
        reason: String? = nil,
        apnsID: String? = nil,
        since: Int64? = nil,
        limit: Int? = nil
    ) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.since = since
        self.limit = limit
    }

    /// The filters alone, without paging (`after`, `before`, `limit`, `order`): what a live stream matches.
    package var streamFilter: NotificationQuery {
        var filter = self
        filter.afterSequence = nil
        filter.beforeSequence = nil
        filter.limit = nil
        filter.newestFirst = false
        return filter
    }

    package func matches(_ notification: RecordedNotification) -> Bool {
        // Tokens are hex: compare them without regard to case, as APNs accepts either.
        if let deviceToken, notification.deviceToken?.lowercased() != deviceToken.lowercased() { return false }
        if let tenant, notification.tenant != tenant { return false }
        if let afterSequence, notification.sequence <= afterSequence { return false }
        if let sequences, !sequences.contains(notification.sequence) { return false }
        if let beforeSequence, notification.sequence >= beforeSequence { return false }
        // Topics are bundle ids: APNs compares them without regard to case.
        if let topic, notification.topic?.lowercased() != topic.lowercased() { return false }
        if let pushType, notification.pushType != pushType { return false }
        if let status, notification.status != status { return false }
        if let reason, notification.reason?.rawValue != reason { return false }
        if let apnsID, notification.apnsID?.lowercased() != apnsID.lowercased() { return false }
        if let since, notification.receivedAt < since { return false }
        if let scenarioRule, notification.scenarioRule != scenarioRule { return false }
        if let connectionID, notification.connectionID != connectionID { return false }
        if let abandoned, (notification.status == nil) != abandoned { return false }
        if let kind, notification.kind != kind { return false }
        if let warningCode, !notification.warnings.contains(where: { $0.code == warningCode }) { return false }
        if let hasWarnings, notification.warnings.isEmpty == hasWarnings { return false }
        if channelID != nil || bundleID != nil {
            guard let broadcast = notification.broadcast else { return false }
            if let channelID, broadcast.channelID != channelID { return false }
            if let bundleID, broadcast.bundleID?.lowercased() != bundleID.lowercased() { return false }
        }
        if !payload.isEmpty {
            let bytes = notification.request.payload
            for condition in payload where !condition.matches(bytes) { return false }
        }
        if !headers.isEmpty {
            let sent = notification.request.headers
            for wanted in headers where !sent.contains(where: { $0.name == wanted.name && $0.value == wanted.value }) { return false }
        }
        if authMethod != nil || keyID != nil || teamID != nil {
            guard let authentication = notification.authentication else { return false }
            if let authMethod, authentication.method != authMethod { return false }
            if keyID != nil || teamID != nil {
                guard case .token(let recordedKey, let recordedTeam, _, _, _) = authentication else { return false }
                if let keyID, recordedKey != keyID { return false }
                if let teamID, recordedTeam != teamID { return false }
            }
        }
        return true
    }
}
