import ChildProcesses
import Foundation

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

    /// Runs `name` with `arguments`, feeding `stdin` if given, and kills it after `timeout`. `environment` replaces
    /// the test process's when given.
    static func run(
        _ name: String,
        _ arguments: [String],
        stdin: Data? = nil,
        environment: [String: String]? = nil,
        workingDirectory: URL? = nil,
        timeout: Duration = .seconds(20)
    ) async throws -> ToolResult {
        let run = try await ChildProcess.capture(
            try require(name), arguments, stdin: stdin ?? Data(), environment: environment,
            workingDirectory: workingDirectory?.path, timeout: timeout
        )
        return ToolResult(command: [name] + arguments, exitCode: run.exit.status, stdout: run.stdout, stderr: run.stderr, timedOut: run.timedOut)
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
