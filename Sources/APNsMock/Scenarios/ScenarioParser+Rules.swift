import Yams

extension ScenarioParser {
    static let answerKeys = [
        "accept", "status", "reason", "timestamp", "delay", "goaway", "reset", "drop", "hang", "maxConcurrentStreams",
        "closeConnection",
    ]
    static let ruleKeys = ["name", "match", "times", "sequence", "repeat"] + answerKeys
    static let matchKeys = [
        "token", "tokenPrefix", "tokenRegex", "device", "topic", "channel", "bundleId", "pushType", "priority", "headers", "payload", "nth",
        "nthForToken", "nthOnConnection", "every", "offset", "after", "before", "probability",
    ]
    /// Statuses APNs answers `/3/device` with.
    static let statuses = [200, 400, 403, 404, 405, 410, 413, 429, 500, 503]
    /// The reason a status alone stands for; 400 and 403 have too many to pick one.
    static let defaultReasons: [Int: Reason] = [
        404: .badPath, 405: .methodNotAllowed, 410: .unregistered, 413: .payloadTooLarge, 429: .tooManyRequests,
        500: .internalServerError, 503: .serviceUnavailable,
    ]

    mutating func rules(_ node: Node, devices: [ScenarioDevice], channels: [ScenarioChannel] = []) -> [ScenarioRule] {
        guard let items = elements(node, "rules", what: "rules") else { return [] }
        var rules: [ScenarioRule] = []
        var lineOfName: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = Self.element("rules", index)
            guard
                let fields = fields(
                    item,
                    path,
                    allowed: Self.ruleKeys,
                    what: "a rule (a mapping with match and an answer)"
                )
            else { continue }
            let problemsBefore = problems.count

            var name = path
            if let value = fields.value("name"), let text = string(value, fields.path("name")) {
                if let line = lineOfName[text] {
                    report(value, fields.path("name"), "rule name '\(text)' is already used at line \(line)")
                } else {
                    lineOfName[text] = value.mark?.line ?? 0
                }
                name = text
            }
            var conditions = RuleConditions()
            if let value = fields.value("match") {
                conditions = self.conditions(value, fields.path("match"), devices: devices, channels: channels)
            }
            let times = fields.value("times").flatMap { int($0, fields.path("times"), in: 1...Int.max) }

            var steps: [RuleStep] = []
            var cycles = false
            let isSequence = fields.has("sequence")
            if let value = fields.value("sequence") {
                for key in Self.answerKeys where key != "delay" && fields.has(key) {
                    report(
                        fields.keyNode(key),
                        fields.path(key),
                        "a rule with a sequence answers with its steps; move \(key) into the steps"
                    )
                }
                let ruleDelay = fields.value("delay").flatMap { delay($0, fields.path("delay")) }
                if let items = elements(value, fields.path("sequence"), what: "steps (accept, a reason, or a mapping)")
                {
                    if items.isEmpty { report(value, fields.path("sequence"), "needs at least one step") }
                    for (stepIndex, stepNode) in items.enumerated() {
                        guard var step = self.step(stepNode, Self.element(fields.path("sequence"), stepIndex)) else {
                            continue
                        }
                        if step.delay == nil { step.delay = ruleDelay }
                        steps.append(step)
                    }
                }
                if let value = fields.value("repeat") { cycles = bool(value, fields.path("repeat")) ?? false }
            } else {
                if fields.has("repeat") {
                    report(fields.keyNode("repeat"), fields.path("repeat"), "goes with a sequence only")
                }
                if let step = answer(fields) { steps = [step] }
            }
            guard problems.count == problemsBefore else { continue }
            rules.append(
                ScenarioRule(
                    name: name,
                    conditions: conditions,
                    times: times,
                    steps: steps,
                    isSequence: isSequence,
                    cycles: cycles
                )
            )
        }
        return rules
    }

    // MARK: Answers

    /// One step of a sequence: `accept`, a reason (`Unregistered`), a status (`503`), `drop`, `hang`, `reset`,
    /// `goaway`, or a mapping with the answer keys of a rule.
    private mutating func step(_ node: Node, _ path: String) -> RuleStep? {
        guard case .scalar(let scalar) = node else {
            guard let fields = fields(node, path, allowed: Self.answerKeys, what: "a step") else { return nil }
            return answer(fields)
        }
        let text = scalar.string
        if Self.kind(node) == .int {
            guard let status = int(node, path, in: 100...599) else { return nil }
            return scriptedAnswer(status: status, statusNode: node, reason: nil, reasonNode: nil, path: path).map {
                RuleStep(answer: $0)
            }
        }
        switch text {
        case "accept": return RuleStep(answer: .accept)
        case "drop": return RuleStep(faults: [.drop])
        case "hang": return RuleStep(faults: [.hang])
        case "reset": return RuleStep(faults: [.resetStream(errorCode: Self.defaultResetCode)])
        case "goaway": return RuleStep(faults: [Self.defaultGoAway])
        default: break
        }
        if let reason = Reason(rawValue: text) {
            return RuleStep(answer: ScriptedAnswer(status: reason.status, reason: reason))
        }
        let words = ["accept", "drop", "hang", "reset", "goaway"] + Reason.allCases.map(\.rawValue)
        report(
            node,
            path,
            "unknown step '\(text)'; write accept, a reason, a status, drop, hang, reset, goaway or a mapping "
                + "(\(Self.suggestion(for: text, among: words)))"
        )
        return nil
    }

    static let defaultResetCode: UInt32 = 0x8  // CANCEL
    static let defaultGoAway = ScenarioFault.goAway(errorCode: 0, lastStreamID: nil, debugData: Reason.shutdown.body())

    /// The answer keys of a rule or of a step.
    private mutating func answer(_ fields: Fields) -> RuleStep? {
        let before = problems.count
        var step = RuleStep()

        var accept = false
        if let value = fields.value("accept"), let flag = bool(value, fields.path("accept")) {
            if flag {
                accept = true
            } else {
                report(value, fields.path("accept"), "accept: false means nothing; give a status or reason to reject")
            }
        }
        let status = fields.value("status").flatMap { int($0, fields.path("status"), in: 100...599) }
        let reason = fields.value("reason").flatMap { self.reason($0, fields.path("reason")) }
        if accept, let status, status != 200 {
            report(fields.value("status"), fields.path("status"), "accept answers 200; remove accept or status")
        } else if accept, reason != nil {
            report(fields.value("reason"), fields.path("reason"), "accept answers 200 without a reason; remove one")
        } else if accept {
            step.answer = .accept
        } else if status != nil || reason != nil {
            step.answer = scriptedAnswer(
                status: status,
                statusNode: fields.value("status"),
                reason: reason,
                reasonNode: fields.value("reason"),
                path: fields.path
            )
        }
        if let value = fields.value("timestamp") {
            let timestamp = self.timestamp(value, fields.path("timestamp"))
            if let answer = step.answer {
                if answer.status == 410 {
                    step.answer?.timestamp = timestamp
                } else {
                    report(
                        fields.keyNode("timestamp"),
                        fields.path("timestamp"),
                        "goes with 410 answers only (this one is \(answer.status))"
                    )
                }
            } else if !fields.has("status") && !fields.has("reason") {
                report(
                    fields.keyNode("timestamp"),
                    fields.path("timestamp"),
                    "goes with a 410 answer: add reason: Unregistered"
                )
            }
        }
        if let value = fields.value("delay") { step.delay = delay(value, fields.path("delay")) }

        // Faults, in the order the transport carries them out.
        if let value = fields.value("maxConcurrentStreams"),
            let limit = int(value, fields.path("maxConcurrentStreams"), in: 0...Int(UInt32.max))
        {
            step.faults.append(.setMaxConcurrentStreams(UInt32(limit)))
        }
        var replacing: [String] = []
        if let value = fields.value("goaway"), let fault = goAway(value, fields.path("goaway")) {
            step.faults.append(fault)
            replacing.append("goaway")
        }
        if let value = fields.value("reset"), let code = reset(value, fields.path("reset")) {
            step.faults.append(.resetStream(errorCode: code))
            replacing.append("reset")
        }
        if let value = fields.value("drop"), bool(value, fields.path("drop")) == true {
            step.faults.append(.drop)
            replacing.append("drop")
        }
        if let value = fields.value("hang"), bool(value, fields.path("hang")) == true {
            step.faults.append(.hang)
            replacing.append("hang")
        }
        if replacing.count > 1 {
            report(
                fields.keyNode(replacing[1]),
                fields.path(replacing[1]),
                "cannot be combined with \(replacing[0]); pick one"
            )
        }
        let hasAnswer = fields.has("accept") || fields.has("status") || fields.has("reason")
        if let first = replacing.first(where: { $0 != "goaway" }), hasAnswer {
            let answerKeys = ["accept", "status", "reason"].filter(fields.has).joined(separator: " and ")
            report(fields.keyNode(first), fields.path(first), "\(first) replaces the answer; remove \(answerKeys)")
        }
        if let value = fields.value("closeConnection"), bool(value, fields.path("closeConnection")) == true {
            if let other = replacing.first(where: { $0 != "reset" }) {
                let why =
                    other == "goaway"
                    ? "goaway closes the connection already" : "\(other) leaves no answer to close after"
                report(fields.keyNode("closeConnection"), fields.path("closeConnection"), why)
            } else {
                step.faults.append(.closeAfterAnswer)
            }
        }
        return problems.count == before ? step : nil
    }

    /// Checks a status and reason against each other and fills in the one not given.
    private mutating func scriptedAnswer(
        status: Int?,
        statusNode: Node?,
        reason: Reason?,
        reasonNode: Node?,
        path: String
    ) -> ScriptedAnswer? {
        let statusPath = Self.child(path, "status")
        if let status, !Self.statuses.contains(status) {
            let known = Self.statuses.map(String.init).joined(separator: ", ")
            report(
                statusNode,
                statusNode.map { _ in statusPath } ?? path,
                "\(status) is not a status APNs answers with; expected one of \(known)"
            )
            return nil
        }
        switch (status, reason) {
        case (200?, let reason?):
            report(
                reasonNode,
                Self.child(path, "reason"),
                "a 200 answer has no reason (\(reason.rawValue) goes with \(reason.status))"
            )
            return nil
        case (let status?, let reason?):
            guard reason.status == status else {
                report(
                    statusNode,
                    statusPath,
                    "status \(status) does not go with reason \(reason.rawValue), which APNs answers with "
                        + "\(reason.status)"
                )
                return nil
            }
            return ScriptedAnswer(status: status, reason: reason)
        case (let status?, nil):
            if status == 200 { return .accept }
            guard let reason = Self.defaultReasons[status] else {
                let reasons = Reason.allCases.filter { $0.status == status }.map(\.rawValue).joined(separator: ", ")
                report(statusNode, statusPath, "status \(status) needs a reason, one of: \(reasons)")
                return nil
            }
            return ScriptedAnswer(status: status, reason: reason)
        case (nil, let reason?):
            return ScriptedAnswer(status: reason.status, reason: reason)
        case (nil, nil):
            return nil
        }
    }

    private mutating func timestamp(_ node: Node, _ path: String) -> ScenarioTimestamp? {
        if case .scalar(let scalar) = node, scalar.string == "unregistered" { return .unregistered }
        return time(node, path, extra: ", or unregistered (the device's unregistration time)").map { .time($0) }
    }

    /// `goaway: true`, or `{errorCode, lastStreamId, debugData | reason}`.
    private mutating func goAway(_ node: Node, _ path: String) -> ScenarioFault? {
        if case .scalar = node {
            guard let flag = bool(node, path) else { return nil }
            if !flag { report(node, path, "goaway: false means nothing; remove it") }
            return flag ? Self.defaultGoAway : nil
        }
        let keys = ["errorCode", "lastStreamId", "debugData", "reason"]
        guard let fields = fields(node, path, allowed: keys, what: "true or {errorCode, lastStreamId, debugData}")
        else {
            return nil
        }
        let before = problems.count
        let errorCode = fields.value("errorCode").flatMap { self.errorCode($0, fields.path("errorCode")) } ?? 0
        let lastStreamID = fields.value("lastStreamId").flatMap {
            int($0, fields.path("lastStreamId"), in: 0...Int(Int32.max)).map(Int32.init)
        }
        let debugData = goAwayDebugData(fields)
        guard problems.count == before else { return nil }
        return .goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData)
    }

    /// `reset: true`, `reset: CANCEL`, `reset: 8` or `reset: {errorCode: CANCEL}`.
    private mutating func reset(_ node: Node, _ path: String) -> UInt32? {
        if case .mapping = node {
            guard let fields = fields(node, path, allowed: ["errorCode"]) else { return nil }
            return fields.value("errorCode").map { errorCode($0, fields.path("errorCode")) } ?? Self.defaultResetCode
        }
        if case .scalar = node, Self.kind(node) == .bool {
            if node.bool == false { report(node, path, "reset: false means nothing; remove it") }
            return node.bool == true ? Self.defaultResetCode : nil
        }
        return errorCode(node, path)
    }

    // MARK: Conditions

    private mutating func conditions(_ node: Node, _ path: String, devices: [ScenarioDevice], channels: [ScenarioChannel]) -> RuleConditions {
        var conditions = RuleConditions()
        guard let fields = fields(node, path, allowed: Self.matchKeys) else { return conditions }
        if let value = fields.value("token") {
            conditions.tokens = oneOrMany(value, fields.path("token")) { parser, node, path in
                guard let token = parser.string(node, path) else { return nil }
                // A token that is not hex could never be in a request that reaches the rule's answer as APNs would.
                guard !token.isEmpty, token.utf8.allSatisfy(ASCII.isHexDigit) else {
                    parser.report(node, path, "'\(token)' is not a device token (hex digits): this rule could never match")
                    return nil
                }
                return Device.normalizedToken(token)
            }
        }
        if let value = fields.value("tokenPrefix") {
            conditions.tokenPrefix = string(value, fields.path("tokenPrefix")).map(Device.normalizedToken)
        }
        if let value = fields.value("tokenRegex"), let pattern = string(value, fields.path("tokenRegex")) {
            do {
                _ = try Regex(pattern)
                conditions.tokenRegex = pattern
            } catch {
                report(value, fields.path("tokenRegex"), "is not a valid regular expression: \(error)")
            }
        }
        if let value = fields.value("device"), let name = string(value, fields.path("device")) {
            if let device = devices.first(where: { $0.name == name }) {
                conditions.device = DeviceReference(name: name, token: Device.normalizedToken(device.token))
            } else if devices.isEmpty {
                report(value, fields.path("device"), "no device named '\(name)': the scenario declares no devices")
            } else {
                let names = devices.map(\.name)
                report(
                    value,
                    fields.path("device"),
                    "no device named '\(name)'; \(Self.suggestion(for: name, among: names))"
                )
            }
        }
        if let value = fields.value("topic") {
            conditions.topics = oneOrMany(value, fields.path("topic")) { parser, node, path in parser.string(node, path)
            }
        }
        if let value = fields.value("channel") {
            // A declared channel's name, or an id as sent in apns-channel-id.
            conditions.channelIDs = oneOrMany(value, fields.path("channel")) { parser, node, path in
                guard let text = parser.string(node, path) else { return nil }
                if let channel = channels.first(where: { $0.name == text }) { return channel.id }
                if ChannelRegistry.isWellFormedID(text) { return text }
                let names = channels.map(\.name)
                parser.report(
                    node, path,
                    names.isEmpty
                        ? "'\(text)' is neither a declared channel (the scenario declares none) nor a channel id (base64)"
                        : "'\(text)' is neither a declared channel nor a channel id (base64); \(Self.suggestion(for: text, among: names))"
                )
                return nil
            }
        }
        if let value = fields.value("bundleId") {
            conditions.bundleIDs = oneOrMany(value, fields.path("bundleId")) { parser, node, path in
                parser.string(node, path).map { $0.lowercased() }
            }
        }
        if let value = fields.value("pushType") {
            conditions.pushTypes = oneOrMany(value, fields.path("pushType")) { parser, node, path in
                guard let text = parser.string(node, path) else { return nil }
                if let type = PushType(rawValue: text) { return type }
                let names = PushType.allCases.map(\.rawValue)
                parser.report(node, path, "unknown push type '\(text)'; \(Self.suggestion(for: text, among: names))")
                return nil
            }
        }
        if let value = fields.value("priority") {
            conditions.priorities = oneOrMany(value, fields.path("priority")) { parser, node, path in
                guard let priority = parser.int(node, path, in: 0...Int.max) else { return nil }
                guard [1, 5, 10].contains(priority) else {
                    parser.report(node, path, "APNs priorities are 10, 5 and 1; \(priority) never arrives valid")
                    return nil
                }
                return priority
            }
        }
        if let value = fields.value("headers") { conditions.headers = headers(value, fields.path("headers")) }
        if let value = fields.value("payload") { conditions.payload = payload(value, fields.path("payload")) }
        if let value = fields.value("nth") { conditions.nth = ordinal(value, fields.path("nth")) }
        if let value = fields.value("nthForToken") {
            conditions.nthForToken = ordinal(value, fields.path("nthForToken"))
        }
        if let value = fields.value("nthOnConnection") {
            conditions.nthOnConnection = ordinal(value, fields.path("nthOnConnection"))
        }
        if let value = fields.value("every") { conditions.every = int(value, fields.path("every"), in: 1...Int.max) }
        if let value = fields.value("offset") {
            if conditions.every == nil, fields.value("every") == nil {
                report(value, fields.path("offset"), "goes with every (every: 3, offset: 2 matches the 5th, 8th, 11th, …)")
            } else {
                conditions.everyOffset = int(value, fields.path("offset"), in: 0...Int.max) ?? 0
            }
        }
        if let value = fields.value("after") { conditions.after = duration(value, fields.path("after")) }
        if let value = fields.value("before") { conditions.before = duration(value, fields.path("before")) }
        if let after = conditions.after, let before = conditions.before, before <= after {
            report(fields.value("before"), fields.path("before"), "must be later than after (nothing could match)")
        }
        if let value = fields.value("probability"), let probability = number(value, fields.path("probability")) {
            if (0...1).contains(probability) {
                conditions.probability = probability
            } else {
                report(value, fields.path("probability"), "\(probability) is not between 0 and 1")
            }
        }
        return conditions
    }

    private mutating func headers(_ node: Node, _ path: String) -> [HeaderCondition] {
        guard case .mapping(let mapping) = node else {
            report(node, path, "expected a mapping of header names to values, found \(Self.describe(node))")
            return []
        }
        var conditions: [HeaderCondition] = []
        for (keyNode, valueNode) in mapping {
            guard let name = string(keyNode, path) else { continue }
            let field = "\(path).\(name)"
            if name.hasPrefix(":") {
                report(keyNode, field, "pseudo-headers cannot be matched; use token or the other conditions")
                continue
            }
            if case .scalar = valueNode, Self.kind(valueNode) == .null {
                conditions.append(HeaderCondition(name: name.lowercased(), value: nil))
            } else if let value = string(valueNode, field, allowEmpty: true) {
                conditions.append(HeaderCondition(name: name.lowercased(), value: value))
            }
        }
        return conditions
    }

    private mutating func payload(_ node: Node, _ path: String) -> [PayloadCondition] {
        guard case .mapping(let mapping) = node else {
            report(node, path, "expected a mapping of JSON paths to values, such as {\"$.aps.alert.title\": Hello}")
            return []
        }
        var conditions: [PayloadCondition] = []
        for (keyNode, valueNode) in mapping {
            guard let text = string(keyNode, path) else { continue }
            let field = "\(path)[\"\(text)\"]"
            let jsonPath: JSONPath
            do {
                jsonPath = try JSONPath(parsing: text)
            } catch {
                report(keyNode, field, "bad JSON path: '\(text)' \(error.message)")
                continue
            }
            conditions.append(PayloadCondition(path: jsonPath, value: Self.jsonValue(valueNode)))
        }
        return conditions
    }

    /// A YAML value as the JSON value it denotes (`"10"` is a string, `10` a number).
    static func jsonValue(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            switch Self.kind(node) {
            case .null: return .null
            case .bool: return node.bool.map(JSONValue.bool) ?? .string(scalar.string)
            case .int, .float: return node.float.map(JSONValue.number) ?? .string(scalar.string)
            default: return .string(scalar.string)
            }
        case .sequence(let sequence):
            return .array(sequence.map(jsonValue))
        case .mapping(let mapping):
            var members: [String: JSONValue] = [:]
            for (key, value) in mapping { members[key.string ?? ""] = jsonValue(value) }
            return .object(members)
        case .alias:
            return .null
        }
    }

    /// `5`, or `{from: 5, to: 10}` (either bound may be left out).
    private mutating func ordinal(_ node: Node, _ path: String) -> OrdinalRange? {
        if case .mapping = node {
            guard let fields = fields(node, path, allowed: ["from", "to"], what: "a number or {from, to}") else {
                return nil
            }
            let from = fields.value("from").map { int($0, fields.path("from"), in: 1...Int.max) } ?? 1
            let to = fields.value("to").flatMap { int($0, fields.path("to"), in: 1...Int.max) }
            guard let from else { return nil }
            if let to, to < from {
                report(fields.value("to"), fields.path("to"), "must not be less than from")
                return nil
            }
            if !fields.has("from") && !fields.has("to") {
                report(node, path, "give from, to or both")
                return nil
            }
            return OrdinalRange(from: UInt64(from), to: to.map(UInt64.init))
        }
        return int(node, path, in: 1...Int.max).map { .exactly(UInt64($0)) }
    }

    /// A GOAWAY's debug data: `debugData` as written, or `reason`'s `{"reason":…}` body; APNs' Shutdown by default.
    mutating func goAwayDebugData(_ fields: Fields) -> String {
        var debugData = Reason.shutdown.body()
        if let value = fields.value("debugData") {
            debugData = string(value, fields.path("debugData"), allowEmpty: true) ?? debugData
        }
        if let value = fields.value("reason") {
            if fields.has("debugData") {
                report(fields.keyNode("reason"), fields.path("reason"), "give either reason or debugData, not both")
            }
            debugData = reason(value, fields.path("reason"))?.body() ?? debugData
        }
        return debugData
    }
}
