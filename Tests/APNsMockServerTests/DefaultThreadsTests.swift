import Foundation
import Testing

/// The default event-loop count, as the built binary chooses it: one per core the process may use, counting the
/// affinity mask (`taskset`) as well as the cgroup's limit (SwiftNIO's `System.coreCount` reads
/// only the latter).
@Suite("Default event loops")
struct DefaultThreadsTests {
    /// The cores this test process may run on (what an unpinned child inherits): the bits of `Cpus_allowed` in
    /// `/proc/self/status`, read apart from the code under test.
    static func affinityCores() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed:") })
        let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        return mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
    }

    /// `serve` started through `launcher` (empty: directly); returns the start-up line's `threads` and `cores`.
    static func startUpCounts(launcher: [String]) async throws -> (threads: Int, cores: Int) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-threads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let serve = [
            try ContainerFilesTests.builtBinary(), "serve", "--host", "127.0.0.1", "--port", "0", "--admin-host", "127.0.0.1",
            "--admin-port", "0", "--channels-port", "0", "--certs-dir", TestPaths.certsDirectory, "--auth", "none",
        ]
        let command = launcher + serve
        let launched = try await LaunchedProcess(
            executable: command[0], arguments: Array(command.dropFirst()),
            // A user's APNS_MOCK_THREADS must not choose for the test.
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") },
            workingDirectory: folder
        )
        defer { launched.cleanUp() }
        let line = try await poll(timeout: .seconds(60), "the start-up line") { () throws -> String? in
            if let status = launched.exitStatus { throw TestFailure("apns-mock exited \(status) at start-up\n\(launched.output)") }
            return (launched.stderr + launched.stdout).split(separator: "\n").first { $0.contains("listening") }.map(String.init)
        }
        func count(_ key: String) throws -> Int {
            let value = line.split(separator: " ").first { $0.hasPrefix("\(key)=") }?.dropFirst(key.count + 1)
            return try #require(value.flatMap { Int($0) }, "no \(key)= in: \(line)")
        }
        return (try count("threads"), try count("cores"))
    }

    @Test func unpinnedTheDefaultRunsALoopPerUsableCore() async throws {
        let cores = try Self.affinityCores()
        try #require(cores > 0)
        let counts = try await Self.startUpCounts(launcher: [])
        #expect(counts.cores <= cores)
        #expect(counts.threads == counts.cores, "\(counts)")
    }

    /// Under `taskset -c 0` the process may use one core, whatever the machine has: one loop, and `cores=1`
    /// (with `System.coreCount` alone it said the machine's count, and ran that many loops on one core).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")))
    func pinnedToOneCoreTheDefaultCountsTheAffinityMask() async throws {
        let counts = try await Self.startUpCounts(launcher: ["/usr/bin/taskset", "-c", "0"])
        #expect(counts.cores == 1, "\(counts)")
        #expect(counts.threads == 1, "\(counts)")
    }
}
