/// UTC times as ISO 8601 text, `2026-11-22T03:01:09.612Z`, exact to the millisecond.
///
/// Computed from the day count (Howard Hinnant's civil-from-days), not through `Date.formatted`: it runs for
/// every line of a record file, and Foundation's formatter cost more than the rest of the line.
package enum ISO8601Time {
    /// Room for the longest text: `Int64`'s earliest millisecond is in the year -292,275,055 (a sign and nine
    /// digits, then 20 bytes).
    package static let maximumLength = 32

    package static func format(milliseconds: Int64) -> String {
        String(unsafeUninitializedCapacity: maximumLength) { buffer in write(milliseconds: milliseconds, to: buffer.baseAddress!) }
    }

    /// Writes the text's bytes (no quotes) at `out`, which has room for `maximumLength`; returns how many.
    package static func write(milliseconds: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        let count = write(second: seconds, to: out)
        return count + write(millisecond: millis, to: out + count)
    }

    /// `2026-11-22T03:01:09.`: the second's part, up to the milliseconds.
    private static func write(second seconds: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        var count = write(year, width: 4, to: out)
        func put(_ byte: UInt8, then value: Int64) {
            out[count] = byte
            count += 1 + write(value, width: 2, to: out + count + 1)
        }
        put(UInt8(ascii: "-"), then: Int64(month))
        put(UInt8(ascii: "-"), then: Int64(day))
        put(UInt8(ascii: "T"), then: secondOfDay / 3600)
        put(UInt8(ascii: ":"), then: secondOfDay % 3600 / 60)
        put(UInt8(ascii: ":"), then: secondOfDay % 60)
        out[count] = UInt8(ascii: ".")
        return count + 1
    }

    /// `612Z`.
    private static func write(millisecond: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let count = write(millisecond, width: 3, to: out)
        out[count] = UInt8(ascii: "Z")
        return count + 1
    }

    /// The text of the most recent second (`2026-11-22T03:01:09.`), for a writer of many times in a row (the record
    /// file): only the milliseconds are written per time.
    package struct SecondMemo: Sendable {
        var second = Int64.min
        var text: [UInt8] = []

        package init() {}
    }

    /// As `write(milliseconds:to:)`, the date and time of day taken from `memo` when the second is the same.
    package static func write(milliseconds: Int64, to out: UnsafeMutablePointer<UInt8>, memo: inout SecondMemo) -> Int {
        let (seconds, millis) = floorDivide(milliseconds, 1000)
        if seconds != memo.second {
            memo.text = Array(UnsafeBufferPointer(start: out, count: write(second: seconds, to: out)))
            memo.second = seconds
        }
        let prefix = memo.text.count
        memo.text.withUnsafeBufferPointer { out.update(from: $0.baseAddress!, count: prefix) }
        return prefix + write(millisecond: millis, to: out + prefix)
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

    /// Writes decimal digits, zero-padded to `width`, at `out`; returns how many bytes.
    private static func write(_ value: Int64, width: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            count = 1
        }
        var digits = 1
        var rest = value.magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let padded = max(width, digits)
        var magnitude = value.magnitude
        for index in stride(from: count + padded - 1, through: count, by: -1) {
            out[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        }
        return count + padded
    }
}
