/// What ``ScenarioEngine/evaluate(_:headers:connection:)`` decided for one request.
package struct ScenarioDecision: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    /// The index of the rule that matched, or `nil` when no rule did and only the default latency applies.
    package var ruleIndex: Optional<Int>
    package var ruleName: Optional<String>
    /// The step of the rule's sequence that answered (0 for rules without a sequence).
    package var step: Optional<Int>
    package var answer: ScenarioAnswer
    /// Wait this long before answering (or before carrying out the faults).
    package var delay: Optional<Duration>
    /// In the order to carry them out; see ``ScenarioFault``.
    package var faults: [ScenarioFault]

    package init(
        ruleIndex: Int?,
        ruleName: String?,
        step: Int? = nil,
        answer: ScenarioAnswer,
        delay: Duration? = nil,
        faults: [ScenarioFault] = []
    ) {
        self.ruleIndex = ruleIndex
        self.ruleName = ruleName
        self.step = step
        self.answer = answer
        self.delay = delay
        self.faults = faults
    }

    /// The scripted answer, when there is one.
    package var response: ScenarioResponse? {
        if case .respond(let response) = answer { return response }
        return nil
    }
}

/// How the request's stream is answered.
package enum ScenarioAnswer: Sendable, Equatable {
    /// As the validator (and the device registry) decide: the rule only adds a delay or faults.
    case validated
    /// This status and reason, whatever the request.
    case respond(ScenarioResponse)
    /// No answer: a fault (RST_STREAM, GOAWAY, drop, hang) replaces it.
    case none
}

/// A status, its reason and, for 410, the timestamp, with every time resolved.
package struct ScenarioResponse: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    package var status: Int
    package var reason: Optional<Reason>
    /// Milliseconds since the epoch; set for 410 only.
    package var timestamp: Optional<Int64>

    package init(status: Int, reason: Reason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }
}
