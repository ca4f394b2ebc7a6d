import APNsMock
import Foundation
import Testing

/// The recorder guide's warning table lists every code the engine can give, in its words.
@Suite("docs/recorder.md lists every payload warning")
struct PayloadWarningTableTests {
    @Test func everyCodeHasItsRow() throws {
        let guide = try String(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("docs/recorder.md"), encoding: .utf8)
        for (code, meaning) in PayloadLint.codes {
            #expect(guide.contains("| `\(code)` | \(meaning) |"), "docs/recorder.md has no row for \(code)")
        }
    }
}
