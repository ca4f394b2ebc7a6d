/// One problem in a scenario file, printed as `source:line:column: field: message`.
public struct ScenarioProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file path, or a label such as `PUT /admin/scenario`.
    public var source: String
    /// 1-based; `nil` when the problem has no position (an unreadable file).
    public var line: Int?
    public var column: Int?
    /// Where in the scenario, e.g. `rules[2].match.tokenRegex`; `nil` for YAML syntax errors.
    public var field: String?
    public var message: String

    public init(source: String, line: Int?, column: Int?, field: String?, message: String) {
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    public var description: String {
        var text = source
        if let line { text += ":\(line)" }
        if let column { text += ":\(column)" }
        text += ": "
        if let field { text += "\(field): " }
        return text + message
    }
}

/// Every problem found in a scenario, in file order; loading reports them all, not only the first.
public struct ScenarioLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [ScenarioProblem]

    public init(problems: [ScenarioProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
