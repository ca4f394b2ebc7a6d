import Foundation

/// External programs used as independent test oracles. The module under test never runs them.
enum Tools {
    static let openssl = "/usr/bin/openssl"

    static var hasOpenSSL: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    /// Whether `python3` on the PATH can import `cryptography`.
    static let hasPythonCryptography: Bool = {
        (try? run("/usr/bin/env", ["python3", "-c", "import cryptography"]).status) == 0
    }()

    /// Runs `executable` and returns its exit status with stdout and stderr combined.
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        currentDirectory: URL? = nil
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain before waiting so a large output cannot fill the pipe and block the child.
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func runOpenSSL(_ arguments: String..., environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try run(openssl, arguments, environment: environment)
    }

    static func runPython(_ script: String, _ arguments: [String] = [], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        try run("/usr/bin/env", ["python3", "-c", script] + arguments, environment: environment)
    }
}
