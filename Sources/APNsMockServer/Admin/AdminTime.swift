import Foundation

/// Times and durations as the admin API accepts them in query strings.
enum AdminTime {
    /// `1732245600123` (milliseconds since the epoch) or `2026-11-22T03:20:00Z` / `…00.123Z`.
    static func milliseconds(_ text: String) -> Int64? {
        if let millis = Int64(text) { return millis }
        if let date = try? Date(text, strategy: .iso8601) { return Int64(date.timeIntervalSince1970 * 1000) }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return Int64(date.timeIntervalSince1970 * 1000)
        }
        return nil
    }

    /// `5s`, `500ms`, `2m`, or a bare number of seconds (`1.5`).
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(text.dropLast(suffix.count)), number >= 0, number.isFinite else { return nil }
            return .milliseconds(Int64(number * scale * 1000))
        }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64(seconds * 1000))
    }
}
