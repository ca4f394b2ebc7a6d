import Foundation
import Testing

/// The bench and its perf tools run in `scripts/check-long`, not in every suite run; here they are only kept from
/// rotting: each parses, imports what it needs and answers `--help`.
@Suite("Bench tools")
struct BenchToolsTests {
    static let root = TestPaths.repositoryRoot

    @Test(arguments: ["bench/run", "bench/counts", "bench/profile", "scripts/fuzz", "scripts/check-long"])
    func answersHelp(tool: String) async throws {
        let result = try await ExternalTool.run(Self.root.appendingPathComponent(tool).path, ["--help"], workingDirectory: Self.root)
        #expect(result.exitCode == 0 && !result.stdout.isEmpty, "\(result)")
    }

    @Test func thePythonModulesCompile() async throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("bench").path)
            .filter { $0.hasSuffix(".py") }.map { "bench/" + $0 }
        #expect(modules.contains("bench/bench.py"))
        let result = try await ExternalTool.run(
            "python3", ["-c", "import sys\nfor m in sys.argv[1:]: compile(open(m).read(), m, 'exec')"] + modules,
            workingDirectory: Self.root
        )
        #expect(result.exitCode == 0, "\(result)")
    }

    /// `bench/run --floor` and its quick check stop when a patch no longer applies; a change to the connection
    /// handler that breaks one is seen here, in the change's own run, not in the next bench session.
    @Test(arguments: ["bench/floor/no-recording.patch", "bench/floor/transport-only.patch"])
    func theFloorPatchesApply(patch: String) async throws {
        let result = try await ExternalTool.run("git", ["apply", "--check", patch], workingDirectory: Self.root)
        #expect(result.exitCode == 0, "\(patch) no longer applies: remake it (bench/README.md, \"Where a push's CPU goes\")\n\(result)")
    }
}
