/// Bytes as hexadecimal text, eight digits per 64-bit store: device tokens (a record file writes two per line),
/// generated IDs, a store's binary columns. One table-free writer instead of a digit table in each.
package enum HexDigits {
    /// Writes the `2 * bytes.count` digits of `bytes` at `out`, most significant nibble of each byte first.
    package static func write(_ bytes: UnsafeRawBufferPointer, uppercase: Bool, to out: UnsafeMutableRawPointer) {
        let gap = letterGap(uppercase: uppercase)
        var index = 0
        while index + 4 <= bytes.count {
            let word = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self))
            out.storeBytes(of: eight(word, gap: gap), toByteOffset: 2 * index, as: UInt64.self)
            index += 4
        }
        while index < bytes.count {
            let byte = UInt64(bytes[index])
            out.storeBytes(of: digit(byte >> 4, gap: gap), toByteOffset: 2 * index, as: UInt8.self)
            out.storeBytes(of: digit(byte & 0x0F, gap: gap), toByteOffset: 2 * index + 1, as: UInt8.self)
            index += 1
        }
    }

    /// What a digit of 10 or more adds on top of `"0" + value`: 7 for "A"…, 39 for "a"….
    @inline(__always)
    package static func letterGap(uppercase: Bool) -> UInt64 { uppercase ? 7 : 39 }

    /// The 8 hex digits of `value`, most significant first in memory (stored as one little-endian `UInt64`).
    @inline(__always)
    package static func eight(_ value: UInt32, gap: UInt64) -> UInt64 {
        // One nibble per byte, most significant first: 0x12345678 -> 0x0102030405060708.
        var spread = UInt64(value)
        spread = (spread & 0xFFFF_0000) << 16 | (spread & 0x0000_FFFF)
        spread = (spread & 0x0000_FF00_0000_FF00) << 8 | (spread & 0x0000_00FF_0000_00FF)
        spread = (spread & 0x00F0_00F0_00F0_00F0) << 4 | (spread & 0x000F_000F_000F_000F)
        // 1 in each byte whose nibble is 10 or more (nibble + 6 reaches bit 4), else 0.
        let isLetter = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        let ascii = spread &+ 0x3030_3030_3030_3030 &+ isLetter &* gap
        // Stored as is, the most significant byte must land first in memory.
        return UInt64(bigEndian: ascii)
    }

    /// The digit of one nibble (0…15); `gap` from `letterGap(uppercase:)`.
    @inline(__always)
    package static func digit(_ nibble: UInt64, gap: UInt64) -> UInt8 {
        UInt8(truncatingIfNeeded: 0x30 + nibble + (nibble >= 10 ? gap : 0))
    }
}
