import APNsMockServer
import Foundation
import Testing

/// The README's commands, run as written: the binary on its default ports from the repository folder, then every
/// shell block of the README in order, with `scripts/run` standing for the built binary (the same program without
/// the build). A comment line in a block (`# HTTP/2 410`, `# {"reason":"Unregistered",…}`) is what the commands
/// above it print, and is checked.
@Suite("README commands, run as written", .serialized)
struct ReadmeCommandsTests {
    /// A README shell block, with the line it starts on.
    struct ShellBlock: CustomStringConvertible {
        var line: Int
        var text: String
        var file = "README.md"
        var description: String { "\(file):\(line)" }
    }

    /// Blocks not run here, each with why; everything else in a `sh` fence runs.
    static let notRun: [(marker: String, why: String)] = [
        ("scripts/test    #", "the two set-up commands: CI runs scripts/test itself, and the mock below is scripts/run's binary"),
        ("docker build", "no Docker engine on CI machines: ContainerFilesTests checks the image's files and runs its command line"),
    ]

    static func shellBlocks(of markdown: String) -> [ShellBlock] {
        var blocks: [ShellBlock] = []
        var current: ShellBlock?
        for (index, line) in markdown.components(separatedBy: "\n").enumerated() {
            if current != nil {
                if line.hasPrefix("```") {
                    blocks.append(current!)
                    current = nil
                } else {
                    current!.text += line + "\n"
                }
            } else if line == "```sh" {
                current = ShellBlock(line: index + 2, text: "")
            }
        }
        return blocks
    }

    static func blocksToRun() -> [ShellBlock] {
        shellBlocks(of: ReadmeTests.readme).filter { block in !notRun.contains { block.text.contains($0.marker) } }
    }

    /// What a block's comment lines promise: the statuses curl prints, in order, and other text it prints.
    struct Expectations {
        var statuses: [String] = []
        var texts: [String] = []
        var headerNames: [String] = []

        init(_ blocks: [ShellBlock]) {
            for block in blocks {
                for line in block.text.components(separatedBy: "\n") where line.hasPrefix("# ") {
                    let shown = String(line.dropFirst(2))
                    if shown.hasPrefix("HTTP/2 ") {
                        statuses.append(shown)
                    } else if shown.range(of: #"^[a-z-]+: "#, options: .regularExpression) != nil {
                        headerNames.append(String(shown[..<shown.firstIndex(of: ":")!]) + ": ")
                    } else {
                        texts.append(String(shown.prefix { $0 != "…" }))
                    }
                }
            }
        }
    }

    @Test func everyBlockIsRunOrSaysWhyNot() {
        let all = Self.shellBlocks(of: ReadmeTests.readme)
        #expect(all.count >= 8, "\(all)")
        for (marker, _) in Self.notRun {
            #expect(all.contains { $0.text.contains(marker) }, "no README block contains '\(marker)' any more: drop it from notRun")
        }
    }

    /// The table's rows are the settings' own help: no stray text, nothing missing.
    @Test(arguments: ConfigurationKey.allCases)
    func theConfigurationRowIsTheSettingsHelp(key: ConfigurationKey) {
        let row = "| `\(key.flag)` | `\(key.environmentVariable)` | \(key.help) |"
        #expect(ReadmeTests.readme.contains(row + "\n"), "README's row for \(key.flag) should read: \(row)")
    }

    @Test(.timeLimit(.minutes(3)))
    func theCommandsWorkAsWritten() async throws {
        let blocks = Self.blocksToRun()
        let expected = Expectations(blocks)
        #expect(expected.statuses.count >= 6, "\(expected.statuses)")
        let (result, leftBehind) = try await Self.run(blocks)
        #expect(result.exitCode == 0, "\(result)")
        let statuses = result.stdout.components(separatedBy: .newlines).filter { $0.hasPrefix("HTTP/2 ") }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(statuses == expected.statuses, "\(result)")
        for name in expected.headerNames {
            #expect(result.stdout.lowercased().contains("\n" + name), "no '\(name)' header: \(result)")
        }
        for text in expected.texts {
            #expect(result.stdout.contains(text), "the README promises '\(text)': \(result)")
        }
        #expect(result.stdout.contains("\"notifications\""), "the admin API's list is printed: \(result)")
        // The blocks clean up after themselves.
        #expect(leftBehind == ["Certs", "Scenarios", "scripts"], "the README's commands left \(leftBehind)")
    }

    /// The worked examples of docs/devices.md, run as written: every `# ` line of a block is a line the commands
    /// print, in order.
    @Test(.timeLimit(.minutes(3)))
    func theDeviceGuidesExamplesWorkAsWritten() async throws {
        let guide = try String(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("docs/devices.md"), encoding: .utf8)
        let blocks = Self.shellBlocks(of: guide).map { ShellBlock(line: $0.line, text: $0.text, file: "docs/devices.md") }
        #expect(blocks.count == 3, "the guide's three worked examples: \(blocks)")
        let promised = blocks.flatMap { $0.text.components(separatedBy: "\n").filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) } }
        #expect(promised.count >= 8, "\(promised)")
        let (result, _) = try await Self.run(blocks)
        #expect(result.exitCode == 0, "\(result)")
        var printed = result.stdout.components(separatedBy: "\n")[...]
        for line in promised {
            guard let index = printed.firstIndex(of: line) else {
                Issue.record("docs/devices.md promises '\(line)' (in this order), which was not printed: \(result)")
                break
            }
            printed = printed[(index + 1)...]
        }
    }

    /// Starts the built binary on its default ports from the repository folder, and runs `blocks` in order in a
    /// folder of their own; returns what they printed and what they left in the folder.
    static func run(_ blocks: [ShellBlock]) async throws -> (ToolResult, [String]) {
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
            #expect(ports.provider == 2197 && ports.admin == 8080, "the documented ports")
            return true
        }
        // The blocks run in a folder of their own that looks like the checkout (its Certs/ and Scenarios/), where
        // scripts/run execs the built binary, so a command started in the background is the mock itself and
        // whatever the blocks write stays out of the checkout.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("scripts"), withIntermediateDirectories: true)
        for shared in ["Certs", "Scenarios"] {
            try FileManager.default.createSymbolicLink(
                at: folder.appendingPathComponent(shared), withDestinationURL: TestPaths.repositoryRoot.appendingPathComponent(shared)
            )
        }
        let run = folder.appendingPathComponent("scripts/run")
        try "#!/bin/sh\nexec '\(binary)' \"$@\"\n".write(to: run, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: run.path)
        // Each block is announced on standard error, so a failure names the block it happened in.
        let script = "set -euo pipefail\n" + blocks.map { "echo '--- \($0)' >&2\n" + $0.text }.joined(separator: "\n")
        let result = try await ExternalTool.run("bash", ["-c", script], workingDirectory: folder, timeout: .seconds(120))
        let leftBehind = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return (result, leftBehind)
    }
}
