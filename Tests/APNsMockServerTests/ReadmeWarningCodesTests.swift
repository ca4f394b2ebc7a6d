import APNsMock
import Foundation
import Testing

/// The README's warning table lists every code the engine can give, in its words.
@Suite("README lists every payload warning")
struct ReadmeWarningCodesTests {
    @Test func everyCodeHasItsRow() throws {
        let readme = try String(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        for (code, meaning) in PayloadLint.codes {
            #expect(readme.contains("| `\(code)` | \(meaning) |"), "README.md has no row for \(code)")
        }
    }
}
