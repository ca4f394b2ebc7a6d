/// Times and durations as the admin API accepts them in query strings: the scenario files' grammar
/// (`ScenarioTimeSyntax`), so a test writes `5s` or `2026-11-22T03:20:00Z` the same way everywhere.
package enum AdminTime {
    /// `1732245600123` (milliseconds since the epoch), `2026-11-22T03:20:00Z` / `…00.123Z`, `now`, or a time
    /// relative to now (`-30s`, `-5m`).
    package static func milliseconds(_ text: String, now: Int64 = WallClock.milliseconds()) -> Int64? {
        ScenarioTimeSyntax.parseTime(text, relativeTo: now)
    }

    /// `5s`, `500ms`, `2m`, `1m30s` (the scenario grammar, not negative), or a bare number of seconds (`1.5`). At
    /// most a year, so no conversion can overflow.
    package static func duration(_ text: String) -> Duration? {
        let milliseconds: Double
        if let seconds = Double(text) {
            milliseconds = (seconds * 1000).rounded()
        } else if !text.hasPrefix("-"), !text.hasPrefix("+"), case .success(let parsed) = ScenarioTimeSyntax.parseSignedDuration(text) {
            milliseconds = Double(parsed)
        } else {
            return nil
        }
        guard milliseconds >= 0, milliseconds.isFinite, milliseconds <= 365 * 24 * 3600 * 1000 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }
}
