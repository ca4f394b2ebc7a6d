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
}
