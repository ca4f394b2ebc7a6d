import APNsMockServer
import Foundation

/// A PostgreSQL server of one test's own: Debian's `postgresql` binaries, a data folder made by `initdb` in a
/// temporary directory, a free local port; stopped and deleted by `stop()` (`withPostgres` does both).
///
/// PostgreSQL refuses to run as root, which CI is: then every server command runs as Debian's `postgres` user.
struct PostgresTestServer: Sendable {
    let port: Int
    let folder: URL
    let binaries: URL
    let process: LaunchedProcess

    /// Where Debian puts the server binaries (`/usr/lib/postgresql/<major>/bin`), the newest major first.
    static func binariesFolder() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let majors = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted(by: >)
        for major in majors {
            let bin = root.appendingPathComponent("\(major)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) { return bin }
        }
        throw TestFailure("PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/initdb): scripts/test installs Debian's postgresql")
    }

    private static var runsAsRoot: Bool { getuid() == 0 }

    /// Runs a server binary, as `postgres` when this process is root.
    private static func run(_ binary: URL, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> ToolResult {
        let result: ToolResult
        if runsAsRoot {
            result = try await ExternalTool.run("runuser", ["-u", "postgres", "--", binary.path] + arguments, timeout: timeout)
        } else {
            result = try await ExternalTool.run(binary.path, arguments, timeout: timeout)
        }
        guard result.exitCode == 0 else { throw TestFailure("\(binary.lastPathComponent) \(arguments.joined(separator: " ")) failed: \(result)") }
        return result
    }

    /// A port nothing listens on now, from the kernel (bound to port 0, then let go).
    static func freePort() async throws -> Int {
        let result = try await ExternalTool.run("python3", [
            "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])",
        ])
        guard let port = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw TestFailure("no free port: \(result)") }
        return port
    }

    /// `initdb`, then the server itself as a child of this process (not daemonised by `pg_ctl start`, whose
    /// lingering server kept the tool runner from seeing it end), ready once `pg_isready` says so.
    static func start() async throws -> PostgresTestServer {
        let binaries = try binariesFolder()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-postgres-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if runsAsRoot { _ = try await ExternalTool.run("chown", ["postgres", folder.path]) }
        let data = folder.appendingPathComponent("data").path
        _ = try await run(binaries.appendingPathComponent("initdb"), ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
        // A port taken between the choice and the bind stops the server: try another.
        var lastFailure = ""
        for _ in 0..<3 {
            let port = try await freePort()
            // The socket in the folder (not /var/run/postgresql, which may not exist); durability off: tests count
            // rows, they do not pull the plug.
            let server = [binaries.appendingPathComponent("postgres").path, "-D", data, "-p", String(port), "-k", folder.path,
                          "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
            let launched = try await LaunchedProcess(
                executable: runsAsRoot ? try ExternalTool.require("runuser") : server[0],
                arguments: runsAsRoot ? ["-u", "postgres", "--"] + server : Array(server.dropFirst()),
                environment: ProcessInfo.processInfo.environment,
                workingDirectory: folder
            )
            let instance = PostgresTestServer(port: port, folder: folder, binaries: binaries, process: launched)
            do {
                _ = try await poll(timeout: .seconds(60), "PostgreSQL to take connections on port \(port)") { () -> Bool? in
                    if launched.exitStatus != nil { throw TestFailure("postgres exited: \(launched.output)") }
                    let ready = try await ExternalTool.run(binaries.appendingPathComponent("pg_isready").path, ["-h", "127.0.0.1", "-p", String(port)])
                    return ready.exitCode == 0 ? true : nil
                }
                return instance
            } catch {
                lastFailure = "\(error)"
                launched.cleanUp()
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw TestFailure("PostgreSQL did not start: \(lastFailure)")
    }

    /// A new, empty database; returns the `--store` address for it.
    func createDatabase() async throws -> String {
        let name = "apns_mock_\(UUID().uuidString.prefix(8).lowercased())"
        _ = try await psql("CREATE DATABASE \(name)", database: "postgres")
        return "postgres://postgres@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL with Debian's psql (not the mock's client) and returns its unaligned output, trimmed.
    func psql(_ sql: String, database: String) async throws -> String {
        let result = try await ExternalTool.run("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database, "-At", "-c", sql])
        guard result.exitCode == 0 else { throw TestFailure("psql \(sql) failed: \(result)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `SELECT count(*)` of a table, with an optional condition.
    func count(_ table: String, where condition: String? = nil, in store: String) async throws -> Int {
        let database = String(store.split(separator: "/").last ?? "")
        let text = try await psql("SELECT count(*) FROM \(table)" + (condition.map { " WHERE \($0)" } ?? ""), database: database)
        guard let count = Int(text) else { throw TestFailure("count of \(table): \(text)") }
        return count
    }

    /// Stops the server (immediate shutdown: nothing here needs its data again) and deletes its folder.
    func stop() async {
        _ = try? await Self.run(binaries.appendingPathComponent("pg_ctl"), ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        _ = try? await process.waitForExit(timeout: .seconds(10))
        process.cleanUp()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Runs `body` with a PostgreSQL server of its own, stopped afterwards whatever happens.
func withPostgres<T: Sendable>(_ body: (PostgresTestServer) async throws -> T) async throws -> T {
    let server = try await PostgresTestServer.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
