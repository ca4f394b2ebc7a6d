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
    /// A byte (two digits) per step from a 512-byte table: a digit per step with a branch for each dash was
    /// over 1% of a request in profiles, for two IDs per answer.
    package static func write(high: UInt64, low: UInt64, uppercase: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= textLength)
        let table = uppercase ? upperPairs : lowerPairs
        table.withUnsafeBufferPointer { pairs in
            let out = buffer.baseAddress!
            // Byte i of the 16 lands at this offset: after 4, 6, 8 and 10 bytes comes a dash.
            func put(_ word: UInt64, bytes: Range<Int>, base: Int) {
                for index in bytes {
                    let byte = Int(truncatingIfNeeded: word >> UInt64(56 - (index - base) * 8)) & 0xFF
                    let offset = 2 * index + (index >= 4 ? 1 : 0) + (index >= 6 ? 1 : 0) + (index >= 8 ? 1 : 0) + (index >= 10 ? 1 : 0)
                    out[offset] = pairs[2 * byte]
                    out[offset + 1] = pairs[2 * byte + 1]
                }
            }
            put(high, bytes: 0..<8, base: 0)
            put(low, bytes: 8..<16, base: 8)
            out[8] = UInt8(ascii: "-")
            out[13] = UInt8(ascii: "-")
            out[18] = UInt8(ascii: "-")
            out[23] = UInt8(ascii: "-")
        }
    }

    private static let upperPairs = pairs("0123456789ABCDEF")
    private static let lowerPairs = pairs("0123456789abcdef")

    /// The two digits of every byte value, in order: `00 01 … FF`.
    private static func pairs(_ digits: String) -> [UInt8] {
        let digits = Array(digits.utf8)
        return (0..<256).flatMap { [digits[$0 >> 4], digits[$0 & 0xF]] }
    }
}
