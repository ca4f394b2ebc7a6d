import Foundation

/// The one duration and time grammar of apns-mock: scenario files, the admin API's query parameters and the CLI
/// all read `200ms`, `10s`, `1m30s`, `2h`, `-2d`, `+30s`, `1.5s`, and ISO 8601 times.
package enum ScenarioTimeSyntax {
    private static let units: [(suffix: String, milliseconds: Double)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
    ]

    /// A signed duration in whole milliseconds, or a message saying what is wrong.
    package static func parseSignedDuration(_ text: String) -> Result<Int64, SyntaxError> {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        var sign: Int64 = 1
        if rest.first == "-" {
            sign = -1
            rest = rest.dropFirst()
        } else if rest.first == "+" {
            rest = rest.dropFirst()
        }
        guard !rest.isEmpty else { return .failure(SyntaxError("'\(text)' is not a duration")) }
        if rest == "0" { return .success(0) }
        var total = 0.0
        while !rest.isEmpty {
            let number = rest.prefix(while: { $0.isASCII && ($0.isNumber || $0 == ".") })
            guard !number.isEmpty, let value = Double(number) else {
                return .failure(SyntaxError("'\(text)' is not a duration; write e.g. 200ms, 10s, 1m30s, 2h or 2d"))
            }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix(while: { $0.isLetter })
            guard !unitText.isEmpty else {
                return .failure(SyntaxError("'\(text)' has no unit; write ms, s, m, h or d after the number"))
            }
            guard let unit = units.first(where: { $0.suffix == unitText }) else {
                return .failure(SyntaxError("'\(text)' has unknown unit '\(unitText)'; use ms, s, m, h or d"))
            }
            rest = rest.dropFirst(unitText.count)
            total += value * unit.milliseconds
        }
        guard total.rounded() == total else {
            return .failure(SyntaxError("'\(text)' is not a whole number of milliseconds"))
        }
        guard total < 9.0e15 else { return .failure(SyntaxError("'\(text)' is too long")) }
        return .success(sign * Int64(total))
    }

    /// Milliseconds since the epoch from an ISO 8601 date such as `2025-01-31T12:00:00Z` or `…00.123Z`.
    package static func parseISO8601(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        return nil
    }

    /// A time as text, resolved now: milliseconds since the epoch (`1700000000000`), an ISO 8601 date, `now`, or a
    /// signed duration from `base` (`-2d`, `+30s`). The scenario files' forms, for the admin API.
    package static func parseTime(_ text: String, relativeTo base: Int64) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let milliseconds = Int64(trimmed), milliseconds >= 0 { return milliseconds }
        if trimmed == "now" { return base }
        if let milliseconds = parseISO8601(trimmed) { return milliseconds }
        if case .success(let offset) = parseSignedDuration(trimmed) { return base + offset }
        return nil
    }

    /// `90000` → `1m30s`, `1500` → `1s500ms`: a form that parses back to the same value.
    package static func format(milliseconds: Int64) -> String {
        if milliseconds == 0 { return "0s" }
        var rest = milliseconds.magnitude
        var text = milliseconds < 0 ? "-" : ""
        for unit in units.reversed() {
            let size = UInt64(unit.milliseconds)
            let count = rest / size
            if count > 0 {
                text += "\(count)\(unit.suffix)"
                rest -= count * size
            }
        }
        return text
    }

    package struct SyntaxError: Error {
        package var message: String
        init(_ message: String) { self.message = message }
    }
}
