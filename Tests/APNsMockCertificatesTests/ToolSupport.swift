import ChildProcesses
import Foundation

/// External programs used as independent test oracles. The module under test never runs them.
enum Tools {
    static let openssl = "/usr/bin/openssl"

    static var hasOpenSSL: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    /// Whether `python3` on the PATH can import `cryptography`.
    static func hasPythonCryptography() async -> Bool {
        (try? await run("/usr/bin/env", ["python3", "-c", "import cryptography"]).status) == 0
    }

    /// Runs `executable` and returns its exit status with stdout and stderr combined.
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) async throws -> (status: Int32, output: String) {
        let result = try await ChildProcess.run(
            executable, arguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            workingDirectory: currentDirectory?.path,
            includingErrors: true
        )
        return (result.exit.status, result.output)
    }

    static func runOpenSSL(_ arguments: String..., environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try await run(openssl, arguments, environment: environment)
    }

    static func runPython(_ script: String, _ arguments: [String] = [], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        try await run("/usr/bin/env", ["python3", "-c", script] + arguments, environment: environment)
    }
}
