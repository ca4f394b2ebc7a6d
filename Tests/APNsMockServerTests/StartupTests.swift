import Foundation
import Testing

/// The binary's start: `--port 0` instances side by side, and a port already taken, which must end the process
/// with one line naming the setting and the port, exit status 1, and nothing from SwiftNIO.
@Suite("Start-up of the binary")
struct StartupTests {
    static func launch(_ arguments: [String]) async throws -> LaunchedProcess {
        try await LaunchedProcess(
            executable: try ContainerFilesTests.builtBinary(),
            arguments: ["serve", "--host", "127.0.0.1", "--admin-host", "127.0.0.1", "--threads", "1"] + arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") },
            workingDirectory: TestPaths.repositoryRoot
        )
    }

    static func listening(_ process: LaunchedProcess) async throws -> [String: Int] {
        try await poll(timeout: .seconds(60), "the start-up line") { () -> [String: Int]? in
            if let status = process.exitStatus { throw TestFailure("apns-mock exited \(status)\n\(process.output)") }
            return ContainerFilesTests.listeningAddresses(in: process.stderr)
        }
    }

    @Test func twoInstancesWithPortZeroRunSideBySide() async throws {
        let first = try await Self.launch(["--port", "0"])
        defer { first.cleanUp() }
        let second = try await Self.launch(["--port", "0"])
        defer { second.cleanUp() }
        let a = try await Self.listening(first), b = try await Self.listening(second)
        // Every port was picked free, none is a default, and none is shared.
        #expect(Set(a.values).isDisjoint(with: b.values), "\(a) \(b)")
        #expect(Set(Array(a.values) + Array(b.values)).isDisjoint(with: [2197, 2195, 8080]), "\(a) \(b)")
    }

    /// Each listener on a port another mock holds: the first mock's provider, channel-management and admin ports.
    @Test(arguments: [("provider", "--port"), ("channels", "--channels-port"), ("admin", "--admin-port")])
    func aTakenPortEndsTheStartWithOneLine(listener: String, flag: String) async throws {
        let holder = try await Self.launch(["--port", "0"])
        defer { holder.cleanUp() }
        let taken = try #require(try await Self.listening(holder)[listener])
        let failing = try await Self.launch(["--port", "0", flag, "\(taken)"])
        defer { failing.cleanUp() }
        let status = try await failing.waitForExit(timeout: .seconds(60))
        #expect(status == 1, "\(failing.output)")
        let lines = failing.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line, not: \(failing.output)")
        let line = try #require(lines.first)
        #expect(line.contains("127.0.0.1:\(taken) (\(flag))") && line.contains("already in use"), "\(line)")
        #expect(!failing.output.contains("EventLoop"), "\(failing.output)")
    }
}
