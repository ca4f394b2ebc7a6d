import APNsMockServer
import Foundation
import Testing

/// The README's quick start, run as written: the binary on its default ports from the repository folder, and the
/// shell blocks that follow, with `scripts/run` standing for the built binary (the same program without the build).
@Suite("README quick start, run as written", .serialized)
struct ReadmeQuickStartTests {
    /// The shell blocks between "## Quick start" and the next section, after the first (the two set-up commands).
    static func quickStartBlocks() throws -> [String] {
        let section = try #require(ReadmeTests.readme.components(separatedBy: "## Quick start").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        let parts = section.components(separatedBy: "```")
        // Odd parts are inside fences; each starts with its language tag.
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0] }.filter { $0.hasPrefix("sh\n") }.dropFirst()
            .map { String($0.dropFirst(3)) }
    }

    /// The table's rows are the settings' own help: no stray text, nothing missing.
    @Test(arguments: ConfigurationKey.allCases)
    func theConfigurationRowIsTheSettingsHelp(key: ConfigurationKey) {
        let row = "| `\(key.flag)` | `\(key.environmentVariable)` | \(key.help) |"
        #expect(ReadmeTests.readme.contains(row + "\n"), "README's row for \(key.flag) should read: \(row)")
    }

    @Test(.timeLimit(.minutes(2)))
    func theQuickStartCommandsWorkAsWritten() async throws {
        let blocks = try Self.quickStartBlocks()
        #expect(blocks.count == 3, "\(blocks)")
        let binary = try ContainerFilesTests.builtBinary()
        let launched = try await LaunchedProcess(
            executable: binary,
            arguments: [],
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") },
            workingDirectory: TestPaths.repositoryRoot
        )
        defer { launched.cleanUp() }
        _ = try await poll(timeout: .seconds(60), "the mock on its default ports") { () -> Bool? in
            if let status = launched.exitStatus { throw TestFailure("apns-mock exited \(status)\n\(launched.output)") }
            guard let ports = ContainerFilesTests.listeningPorts(in: launched.stderr) else { return nil }
            #expect(ports.provider == 2197 && ports.admin == 8080, "the README's ports")
            return true
        }
        let script = "set -e\nscripts/run() { \"\(binary)\" \"$@\"; }\n" + blocks.joined(separator: "\n")
        let result = try await ExternalTool.run("bash", ["-c", script], timeout: .seconds(60))
        // Each curl shows what its comment promises.
        #expect(result.exitCode == 0, "\(result)")
        let statuses = result.stdout.components(separatedBy: .newlines).filter { $0.hasPrefix("HTTP/2 ") }.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(statuses == ["HTTP/2 200", "HTTP/2 200", "HTTP/2 400"], "\(result)")
        #expect(result.stdout.lowercased().contains("apns-id: "), "\(result)")
        #expect(result.stdout.contains(#"{"reason":"BadDeviceToken"}"#), "\(result)")
        #expect(result.stdout.contains("\"notifications\""), "the admin API's list is printed: \(result)")
    }
}
