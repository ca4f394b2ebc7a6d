import Foundation
import Testing

@testable import APNsMock

/// 8-4-4-4-12 digits from `alphabet`, hyphens at 8, 13, 18 and 23.
private func isCanonical(_ id: String, alphabet: String) -> Bool {
    let characters = Array(id)
    guard characters.count == 36 else { return false }
    for (index, character) in characters.enumerated() {
        if [8, 13, 18, 23].contains(index) {
            if character != "-" { return false }
        } else if !alphabet.contains(character) {
            return false
        }
    }
    return true
}

/// What `APNsResponse.ID.withUTF8` hands its closure, as a string.
private func utf8(of id: APNsResponse.ID) -> String {
    var text = ""
    id.withUTF8 { text = String(decoding: $0, as: UTF8.self) }
    return text
}

private let upperHex = "0123456789ABCDEF"
private let lowerHex = "0123456789abcdef"

@Suite("APNsIDGenerator")
struct APNsIDGeneratorTests {
    @Test func makesUpperCase8_4_4_4_12IDs() {
        var generator = APNsIDGenerator()
        for _ in 0..<1000 {
            let id = generator.next(uppercase: true)
            #expect(isCanonical(id, alphabet: upperHex), "\(id)")
        }
    }

    @Test func makesLowerCase8_4_4_4_12IDs() {
        var generator = APNsIDGenerator()
        for _ in 0..<1000 {
            let id = generator.next(uppercase: false)
            #expect(isCanonical(id, alphabet: lowerHex), "\(id)")
        }
    }

    @Test func makesIDsTheValidatorAccepts() {
        var generator = APNsIDGenerator()
        #expect(RequestValidator.isCanonicalUUID(generator.next(uppercase: true)))
        #expect(RequestValidator.isCanonicalUUID(generator.next(uppercase: false)))
    }

    /// RFC 9562 version 4: the 13th hex digit is 4, the 17th one of 8, 9, a, b; the other 122 bits vary.
    @Test func makesVersion4UUIDsWithTheRFCVariant() {
        var generator = APNsIDGenerator()
        var seenFourteenth = Set<Character>()
        for index in 0..<10_000 {
            let id = index % 2 == 0 ? generator.next(uppercase: true) : generator.next(uppercase: false)
            let digits = Array(id.replacingOccurrences(of: "-", with: "").lowercased())
            #expect(digits[12] == "4", "\(id)")
            #expect("89ab".contains(digits[16]), "\(id)")
            seenFourteenth.insert(digits[13])
            guard case .generated(let high, let low, _) = generator.nextID(uppercase: true) else { continue }
            #expect(high >> 12 & 0xF == 4 && low >> 62 == 0b10)
        }
        #expect(seenFourteenth.count == 16, "the bits around the version stay random")
    }

    @Test func makes100000UniqueIDs() {
        var generator = APNsIDGenerator()
        var seen = Set<String>(minimumCapacity: 100_000)
        for _ in 0..<100_000 { seen.insert(generator.next(uppercase: true)) }
        #expect(seen.count == 100_000)
    }

    @Test func caseChangesOnlyTheLetters() {
        let seed: (UInt64, UInt64, UInt64, UInt64) = (11, 22, 33, 44)
        var upper = APNsIDGenerator(seed: seed)
        var lower = APNsIDGenerator(seed: seed)
        for _ in 0..<100 {
            #expect(upper.next(uppercase: true).lowercased() == lower.next(uppercase: false))
        }
    }

    @Test func repeatsTheSequenceForTheSameSeed() {
        var first = APNsIDGenerator(seed: (1, 2, 3, 4))
        var second = APNsIDGenerator(seed: (1, 2, 3, 4))
        let a = (0..<10).map { _ in first.next(uppercase: true) }
        let b = (0..<10).map { _ in second.next(uppercase: true) }
        #expect(a == b)
        #expect(Set(a).count == 10)
    }

