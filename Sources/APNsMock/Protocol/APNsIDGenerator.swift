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

    /// A new ID as its 128 bits and its text, so a recording can keep the bits without parsing the text.
    mutating func nextWithBits(uppercase: Bool) -> (text: String, high: UInt64, low: UInt64) {
        let high = nextWord()
        let low = nextWord()
        return (Self.format(high: high, low: low, uppercase: uppercase), high, low)
    }

    /// The 8-4-4-4-12 text of a 128-bit value.
    public static func format(high: UInt64, low: UInt64, uppercase: Bool) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            digits.withUTF8Buffer { table in
                for position in 0..<32 {
                    if position == 8 || position == 12 || position == 16 || position == 20 {
                        buffer[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    let word = position < 16 ? high : low
                    let shift = UInt64(60 - (position % 16) * 4)
                    buffer[index] = table[Int((word >> shift) & 0xF)]
                    index += 1
                }
            }
            return 36
        }
    }
}
