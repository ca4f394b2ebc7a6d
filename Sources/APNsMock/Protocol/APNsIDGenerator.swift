/// Makes `apns-id` and `apns-unique-id` values quickly.
///
/// `UUID()` on Linux reads `/dev/urandom` on every call, which showed up in profiles of the hot path.
/// These IDs need to be unique, not secret, so a xoshiro256** generator seeded once from the system's
/// random source is enough. One generator per connection, so no locking.
package struct APNsIDGenerator: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    package init() {
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

    /// A canonical 8-4-4-4-12 version-4 UUID string. APNs sends `apns-id` in upper case and `apns-unique-id` in
    /// lower case.
    package mutating func next(uppercase: Bool) -> String {
        let (high, low) = nextUUIDBits()
        return Self.format(high: high, low: low, uppercase: uppercase)
    }

    /// A new ID as its 128 bits, written out only when needed (see `APNsResponse.ID`).
    package mutating func nextID(uppercase: Bool) -> APNsResponse.ID {
        let (high, low) = nextUUIDBits()
        return .generated(high: high, low: low, uppercase: uppercase)
    }

    /// 122 random bits as an RFC 4122 (RFC 9562) version-4 UUID: version nibble 4 (the 13th hex digit), variant
    /// bits `10` (the top of the 17th), as APNs' own IDs and clients that parse them (APNSwift) expect.
    private mutating func nextUUIDBits() -> (UInt64, UInt64) {
        let high = nextWord() & ~0xF000 | 0x4000
        let low = nextWord() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return (high, low)
    }

    /// Bytes in the 8-4-4-4-12 text.
    package static let textLength = 36

    /// The 8-4-4-4-12 text of a 128-bit value.
    package static func format(high: UInt64, low: UInt64, uppercase: Bool) -> String {
        String(unsafeUninitializedCapacity: textLength) { buffer in
            write(high: high, low: low, uppercase: uppercase, into: buffer)
            return textLength
        }
    }

    /// Writes the 8-4-4-4-12 text of a 128-bit value into the first `textLength` bytes of `buffer`.
    ///
    /// Eight digits at a time in one 64-bit register (`HexDigits.eight`): two IDs go into every answer, and writing
    /// them a digit at a time showed in profiles.
    package static func write(high: UInt64, low: UInt64, uppercase: Bool, into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= textLength)
        let out = UnsafeMutableRawPointer(buffer.baseAddress!)
        let gap = HexDigits.letterGap(uppercase: uppercase)
        let second = HexDigits.eight(UInt32(truncatingIfNeeded: high), gap: gap)
        let third = HexDigits.eight(UInt32(truncatingIfNeeded: low >> 32), gap: gap)
        // Overlapping stores, in this order, leave 8 digits, 4, 4, 4 and 12; the dashes go in last.
        out.storeBytes(of: HexDigits.eight(UInt32(truncatingIfNeeded: high >> 32), gap: gap), toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: second, toByteOffset: 9, as: UInt64.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: second >> 32), toByteOffset: 14, as: UInt32.self)
        out.storeBytes(of: third, toByteOffset: 19, as: UInt64.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: third >> 32), toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: HexDigits.eight(UInt32(truncatingIfNeeded: low), gap: gap), toByteOffset: 28, as: UInt64.self)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 8, as: UInt8.self)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 13, as: UInt8.self)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 18, as: UInt8.self)
        out.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 23, as: UInt8.self)
    }
}
