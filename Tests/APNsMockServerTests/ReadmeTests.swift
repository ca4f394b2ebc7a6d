import APNsMockServer
import Foundation
import Testing

/// The README's configuration table is the contract users copy into CI: every setting must be in it.
@Suite("README")
struct ReadmeTests {
    static let readme = (try? String(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    @Test(arguments: ConfigurationKey.allCases)
    func documentsEverySettingsFlagAndVariable(key: ConfigurationKey) {
        #expect(Self.readme.contains("`\(key.flag)`"), "README lacks \(key.flag)")
        #expect(Self.readme.contains("`\(key.environmentVariable)`"), "README lacks \(key.environmentVariable)")
    }

    @Test func startsWithTheTwoQuickStartCommands() throws {
        let quickStart = try #require(Self.readme.components(separatedBy: "## Quick start").dropFirst().first)
        let firstBlock = quickStart.components(separatedBy: "```").dropFirst().first ?? ""
        #expect(firstBlock.contains("scripts/run"))
        #expect(firstBlock.contains("scripts/test"))
    }

    /// A README for users, not a reference: the reference is in docs/.
    @Test func staysShort() {
        let lines = Self.readme.components(separatedBy: "\n").count
        #expect(lines <= 400, "README.md has \(lines) lines; move reference material to docs/")
    }

    /// The Swift example is the example package's test, word for word, so it compiles and passes in the suite.
    @Test func theSwiftExampleIsTheExampleTest() throws {
        let file = try String(
            contentsOf: TestPaths.repositoryRoot.appendingPathComponent("Tests/ExampleProviderTests/NotificationSenderTests.swift"),
            encoding: .utf8
        )
        #expect(Self.readme.contains("```swift\n" + file + "```\n"), "README's Swift example differs from Tests/ExampleProviderTests/NotificationSenderTests.swift")
    }
}
