/// One rule of a scenario: conditions, then what to answer. A rule with a `sequence` answers its steps in turn.
package struct ScenarioRule: Sendable, Equatable {
    /// The name given in the file, or `rules[i]`; the recorder marks each request with it.
    package var name: String
    package var conditions: RuleConditions
    /// The rule stops matching after this many hits (then later rules get their chance).
    package var times: Int?
    /// One step for a plain rule; the steps of a `sequence`, in order.
    package var steps: [RuleStep]
    /// Written as a `sequence` (kept so the rule is shown as written).
    package var isSequence: Bool
    /// After its last step a sequence starts over (`repeat: true`) instead of repeating the last step forever.
    package var cycles: Bool

    package init(
        name: String,
        conditions: RuleConditions = RuleConditions(),
        times: Int? = nil,
        steps: [RuleStep],
        isSequence: Bool = false,
        cycles: Bool = false
    ) {
        self.name = name
        self.conditions = conditions
        self.times = times
        self.steps = steps
        self.isSequence = isSequence
        self.cycles = cycles
    }
}

/// What a rule requires of a request. Every condition given must hold; none given matches every request.
package struct RuleConditions: Sendable, Equatable {
    /// The token is one of these (lower case; tokens are compared case-insensitively).
    package var tokens: [String]?
    /// Lower case.
    package var tokenPrefix: String?
    /// A Swift `Regex` searched in the token as sent (anchor it with `^…$`; `(?i)` for case-insensitivity).
    package var tokenRegex: String?
    /// A device of the scenario, by name, and its token (lower case).
    package var device: DeviceReference?
    package var topics: [String]?
    /// `apns-channel-id` is one of these (broadcasts, channel reads and deletes).
    package var channelIDs: [String]?
    /// The bundle ID in a broadcast or channel-management path is one of these (compared without case).
    package var bundleIDs: [String]?
    /// `apns-push-type` is one of these; a request without the header matches none.
    package var pushTypes: [PushType]?
    /// `apns-priority` is one of these; a request without it counts as 10, as APNs does.
    package var priorities: [Int]?
    package var headers: [HeaderCondition]
    package var payload: [PayloadCondition]
    /// The request's ordinal among all requests since the start (1 is the first).
    package var nth: OrdinalRange?
    /// The request's ordinal among those to the same token.
    package var nthForToken: OrdinalRange?
    /// The request's ordinal among those on the same connection.
    package var nthOnConnection: OrdinalRange?
    /// Every Nth request overall (N, 2N, 3N, …).
    package var every: Int?
    /// With `every`: requests skipped before counting starts (`every: 3, offset: 2` matches the 5th, 8th, …).
    package var everyOffset: Int = 0
    /// Milliseconds since the start: the request arrives at or after this.
    package var after: Int64?
    /// Milliseconds since the start: the request arrives before this.
    package var before: Int64?
    /// Chance in 0…1, drawn from the seed, checked only once every other condition holds.
    package var probability: Double?

    package init(
        tokens: [String]? = nil,
        tokenPrefix: String? = nil,
        tokenRegex: String? = nil,
        device: DeviceReference? = nil,
        topics: [String]? = nil,
        pushTypes: [PushType]? = nil,
        priorities: [Int]? = nil,
        headers: [HeaderCondition] = [],
        payload: [PayloadCondition] = [],
        nth: OrdinalRange? = nil,
        nthForToken: OrdinalRange? = nil,
        nthOnConnection: OrdinalRange? = nil,
        every: Int? = nil,
        after: Int64? = nil,
        before: Int64? = nil,
        probability: Double? = nil
    ) {
        self.tokens = tokens
        self.tokenPrefix = tokenPrefix
        self.tokenRegex = tokenRegex
        self.device = device
        self.topics = topics
        self.pushTypes = pushTypes
        self.priorities = priorities
        self.headers = headers
        self.payload = payload
        self.nth = nth
        self.nthForToken = nthForToken
        self.nthOnConnection = nthOnConnection
        self.every = every
        self.after = after
        self.before = before
        self.probability = probability
    }

    /// Whether some condition needs the device token.
    var needsToken: Bool { tokens != nil || tokenPrefix != nil || tokenRegex != nil || device != nil }
}

