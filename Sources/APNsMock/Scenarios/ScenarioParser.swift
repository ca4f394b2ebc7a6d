import Yams

/// Walks a composed YAML node tree into a ``Scenario``, collecting every problem (with the node's line and column
/// and the field's path) instead of stopping at the first.
struct ScenarioParser {
    let source: String
    private(set) var problems: [ScenarioProblem] = []

    init(source: String) {
        self.source = source
    }

    // MARK: Problems

    mutating func report(_ node: Node?, _ field: String?, _ message: String) {
        report(line: node?.mark?.line, column: node?.mark?.column, field, message)
    }

    mutating func report(line: Int?, column: Int?, _ field: String?, _ message: String) {
        problems.append(
            ScenarioProblem(source: source, line: line, column: column, field: field, message: message)
        )
    }

    /// In file order, so the first problem printed is the first in the file.
    var sortedProblems: [ScenarioProblem] {
        problems.enumerated().sorted { a, b in
            let left = (a.element.line ?? 0, a.element.column ?? 0, a.offset)
            let right = (b.element.line ?? 0, b.element.column ?? 0, b.offset)
            return left < right
        }.map(\.element)
    }

    // MARK: Paths

    static func child(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    static func element(_ path: String, _ index: Int) -> String {
        "\(path)[\(index)]"
    }

    // MARK: Mappings

    /// The entries of a mapping, with unknown keys reported (and a suggestion for near misses).
    mutating func fields(_ node: Node, _ path: String, allowed: [String], what: String? = nil) -> Fields? {
        guard case .mapping(let mapping) = node else {
            report(
                node,
                path.isEmpty ? nil : path,
                "expected \(what ?? "a mapping (key: value)"), found \(Self.describe(node))"
            )
            return nil
        }
        var fields = Fields(node: node, path: path)
        for (keyNode, value) in mapping {
            guard case .scalar(let scalar) = keyNode else {
                report(keyNode, path.isEmpty ? nil : path, "keys must be names, found \(Self.describe(keyNode))")
                continue
            }
            let key = scalar.string
            guard allowed.contains(key) else {
                report(keyNode, Self.child(path, key), "unknown key; \(Self.suggestion(for: key, among: allowed))")
                continue
            }
            fields.entries.append(Fields.Entry(key: key, keyNode: keyNode, value: value))
        }
        return fields
    }

    /// The elements of a sequence.
    mutating func elements(_ node: Node, _ path: String, what: String) -> [Node]? {
        guard case .sequence(let sequence) = node else {
            report(node, path, "expected a list of \(what), found \(Self.describe(node))")
            return nil
        }
        return Array(sequence)
    }

    /// A scalar or a list of scalars, each passed through `convert`.
    mutating func oneOrMany<T>(
        _ node: Node,
        _ path: String,
        _ convert: (inout ScenarioParser, Node, String) -> T?
    ) -> [T]? {
        if case .sequence(let sequence) = node {
            guard !sequence.isEmpty else {
                report(node, path, "is an empty list; give at least one value or remove the key")
                return nil
            }
            var values: [T] = []
            var failed = false
            for (index, element) in sequence.enumerated() {
                if let value = convert(&self, element, Self.element(path, index)) {
                    values.append(value)
                } else {
                    failed = true
                }
            }
            return failed ? nil : values
        }
        return convert(&self, node, path).map { [$0] }
    }

    // MARK: Scalars

    /// The node's resolved tag (`int`, `bool`, `null`, `str`, …); quoted scalars are always `str`.
    static func kind(_ node: Node) -> Tag.Name {
        Tag.Name(rawValue: node.tag.rawValue)
    }

    private static func scalar(_ node: Node) -> (text: String, tag: Tag.Name)? {
        guard case .scalar(let scalar) = node else { return nil }
        return (scalar.string, Self.kind(node))
    }

    /// Any non-empty scalar's text (so `name: 123` is the string "123").
    mutating func string(_ node: Node, _ path: String, allowEmpty: Bool = false) -> String? {
        guard let (text, tag) = Self.scalar(node) else {
            report(node, path, "expected a string, found \(Self.describe(node))")
            return nil
        }
        if tag == .null || (text.isEmpty && !allowEmpty) {
            report(node, path, "needs a value")
            return nil
        }
        return text
    }

    mutating func int(_ node: Node, _ path: String, in range: ClosedRange<Int>) -> Int? {
        guard let (_, tag) = Self.scalar(node), tag == .int, let value = node.int else {
            report(node, path, "expected a whole number, found \(Self.describe(node))")
            return nil
        }
        guard range.contains(value) else {
            let bounds: String
            if range.upperBound == Int.max {
                bounds = "≥ \(range.lowerBound)"
            } else {
                bounds = "between \(range.lowerBound) and \(range.upperBound)"
            }
            report(node, path, "\(value) is out of range; expected a number \(bounds)")
            return nil
        }
        return value
    }

    mutating func number(_ node: Node, _ path: String) -> Double? {
        guard let (_, tag) = Self.scalar(node), tag == .int || tag == .float, let value = node.float else {
            report(node, path, "expected a number, found \(Self.describe(node))")
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node, _ path: String) -> Bool? {
        guard let (_, tag) = Self.scalar(node), tag == .bool, let value = node.bool else {
            report(node, path, "expected true or false, found \(Self.describe(node))")
            return nil
        }
        return value
    }

    /// A non-negative duration: `200ms`, `10s`, `1m30s`, `0`.
    mutating func duration(_ node: Node, _ path: String) -> Int64? {
        guard let milliseconds = signedDuration(node, path) else { return nil }
        guard milliseconds >= 0 else {
            report(node, path, "must not be negative")
            return nil
        }
        return milliseconds
    }

    mutating func signedDuration(_ node: Node, _ path: String) -> Int64? {
        guard let (text, tag) = Self.scalar(node), tag != .null else {
            report(node, path, "expected a duration such as 200ms, 10s or 1m, found \(Self.describe(node))")
            return nil
        }
        if tag == .int, node.int == 0 { return 0 }
        if tag == .int || tag == .float {
            report(node, path, "'\(text)' has no unit; write \(text)ms or \(text)s")
            return nil
        }
        switch ScenarioTimeSyntax.parseSignedDuration(text) {
        case .success(let milliseconds): return milliseconds
        case .failure(let error):
            report(node, path, error.message)
            return nil
        }
    }

    /// `200ms`, or `{min: 100ms, max: 500ms}` for a delay drawn from the seed.
    mutating func delay(_ node: Node, _ path: String) -> ScenarioDelay? {
        if case .mapping = node {
            guard let fields = fields(node, path, allowed: ["min", "max"], what: "a duration or {min, max}") else {
                return nil
            }
            guard let minimum = fields.required("min", &self).flatMap({ duration($0, Self.child(path, "min")) }),
                let maximum = fields.required("max", &self).flatMap({ duration($0, Self.child(path, "max")) })
            else { return nil }
            guard minimum <= maximum else {
                report(fields.value("max"), Self.child(path, "max"), "must not be less than min")
                return nil
            }
            return minimum == maximum
                ? .fixed(milliseconds: minimum) : .jitter(minMilliseconds: minimum, maxMilliseconds: maximum)
        }
        return duration(node, path).map { .fixed(milliseconds: $0) }
    }

    /// A time: milliseconds since the epoch, an ISO 8601 date, `now`, or a duration relative to the base (`-2d`,
    /// `+30s`, `30s`).
    mutating func time(_ node: Node, _ path: String, extra: String = "") -> ScenarioTime? {
        guard let (text, tag) = Self.scalar(node), tag != .null else {
            report(node, path, "expected a time, found \(Self.describe(node))")
            return nil
        }
        if tag == .int, let value = node.int {
            guard value >= 0 else {
                report(
                    node,
                    path,
                    "\(value) is negative; write milliseconds since the epoch or a relative time such as -2d"
                )
                return nil
            }
            return .absolute(milliseconds: Int64(value))
        }
        if text == "now" { return .relative(milliseconds: 0) }
        if let milliseconds = ScenarioTimeSyntax.parseISO8601(text) { return .absolute(milliseconds: milliseconds) }
        if case .success(let offset) = ScenarioTimeSyntax.parseSignedDuration(text) {
            return .relative(milliseconds: offset)
        }
        report(
            node,
            path,
            "'\(text)' is not a time; write milliseconds since the epoch (1700000000000), an ISO 8601 date "
                + "(2025-01-31T12:00:00Z), a relative time (-2d, +30s) or now\(extra)"
        )
        return nil
    }

    mutating func errorCode(_ node: Node, _ path: String) -> UInt32? {
        guard let (text, tag) = Self.scalar(node), tag != .null else {
            report(
                node,
                path,
                "expected an HTTP/2 error code (a name such as CANCEL, or a number), found \(Self.describe(node))"
            )
            return nil
        }
        if tag == .int {
            return int(node, path, in: 0...Int(UInt32.max)).map(UInt32.init)
        }
        if let code = HTTP2ErrorCodeName.code(named: text) { return code }
        let names = HTTP2ErrorCodeName.all.map(\.name)
        report(
            node,
            path,
            "unknown HTTP/2 error code '\(text)'; \(Self.suggestion(for: text.uppercased(), among: names))"
        )
        return nil
    }

    mutating func reason(_ node: Node, _ path: String) -> Reason? {
        guard let text = string(node, path) else { return nil }
        if let reason = Reason(rawValue: text) { return reason }
        let names = Reason.allCases.map(\.rawValue)
        if let near = names.first(where: { $0.lowercased() == text.lowercased() }) {
            report(node, path, "unknown reason '\(text)'; reasons are case-sensitive: did you mean '\(near)'?")
        } else {
            let suggestion = Self.suggestion(for: text, among: names)
            if suggestion.hasPrefix("did you mean") {
                report(node, path, "unknown reason '\(text)'; \(suggestion)")
            } else {
                report(
                    node,
                    path,
                    "unknown reason '\(text)'; expected an APNs reason such as BadDeviceToken, Unregistered or "
                        + "TooManyRequests (the table is in docs/scenarios.md, section Reasons)"
                )
            }
        }
        return nil
    }

    mutating func environment(_ node: Node, _ path: String) -> APNsEnvironment? {
        guard let text = string(node, path) else { return nil }
        guard let environment = Device.environment(named: text) else {
            report(node, path, "unknown environment '\(text)'; expected development (or sandbox) or production")
            return nil
        }
        return environment
    }

    // MARK: Messages

    static func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let scalar):
            if Self.kind(node) == .null { return "nothing" }
            let text = scalar.string.count > 40 ? String(scalar.string.prefix(37)) + "..." : scalar.string
            return "'\(text)'"
        }
    }

    /// "did you mean 'x'?" for a near miss, else the list of what is allowed (see `NearMiss`).
    static func suggestion(for word: String, among candidates: [String]) -> String {
        NearMiss.suggestion(for: word, among: candidates)
    }
}

/// The known entries of one mapping, in file order.
struct Fields {
    struct Entry {
        var key: String
        var keyNode: Node
        var value: Node
    }

    var node: Node
    var path: String
    var entries: [Entry] = []

    func value(_ key: String) -> Node? {
        entries.first(where: { $0.key == key })?.value
    }

    func keyNode(_ key: String) -> Node? {
        entries.first(where: { $0.key == key })?.keyNode
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    func path(_ key: String) -> String { ScenarioParser.child(path, key) }

    /// The value, or a "is required" problem at the mapping.
    func required(_ key: String, _ parser: inout ScenarioParser) -> Node? {
        if let value = value(key) { return value }
        parser.report(node, path(key), "is required")
        return nil
    }
}
