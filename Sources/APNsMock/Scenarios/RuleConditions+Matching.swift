/// What a rule's conditions look at, gathered once per request without copying the request.
struct MatchInput {
    /// The token as sent: a slice of the path, not a new string.
    var token: Substring?
    var headers: APNsHeaders
    var fields: [HeaderField]
    var payload: [UInt8]
    /// The bundle ID of a broadcast-API path, lower case; looked for only when a rule matches on it.
    var bundleID: String?
}

/// A device token as a dictionary key without building a string: two 64-bit FNV-1a hashes of its bytes with ASCII
/// case folded (so `AB…` and `ab…` count as one token). A collision needs two tokens agreeing on 128 bits.
struct TokenKey: Hashable {
    var first: UInt64
    var second: UInt64

    init(_ token: Substring) {
        var first: UInt64 = 0xCBF2_9CE4_8422_2325
        var second: UInt64 = 0x6C62_272E_07BB_0142
        for byte in token.utf8 {
            let folded = UInt64(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            first = (first ^ folded) &* 0x0000_0100_0000_01B3
            second = (second ^ folded) &* 0x0000_0100_0000_01B3 ^ (second >> 29)
        }
        self.first = first
        self.second = second
    }
}

/// The request's ordinals (1-based); 0 when not counted.
struct Ordinals {
    var overall: UInt64
    var forToken: UInt64
    var onConnection: UInt64
}

/// A rule ready for the hot path: one reference to retain per rule, conditions in the forms cheapest to compare.
final class CompiledRule: Sendable {
    let name: String
    let conditions: RuleConditions
    let steps: [RuleStep]
    let times: UInt64?
    let cycles: Bool
    /// Lower-case tokens, from `token` and `device`, as bytes.
    private let tokenSets: [[[UInt8]]]
    private let tokenPrefix: [UInt8]?
    private let pushTypeNames: [String]?

    init(_ rule: ScenarioRule) {
        name = rule.name
        conditions = rule.conditions
        // A rule built in code without steps lets the validator answer, like a rule with no answer keys.
        steps = rule.steps.isEmpty ? [RuleStep()] : rule.steps
        times = rule.times.map { UInt64($0) }
        cycles = rule.cycles
        var tokenSets: [[[UInt8]]] = []
        if let tokens = rule.conditions.tokens { tokenSets.append(tokens.map { Array($0.lowercased().utf8) }) }
        if let device = rule.conditions.device { tokenSets.append([Array(device.token.lowercased().utf8)]) }
        self.tokenSets = tokenSets
        tokenPrefix = rule.conditions.tokenPrefix.map { Array($0.lowercased().utf8) }
        pushTypeNames = rule.conditions.pushTypes?.map(\.rawValue)
    }

    /// Whether every condition but `probability` holds, cheapest checks first.
    func matches(_ input: MatchInput, regex: Regex<AnyRegexOutput>?, ordinals: Ordinals, elapsed: Int64) -> Bool {
        if let after = conditions.after, elapsed < after { return false }
        if let before = conditions.before, elapsed >= before { return false }
        if let nth = conditions.nth, !nth.contains(ordinals.overall) { return false }
        if let every = conditions.every {
            let offset = UInt64(conditions.everyOffset)
            guard ordinals.overall > offset, (ordinals.overall - offset) % UInt64(every) == 0 else { return false }
        }
        if let range = conditions.nthForToken, !range.contains(ordinals.forToken) { return false }
        if let range = conditions.nthOnConnection, !range.contains(ordinals.onConnection) { return false }
        if !tokenSets.isEmpty || tokenPrefix != nil {
            guard let token = input.token?.utf8 else { return false }
            for tokens in tokenSets where !tokens.contains(where: { Self.equalsFoldingCase(token, $0) }) {
                return false
            }
            if let tokenPrefix {
                guard token.count >= tokenPrefix.count,
                    Self.equalsFoldingCase(token.prefix(tokenPrefix.count), tokenPrefix)
                else { return false }
            }
        }
        if let topics = conditions.topics {
            guard let topic = input.headers.topic, topics.contains(topic) else { return false }
        }
        if let channelIDs = conditions.channelIDs {
            guard let sent = input.fields.first(where: { $0.name == "apns-channel-id" })?.value, channelIDs.contains(sent) else { return false }
        }
        if let bundleIDs = conditions.bundleIDs {
            guard let bundleID = input.bundleID, bundleIDs.contains(bundleID) else { return false }
        }
        if let pushTypeNames {
            guard let pushType = input.headers.pushType, pushTypeNames.contains(pushType) else { return false }
        }
        if let priorities = conditions.priorities {
            // APNs treats a missing apns-priority as 10.
            let priority = input.headers.priority.map { Int($0) } ?? 10
            guard let priority, priorities.contains(priority) else { return false }
        }
        for condition in conditions.headers {
            let value = input.fields.first(where: { $0.name == condition.name })?.value
            guard value == condition.value else { return false }
        }
        if conditions.tokenRegex != nil {
            guard let regex, let token = input.token, token.firstMatch(of: regex) != nil else { return false }
        }
        for condition in conditions.payload where !condition.matches(input.payload) { return false }
        return true
    }

    /// Whether `token` equals `lowercase` ignoring ASCII case (`lowercase` is already lower case).
    private static func equalsFoldingCase<Token: Collection<UInt8>>(_ token: Token, _ lowercase: [UInt8]) -> Bool {
        guard token.count == lowercase.count else { return false }
        var index = 0
        for byte in token {
            let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if folded != lowercase[index] { return false }
            index += 1
        }
        return true
    }
}
