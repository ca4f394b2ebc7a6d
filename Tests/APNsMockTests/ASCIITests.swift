import Testing

@testable import APNsMock

@Suite("ASCII")
struct ASCIITests {
    /// The byte-at-a-time answer `hexDigits` must match.
    private static func reference(_ bytes: [UInt8]) -> ASCII.HexDigits {
        var result = ASCII.HexDigits()
        result.allHex = bytes.allSatisfy(ASCII.isHexDigit)
        guard result.allHex else { return result }
        result.hasLowercaseLetter = bytes.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f") }
        result.hasUppercaseLetter = bytes.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
        return result
    }

    private static func scan(_ bytes: [UInt8]) -> ASCII.HexDigits {
        bytes.withUnsafeBufferPointer { ASCII.hexDigits($0) }
    }

    @Test func hexDigitsOfEveryLengthAcrossTheSixteenByteChunks() {
        // Every length up to three chunks and a tail, each with a letter or an intruder at every position.
        let fillers: [UInt8] = Array("0123456789".utf8)
        let probes: [UInt8] = Array("aAfF9/:@G`g".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
        for length in 0...50 {
            let plain = (0..<length).map { fillers[$0 % fillers.count] }
            #expect(Self.scan(plain) == Self.reference(plain), "length \(length)")
            for position in 0..<length {
                for probe in probes {
                    var bytes = plain
                    bytes[position] = probe
                    #expect(Self.scan(bytes) == Self.reference(bytes), "length \(length), \(probe) at \(position)")
                }
            }
        }
    }

    /// Every byte value at every position of a word and of the tail after it, among digits and among letters of
    /// either case: the word-at-a-time scan folds case and reads bits, so any byte could be mistaken for another.
    @Test func hexDigitsWithEveryByteValueAtEveryPosition() {
        for filler in Array("0a".utf8) + Array("F".utf8) {
            for length in [8, 11, 16] {
                let plain = [UInt8](repeating: filler, count: length)
                for position in 0..<length {
                    for value in UInt8.min...UInt8.max {
                        var bytes = plain
                        bytes[position] = value
                        // The letters' cases say nothing when not all bytes are hex (the scan stops at the first other).
                        var scanned = Self.scan(bytes)
                        if !scanned.allHex { scanned = ASCII.HexDigits(allHex: false) }
                        #expect(scanned == Self.reference(bytes), "length \(length), \(value) at \(position) among \(filler)")
                    }
                }
            }
        }
    }

    @Test func hexDigitsOfTokens() {
        let lower = Array(String(repeating: "0a1b2c3d", count: 8).utf8)
        let upper = Array(String(repeating: "0A1B2C3D", count: 8).utf8)
        #expect(Self.scan(lower) == ASCII.HexDigits(allHex: true, hasLowercaseLetter: true, hasUppercaseLetter: false))
        #expect(Self.scan(upper) == ASCII.HexDigits(allHex: true, hasLowercaseLetter: false, hasUppercaseLetter: true))
        #expect(Self.scan(lower + upper) == ASCII.HexDigits(allHex: true, hasLowercaseLetter: true, hasUppercaseLetter: true))
        #expect(!Self.scan(lower + Array("x".utf8)).allHex)
    }

    @Test func staticSuffixes() {
        #expect(ASCII.hasSuffix("com.example.app.voip", ".voip"))
        #expect(!ASCII.hasSuffix("com.example.app", ".voip"))
        #expect(!ASCII.hasSuffix("voip", ".voip"))
        #expect(ASCII.hasSuffix(".voip", ".voip"))
        #expect(ASCII.hasSuffix("", ""))
        #expect(!ASCII.hasSuffix("", ".voip"))
        #expect(!ASCII.hasSuffix("com.example.app.VOIP", ".voip"))
    }

    /// `sameBytes` reads short runs as words: every length around the word sizes, at unaligned addresses, with
    /// each byte changed in turn.
    @Test func sameBytesOfEveryShortLength() {
        let source = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for length in 0...40 {
            for offset in 0..<3 {
                // Different bytes after the run on each side: nothing past `count` may count.
                let left = Array(source[offset..<(offset + length)]) + [0xAA]
                var right = [UInt8](repeating: 0, count: 3) + left.dropLast() + [0x55]
                #expect(Self.same(left, 0, right, 3, length), "length \(length) at offset \(offset)")
                for index in 0..<length {
                    right[3 + index] ^= 0x80
                    #expect(!Self.same(left, 0, right, 3, length), "length \(length), byte \(index) changed")
                    right[3 + index] ^= 0x80
                }
            }
        }
    }

    private static func same(_ a: [UInt8], _ aStart: Int, _ b: [UInt8], _ bStart: Int, _ count: Int) -> Bool {
        a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in ASCII.sameBytes(a.baseAddress! + aStart, b.baseAddress! + bStart, count: count) }
        }
    }

    @Test func byteEquality() {
        func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in ASCII.equal(a, b) } }
        }
        let token = Array(String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 10).utf8)
        #expect(equal(token, token))
        #expect(equal([], []))
        #expect(!equal(token, Array(token.dropLast())))
        #expect(!equal([], [0]))
        for index in token.indices {
            var changed = token
            changed[index] ^= 1
            #expect(!equal(token, changed), "byte \(index)")
        }
    }

    /// Equal but for the case of ASCII letters, at every position and length; other bytes (digits, punctuation,
    /// the bytes of non-ASCII text) only when the same.
    @Test func equalIgnoringCaseFoldsASCIILettersOnly() {
        #expect(ASCII.equalIgnoringCase("com.Example.APP", "COM.example.app"))
        #expect(ASCII.equalIgnoringCase("", ""))
        #expect(!ASCII.equalIgnoringCase("com.example.app", "com.example.ap"))
        #expect(!ASCII.equalIgnoringCase("com.example.app", "com.example.apq"))
        #expect(!ASCII.equalIgnoringCase("a@", "a`"), "@ and ` are 0x40 and 0x60: not letters")
        #expect(!ASCII.equalIgnoringCase("[", "{"))
        #expect(!ASCII.equalIgnoringCase("é", "É"), "non-ASCII letters are compared as bytes")
        #expect(ASCII.equalIgnoringCase("LiveActivity", lowercased: "liveactivity"))
        #expect(ASCII.equalIgnoringCase("LIVEACTIVITY", lowercased: "liveactivity"))
        #expect(!ASCII.equalIgnoringCase("LiveActivit", lowercased: "liveactivity"))
        #expect(!ASCII.equalIgnoringCase("LiveActivityy", lowercased: "liveactivity"))
        let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789.-".utf8)
        for length in 1...24 {
            let base = (0..<length).map { letters[$0 % letters.count] }
            for position in 0..<length {
                var upper = base
                upper[position] = ASCII.lowercase(upper[position]) == upper[position] && upper[position] >= 0x61 ? upper[position] - 0x20 : upper[position]
                var other = base
                other[position] ^= 0x01
                #expect(ASCII.equalIgnoringCase(String(decoding: base, as: UTF8.self), String(decoding: upper, as: UTF8.self)), "\(length) \(position)")
                #expect(!ASCII.equalIgnoringCase(String(decoding: base, as: UTF8.self), String(decoding: other, as: UTF8.self)), "\(length) \(position)")
            }
        }
    }
}
