import Foundation
import Synchronization

/// What an external command did.
struct ToolResult: Sendable, CustomStringConvertible {
    var command: [String]
    var exitCode: Int32
    var stdout: String
    var stderr: String
    /// The command ran past its deadline and was killed.
    var timedOut: Bool

    var description: String {
        "`\(command.joined(separator: " ").prefix(300))` exited \(exitCode)\(timedOut ? " (timed out)" : "")\n"
            + "stdout: \(stdout.prefix(4000))\nstderr: \(stderr.prefix(4000))"
    }
}

/// Runs command-line tools (curl, nghttp, h2load, openssl) with a deadline, capturing everything they print.
///
/// Output goes to temporary files rather than pipes, so a chatty tool (`nghttp -v` with 1,000 headers)
/// cannot fill a pipe and stall while nobody reads it.
enum ExternalTool {
    /// Which Debian package provides each tool, for the failure message when one is missing.
    private static let packages = [
        "curl": "curl", "nghttp": "nghttp2-client", "h2load": "nghttp2-client", "openssl": "openssl",
    ]

    /// The full path of `name` on `PATH`, or a failure saying how to install it. Tests that need a tool call
    /// this so a missing tool fails loudly instead of skipping.
    static func require(_ name: String) throws -> String {
        // A path (a binary this package built) is taken as it is.
        if name.hasPrefix("/"), FileManager.default.isExecutableFile(atPath: name) { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = String(directory) + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestFailure(
            "required tool '\(name)' is not on PATH (\(path)); install it (Debian/Ubuntu: apt-get install "
                + "\(packages[name] ?? name)). The test script installs it; these tests do not skip without it."
        )
    }

    /// Runs `name` with `arguments`, feeding `stdin` if given, and kills it after `timeout`.
    static func run(
        _ name: String,
        _ arguments: [String],
        stdin: Data? = nil,
        timeout: Duration = .seconds(20)
    ) async throws -> ToolResult {
        let executable = try require(name)
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-mock-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutURL = scratch.appendingPathComponent("stdout")
        let stderrURL = scratch.appendingPathComponent("stderr")
        let stdinURL = scratch.appendingPathComponent("stdin")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stdinURL.path, contents: stdin ?? Data())

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        let stderrHandle = try FileHandle(forWritingTo: stderrURL)
        let stdinHandle = try FileHandle(forReadingFrom: stdinURL)
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
            try? stdinHandle.close()
        }
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        process.standardInput = stdinHandle

        let box = ProcessBox(process)
        let deadline = Task {
            try await Task.sleep(for: timeout)
            if box.process.isRunning {
                box.timedOut.store(true, ordering: .relaxed)
                // SIGKILL, not `terminate()`'s SIGTERM: a tool started from a thread of the test process's pool
                // inherits that thread's signal mask, in which SIGTERM is blocked, and a blocked SIGTERM never ends
                // it (seen: a stalled reader outlived its timeout and hung the test run).
                kill(box.process.processIdentifier, SIGKILL)
            }
        }
        defer { deadline.cancel() }
        let exitCode: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in
                continuation.resume(returning: finished.terminationStatus)
            }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: TestFailure("cannot run \(executable): \(error)"))
                return
            }
        }
        return ToolResult(
            command: [name] + arguments,
            exitCode: exitCode,
            stdout: String(decoding: (try? Data(contentsOf: stdoutURL)) ?? Data(), as: UTF8.self),
            stderr: String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self),
            timedOut: box.timedOut.load(ordering: .relaxed)
        )
    }

    /// A scratch file holding `contents`, removed by `body`'s end.
    static func withTemporaryFile<Result>(
        _ contents: Data,
        _ body: (String) async throws -> Result
    ) async throws -> Result {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-body-\(UUID().uuidString)")
        try contents.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try await body(url.path)
    }
}

/// `Process` is thread-safe for `isRunning` and `terminate()`; this lets the deadline task hold it.
private final class ProcessBox: @unchecked Sendable {
    let process: Process
    let timedOut = Atomic<Bool>(false)

    init(_ process: Process) {
        self.process = process
    }
}
