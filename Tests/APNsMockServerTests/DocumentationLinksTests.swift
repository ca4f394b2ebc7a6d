import Foundation
import Testing

/// Every relative link in the README and the guides leads to a file that exists and, with `#…`, to one of its
/// headings (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
@Suite("Documentation links")
struct DocumentationLinksTests {
    static let root = TestPaths.repositoryRoot

    static func documents() throws -> [String] {
        let guides = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        return ["README.md", "Certs/README.md", "bench/README.md"] + guides.sorted()
    }

    /// The text outside code fences.
    static func prose(of markdown: String) -> [String] {
        var lines: [String] = []
        var inFence = false
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if !inFence { lines.append(line) }
        }
        return lines
    }

    static func anchor(ofHeading heading: String) -> String {
        let kept = heading.lowercased().unicodeScalars.filter {
            CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == " " || $0 == "_"
        }
        return String(String.UnicodeScalarView(kept)).replacingOccurrences(of: " ", with: "-")
    }

    static func anchors(in markdown: String) -> Set<String> {
        Set(prose(of: markdown).compactMap { line -> String? in
            guard let range = line.range(of: #"^#+ "#, options: .regularExpression) else { return nil }
            return anchor(ofHeading: String(line[range.upperBound...]))
        })
    }

    @Test func anchorsAreGitHubs() {
        #expect(Self.anchor(ofHeading: "Broadcast push (Live Activities)") == "broadcast-push-live-activities")
        #expect(Self.anchor(ofHeading: "`defaults`") == "defaults")
    }

    @Test(arguments: try documents())
    func everyRelativeLinkResolves(document: String) throws {
        let url = Self.root.appendingPathComponent(document)
        let text = try String(contentsOf: url, encoding: .utf8)
        let links = Self.prose(of: text).joined(separator: "\n").matches(of: #/\]\(([^)\s]+)\)/#).map { String($0.output.1) }
        for link in links where link.range(of: "^[a-z]+:", options: .regularExpression) == nil {
            let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let target = parts[0].isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(parts[0]).standardizedFileURL
            guard FileManager.default.fileExists(atPath: target.path) else {
                Issue.record("\(document): \(link) leads to no file")
                continue
            }
            if parts.count == 2, target.pathExtension == "md" {
                let anchors = Self.anchors(in: try String(contentsOf: target, encoding: .utf8))
                #expect(anchors.contains(parts[1]), "\(document): \(link) names no heading of \(target.lastPathComponent)")
            }
        }
    }
}

/// A blank line inside a Markdown table ends it: the rows after it show as text.
@Suite("Documentation tables")
struct DocumentationTablesTests {
    @Test(arguments: try DocumentationLinksTests.documents())
    func noTableIsCutByABlankLine(document: String) throws {
        let text = try String(contentsOf: TestPaths.repositoryRoot.appendingPathComponent(document), encoding: .utf8)
        let lines = DocumentationLinksTests.prose(of: text)
        for index in lines.indices.dropFirst().dropLast() where lines[index].isEmpty {
            let before = lines[index - 1], after = lines[index + 1]
            let isRow = { (line: String) in line.hasPrefix("|") && line.hasSuffix("|") }
            // A new table starts with its header and its |---| line; a row straight after a blank line does not.
            let startsTable = index + 2 < lines.count && lines[index + 2].hasPrefix("|-")
            #expect(!(isRow(before) && isRow(after) && !startsTable), "\(document): a blank line cuts the table before '\(after.prefix(60))'")
        }
    }
}
