/// SplitMix64: a tiny, fast generator whose whole state is one word, so each rule can own one and a scenario's
/// random choices repeat for a given seed (and one rule's draws never shift another's).
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64, stream: UInt64) {
        // Mix the stream into the seed so neighbouring rules do not get correlated sequences.
        var mixer = SeededGenerator(rawState: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        state = mixer.next()
    }

    private init(rawState: UInt64) { state = rawState }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func nextUnitInterval() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in `low...high`.
    mutating func next(in low: Int64, _ high: Int64) -> Int64 {
        guard high > low else { return low }
        let span = UInt64(high - low) &+ 1
        if span == 0 { return Int64(bitPattern: next()) }  // the whole Int64 range
        return low + Int64(next(upperBound: span))
    }
}
