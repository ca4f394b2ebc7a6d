/// JSON tokens of bounded length (names, numbers, times, IDs, hexadecimal) written straight through a pointer into
/// scratch space, which `JSONWriter.bounded(atMost:_:)` then appends to its output at once.
///
/// Each append to an `Array` checks the array's uniqueness (a call into the runtime) and its capacity: a
/// recording's line is about a hundred tokens, and those checks cost the record file's writer more than the bytes.
/// Here the room a token needs is checked once per token, against the end of the scratch space (a stop, not a
/// write past it, if a caller's bound was wrong).
package struct BoundedJSONWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var cursor: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    /// As `JSONWriter`'s: whether the next member or element needs a comma before it.
    var needsComma: Bool

    init(_ scratch: UnsafeMutableBufferPointer<UInt8>, needsComma: Bool) {
        start = scratch.baseAddress!
        cursor = start
        end = start + scratch.count
        self.needsComma = needsComma
    }

    /// Bytes written so far.
    var count: Int { cursor - start }

    package mutating func beginObject() {
        reserve(2)
        separate()
        put(UInt8(ascii: "{"))
        needsComma = false
    }

    package mutating func endObject() {
        reserve(1)
        put(UInt8(ascii: "}"))
        needsComma = true
    }

    /// A member's name; its value is the next thing written.
    package mutating func key(_ name: StaticString) {
        string(static: name)
        reserve(1)
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A literal string that needs no escaping (checked by the caller).
    package mutating func string(static value: StaticString) {
        reserve(value.utf8CodeUnitCount + 3)
        separate()
        put(UInt8(ascii: "\""))
        put(value)
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    package mutating func uint(_ value: UInt64) {
        reserve(21)
        separate()
        putDigits(value)
        needsComma = true
    }

    package mutating func int(_ value: Int64) {
        reserve(21)
        separate()
        if value < 0 { put(UInt8(ascii: "-")) }
        putDigits(value.magnitude)
        needsComma = true
    }

    package mutating func bool(_ value: Bool) {
        value ? literal("true") : literal("false")
    }

    package mutating func null() {
        literal("null")
    }

    /// A time as an ISO 8601 string (see `ISO8601Time`).
    package mutating func iso8601(milliseconds: Int64) {
        quoted(count: ISO8601Time.maximumLength) { ISO8601Time.write(milliseconds: milliseconds, to: $0) }
    }

    /// As `iso8601(milliseconds:)`, the second's text taken from `memo` when it is the same.
    package mutating func iso8601(milliseconds: Int64, memo: inout ISO8601Time.SecondMemo) {
        quoted(count: ISO8601Time.maximumLength) { ISO8601Time.write(milliseconds: milliseconds, to: $0, memo: &memo) }
    }

    /// A generated ID as its UUID text.
    package mutating func uuid(high: UInt64, low: UInt64, uppercase: Bool) {
        quoted(count: APNsIDGenerator.textLength) { out in
            APNsIDGenerator.write(high: high, low: low, uppercase: uppercase, into: UnsafeMutableBufferPointer(start: out, count: APNsIDGenerator.textLength))
            return APNsIDGenerator.textLength
        }
    }

    /// A string of `prefix` then `bytes` in hexadecimal (a device token, its path).
    package mutating func hexString(prefix: StaticString, bytes: UnsafeRawBufferPointer, uppercase: Bool) {
        quoted(count: prefix.utf8CodeUnitCount + 2 * bytes.count) { out in
            let prefixCount = prefix.withUTF8Buffer { text in
                if let base = text.baseAddress { out.update(from: base, count: text.count) }
                return text.count
            }
            HexDigits.write(bytes, uppercase: uppercase, to: out + prefixCount)
            return prefixCount + 2 * bytes.count
        }
    }

    // MARK: Bytes

    /// A string of at most `count` bytes that need no escaping, written by `body` (which returns how many).
    @inline(__always)
    private mutating func quoted(count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        reserve(count + 3)
        separate()
        put(UInt8(ascii: "\""))
        cursor += body(cursor)
        put(UInt8(ascii: "\""))
        needsComma = true
    }

    @inline(__always)
    private mutating func literal(_ text: StaticString) {
        reserve(text.utf8CodeUnitCount + 1)
        separate()
        put(text)
        needsComma = true
    }

    @inline(__always)
    private func reserve(_ count: Int) {
        precondition(end - cursor >= count, "BoundedJSONWriter: more than its bound")
    }

    @inline(__always)
    private mutating func separate() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        cursor.pointee = byte
        cursor += 1
    }

    @inline(__always)
    private mutating func put(_ text: StaticString) {
        // Not `utf8Start`: a one-character literal has no pointer.
        text.withUTF8Buffer { bytes in
            guard let base = bytes.baseAddress else { return }
            cursor.update(from: base, count: bytes.count)
            cursor += bytes.count
        }
    }

    /// Decimal digits, written from the last.
    @inline(__always)
    private mutating func putDigits(_ value: UInt64) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var remaining = value
        for index in stride(from: digits - 1, through: 0, by: -1) {
            cursor[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
        }
        cursor += digits
    }
}