    @Test func survivesAllZeroSeed() {
        var generator = APNsIDGenerator(seed: (0, 0, 0, 0))
        let ids = (0..<100).map { _ in generator.next(uppercase: true) }
        #expect(!ids.contains("00000000-0000-0000-0000-000000000000"))
        #expect(Set(ids).count == 100)
    }

    @Test func seedsEachGeneratorDifferently() {
        var first = APNsIDGenerator()
        var second = APNsIDGenerator()
        #expect(first.next(uppercase: true) != second.next(uppercase: true))
    }

    @Test func writesTheBitsInOrder() {
        #expect(
            APNsIDGenerator.format(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210, uppercase: true)
                == "01234567-89AB-CDEF-FEDC-BA9876543210"
        )
        #expect(
            APNsIDGenerator.format(high: 0x00FF_0A0B_C0D0_E0F1, low: 0x1000_0000_0000_00FF, uppercase: false)
                == "00ff0a0b-c0d0-e0f1-1000-0000000000ff"
        )
        #expect(APNsIDGenerator.format(high: 0, low: .max, uppercase: true) == "00000000-0000-0000-FFFF-FFFFFFFFFFFF")
    }

    @Test func writesWhatAPlainHexFormatterWrites() {
        func reference(_ high: UInt64, _ low: UInt64, uppercase: Bool) -> String {
            func hex(_ value: UInt64) -> String {
                let digits = String(value, radix: 16, uppercase: uppercase)
                return String(repeating: "0", count: 16 - digits.count) + digits
            }
            let all = Array(hex(high) + hex(low))
            return [all[0..<8], all[8..<12], all[12..<16], all[16..<20], all[20..<32]].map { String($0) }.joined(separator: "-")
        }
        var random = SystemRandomNumberGenerator()
        let edges: [UInt64] = [0, 1, 9, 10, 15, 16, 0x9999_9999_9999_9999, 0xAAAA_AAAA_AAAA_AAAA, .max, 0x0F0F_0F0F_0F0F_0F0F]
        var pairs = edges.flatMap { high in edges.map { (high, $0) } }
        pairs += (0..<1000).map { _ in (random.next(), random.next()) }
        for (high, low) in pairs {
            for uppercase in [true, false] {
                #expect(APNsIDGenerator.format(high: high, low: low, uppercase: uppercase) == reference(high, low, uppercase: uppercase))
            }
        }
    }

    @Test func generatedIDReadsAsItsText() {
        var generator = APNsIDGenerator(seed: (5, 6, 7, 8))
        for uppercase in [true, false] {
            let id = generator.nextID(uppercase: uppercase)
            guard case .generated(let high, let low, _) = id else {
                Issue.record("expected a generated ID, got \(id)")
                continue
            }
            let text = APNsIDGenerator.format(high: high, low: low, uppercase: uppercase)
            #expect(id.text == text)
            #expect(utf8(of: id) == text)
            #expect(RequestValidator.isCanonicalUUID(text))
        }
        #expect(utf8(of: .text("as sent")) == "as sent")
    }

    @Test func responsesWithGeneratedAndTextIDsCompareByText() throws {
        let generated = APNsResponse(
            status: 200,
            apnsID: .generated(high: 1, low: 2, uppercase: true),
            uniqueID: .generated(high: 3, low: 4, uppercase: false)
        )
        let text = APNsResponse(
            status: 200,
            apnsID: "00000000-0000-0001-0000-000000000002",
            uniqueID: "00000000-0000-0003-0000-000000000004"
        )
        #expect(generated == text)
        #expect(generated.apnsID == "00000000-0000-0001-0000-000000000002")
        var changed = generated
        changed.uniqueID = nil
        #expect(changed != text)
        #expect(changed.uniqueIDValue == nil)

        let decoded = try JSONDecoder().decode(APNsResponse.self, from: JSONEncoder().encode(generated))
        #expect(decoded == generated)
        #expect(decoded.apnsIDValue == .text("00000000-0000-0001-0000-000000000002"))
    }
}
