#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Byte-level ASCII helpers for the hot path, where building a `String` only to inspect it would cost more
/// than the check itself.
package enum ASCII {
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `A`–`Z` as `a`–`z`; every other byte as it is.
    static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// What a run of bytes holds as hex digits. The letters' cases are known only when `allHex`: the scan stops at
    /// the first byte that is not a hex digit.
    struct HexDigits: Equatable {
        /// Every byte is a hex digit (true for no bytes).
        var allHex = true
        var hasLowercaseLetter = false
        var hasUppercaseLetter = false
    }

    /// Reads 8 bytes at a time in one register: a device token's digits are read this way on every push, and a
    /// byte at a time showed in profiles.
    /// (`SIMD16<UInt8>` was worse: its reductions ran unspecialised.)
    static func hexDigits(_ bytes: UnsafeBufferPointer<UInt8>) -> HexDigits {
        var result = HexDigits()
        guard let base = bytes.baseAddress else { return result }
        let raw = UnsafeRawPointer(base)
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        // The high bit of each byte of the result: set when that byte is in `low...highest` (both below 0x80).
        // Setting each byte's high bit first keeps the subtractions from borrowing across bytes.
        @inline(__always) func inRange(_ word: UInt64, _ low: UInt8, _ highest: UInt8) -> UInt64 {
            let atLeastLow = (word | high) &- ones &* UInt64(low)
            let aboveHighest = (word | high) &- ones &* UInt64(highest + 1)
            return atLeastLow & ~aboveHighest & ~word & high
        }
        var index = 0
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // Letters of both cases in one range, by setting the case bit (0x20) first: `A`-`F` become `a`-`f`, and
            // no other byte does. Then a letter's case is its case bit, moved to the high bit (`<< 2`).
            let letter = inRange(word | 0x2020_2020_2020_2020, UInt8(ascii: "a"), UInt8(ascii: "f"))
            let digit = inRange(word, UInt8(ascii: "0"), UInt8(ascii: "9"))
            if digit | letter != high {
                result.allHex = false
                return result
            }
            if letter & (word << 2) != 0 { result.hasLowercaseLetter = true }
            if letter & ~(word << 2) != 0 { result.hasUppercaseLetter = true }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte &- 0x61 < 6 {
                result.hasLowercaseLetter = true
            } else if byte &- 0x41 < 6 {
                result.hasUppercaseLetter = true
            } else if byte &- 0x30 >= 10 {
                result.allHex = false
                return result
            }
            index += 1
        }
        return result
    }

    /// A `StaticString` and `memcmp`: with a `String` suffix and `elementsEqual`, checking a topic against
    /// every push type's suffix, on every request, showed in profiles.
    static func hasSuffix(_ text: String, _ suffix: StaticString) -> Bool {
        withUTF8(of: text) { hasSuffix($0, suffix) }
    }

    /// Calls `body` with `text`'s UTF-8 bytes, read where they are. `String.withUTF8` is `mutating`, and the copy
    /// it needs (`var copy = text`) retained and released a string on the heap: a topic longer than 15 bytes, as
    /// most are, paid atomic reference counts on every check. Native strings (all of them here) have contiguous
    /// bytes; another string is copied.
    @inline(__always)
    static func withUTF8<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// The same bytes, compared with `memcmp`: `elementsEqual` goes a byte at a time through iterators, too slow
    /// for a provider token (some 200 bytes) compared on every request.
    static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        return sameBytes(left, right, count: a.count)
    }

    /// Whether `count` bytes at `a` and at `b` are the same: `memcmp`, except for up to 16 bytes, which are
    /// compared here as two (possibly overlapping) 8-byte words or byte by byte. Header names, a request's method
    /// and the short parts of a recording's shape are that short, and a call to `memcmp` for each, many times per
    /// push, costs more than the comparison itself.
    @inline(__always)
    package static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
        switch count {
        case 8...16:
            return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                && a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        case 0..<8:
            var index = 0
            while index < count {
                if a.load(fromByteOffset: index, as: UInt8.self) != b.load(fromByteOffset: index, as: UInt8.self) { return false }
                index += 1
            }
            return true
        default:
            return memcmp(a, b, count) == 0
        }
    }

    /// Two byte arrays, compared with `memcmp` (`==` on `[UInt8]` goes a byte at a time, and a payload is compared
    /// with the connection's last one on every request).
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.withUnsafeBufferPointer { left in b.withUnsafeBufferPointer { right in equal(left, right) } }
    }

    /// Whether two strings have the same bytes but for the case of ASCII letters (bundle IDs; Apple's push types,
    /// which it writes in more than one case). The same bytes are found first without folding: a lower-cased copy
    /// per broadcast, or a byte loop through `zip`'s iterators, showed in its profiles.
    static func equalIgnoringCase(_ a: String, _ b: String) -> Bool {
        withUTF8(of: a) { a in withUTF8(of: b) { b in equalIgnoringCase(a, b) } }
    }

    /// `text` is `lowercased` (a lower-case literal) but for the case of its ASCII letters.
    static func equalIgnoringCase(_ text: String, lowercased: StaticString) -> Bool {
        withUTF8(of: text) { equalIgnoringCase($0, UnsafeBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount)) }
    }

    static func equalIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        if sameBytes(left, right, count: a.count) { return true }
        for index in 0..<a.count where lowercase(left[index]) != lowercase(right[index]) { return false }
        return true
    }

    static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard bytes.count >= count, let base = bytes.baseAddress else { return count == 0 }
        return sameBytes(base + (bytes.count - count), suffix.utf8Start, count: count)
    }
}
