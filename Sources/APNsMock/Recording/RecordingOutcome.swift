/// What a recording needs besides the request: made by the decision, with no side effect, and carried beside the
/// stream until the wire says what became of the answer.
package struct RecordingOutcome: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    /// When the request's last frame arrived, in milliseconds since the epoch.
    package var receivedAt: Int64
    /// The answer decided, or `nil` when the request gets none (a stream fault, a refused connection).
    package var response: Optional<APNsResponse>
    /// Authentication, scenario rule, faults and why there is no answer; shared between recordings when equal.
    var extras: Optional<RecordExtras>
    /// A 200 the simulated devices take: to a token the registry knows, or a broadcast while some device is
    /// registered. Decided with the answer, where the registry was read already.
    var reachesDevices: Bool

    init(receivedAt: Int64, response: APNsResponse?, extras: RecordExtras?, reachesDevices: Bool = false) {
        self.receivedAt = receivedAt
        self.response = response
        self.extras = extras
        self.reachesDevices = reachesDevices
    }

    /// An outcome with no answer, for a request that ended before it could be decided.
    package static func abandoned(at receivedAt: Int64, because reason: String) -> RecordingOutcome {
        RecordingOutcome(
            receivedAt: receivedAt,
            response: nil,
            extras: RecordExtras(abandonedBecause: reason, authentication: nil, scenarioRule: nil, faults: [])
        )
    }

    /// Why there is no answer, when the decision gave none.
    package var abandonedBecause: String? { extras?.abandonedBecause }
    /// The payload's warnings (`--lint`).
    package var warnings: [PayloadWarning] { extras?.warnings ?? [] }

    package static func == (lhs: RecordingOutcome, rhs: RecordingOutcome) -> Bool {
        lhs.receivedAt == rhs.receivedAt && lhs.response == rhs.response
            && lhs.extras?.abandonedBecause == rhs.extras?.abandonedBecause
            && lhs.extras?.authentication == rhs.extras?.authentication
            && lhs.extras?.scenarioRule == rhs.extras?.scenarioRule && (lhs.extras?.faults ?? []) == (rhs.extras?.faults ?? [])
    }
}

/// What became of a decided answer on the wire.
package enum AnswerDelivery: Sendable, Equatable {
    /// The answer's last frame was handed to the socket layer.
    case sent
    /// The answer never left: the stream or the connection closed first.
    case notSent(because: String)
}

/// What a connection keeps for making its recordings: the last request's bytes, which the next recording shares
/// when they are the same (see `RecordStorage`).
package struct RecordingContext: Sendable {
    var shapes = RecordShapeCache()

    package init() {}
}
