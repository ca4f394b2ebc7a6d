/// A scenario with its counters at one moment, for `GET /admin/scenario`.
package struct ScenarioSnapshot: Sendable, Equatable {
    package struct RuleStatistics: Sendable, Equatable {
        package var index: Int
        package var name: String
        package var hits: UInt64
        /// `times` is used up: the rule no longer matches.
        package var exhausted: Bool
        /// For sequences, the step the next hit answers with.
        package var nextStep: Int?
    }

    package var scenario: Scenario
    package var seed: UInt64
    package var startedAt: Int64
    /// Requests evaluated since the start.
    package var requests: UInt64
    package var rules: [RuleStatistics]
    package var devices: [Device]

    /// `{"scenario": <the scenario in file form>, "seed", "startedAt", "requests", "rules": [{"index", "name",
    /// "hits", "exhausted", "nextStep"?}], "devices": [...]}`. The `scenario` member loads back as a scenario file.
    package func jsonObject() -> [String: Any] {
        [
            "scenario": scenario.jsonObject(),
            "seed": seed <= UInt64(Int64.max) ? Int64(seed) as Any : String(seed),
            "startedAt": startedAt,
            "requests": requests <= UInt64(Int64.max) ? Int64(requests) : Int64.max,
            "rules": rules.map { statistics -> [String: Any] in
                var object: [String: Any] = [
                    "index": statistics.index,
                    "name": statistics.name,
                    "hits": Int64(clamping: statistics.hits),
                    "exhausted": statistics.exhausted,
                ]
                if let nextStep = statistics.nextStep { object["nextStep"] = nextStep }
                return object
            },
            "devices": devices.map { $0.jsonObject() },
            "source": scenario.sourceText as Any,
        ]
    }
}
