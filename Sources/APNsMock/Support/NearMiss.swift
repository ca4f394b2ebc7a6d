/// Near misses in names a person typed (scenario keys, reasons, configuration settings): one suggestion rule for all.
package enum NearMiss {
    /// "did you mean 'x'?" for a near miss, else the list of what is allowed.
    package static func suggestion(for word: String, among candidates: [String]) -> String {
        let lower = word.lowercased()
        let scored = candidates.map { ($0, editDistance(lower, $0.lowercased())) }
        if let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= max(2, word.count / 3) {
            return "did you mean '\(best.0)'?"
        }
        return "expected one of: " + candidates.joined(separator: ", ")
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
