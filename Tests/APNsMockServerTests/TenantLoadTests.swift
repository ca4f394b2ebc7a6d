import APNsMock
import Foundation
import Testing

/// Two tenants loaded at once by h2load through the built binary, with a record file and a SQLite store: each
/// tenant's answers equal its recordings in memory, in the file and in the table, and one tenant's clear takes its
/// rows and leaves the other's whole, across a restart too.
@Suite("Tenants under load", .serialized)
struct TenantLoadTests {
    static let (topicA, topicB) = ("com.a.app", "com.b.app")

    static func h2load(port: Int, topic: String, count: Int) async throws -> Int {
        let result = try await ExternalTool.run(
            "h2load",
            ["-n", String(count), "-c", "2", "-m", "50", "-H", "apns-topic: \(topic)", "-H", "apns-push-type: alert", "-d", "/dev/stdin",
             "https://127.0.0.1:\(port)/3/device/\(TestData.deviceToken())"],
            stdin: Data(TestData.alertPayload.utf8),
            timeout: .seconds(120)
        )
        return try #require(RecordingPipelineTests.status2xx(result.stdout), "\(result)")
    }

    static func rows(in database: String, tenant: String) async throws -> Int {
        let result = try await ExternalTool.run("python3", [
            "-c",
            "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM recordings WHERE json_extract(extras, '$.tenant') = ?\", (sys.argv[2],)).fetchone()[0])",
            database, tenant,
        ])
        guard result.exitCode == 0, let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("counting \(tenant)'s rows in \(database) failed: \(result)")
        }
        return count
    }

    static func received(_ ports: (provider: Int, admin: Int), token: String) async throws -> Int? {
        let result = try await ExternalTool.run("curl", ["-s", "-H", "Authorization: Bearer \(token)", "http://127.0.0.1:\(ports.admin)/admin/stats"])
        return try JSON(parsing: Array(result.stdout.utf8))["received"]?.int
    }

    @Test(.timeLimit(.minutes(4)))
    func eachTenantsAnswersEqualItsRecordingsInEverySinkAndAClearTakesOnlyItsOwn() async throws {
        _ = try ExternalTool.require("h2load")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-tenant-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        let recordFile = folder.appendingPathComponent("recordings.ndjson").path
        let tenantFlags = [
            "--tenants", "by-topic", "--admin-token", "tenant=\(Self.topicA):secret-a", "--admin-token", "tenant=\(Self.topicB):secret-b",
            "--admin-token", "operator",
        ]
        let (first, ports) = try await RecordingPipelineTests.serve(
            ["--store", "sqlite:" + database, "--record-file", recordFile] + tenantFlags, in: folder
        )
        defer { first.cleanUp() }
        async let loadA = Self.h2load(port: ports.provider, topic: Self.topicA, count: 20_000)
        async let loadB = Self.h2load(port: ports.provider, topic: Self.topicB, count: 12_000)
        let (answeredA, answeredB) = try await (loadA, loadB)
        #expect(answeredA == 20_000 && answeredB == 12_000)

        // In memory, as each tenant's token sees it.
        #expect(try await Self.received(ports, token: "secret-a") == answeredA)
        #expect(try await Self.received(ports, token: "secret-b") == answeredB)
        #expect(try await Self.received(ports, token: "operator") == answeredA + answeredB)
        let metrics = try await OperationsTests.get("http://127.0.0.1:\(ports.admin)/metrics", bearer: "operator")
        let samples = OperationsTests.samples(metrics.body)
        #expect(samples[#"apns_mock_tenant_recorded{tenant="com.a.app"}"#] == Double(answeredA), "\(metrics.body)")
        #expect(samples[#"apns_mock_tenant_recorded{tenant="com.b.app"}"#] == Double(answeredB), "\(metrics.body)")
        let metricsOfB = try await OperationsTests.get("http://127.0.0.1:\(ports.admin)/metrics", bearer: "secret-b").body
        #expect(!metricsOfB.contains("com.a.app") && metricsOfB.contains(#"tenant="com.b.app""#), "B's token sees its own row only")
        // In the table, once the writer has had its turn.
        _ = try await poll(timeout: .seconds(30), "each tenant's rows") { () -> Bool? in
            let (a, b) = (try await Self.rows(in: database, tenant: Self.topicA), try await Self.rows(in: database, tenant: Self.topicB))
            return a == answeredA && b == answeredB ? true : nil
        }

        // A's clear: its rows go, B's stay, exactly.
        let cleared = try await ExternalTool.run("curl", [
            "-s", "-X", "DELETE", "-H", "Authorization: Bearer secret-a", "http://127.0.0.1:\(ports.admin)/admin/notifications",
        ])
        #expect(cleared.stdout.contains("cleared"), "\(cleared)")
        _ = try await poll(timeout: .seconds(30), "A's rows gone") { () -> Bool? in
            try await Self.rows(in: database, tenant: Self.topicA) == 0 ? true : nil
        }
        #expect(try await Self.rows(in: database, tenant: Self.topicB) == answeredB)
        #expect(try await Self.received(ports, token: "secret-a") == 0)
        #expect(try await Self.received(ports, token: "secret-b") == answeredB)

        first.signal(SIGTERM)
        #expect(try await first.waitForExit(timeout: .seconds(30)) == 0, "\(first.output)")
        // The file is a log: it keeps every line, each with its tenant.
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains(#""tenant":"com.a.app""#) }.count == answeredA)
        #expect(lines.filter { $0.contains(#""tenant":"com.b.app""#) }.count == answeredB)

        // A restart on the same file: B's recordings are back under B, none of A's.
        let (second, secondPorts) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database] + tenantFlags, in: folder)
        defer { second.cleanUp() }
        #expect(try await Self.received(secondPorts, token: "secret-b") == answeredB)
        #expect(try await Self.received(secondPorts, token: "secret-a") == 0)
    }
}
