/// The scenario in force and how far it has got (`GET /admin/scenario`).
public struct MockScenarioState: Sendable, Hashable, Decodable {
    /// What one rule has decided so far.
    public struct Rule: Sendable, Hashable, Decodable {
        /// Its place in the file, from 0.
        public var index: Int
        /// The rule's name (`rules[0]` when the file gives none).
        public var name: String
        /// Requests it decided since the scenario was loaded or reset.
        public var hits: Int
        /// True once a rule with `times` has used them all.
        public var exhausted: Bool
    }

    /// The scenario as loaded (name, devices, rules), as JSON.
    public var scenario: MockJSON
    /// Requests decided since the scenario was loaded or reset.
    public var requests: Int
    /// Every rule of the scenario, in order, with its hit count.
    public var rules: [Rule]
    /// The devices it registered, with their current state.
    public var devices: [MockDevice]
    /// Goes up by one with each scenario put in force; replicas sharing a PostgreSQL store agree on it.
    public var version: Int
    /// The text it was loaded from (YAML or JSON, comments and all); `nil` when no scenario is loaded.
    public var source: String?

    /// The scenario's `name` (`none` when no scenario is loaded).
    public var name: String { scenario["name"]?.string ?? "" }
}
