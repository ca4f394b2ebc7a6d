/// Makes `apns-id` and `apns-unique-id` values quickly.
///
/// `UUID()` on Linux reads `/dev/urandom` on every call, which showed up in profiles of the hot path.
/// These IDs need to be unique, not secret, so a xoshiro256** generator seeded once from the system's
/// random source is enough. One generator per connection, so no locking.
public struct APNsIDGenerator: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    public init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: (system.next(), system.next(), system.next(), system.next()))
    }

    init(seed: (UInt64, UInt64, UInt64, UInt64)) {
        // xoshiro must not start from all zeroes.
        state = seed == (0, 0, 0, 0) ? (1, 2, 3, 4) : seed
    }

    private mutating func nextWord() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, 7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = rotateLeft(state.3, 45)
        return result
    }

    private func rotateLeft(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// A canonical 8-4-4-4-12 UUID string. APNs sends `apns-id` in upper case and `apns-unique-id` in lower case.
    public mutating func next(uppercase: Bool) -> String {
        Self.format(high: nextWord(), low: nextWord(), uppercase: uppercase)
    }

    /// A new ID as its 128 bits, written out only when needed (see `APNsResponse.ID`).
    package mutating func nextID(uppercase: Bool) -> APNsResponse.ID {
        .generated(high: nextWord(), low: nextWord(), uppercase: uppercase)
    }

    /// Bytes in the 8-4-4-4-12 text.
    package static let textLength = 36

    /// The 8-4-4-4-12 text of a 128-bit value.
    public static func format(high: UInt64, low: UInt64, uppercase: Bool) -> String {
        String(unsafeUninitializedCapacity: textLength) { buffer in
            write(high: high, low: low, uppercase: uppercase, into: buffer)
            return textLength
        }
    }

    /// Writes the 8-4-4-4-12 text of a 128-bit value into the first `textLength` bytes of `buffer`.
    ///
    /// Straight-line and branch-free per digit: two IDs per answer, and a digit-by-digit loop with a table and a
    /// branch per dash was 1–2% of a request in profiles.
    package static func write(high: UInt64, low: UInt64, uppercase: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= textLength)
        let out = buffer.baseAddress!
        // Digits 10–15 are "0" + value + 7 ("A"…) or + 39 ("a"…).
        let letterGap: UInt8 = uppercase ? 7 : 39
        @inline(__always) func digit(_ nibble: UInt64) -> UInt8 {
            let value = UInt8(truncatingIfNeeded: nibble & 0xF)
            // 0xFF when value > 9, else 0.
            let isLetter = UInt8(truncatingIfNeeded: (9 &- Int(value)) >> 8)
            return value &+ UInt8(ascii: "0") &+ (isLetter & letterGap)
        }
        // High word: 8 digits, dash, 4, dash, 4; low word: 4, dash, 12.
        for index in 0..<16 {
            let offset = index + (index >= 8 ? 1 : 0) + (index >= 12 ? 1 : 0)
            out[offset] = digit(high >> UInt64(60 - 4 * index))
        }
        for index in 0..<16 {
            let offset = 19 + index + (index >= 4 ? 1 : 0)
            out[offset] = digit(low >> UInt64(60 - 4 * index))
        }
        out[8] = UInt8(ascii: "-")
        out[13] = UInt8(ascii: "-")
        out[18] = UInt8(ascii: "-")
        out[23] = UInt8(ascii: "-")
    }
}
