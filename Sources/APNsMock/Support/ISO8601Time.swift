/// UTC times as ISO 8601 text, `2026-11-22T03:01:09.612Z`, exact to the millisecond.
///
/// Computed from the day count (Howard Hinnant's civil-from-days), not through `Date.formatted`: it runs for
/// every line of a record file, and Foundation's formatter cost more than the rest of the line.
public enum ISO8601Time {
    public static func format(milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(milliseconds: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the text's bytes (no quotes).
    public static func append(milliseconds: Int64, to bytes: inout [UInt8]) {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        append(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(Int64(month), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(Int64(day), width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        append(secondOfDay / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay % 3600 / 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(secondOfDay % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        append(millis, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The text of the most recent second (`2026-11-22T03:01:09.`), for a writer of many times in a row (the record
    /// file): only the milliseconds are written per time.
    package struct SecondMemo: Sendable {
        var second = Int64.min
        var text: [UInt8] = []

        package init() {}
    }

    /// As `append(milliseconds:to:)`, the date and time of day taken from `memo` when the second is the same.
    package static func append(milliseconds: Int64, to bytes: inout [UInt8], memo: inout SecondMemo) {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        if seconds != memo.second {
            memo.text.removeAll(keepingCapacity: true)
            append(milliseconds: seconds * 1000, to: &memo.text)
            memo.text.removeLast(4)  // "000Z"
            memo.second = seconds
        }
        bytes.append(contentsOf: memo.text)
        append(millis, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Year, month (1–12) and day (1–31) of a day count from 1970-01-01, in the proleptic Gregorian calendar.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Decimal digits, zero-padded to `width`.
    private static func append(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for _ in count..<max(width, count) { bytes.append(UInt8(ascii: "0")) }
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
