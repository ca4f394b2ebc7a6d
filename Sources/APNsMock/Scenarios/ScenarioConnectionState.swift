/// A connection's side of a ``ScenarioConnectionPolicy``: a small state machine the connection handler keeps per
/// connection and feeds every answer it sends; it returns the connection actions to carry out.
package struct ScenarioConnectionState: Sendable, Equatable {
    package let policy: ScenarioConnectionPolicy
    /// The SETTINGS_MAX_CONCURRENT_STREAMS to restore after a success.
    package let maxConcurrentStreams: UInt32
    package private(set) var badDeviceTokens = 0
    package private(set) var isStreamLimitLowered = false
    /// The scenario (`ScenarioEngine.generation`) this state was made from.
    var generation: UInt64 = 0

    package init(policy: ScenarioConnectionPolicy, maxConcurrentStreams: UInt32) {
        self.policy = policy
        self.maxConcurrentStreams = maxConcurrentStreams
    }

    /// Records an answer sent on this connection.
    ///
    /// - A rejection (any status ≥ 400 but 410, which APNs does not count as an error) lowers the stream limit to
    ///   1 when `lowerStreamLimitAfterRejection` is on; the next 200 restores it. SETTINGS go out only on a change.
    /// - The Nth `BadDeviceToken` (`closeAfterBadDeviceTokens`) closes the connection: GOAWAY NO_ERROR, then close.
    package mutating func record(status: Int, reason: Reason?) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        if policy.lowerStreamLimitAfterRejection {
            if status == 200, isStreamLimitLowered {
                isStreamLimitLowered = false
                actions.append(.setMaxConcurrentStreams(maxConcurrentStreams))
            } else if status >= 400, status != 410, !isStreamLimitLowered {
                isStreamLimitLowered = true
                actions.append(.setMaxConcurrentStreams(1))
            }
        }
        if reason == .badDeviceToken, let limit = policy.closeAfterBadDeviceTokens {
            badDeviceTokens += 1
            if badDeviceTokens == limit {
                actions.append(.goAway(errorCode: 0, lastStreamID: nil, debugData: ""))
                actions.append(.close)
            }
        }
        return actions
    }
}
