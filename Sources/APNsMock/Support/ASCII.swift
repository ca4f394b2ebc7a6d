#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Byte-level ASCII helpers for the hot path, where building a `String` only to inspect it would cost more
/// than the check itself.
enum ASCII {
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// A `StaticString` and `memcmp`: with a `String` suffix and `elementsEqual`, checking a topic against
    /// every push type's suffix was 2% of a request in profiles.
    static func hasSuffix(_ text: String, _ suffix: StaticString) -> Bool {
        var text = text
        return text.withUTF8 { hasSuffix($0, suffix) }
    }

    static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard bytes.count >= count, let base = bytes.baseAddress else { return count == 0 }
        return memcmp(base + (bytes.count - count), suffix.utf8Start, count) == 0
    }
}
