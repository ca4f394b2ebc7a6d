import Foundation
import Yams

/// Loads and validates scenario files (YAML, or the same structure in JSON, which is valid YAML).
///
/// Every problem is reported, not only the first, each as `source:line:column: field: message`.
package enum ScenarioLoader {
    /// Parses and validates a scenario. `source` names it in messages (a path, or e.g. `PUT /admin/scenario`) and,
    /// without a `name` key, gives the scenario its name (the file name without its extension).
    package static func load(text: String, source: String) throws(ScenarioLoadError) -> Scenario {
        var parser = ScenarioParser(source: source)
        var scenario = parser.parseDocument(text, defaultName: defaultName(for: source))
        scenario?.sourceText = text
        if let scenario, parser.problems.isEmpty { return scenario }
        throw ScenarioLoadError(problems: parser.sortedProblems)
    }

    /// Reads and loads a scenario file.
    package static func load(file path: String) throws(ScenarioLoadError) -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let problem = ScenarioProblem(
                source: path,
                line: nil,
                column: nil,
                field: nil,
                message: "cannot read the file: \(error.localizedDescription)"
            )
            throw ScenarioLoadError(problems: [problem])
        }
        return try load(text: text, source: path)
    }

    static func defaultName(for source: String) -> String {
        let file = source.split(separator: "/").last.map(String.init) ?? source
        let stem = file.split(separator: ".").first.map(String.init) ?? file
        return stem.isEmpty ? "scenario" : stem
    }
}

extension ScenarioParser {
    static let rootKeys = ["name", "description", "seed", "defaults", "delivery", "devices", "channels", "connection", "outages", "rules"]

    mutating func parseDocument(_ text: String, defaultName: String) -> Scenario? {
        if let problem = YAMLLimits.sizeProblem(byteCount: text.utf8.count) {
            report(line: nil, column: nil, nil, problem)
            return nil
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            reportYAMLError(error, text: text)
            return nil
        }
        guard let root else {
            report(line: 1, column: 1, nil, "the scenario is empty; it needs at least a name or rules")
            return nil
        }
        if let problem = YAMLLimits.expansionProblem(root) {
            report(line: nil, column: nil, nil, problem)
            return nil
        }
        guard let fields = fields(root, "", allowed: Self.rootKeys, what: "a mapping with name, rules, devices, …")
        else { return nil }

        var scenario = Scenario(name: defaultName)
        if let node = fields.value("name"), let name = string(node, "name") { scenario.name = name }
        if let node = fields.value("description") {
            scenario.description = string(node, "description", allowEmpty: true)
        }
        if let node = fields.value("seed") { scenario.seed = seed(node) }
        if let node = fields.value("defaults") { scenario.defaults = defaults(node) }
        if let node = fields.value("connection") { scenario.connection = connection(node) }
        if let node = fields.value("delivery") { scenario.delivery = delivery(node) }
        if let node = fields.value("outages") { scenario.outages = outages(node) }
        // Devices before rules, wherever they are in the file: rules refer to devices by name.
        if let node = fields.value("devices") {
            scenario.devices = devices(node, defaultEnvironment: scenario.defaults.environment ?? .development)
        }
        if let node = fields.value("channels") {
            scenario.channels = channels(node, scenarioName: scenario.name, defaultEnvironment: scenario.defaults.environment ?? .development)
        }
        // A device's subscriptions name the scenario's channels, which may come after the devices in the file.
        if let node = fields.value("devices") { resolveSubscriptions(node, devices: &scenario.devices, channels: scenario.channels) }
        if let node = fields.value("rules") { scenario.rules = rules(node, devices: scenario.devices, channels: scenario.channels) }
        return scenario
    }

