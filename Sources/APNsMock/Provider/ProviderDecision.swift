/// Everything a connection keeps between its requests: authentication and the scenario's connection rules.
package struct ProviderConnectionState: Sendable {
    package var auth: ConnectionAuthState
    package var scenario: ScenarioConnectionState
    /// The last recording's shareable extras: every request of a token-authenticated connection (or a run of
    /// equal broadcasts) shares one object instead of allocating its own.
    var recordExtras: RecordExtras?
    /// The last payload linted and what it gave: a provider sending the same payload again is not scanned again.
    var lastLint: LintMemo?
    /// The scenario engine in force when the connection last looked: kept while the scenario's generation
    /// (``ActiveScenario/generation``) is still its own.
    var engine: ScenarioEngine?
    /// The tenant of the connection's last request (`--tenants`), with what it was read from.
    var tenant: TenantMemo?

    package init(auth: ConnectionAuthState, scenario: ScenarioConnectionState) {
        self.auth = auth
        self.scenario = scenario
    }
}

/// What the provider endpoint decided for one request.
package struct ProviderDecision: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    /// The answer for the request's stream, or `nil` when the stream gets none (a connection-level refusal): the
    /// outcome's, which the recording keeps (one copy of the answer in a decision, not two).
    package var response: APNsResponse? { outcome.response }
    /// Whether the stream gets an answer (`response` is not `nil`). Stored, so that the connection's module reads
    /// it without a call: a computed test of `outcome` copied the answer out in that module on every request.
    package private(set) var answers: Bool
    /// What the stream gets instead of an answer, when `response` is `nil` by a scenario's choice.
    package var streamFault: Optional<StreamFault>
    /// Connection actions, carried out after the answer (or the stream fault).
    package var actions: [ConnectionAction]
    /// Wait this long before answering (a scenario's latency).
    package var delay: Optional<Duration>
    /// What the recording needs besides the request; the connection records it once the answer has left (or
    /// could not), so a recording says what was really sent.
    package var outcome: RecordingOutcome {
        get { storedOutcome ?? Self.takenOutcome }
        set {
            answers = newValue.response.isSome
            storedOutcome = newValue
        }
    }
    /// `outcome`, or `nil` once `takeOutcome` has moved it out: an optional is emptied in place, where swapping in
    /// an empty outcome moved three of them.
    private var storedOutcome: Optional<RecordingOutcome>
    /// What `outcome` reads once it has been taken: no answer, no extras.
    private static var takenOutcome: RecordingOutcome { RecordingOutcome(receivedAt: 0, response: nil, extras: nil) }
    /// The request's `apns-push-type` as sent, for the caller's metrics: the decision has read it already, and
    /// looking it up again per request showed in profiles.
    package var pushType: Optional<String>
    /// The broadcast-API operation (`nil` for a device push): metrics count these by kind, not by push type.
    package var broadcastKind: Optional<BroadcastRecord.Kind>

    /// - Parameters:
    ///   - outcome: what the recording needs, the answer (`response`) included.
    ///   - pushType: the request's `apns-push-type` as sent, for the caller's metrics.
    ///   - broadcastKind: the broadcast-API operation, `nil` for a device push.
    package init(
        streamFault: StreamFault? = nil,
        actions: [ConnectionAction] = [],
        delay: Duration? = nil,
        outcome: RecordingOutcome,
        pushType: String? = nil,
        broadcastKind: BroadcastRecord.Kind? = nil
    ) {
        self.streamFault = streamFault
        self.actions = actions
        self.delay = delay
        self.answers = outcome.response.isSome
        self.storedOutcome = outcome
        self.pushType = pushType
        self.broadcastKind = broadcastKind
    }

    /// Moves the outcome out (`outcome` is one with no answer and no extras afterwards), for a connection that
    /// keeps it with the stream until the wire says what became of the answer: a copy retained its strings and
    /// objects, and the decision's release let them go again. `answers` still says what the decision was.
    package mutating func takeOutcome() -> RecordingOutcome {
        storedOutcome.take() ?? Self.takenOutcome
    }

    /// Whether the connection must close once this answer has been sent (a GOAWAY follows it).
    package var closesConnection: Bool { actions.contains(.close) || actions.contains(.drop) }
}

/// A payload's warnings, kept for the next request with the same payload and headers.
struct LintMemo: Sendable {
    var payload: [UInt8]
    var context: PayloadLint.Context
    /// `apns-topic`, which with the push type decides `context.sizeLimit`.
    var topic: String?
    var warnings: [PayloadWarning]

    /// The warnings kept, when `payload` and the headers they depend on are the ones they were worked out for.
    func warnings(for payload: [UInt8], headers: APNsHeaders, isBroadcast: Bool) -> [PayloadWarning]? {
        guard context.isBroadcast == isBroadcast, context.pushType == headers.pushType, context.priority == headers.priority,
            topic == headers.topic, ASCII.equal(self.payload, payload)
        else { return nil }
        return warnings
    }
}

/// A connection's last tenant: requests with the same key (token, topic or host) are the same tenant's.
struct TenantMemo: Sendable {
    var key: String?
    var name: String
    /// Not retained: a tenant's scenario is never let go while its directory lives (tenants are reset, never
    /// removed), and the processor that made this memo holds the directory. Reading a retained one moved its
    /// reference count's cache line between the event loops' cores on every push.
    var scenario: Unmanaged<ActiveScenario>
}
