/// `waitForNotifications` gave up: fewer recordings than asked for matched before the timeout.
///
/// Its description says what did arrive, so a failing test shows what the provider really sent.
public struct NotificationWaitTimeout: Error, Sendable, CustomStringConvertible {
    /// How many were awaited.
    public var expected: Int
    /// What the recordings had to match.
    public var filter: NotificationFilter
    /// How long the wait lasted.
    public var timeout: Duration
    /// The recordings that did match.
    public var matched: [MockRecording]
    /// The newest recordings of all (up to 20), matching or not, oldest first.
    public var recent: [MockRecording]
    /// How many recordings the mock holds in all.
    public var totalReceived: Int

    /// A timeout with what was awaited and what arrived.
    public init(expected: Int, filter: NotificationFilter, timeout: Duration, matched: [MockRecording], recent: [MockRecording], totalReceived: Int) {
        self.expected = expected
        self.filter = filter
        self.timeout = timeout
        self.matched = matched
        self.recent = recent
        self.totalReceived = totalReceived
    }

    public var description: String {
        var lines = ["timed out after \(timeout) waiting for \(expected) notification(s) matching \(filter): \(matched.count) matched"]
        lines += matched.map { "  matched: \($0)" }
        if totalReceived == 0 {
            lines.append("the mock received nothing")
        } else {
            let shown = recent.count < totalReceived ? "the newest \(recent.count)" : "all"
            lines.append("the mock received \(totalReceived) in all; \(shown):")
            lines += recent.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

/// `setScenario(yaml:)` refused the scenario; the previous one stays in force.
public struct ScenarioRejected: Error, Sendable, CustomStringConvertible {
    /// One thing wrong with the scenario, with where it is.
    public struct Problem: Sendable, Hashable, Decodable, CustomStringConvertible {
        /// Where the text came from (`PUT /admin/scenario`, a file name).
        public var source: String
        /// 1-based line, when known.
        public var line: Int?
        /// 1-based column, when known.
        public var column: Int?
        /// The field (`rules[0].match.token`), when known.
        public var field: String?
        /// What is wrong there.
        public var message: String

        /// A problem at a place in the scenario's text.
        public init(source: String, line: Int?, column: Int?, field: String?, message: String) {
            self.source = source
            self.line = line
            self.column = column
            self.field = field
            self.message = message
        }

        /// `source:line:column: field: message`.
        public var description: String {
            var text = source
            if let line { text += ":\(line)" + (column.map { ":\($0)" } ?? "") }
            if let field { text += ": \(field)" }
            return text + ": " + message
        }
    }

    /// Every problem the mock found, in the order of the text.
    public var problems: [Problem]

    /// A refusal with these problems.
    public init(problems: [Problem]) {
        self.problems = problems
    }

    public var description: String {
        "the scenario is not valid; the previous one stays in force:\n" + problems.map { "  " + $0.description }.joined(separator: "\n")
    }
}

/// The admin API answered with an error (bad input, a missing device, a wrong admin token).
public struct AdminRequestFailed: Error, Sendable, CustomStringConvertible {
    /// `GET /admin/notifications`, …
    public var request: String
    /// The HTTP status, or 0 when there was no answer.
    public var status: Int
    /// The answer's `error`, or the body.
    public var message: String
    /// The query parameter or body field the error is about, when the answer names one.
    public var parameter: String?

    /// A failed admin request: the request, the status it got and why.
    public init(request: String, status: Int, message: String, parameter: String? = nil) {
        self.request = request
        self.status = status
        self.message = message
        self.parameter = parameter
    }

    public var description: String {
        "\(request) failed (\(status)): " + (parameter.map { "\($0): " } ?? "") + message
    }
}