    private mutating func reportYAMLError(_ error: any Error, text: String) {
        guard let error = error as? YamlError else {
            report(line: nil, column: nil, nil, "not YAML: \(error)")
            return
        }
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            var message = "YAML syntax: \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line))" }
            // libyaml's words for a tab ("found character that cannot start any token") do not say "tab".
            if let tabLine = Self.lineIndentedWithATab(text, near: mark.line) {
                report(line: tabLine, column: 1, nil, "a tab in the indentation: YAML indents with spaces only; replace the tab with spaces")
                return
            }
            report(line: mark.line, column: mark.column, nil, message)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            report(line: context.mark.line, column: context.mark.column, nil, "duplicate key \(keys) in one mapping")
        case .reader(let problem, _, _, _):
            report(line: nil, column: nil, nil, "unreadable text: \(problem)")
        default:
            report(line: nil, column: nil, nil, "YAML: \(error)")
        }
    }

    /// The line (1-based) at or before `line` whose indentation holds a tab, if any.
    static func lineIndentedWithATab(_ text: String, near line: Int) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for number in stride(from: min(line, lines.count), through: 1, by: -1) {
            let indentation = lines[number - 1].prefix { $0 == " " || $0 == "\t" }
            if indentation.contains("\t") { return number }
            if number < line - 1 { break }
        }
        return nil
    }

    private mutating func seed(_ node: Node) -> UInt64? {
        if case .scalar(let scalar) = node, scalar.string == "random" { return nil }
        if case .scalar = node, Self.kind(node) == .int {
            return int(node, "seed", in: 0...Int.max).map { UInt64($0) } ?? 0
        }
        report(node, "seed", "expected a whole number ≥ 0 or 'random', found \(Self.describe(node))")
        return 0
    }

    private mutating func defaults(_ node: Node) -> ScenarioDefaults {
        var defaults = ScenarioDefaults()
        guard let fields = fields(node, "defaults", allowed: ["latency", "environment"]) else { return defaults }
        if let value = fields.value("latency") { defaults.latency = delay(value, fields.path("latency")) }
        if let value = fields.value("environment") {
            defaults.environment = environment(value, fields.path("environment"))
        }
        return defaults
    }

    /// `delivery: {storedPerApp: 2, maxStorage: 7d, backgroundBudget: 3, lowPriorityInterval: 15m}`, with the
    /// command line's bounds.
    private mutating func delivery(_ node: Node) -> ScenarioDelivery? {
        guard let fields = fields(node, "delivery", allowed: ScenarioDelivery.keys) else { return nil }
        var delivery = ScenarioDelivery()
        if let value = fields.value("storedPerApp") { delivery.storedPerApp = int(value, fields.path("storedPerApp"), in: 1...10_000) }
        if let value = fields.value("maxStorage") {
            delivery.maximumStorage = boundedDuration(value, fields.path("maxStorage"), atMost: 366 * DeliveryPolicy.day, "366d")
        }
        if let value = fields.value("backgroundBudget") {
            if case .scalar(let scalar) = value, scalar.string == "none" {
                delivery.backgroundBudget = .some(nil)
            } else if let budget = int(value, fields.path("backgroundBudget"), in: 0...1_000_000) {
                delivery.backgroundBudget = .some(budget)
            }
        }
        if let value = fields.value("lowPriorityInterval") {
            let path = fields.path("lowPriorityInterval")
            if let interval = boundedDuration(value, path, atMost: DeliveryPolicy.day, "1d") {
                if interval == 0 { report(value, path, "must be longer than 0") } else { delivery.lowPriorityInterval = interval }
            }
        }
        return delivery
    }

    /// A duration no longer than `limit` milliseconds (`limitText` in the message).
    private mutating func boundedDuration(_ node: Node, _ path: String, atMost limit: Int64, _ limitText: String) -> Int64? {
        guard let milliseconds = duration(node, path) else { return nil }
        guard milliseconds <= limit else {
            report(node, path, "is longer than \(limitText), the most it may be")
            return nil
        }
        return milliseconds
    }

    private mutating func connection(_ node: Node) -> ScenarioConnectionPolicy {
        var policy = ScenarioConnectionPolicy()
        let keys = ["closeAfterBadDeviceTokens", "lowerStreamLimitAfterRejection"]
        guard let fields = fields(node, "connection", allowed: keys) else { return policy }
        if let value = fields.value("closeAfterBadDeviceTokens") {
            policy.closeAfterBadDeviceTokens = int(value, fields.path("closeAfterBadDeviceTokens"), in: 1...Int.max)
        }
        if let value = fields.value("lowerStreamLimitAfterRejection") {
            policy.lowerStreamLimitAfterRejection = bool(value, fields.path("lowerStreamLimitAfterRejection")) ?? false
        }
        return policy
    }

    private mutating func outages(_ node: Node) -> [ScenarioOutage] {
        guard let items = elements(node, "outages", what: "outages ({from, until, mode})") else { return [] }
        var outages: [ScenarioOutage] = []
        for (index, item) in items.enumerated() {
            let path = Self.element("outages", index)
            let keys = ["from", "until", "mode", "errorCode", "debugData", "reason"]
            guard let fields = fields(item, path, allowed: keys) else { continue }
            let from = fields.value("from").map { duration($0, fields.path("from")) } ?? 0
            let until = fields.value("until").flatMap { duration($0, fields.path("until")) }
            if let from, let until, until <= from {
                report(fields.value("until"), fields.path("until"), "must be later than from")
            }
            var isGoAway = false
            if let value = fields.value("mode"), let text = string(value, fields.path("mode")) {
                switch text {
                case "refuse": break
                case "goaway": isGoAway = true
                default: report(value, fields.path("mode"), "unknown mode '\(text)'; expected refuse or goaway")
                }
            }
            var errorCode: UInt32 = 0
            for key in ["errorCode", "debugData", "reason"] where fields.has(key) && !isGoAway {
                report(fields.keyNode(key), fields.path(key), "goes with mode: goaway only")
            }
            if let value = fields.value("errorCode") {
                errorCode = self.errorCode(value, fields.path("errorCode")) ?? 0
            }
            let debugData = goAwayDebugData(fields)
            guard let from else { continue }
            outages.append(
                ScenarioOutage(
                    from: from,
                    until: until,
                    mode: isGoAway ? .goAway(errorCode: errorCode, debugData: debugData) : .refuse
                )
            )
        }
        return outages
    }

    private mutating func devices(_ node: Node, defaultEnvironment: APNsEnvironment) -> [ScenarioDevice] {
        guard let items = elements(node, "devices", what: "devices ({name, token, topic, environment})") else {
            return []
        }
        var devices: [ScenarioDevice] = []
        var lineOfName: [String: Int] = [:]
        var lineOfToken: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = Self.element("devices", index)
            let keys = ["name", "token", "topic", "environment", "unregisteredAt", "state", "timeline", "subscriptions"]
            guard let fields = fields(item, path, allowed: keys) else { continue }
            let name = fields.required("name", &self).flatMap { string($0, fields.path("name")) }
            if let name, let node = fields.value("name") {
                if let line = lineOfName[name] {
                    report(node, fields.path("name"), "device name '\(name)' is already used at line \(line)")
                } else {
                    lineOfName[name] = node.mark?.line ?? 0
                }
            }
            var token = fields.required("token", &self).flatMap { string($0, fields.path("token")) }
            if let text = token, let node = fields.value("token") {
                if !Device.isWellFormedToken(text) {
                    report(node, fields.path("token"), "must be an even number of hexadecimal digits")
                    token = nil
                } else if let line = lineOfToken[text.lowercased()] {
                    report(node, fields.path("token"), "this token is already a device at line \(line)")
                } else {
                    lineOfToken[text.lowercased()] = node.mark?.line ?? 0
                }
            }
            let topic = fields.required("topic", &self).flatMap { string($0, fields.path("topic")) }
            var environment = defaultEnvironment
            if let value = fields.value("environment") {
                environment = self.environment(value, fields.path("environment")) ?? defaultEnvironment
            }
            var unregisteredAt: ScenarioTime?
            if let value = fields.value("unregisteredAt") {
                unregisteredAt = time(value, fields.path("unregisteredAt"))
            }
            var state = DeviceState.online
            if let value = fields.value("state") {
                state = deviceState(value, fields.path("state")) ?? .online
            }
            var timeline: [ScenarioStateChange] = []
            if let value = fields.value("timeline") {
                timeline = self.timeline(value, fields.path("timeline"))
            }
            guard let name, let token, let topic else { continue }
            devices.append(
                ScenarioDevice(
                    name: name,
                    token: token,
                    topic: topic,
                    environment: environment,
                    unregisteredAt: unregisteredAt,
                    state: state,
                    timeline: timeline
                )
            )
        }
        return devices
    }

    /// Turns each device's `subscriptions` (names of the scenario's channels) into channel ids.
    private mutating func resolveSubscriptions(_ node: Node, devices: inout [ScenarioDevice], channels: [ScenarioChannel]) {
        guard case .sequence(let items) = node else { return }
        let names = channels.map(\.name)
        var index = 0
        for (position, item) in items.enumerated() {
            guard case .mapping(let mapping) = item, index < devices.count else { continue }
            let path = Self.element("devices", position)
            // Devices that failed to parse were dropped: match by token.
            let token = mapping["token"]?.string
            guard let found = devices.firstIndex(where: { $0.token == token }) else { continue }
            index = found + 1
            guard let value = mapping["subscriptions"] else { continue }
            guard let list = oneOrMany(value, Self.child(path, "subscriptions"), { parser, node, path in parser.string(node, path) }) else { continue }
            var ids: [String] = []
            for (offset, name) in list.enumerated() {
                guard let channel = channels.first(where: { $0.name == name }) else {
                    let at: Node = if case .sequence(let elements) = value, offset < elements.count { elements[offset] } else { value }
                    report(
                        at, Self.child(path, "subscriptions"),
                        "no channel named '\(name)'; " + (names.isEmpty ? "declare it under channels" : Self.suggestion(for: name, among: names))
                    )
                    continue
                }
                ids.append(channel.id)
            }
            devices[found].subscriptions = ids
        }
    }

    /// A device state's name.
    private mutating func deviceState(_ node: Node, _ path: String) -> DeviceState? {
        guard let text = string(node, path) else { return nil }
        guard let state = DeviceState(rawValue: text) else {
            report(node, path, "'\(text)' is not a device state; " + Self.suggestion(for: text, among: DeviceState.allCases.map(\.rawValue)))
            return nil
        }
        return state
    }

    /// `- offline: {at: +10s, for: 2m}`, in time order; a window (`for`) ends before the next entry starts, and an
    /// app removed is the last entry.
    private mutating func timeline(_ node: Node, _ path: String) -> [ScenarioStateChange] {
        guard let items = elements(node, path, what: "state changes such as - offline: {at: +10s, for: 2m}") else { return [] }
        var changes: [ScenarioStateChange] = []
        /// Where the previous entry ends, when its time is relative (absolute and relative times are not compared).
        var previousEnd: (milliseconds: Int64, line: Int)?
        var removedAt: Int?
        for (index, item) in items.enumerated() {
            let itemPath = Self.element(path, index)
            guard case .mapping(let mapping) = item, mapping.count == 1, let (keyNode, value) = mapping.first else {
                report(item, itemPath, "expected one state with its time, such as - offline: {at: +10s, for: 2m}, found \(Self.describe(item))")
                continue
            }
            guard let state = deviceState(keyNode, itemPath) else { continue }
            let statePath = Self.child(itemPath, state.rawValue)
            let line = keyNode.mark?.line ?? 0
            if let removedAt {
                report(keyNode, statePath, "the app was removed at line \(removedAt), and a removed app stays removed; nothing can follow")
                continue
            }
            guard let fields = fields(value, statePath, allowed: ["at", "for"], what: "{at: <time>, for: <duration>}") else { continue }
            guard let at = fields.required("at", &self).flatMap({ time($0, fields.path("at")) }) else { continue }
            var duration: Int64?
            if let node = fields.value("for") {
                guard let milliseconds = self.duration(node, fields.path("for")) else { continue }
                guard milliseconds > 0 else {
                    report(node, fields.path("for"), "must be longer than 0s; leave it out to stay in the state")
                    continue
                }
                if state == .appRemoved {
                    report(node, fields.path("for"), "a removed app stays removed; leave out for")
                    continue
                }
                duration = milliseconds
            }
            if case .relative(let start) = at, let previous = previousEnd, start < previous.milliseconds {
                report(
                    fields.value("at"), fields.path("at"),
                    "starts before the entry at line \(previous.line) ends (\(ScenarioTimeSyntax.format(milliseconds: previous.milliseconds))); keep the timeline in time order"
                )
                continue
            }
            if case .relative(let start) = at { previousEnd = (start + (duration ?? 0), line) }
            if state == .appRemoved { removedAt = line }
            changes.append(ScenarioStateChange(state: state, at: at, duration: duration))
        }
        return changes
    }

    private mutating func channels(_ node: Node, scenarioName: String, defaultEnvironment: APNsEnvironment) -> [ScenarioChannel] {
        guard let items = elements(node, "channels", what: "channels ({name, bundleId, messageStoragePolicy, id, environment})") else {
            return []
        }
        var channels: [ScenarioChannel] = []
        var lineOfName: [String: Int] = [:]
        var lineOfID: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = Self.element("channels", index)
            let keys = ["name", "bundleId", "messageStoragePolicy", "id", "environment"]
            guard let fields = fields(item, path, allowed: keys) else { continue }
            let name = fields.required("name", &self).flatMap { string($0, fields.path("name")) }
            if let name, let node = fields.value("name") {
                if let line = lineOfName[name] {
                    report(node, fields.path("name"), "channel name '\(name)' is already used at line \(line)")
                } else {
                    lineOfName[name] = node.mark?.line ?? 0
                }
            }
            let bundleID = fields.required("bundleId", &self).flatMap { string($0, fields.path("bundleId")) }
            var storagePolicy = BroadcastChannel.StoragePolicy.mostRecentMessageStored
            if let value = fields.value("messageStoragePolicy"), let number = int(value, fields.path("messageStoragePolicy"), in: 0...1) {
                storagePolicy = BroadcastChannel.StoragePolicy(rawValue: number) ?? .mostRecentMessageStored
            }
            var environment = defaultEnvironment
            if let value = fields.value("environment") {
                environment = self.environment(value, fields.path("environment")) ?? defaultEnvironment
            }
            var id = name.map { ScenarioChannel.derivedID(scenario: scenarioName, channel: $0) }
            if let value = fields.value("id"), let text = string(value, fields.path("id")) {
                if ChannelRegistry.isWellFormedID(text) {
                    id = text
                } else {
                    report(value, fields.path("id"), "a channel id is standard base64 (e.g. dHN0LXNyY2gtY2hubA==)")
                }
            }
            if let id, let node = fields.value("id") ?? fields.value("name") {
                if let line = lineOfID[id] {
                    report(node, fields.path("id"), "channel id '\(id)' is already used at line \(line)")
                } else {
                    lineOfID[id] = node.mark?.line ?? 0
                }
            }
            guard let name, let id, let bundleID else { continue }
            channels.append(ScenarioChannel(name: name, id: id, bundleID: bundleID, storagePolicy: storagePolicy, environment: environment))
        }
        return channels
    }
}
