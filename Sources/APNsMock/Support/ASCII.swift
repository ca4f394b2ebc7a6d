/// Byte-level ASCII helpers for the hot path, where building a `String` only to inspect it would cost more
/// than the check itself.
enum ASCII {
    static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func hasSuffix(_ bytes: UnsafeBufferPointer<UInt8>, _ suffix: String) -> Bool {
        var suffix = suffix
        return suffix.withUTF8 { suffix in
            guard bytes.count >= suffix.count else { return false }
            return UnsafeBufferPointer(rebasing: bytes[(bytes.count - suffix.count)...]).elementsEqual(suffix)
        }
    }
}
