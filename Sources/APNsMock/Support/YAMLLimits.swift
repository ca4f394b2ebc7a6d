import Yams

/// Bounds on the YAML the mock reads (scenario files, the configuration file, `PUT /admin/scenario`), so a small
/// hostile document cannot make it spend seconds and gigabytes: anchors and aliases let 480 bytes stand for
/// millions of nodes (a "billion laughs"), which every later walk of the tree would visit.
package enum YAMLLimits {
    /// The largest document read, in bytes.
    package static let maximumBytes = 1 << 20
    /// Nodes the document may stand for once its aliases are expanded.
    package static let maximumExpandedNodes = 100_000
    /// Nesting, aliases expanded.
    package static let maximumDepth = 64

    /// What is wrong with a document of `byteCount` bytes, before it is parsed.
    package static func sizeProblem(byteCount: Int) -> String? {
        guard byteCount > maximumBytes else { return nil }
        return "the document is \(byteCount) bytes; the limit is \(maximumBytes) (1 MiB)"
    }

    /// What is wrong with a composed document: too many nodes once aliases are expanded, or too deep. Counting
    /// stops at the limit, so a bomb costs no more than a document at the limit.
    package static func expansionProblem(_ root: Node) -> String? {
        var budget = maximumExpandedNodes
        var tooDeep = false
        func visit(_ node: Node, depth: Int) -> Bool {
            budget -= 1
            if budget < 0 { return false }
            if depth > maximumDepth {
                tooDeep = true
                return false
            }
            switch node {
            case .scalar, .alias:
                return true
            case .sequence(let sequence):
                for element in sequence where !visit(element, depth: depth + 1) { return false }
                return true
            case .mapping(let mapping):
                for (key, value) in mapping {
                    guard visit(key, depth: depth + 1), visit(value, depth: depth + 1) else { return false }
                }
                return true
            }
        }
        if visit(root, depth: 0) { return nil }
        if tooDeep { return "the document nests deeper than \(maximumDepth) levels" }
        return "the document stands for more than \(maximumExpandedNodes) values once its aliases (*name) are expanded; "
            + "write the values out, or use fewer aliases of aliases"
    }
}
