import Foundation
import Testing

/// A recorded provider token keeps its header and claims and a fingerprint, never its signature: not in the admin
/// API, the live feed, the record file or the SQLite file, unless `--record-credentials full` asks for it. The
/// built binary, pushed to by aioapns (with a token it signs) and curl, the files read byte for byte.
@Suite("Credentials out of recordings", .serialized)
struct CredentialRedactionTests {
    /// Starts the binary with token auth, a record file and a SQLite store in `folder`; pushes with curl and a
    /// token the binary's `token` command makes; returns what every reader saw, and the token.
    static func run(extra: [String], store: String? = nil) async throws -> (token: String, places: [String: String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = try ContainerFilesTests.builtBinary()
        let token = try await ExternalTool.run(binary, ["token", "--certs-dir", TestPaths.certsDirectory]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3, "\(token)")
        let launched = try await LaunchedProcess(
            executable: binary,
            arguments: [
                "serve", "--port", "0", "--admin-port", "0", "--certs-dir", TestPaths.certsDirectory, "--auth", "token",
                "--record-file", folder.appendingPathComponent("recordings.ndjson").path,
                "--store", store ?? "sqlite:" + folder.appendingPathComponent("recordings.sqlite").path,
            ] + extra,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") },
            workingDirectory: folder
        )
        defer { launched.cleanUp() }
        let ports = try await poll(timeout: .seconds(60), "the start-up line") { () -> (provider: Int, admin: Int)? in
            if let status = launched.exitStatus { throw TestFailure("apns-mock exited \(status)\n\(launched.output)") }
            return ContainerFilesTests.listeningPorts(in: launched.stderr + launched.stdout)
        }
        let admin = "http://127.0.0.1:\(ports.admin)"
        let feed = Task {
            try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/sse_read.py").path, admin + "/admin/notifications/stream",
                "--count", "2", "--last-event-id", "0",
            ], timeout: .seconds(30))
        }
        var places: [String: String] = [:]
        for index in 0..<2 {
            let push = try await ProviderAuthenticationTests.curl([
                "-o", "/dev/null", "-w", "%{http_code}", "-H", "authorization: bearer \(token)", "-H", "apns-topic: \(TestData.topic)",
                "-d", #"{"aps":{"alert":"\#(index)"}}"#, "https://127.0.0.1:\(ports.provider)/3/device/\(TestData.deviceToken())",
            ])
            #expect(push.stdout == "200", "\(push)")
        }
        places["live feed"] = try await feed.value.stdout
        places["list"] = try await ExternalTool.run("curl", ["-s", admin + "/admin/notifications"]).stdout
        places["wait"] = try await ExternalTool.run("curl", ["-s", admin + "/admin/notifications/wait?count=2"]).stdout
        launched.signal(SIGTERM)
        #expect(try await launched.waitForExit(timeout: .seconds(30)) == 0, "\(launched.output)")
        places["log"] = launched.output
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(file))
            places[file] = String(decoding: bytes, as: UTF8.self)
        }
        #expect(places.keys.contains("recordings.ndjson"), "\(places.keys)")
        #expect(store != nil || places.keys.contains("recordings.sqlite"), "\(places.keys)")
        return (token, places)
    }

    @Test(.timeLimit(.minutes(2)))
    func noSinkStoreOrAnswerHoldsTheSignature() async throws {
        let (token, places) = try await Self.run(extra: [])
        let parts = token.split(separator: ".")
        let signature = String(parts[2])
        let kept = parts[0] + "." + parts[1] + ".REDACTED-"
        for (place, text) in places.sorted(by: { $0.key < $1.key }) {
            #expect(!text.contains(signature), "the signature is in \(place)")
        }
        for place in ["list", "wait", "live feed", "recordings.ndjson", "recordings.sqlite"] {
            #expect(places[place]?.contains(kept) == true, "\(place) keeps the token's header and claims: \(places[place]?.prefix(2000) ?? "nothing")")
        }
        #expect(places["log"]?.contains("credentials=redacted") == true, "\(places["log"] ?? "")")
    }

    @Test(.timeLimit(.minutes(2)))
    func recordCredentialsFullKeepsTheTokenAsSent() async throws {
        let (token, places) = try await Self.run(extra: ["--record-credentials", "full"])
        for place in ["list", "wait", "live feed", "recordings.ndjson", "recordings.sqlite"] {
            #expect(places[place]?.contains(token) == true, "\(place) keeps the token as sent")
        }
        #expect(places["log"]?.contains("credentials=full") == true, "\(places["log"] ?? "")")
        #expect(places["log"]?.contains(String(token.split(separator: ".")[2])) == false, "the log never shows the token")
    }

    /// The PostgreSQL table too, read with Debian's psql, row by row as text.
    @Test(.timeLimit(.minutes(3)))
    func thePostgreSQLTableHoldsNoSignature() async throws {
        try await withPostgres { postgres in
            let store = try await postgres.createDatabase()
            let (token, places) = try await Self.run(extra: [], store: store)
            let database = String(store.split(separator: "/").last ?? "")
            let rows = try await postgres.psql("SELECT r::text FROM apns_mock_recordings r", database: database)
            let parts = token.split(separator: ".")
            #expect(!rows.isEmpty && !rows.contains(String(parts[2])), "the signature is in the table")
            #expect(rows.contains(parts[0] + "." + parts[1] + ".REDACTED-"), "\(rows.prefix(2000))")
            #expect(places.values.allSatisfy { !$0.contains(String(parts[2])) })
        }
    }
}
