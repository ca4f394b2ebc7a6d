@testable import APNsMockServer
import Testing

/// `StreamTable` against `Dictionary` as the reference: the same answers after any mix of inserts and removals.
@Suite("StreamTable")
struct StreamTableTests {
    final class Box {
        let id: Int32
        init(_ id: Int32) { self.id = id }
    }

    /// Checks every key in `reference` and a band of keys around them.
    static func expectSame(_ table: StreamTable<Box>, _ reference: [Int32: Box], probes: some Sequence<Int32>) {
        #expect(table.count == reference.count)
        for id in probes {
            #expect(table[id] === reference[id], "id \(id)")
        }
        #expect(Set(table.allValues.map(\.id)) == Set(reference.keys))
    }

    @Test func increasingOddIDsAsClientsOpenThem() {
        var table = StreamTable<Box>()
        var reference: [Int32: Box] = [:]
        // 100 streams in flight, each closed 100 streams after it opened: grows, then works at a steady size.
        for n in Int32(0)..<5000 {
            let id = 2 * n + 1
            let box = Box(id)
            table.insert(box, for: id)
            reference[id] = box
            if n >= 100 {
                let old = 2 * (n - 100) + 1
                #expect(table.remove(old) === reference.removeValue(forKey: old))
            }
        }
        Self.expectSame(table, reference, probes: stride(from: Int32(0), through: 10_100, by: 1))
    }

    @Test func randomOperationsIncludingCollidingIDs() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            var table = StreamTable<Box>()
            var reference: [Int32: Box] = [:]
            // Small ranges make probe runs long and wrap around the table's end; the large one spreads out.
            let range: ClosedRange<Int32> = round % 2 == 0 ? 1...64 : 1...Int32.max
            var seen: [Int32] = []
            for _ in 0..<2000 {
                let id = Int32.random(in: range, using: &generator)
                seen.append(id)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0, 1:
                    let box = Box(id)
                    table.insert(box, for: id)
                    reference[id] = box
                default:
                    let victim = seen.randomElement(using: &generator)!
                    #expect(table.remove(victim) === reference.removeValue(forKey: victim))
                }
                #expect(table.count == reference.count)
            }
            Self.expectSame(table, reference, probes: seen + [0, -1, Int32.max, Int32.min])
        }
    }

    @Test func emptyingAndReplacing() {
        var table = StreamTable<Box>()
        let first = Box(7)
        table.insert(first, for: 7)
        let second = Box(7)
        table.insert(second, for: 7)
        #expect(table.count == 1)
        #expect(table[7] === second)
        #expect(table.remove(9) == nil)
        #expect(table.remove(0) == nil)
        #expect(table[0] == nil)
        for id in stride(from: Int32(1), to: 200, by: 2) { table.insert(Box(id), for: id) }
        table.removeAll()
        #expect(table.isEmpty)
        #expect(table[7] == nil)
        #expect(table.allValues.isEmpty)
    }
}
