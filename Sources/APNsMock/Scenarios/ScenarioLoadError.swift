/// One problem in a scenario file, printed as `source:line:column: field: message`.
package struct ScenarioProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file path, or a label such as `PUT /admin/scenario`.
    package var source: String
    /// 1-based; `nil` when the problem has no position (an unreadable file).
    package var line: Int?
    package var column: Int?
    /// Where in the scenario, e.g. `rules[2].match.tokenRegex`; `nil` for YAML syntax errors.
    package var field: String?
    package var message: String

    package init(source: String, line: Int?, column: Int?, field: String?, message: String) {
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    package var description: String {
        var text = source
        if let line { text += ":\(line)" }
        if let column { text += ":\(column)" }
        text += ": "
        if let field { text += "\(field): " }
        return text + message
    }
}

/// Every problem found in a scenario, in file order; loading reports them all, not only the first.
package struct ScenarioLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    package var problems: [ScenarioProblem]

    package init(problems: [ScenarioProblem]) {
        self.problems = problems
    }

    /// One problem per line.
    package var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
