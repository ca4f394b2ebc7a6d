/// One rule of a scenario: conditions, then what to answer. A rule with a `sequence` answers its steps in turn.
public struct ScenarioRule: Sendable, Equatable {
    /// The name given in the file, or `rules[i]`; the recorder marks each request with it.
    public var name: String
    public var conditions: RuleConditions
    /// The rule stops matching after this many hits (then later rules get their chance).
    public var times: Int?
    /// One step for a plain rule; the steps of a `sequence`, in order.
    public var steps: [RuleStep]
    /// Written as a `sequence` (kept so the rule is shown as written).
    public var isSequence: Bool
    /// After its last step a sequence starts over (`repeat: true`) instead of repeating the last step forever.
    public var cycles: Bool

    public init(
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
public struct RuleConditions: Sendable, Equatable {
    /// The token is one of these (lower case; tokens are compared case-insensitively).
    public var tokens: [String]?
    /// Lower case.
    public var tokenPrefix: String?
    /// A Swift `Regex` searched in the token as sent (anchor it with `^…$`; `(?i)` for case-insensitivity).
    public var tokenRegex: String?
    /// A device of the scenario, by name, and its token (lower case).
    public var device: DeviceReference?
    public var topics: [String]?
    /// `apns-channel-id` is one of these (broadcasts, channel reads and deletes).
    public var channelIDs: [String]?
    /// The bundle ID in a broadcast or channel-management path is one of these (compared without case).
    public var bundleIDs: [String]?
    /// `apns-push-type` is one of these; a request without the header matches none.
    public var pushTypes: [PushType]?
    /// `apns-priority` is one of these; a request without it counts as 10, as APNs does.
    public var priorities: [Int]?
    public var headers: [HeaderCondition]
    public var payload: [PayloadCondition]
    /// The request's ordinal among all requests since the start (1 is the first).
    public var nth: OrdinalRange?
    /// The request's ordinal among those to the same token.
    public var nthForToken: OrdinalRange?
    /// The request's ordinal among those on the same connection.
    public var nthOnConnection: OrdinalRange?
    /// Every Nth request overall (N, 2N, 3N, …).
    public var every: Int?
    /// With `every`: requests skipped before counting starts (`every: 3, offset: 2` matches the 5th, 8th, …).
    public var everyOffset: Int = 0
    /// Milliseconds since the start: the request arrives at or after this.
    public var after: Int64?
    /// Milliseconds since the start: the request arrives before this.
    public var before: Int64?
    /// Chance in 0…1, drawn from the seed, checked only once every other condition holds.
    public var probability: Double?

    public init(
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
public struct DeviceReference: Sendable, Equatable {
    public var name: String
    /// Lower case.
    public var token: String

    public init(name: String, token: String) {
        self.name = name
        self.token = token
    }
}

/// A header that must have a value, or (`value == nil`) be absent.
public struct HeaderCondition: Sendable, Equatable {
    /// Lower case, as HTTP/2 sends it.
    public var name: String
    public var value: String?

    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// A JSON path in the payload whose value must equal `value`; a `null` value also matches an absent path.
public struct PayloadCondition: Sendable, Equatable {
    public var path: JSONPath
    public var value: JSONValue

    public init(path: JSONPath, value: JSONValue) {
        self.path = path
        self.value = value
    }

    /// Whether the payload has `value` at `path`; `null` also matches a path that leads nowhere.
    public func matches(_ payload: [UInt8]) -> Bool {
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
public struct OrdinalRange: Sendable, Equatable {
    public var from: UInt64
    public var to: UInt64?

    public init(from: UInt64, to: UInt64?) {
        self.from = from
        self.to = to
    }

    public static func exactly(_ n: UInt64) -> OrdinalRange { OrdinalRange(from: n, to: n) }

    func contains(_ ordinal: UInt64) -> Bool {
        ordinal >= from && (to.map { ordinal <= $0 } ?? true)
    }
}

/// One answer of a rule (or of one step of its sequence).
public struct RuleStep: Sendable, Equatable {
    /// The scripted status and reason; `nil` lets the normal validation answer (the step only adds a delay or
    /// faults), unless a fault replaces the answer.
    public var answer: ScriptedAnswer?
    /// Replaces the default latency.
    public var delay: ScenarioDelay?
    /// In the order the transport should carry them out.
    public var faults: [ScenarioFault]

    public init(answer: ScriptedAnswer? = nil, delay: ScenarioDelay? = nil, faults: [ScenarioFault] = []) {
        self.answer = answer
        self.delay = delay
        self.faults = faults
    }

    /// Whether a fault takes the place of an answer: the stream gets no HEADERS.
    public var faultReplacesAnswer: Bool {
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
public struct ScriptedAnswer: Sendable, Equatable {
    public var status: Int
    public var reason: Reason?
    /// Only for 410. `nil`: the device's unregistration time when the token is an unregistered device, else now.
    public var timestamp: ScenarioTimestamp?

    public init(status: Int, reason: Reason? = nil, timestamp: ScenarioTimestamp? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }

    public static let accept = ScriptedAnswer(status: 200)
}

/// The `timestamp` of a scripted 410.
public enum ScenarioTimestamp: Sendable, Equatable {
    /// Absolute, or relative to the request's arrival (`-2d`).
    case time(ScenarioTime)
    /// When the request's token was unregistered in the device registry (now, when it was not).
    case unregistered
}
