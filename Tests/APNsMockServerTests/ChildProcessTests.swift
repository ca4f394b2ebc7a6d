import ChildProcesses
import Foundation
import Testing

/// The tests' way of starting programs (see ``ChildProcess`` for why it is not Foundation's `Process`).
@Suite("Child processes of the tests")
struct ChildProcessTests {
    /// With many descriptors open, as while every suite starts its servers at once (Foundation's `Process.run()`
    /// crashed there), a child starts and inherits none of them: an inherited socket would keep a test server's
    /// port open after the test closed it.
    @Test func aChildStartsWithManyDescriptorsOpenAndInheritsNone() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(1_500, Int(limit.rlim_cur) / 2)
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        for _ in 0..<count {
            let descriptor = open("/dev/null", O_RDONLY)
            try #require(descriptor >= 0, "open /dev/null: errno \(errno)")
            opened.append(descriptor)
        }
        let highest = try #require(opened.max())
        let result = try await ChildProcess.run("/bin/ls", ["/proc/self/fd"], timeout: .seconds(30))
        #expect(result.exit == .exited(0), "\(result)")
        // 0, 1, 2 and the descriptor ls reads the folder with.
        let inherited = result.output.split(separator: "\n").compactMap { Int32($0) }
        #expect(inherited.count <= 4 && inherited.allSatisfy { $0 < 4 }, "\(inherited.count) descriptors, up to \(highest) in the parent: \(inherited.prefix(20))")
    }

    /// A child past its deadline is killed, and the caller is told so.
    @Test func aChildPastItsDeadlineIsKilled() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let started = ContinuousClock.now
        let child = try await ChildProcess.start(
            "/bin/sleep", ["60"], stdout: folder.appendingPathComponent("out").path, stderr: folder.appendingPathComponent("err").path
        )
        let (exit, timedOut) = try await child.waitForExit(killingAfter: .milliseconds(300))
        #expect(timedOut)
        #expect(exit == .signalled(SIGKILL))
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(child.exit == .signalled(SIGKILL))
    }

    /// A child that ends by itself reports its code; one that cannot start is an error, not a hang.
    @Test func exitCodesAndMissingProgramsAreReported() async throws {
        let failed = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], includingErrors: true)
        #expect(failed.exit == .exited(3))
        #expect(failed.output == "out\nerr\n")
        await #expect(throws: (any Error).self) {
            _ = try await ChildProcess.run("/nonexistent/program", [])
        }
    }
}
