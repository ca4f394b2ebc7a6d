import Foundation

/// Times and durations as the admin API accepts them in query strings.
enum AdminTime {
    /// `1732245600123` (milliseconds since the epoch) or `2026-11-22T03:20:00Z` / `…00.123Z`.
    static func milliseconds(_ text: String) -> Int64? {
        if let millis = Int64(text) { return millis }
        if let date = try? Date(text, strategy: .iso8601) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            // Rounded: a Double holding .002 s can be 0.00199…, which truncation would make 1 ms early.
            return Int64((date.timeIntervalSince1970 * 1000).rounded())
        }
        return nil
    }

    /// `5s`, `500ms`, `2m`, or a bare number of seconds (`1.5`). At most a year, so no conversion can overflow.
    static func duration(_ text: String) -> Duration? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60)]
        var number = Double(text)
        var scale = 1.0
        for (suffix, unitScale) in units where number == nil && text.hasSuffix(suffix) {
            number = Double(text.dropLast(suffix.count))
            scale = unitScale
        }
        guard let number, number >= 0, number.isFinite else { return nil }
        let milliseconds = (number * scale * 1000).rounded()
        guard milliseconds <= 365 * 24 * 3600 * 1000 else { return nil }
        return .milliseconds(Int64(milliseconds))
    }
}