/// `device: <name>` in a rule: the name as written and the token it stands for.
package struct DeviceReference: Sendable, Equatable {
    package var name: String
    /// Lower case.
    package var token: String

    package init(name: String, token: String) {
        self.name = name
        self.token = token
    }
}

/// A header that must have a value, or (`value == nil`) be absent.
package struct HeaderCondition: Sendable, Equatable {
    /// Lower case, as HTTP/2 sends it.
    package var name: String
    package var value: String?

    package init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// A JSON path in the payload whose value must equal `value`; a `null` value also matches an absent path.
package struct PayloadCondition: Sendable, Equatable {
    package var path: JSONPath
    package var value: JSONValue

    package init(path: JSONPath, value: JSONValue) {
        self.path = path
        self.value = value
    }

    /// Whether the payload has `value` at `path`; `null` also matches a path that leads nowhere.
    package func matches(_ payload: [UInt8]) -> Bool {
        let found = JSONScanner.value(at: path, in: payload)
        if value == .null {
            // "Absent" only counts in a payload that is JSON at all; checked only then, as it reads it all.
            return found == .null || (found == nil && JSONScanner.parse(payload) != nil)
        }
        return found == value
    }

    /// `$.aps.badge:3`, `$.aps.alert.title:Hello`: a path, a colon (the first outside brackets), and a value that is
    /// read as JSON when it is JSON (`3`, `true`, `null`, `"3"`) and as text otherwise.
    package init(filter text: String) throws(JSONPathError) {
        var depth = 0
        var split: String.Index?
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth -= 1
            case ":" where depth == 0: split = index
            default: break
            }
            if split != nil { break }
        }
        guard let split else { throw JSONPathError("needs a value after a colon, e.g. $.aps.badge:3") }
        let valueText = String(text[text.index(after: split)...])
        self.init(
            path: try JSONPath(parsing: String(text[..<split])),
            value: JSONScanner.parse(Array(valueText.utf8)) ?? .string(valueText)
        )
    }
}

/// Inclusive ordinals, 1-based: `nth: 5` is `5...5`, `nth: {from: 5}` is `5...`.
package struct OrdinalRange: Sendable, Equatable {
    package var from: UInt64
    package var to: UInt64?

    package init(from: UInt64, to: UInt64?) {
        self.from = from
        self.to = to
    }

    package static func exactly(_ n: UInt64) -> OrdinalRange { OrdinalRange(from: n, to: n) }

    func contains(_ ordinal: UInt64) -> Bool {
        ordinal >= from && (to.map { ordinal <= $0 } ?? true)
    }
}

/// One answer of a rule (or of one step of its sequence).
package struct RuleStep: Sendable, Equatable {
    /// The scripted status and reason; `nil` lets the normal validation answer (the step only adds a delay or
    /// faults), unless a fault replaces the answer.
    package var answer: ScriptedAnswer?
    /// Replaces the default latency.
    package var delay: ScenarioDelay?
    /// In the order the transport should carry them out.
    package var faults: [ScenarioFault]

    package init(answer: ScriptedAnswer? = nil, delay: ScenarioDelay? = nil, faults: [ScenarioFault] = []) {
        self.answer = answer
        self.delay = delay
        self.faults = faults
    }

    /// Whether a fault takes the place of an answer: the stream gets no HEADERS.
    package var faultReplacesAnswer: Bool {
        faults.contains { fault in
            switch fault {
            case .resetStream, .drop, .hang: return true
            case .goAway: return answer == nil
            case .setMaxConcurrentStreams, .closeAfterAnswer: return false
            }
        }
    }
}

/// A status with its reason (checked against ``Reason/status`` at load), and a timestamp spec for 410s.
package struct ScriptedAnswer: Sendable, Equatable {
    package var status: Int
    package var reason: Reason?
    /// Only for 410. `nil`: the device's unregistration time when the token is an unregistered device, else now.
    package var timestamp: ScenarioTimestamp?

    package init(status: Int, reason: Reason? = nil, timestamp: ScenarioTimestamp? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }

    package static let accept = ScriptedAnswer(status: 200)
}

/// The `timestamp` of a scripted 410.
package enum ScenarioTimestamp: Sendable, Equatable {
    /// Absolute, or relative to the request's arrival (`-2d`).
    case time(ScenarioTime)
    /// When the request's token was unregistered in the device registry (now, when it was not).
    case unregistered
}
