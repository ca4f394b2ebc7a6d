import APNsMock
import APNsMockServer
import APNsMockStores
import Foundation
import Testing

/// `--store sqlite:PATH`, end to end with the built binary: under h2load and a signal nothing is lost (200s counted
/// = rows), a restart loads the recordings back, `--max-recorded` bounds the table, a clear empties it.
@Suite("SQLite store", .serialized)
struct SQLiteStoreTests {
    /// Rows in the database, counted with Python's own sqlite3 module (not the mock's code), by status.
    static func rows(in database: String, status: Int? = nil) async throws -> Int {
        let filter = status.map { " WHERE status = \($0)" } ?? ""
        let result = try await ExternalTool.run("python3", [
            "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM recordings\(filter)').fetchone()[0])",
            database,
        ])
        guard result.exitCode == 0, let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("counting rows in \(database) failed: \(result)")
        }
        return count
    }

    @Test(.timeLimit(.minutes(3)))
    func aSignalUnderLoadLosesNothingAndARestartLoadsTheRecordingsBack() async throws {
        _ = try ExternalTool.require("h2load")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        // With a record file too: two sinks, one given copies and the last the recordings themselves.
        let recordFile = folder.appendingPathComponent("recordings.ndjson").path
        let (first, ports) = try await RecordingPipelineTests.serve(
            ["--store", "sqlite:" + database, "--record-file", recordFile, "--shutdown-grace-period", "5"], in: folder
        )
        defer { first.cleanUp() }
        let token = TestData.deviceToken()
        let (status, answered200) = try await RecordingPipelineTests.signalUnderLoad(first, ports: ports, token: token, connections: 8)
        #expect(status == 0, "\(first.output)")
        #expect(answered200 >= 5_000)
        #expect(try await Self.rows(in: database, status: 200) == answered200, "h2load counted \(answered200) 200s\n\(first.output)")
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains(#""response":{"status":200,"#) }.count == answered200, "h2load counted \(answered200) 200s")
        #expect(first.output.contains("sqlite="), "the last log line names what the store wrote\n\(first.output)")

        // A second run on the same file: the recordings are back, in order, and new ones follow them.
        let (second, secondPorts) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database], in: folder)
        defer { second.cleanUp() }
        let secondAdmin = AdminClient(port: secondPorts.admin)
        let stats = try await secondAdmin.request(.get, "/admin/stats")
        #expect(stats.json["recorder"]?["stored"]?.int == answered200, "\(stats.json)\n\(second.output)")
        let oldest = try await secondAdmin.notifications([("limit", "1")])
        #expect(oldest.first?.deviceToken == token)
        #expect(oldest.first?.status == 200)
        let newest = try await secondAdmin.notifications([("order", "newest"), ("limit", "1")])
        let lastSequence = try #require(newest.first?.json["sequence"]?.int)
        let push = try await ProviderCurlTests.curl([
            "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload,
            "https://127.0.0.1:\(secondPorts.provider)/3/device/\(TestData.deviceToken())",
        ])
        #expect(push.stdout == "200")
        let fresh = try await secondAdmin.waitForNotifications(count: 1, timeout: "5s", [("after", String(lastSequence))])
        #expect(fresh.first?.json["sequence"]?.int == lastSequence + 1)

        // A clear empties the table too (once the writer has had its turn).
        _ = try await secondAdmin.request(.delete, "/admin/notifications")
        _ = try await poll(timeout: .seconds(30), "an empty table after DELETE /admin/notifications") { () -> Bool? in
            try await Self.rows(in: database) == 0 ? true : nil
        }
    }

    /// A restart on the same file finds the simulated devices as they were: their states, what is stored for them,
    /// each push's delivery log (with its recording, for previews) and the clock's offset.
    @Test(.timeLimit(.minutes(2)))
    func aRestartKeepsDeviceStatesAndDeliveryLogs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        let phone = TestData.deviceToken()
        let (first, ports) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database], in: folder)
        defer { first.cleanUp() }
        let sent = try await Self.deviceDeliveredThenStored(first, ports: ports, phone: phone)
        let (second, secondPorts) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database], in: folder)
        defer { second.cleanUp() }
        try await Self.expectDeviceBack(second, ports: secondPorts, phone: phone, sent: sent)
    }

    typealias Ports = (provider: Int, admin: Int)

    static func admin(_ ports: Ports, _ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: JSON) {
        var arguments = ["-s", "-w", "\n%{http_code}", "-X", method]
        if let body { arguments += ["--data-binary", body] }
        let result = try await ExternalTool.run("curl", arguments + ["http://127.0.0.1:\(ports.admin)\(path)"])
        let lines = result.stdout.components(separatedBy: "\n")
        return (Int(lines.last ?? "") ?? -1, try JSON(parsing: Array(lines.dropLast().joined(separator: "\n").utf8)))
    }

    /// Pushes `alert` to `token`; returns the answer's apns-id.
    static func push(_ ports: Ports, _ token: String, _ alert: String) async throws -> String {
        let result = try await ProviderCurlTests.curl([
            "--http2", "-s", "-D", "-", "-o", "/dev/null", "-H", "apns-topic: \(TestData.topic)", "-d", #"{"aps":{"alert":"\#(alert)"}}"#,
            "https://127.0.0.1:\(ports.provider)/3/device/\(token)",
        ])
        let line = result.stdout.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("apns-id: ") }
        return String(try #require(line, "\(result)").dropFirst("apns-id: ".count))
    }

    /// A device registered, a push delivered to it, the device offline and a push stored for it, the clock moved
    /// an hour; then SIGTERM. Returns the two pushes' apns-ids.
    static func deviceDeliveredThenStored(_ server: LaunchedProcess, ports: Ports, phone: String) async throws -> (delivered: String, stored: String) {
        #expect(try await admin(ports, "POST", "/admin/devices", #"{"token":"\#(phone)","topic":"\#(TestData.topic)","name":"phone"}"#).status == 201)
        let delivered = try await push(ports, phone, "first")
        #expect(try await admin(ports, "PUT", "/admin/devices/\(phone)/state", #"{"state":"offline"}"#).status == 200)
        let stored = try await push(ports, phone, "while offline")
        #expect(try await admin(ports, "POST", "/admin/clock", #"{"advance":"1h"}"#).status == 200)
        server.signal(SIGTERM)
        let exit = try await server.waitForExit(timeout: .seconds(30))
        #expect(exit == 0, "\(server.output)")
        return (delivered, stored)
    }

    /// The device of `deviceDeliveredThenStored` as it was: its state, the clock's offset, each push's log with its
    /// recording (the log's sequence is the recording's here, and the cards come from it).
    static func expectDeviceBack(_ server: LaunchedProcess, ports: Ports, phone: String, sent: (delivered: String, stored: String)) async throws {
        #expect(server.output.contains("simulated devices loaded back from the store"), "\(server.output)")
        let devices = try await admin(ports, "GET", "/admin/devices")
        #expect(devices.json["devices"]?[0]?["state"]?.string == "offline" && devices.json["devices"]?[0]?["name"]?.string == "phone", "\(devices.json)")
        let clock = try await admin(ports, "GET", "/admin/clock")
        #expect(clock.json["offset"]?.string == "1h", "\(clock.json)")
        let kept = try await admin(ports, "GET", "/admin/delivery?apns-id=\(sent.delivered)")
        let recording = try await admin(ports, "GET", "/admin/notifications/\(sent.delivered)")
        #expect(kept.json["state"]?.string == "delivered", "\(kept.json)")
        #expect(kept.json["sequence"] != nil && kept.json["sequence"] == recording.json["sequence"], "\(kept.json)\n\(recording.json)")
        let waiting = try await admin(ports, "GET", "/admin/devices/\(phone)/stored")
        #expect(waiting.json["stored"]?[0]?["apnsId"]?.string == sent.stored, "\(waiting.json)")
        #expect(try await admin(ports, "PUT", "/admin/devices/\(phone)/state", #"{"state":"online"}"#).status == 200)
        let received = try await admin(ports, "GET", "/admin/devices/\(phone)/received")
        #expect(received.json["received"]?.array?.compactMap { $0["state"]?.string } == ["delivered", "deliveredFromStorage"], "\(received.json)")
        let cards = (received.json["preview"]?["apps"]?[0]?["stacks"]?.array ?? []).flatMap { $0["cards"]?.array ?? [] }
        let bodies = cards.compactMap { $0["body"]?.string }
        #expect(bodies == ["while offline", "first"], "the cards come from the recordings loaded back: \(received.json)")
    }

    /// With `--tenants`, each tenant's simulated devices come back to that tenant after a restart (and only to it);
    /// a restart without tenants reads the same file and finds only the `unidentified` tenant's devices.
    @Test(.timeLimit(.minutes(2)))
    func aRestartGivesEachTenantItsOwnDevicesBack() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        let (topicA, topicB) = ("com.teama.app", "com.teamb.app")
        let (phoneA, phoneB) = (TestData.deviceToken(), TestData.deviceToken())
        func admin(_ ports: (provider: Int, admin: Int), _ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: JSON) {
            var arguments = ["-s", "-w", "\n%{http_code}", "-X", method]
            if let body { arguments += ["--data-binary", body] }
            let result = try await ExternalTool.run("curl", arguments + ["http://127.0.0.1:\(ports.admin)\(path)"])
            let lines = result.stdout.components(separatedBy: "\n")
            return (Int(lines.last ?? "") ?? -1, try JSON(parsing: Array(lines.dropLast().joined(separator: "\n").utf8)))
        }
        func names(_ ports: (provider: Int, admin: Int), tenant: String?) async throws -> [String] {
            let devices = try await admin(ports, "GET", "/admin/devices" + (tenant.map { "?tenant=\($0)" } ?? ""))
            return (devices.json["devices"]?.array ?? []).compactMap { $0["name"]?.string }
        }

        let tenants = ["--store", "sqlite:" + database, "--tenants", "by-topic"]
        let (first, ports) = try await RecordingPipelineTests.serve(tenants, in: folder)
        defer { first.cleanUp() }
        #expect(try await admin(ports, "POST", "/admin/devices?tenant=\(topicA)", #"{"token":"\#(phoneA)","topic":"\#(topicA)","name":"a-phone","state":"offline"}"#).status == 201)
        #expect(try await admin(ports, "POST", "/admin/devices?tenant=\(topicB)", #"{"token":"\#(phoneB)","topic":"\#(topicB)","name":"b-phone"}"#).status == 201)
        #expect(try await admin(ports, "POST", "/admin/devices", #"{"token":"\#(TestData.deviceToken())","topic":"\#(TestData.topic)","name":"nobodys"}"#).status == 201)
        first.signal(SIGTERM)
        #expect(try await first.waitForExit(timeout: .seconds(30)) == 0, "\(first.output)")

        let (second, secondPorts) = try await RecordingPipelineTests.serve(tenants, in: folder)
        defer { second.cleanUp() }
        #expect(second.output.contains("simulated devices loaded back from the store"), "\(second.output)")
        #expect(try await names(secondPorts, tenant: topicA) == ["a-phone"])
        #expect(try await names(secondPorts, tenant: topicB) == ["b-phone"])
        #expect(try await names(secondPorts, tenant: nil) == ["nobodys"])
        let listA = try await admin(secondPorts, "GET", "/admin/devices?tenant=\(topicA)")
        #expect(listA.json["devices"]?.array?.first?["state"]?.string == "offline", "\(listA.json)")
        second.signal(SIGTERM)
        #expect(try await second.waitForExit(timeout: .seconds(30)) == 0, "\(second.output)")

        let (third, thirdPorts) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database], in: folder)
        defer { third.cleanUp() }
        #expect(try await names(thirdPorts, tenant: nil) == ["nobodys"], "without tenants, the unidentified tenant's devices\n\(third.output)")
    }

    /// `--retention`: a recording older than it goes from memory and from the table, and `/admin/stats` says so.
    @Test(.timeLimit(.minutes(2)))
    func theRetentionBoundsMemoryAndTheTableByAge() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        let (launched, ports) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database, "--retention", "1s"], in: folder)
        defer { launched.cleanUp() }
        func push() async throws {
            let result = try await ProviderCurlTests.curl([
                "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload,
                "https://127.0.0.1:\(ports.provider)/3/device/\(TestData.deviceToken())",
            ])
            #expect(result.stdout == "200", "\(result)")
        }
        try await push()
        let admin = AdminClient(port: ports.admin)
        _ = try await poll(timeout: .seconds(30), "the sqlite sink to write the first") { () -> Bool? in
            try await Self.rows(in: database) == 1 ? true : nil
        }
        // Polled with a deadline: the second later than a second after the first, a list reads the clock.
        let stats = try await poll(timeout: .seconds(30), "the first recording to age out") { () -> JSON? in
            let stats = try await admin.stats()
            return stats["recorder"]?["expired"]?.int == 1 ? stats : nil
        }
        #expect(stats["recorder"]?["retention"]?.string == "1s" && stats["recorder"]?["stored"]?.int == 0, "\(stats)")
        let secondPushed = ContinuousClock.now
        try await push()
        // The first goes from the table; the second stays as long as it is younger than the retention. A loaded
        // machine may take longer than that second to look, so the second's presence is asserted only when the
        // look came within it.
        let left = try await poll(timeout: .seconds(30), "the table to drop the first") { () -> [String]? in
            let sequences = try await ExternalTool.run("python3", [
                "-c", "import sqlite3,sys; print(' '.join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute('SELECT sequence FROM recordings ORDER BY sequence')))", database,
            ]).stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            return sequences.contains("1") ? nil : sequences
        }
        let listed = try await admin.notifications().count
        if ContinuousClock.now - secondPushed < .milliseconds(900) {
            #expect(left == ["2"] && listed == 1, "\(left), \(listed) listed")
        } else {
            #expect(left.allSatisfy { $0 == "2" } && listed <= 1, "\(left), \(listed) listed")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func maxRecordedBoundsTheTable() async throws {
        _ = try ExternalTool.require("h2load")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("recordings.sqlite").path
        let (launched, ports) = try await RecordingPipelineTests.serve(["--store", "sqlite:" + database, "--max-recorded", "1000"], in: folder)
        defer { launched.cleanUp() }
        let result = try await ExternalTool.run(
            "h2load",
            ["-n", "3000", "-c", "2", "-m", "20", "-H", "apns-topic: \(TestData.topic)", "-d", "/dev/stdin",
             "https://127.0.0.1:\(ports.provider)/3/device/\(TestData.deviceToken())"],
            stdin: Data(TestData.alertPayload.utf8)
        )
        #expect(RecordingPipelineTests.status2xx(result.stdout) == 3000, "\(result)")
        let admin = AdminClient(port: ports.admin)
        _ = try await poll(timeout: .seconds(30), "the sqlite sink to write all 3,000") { () -> Bool? in
            let stats = try await admin.request(.get, "/admin/stats")
            let sink = stats.json["sinks"]?.array?.first { $0["name"]?.string == "sqlite" }
            return sink?["written"]?.int == 3000 ? true : nil
        }
        #expect(try await Self.rows(in: database) == 1000)
    }

    @Test func aFolderThatDoesNotExistStopsTheStartWithTheReason() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-sqlite-\(UUID().uuidString)")
        var configuration = testServerConfiguration()
        configuration.store = .sqlite(path: folder.appendingPathComponent("missing/recordings.sqlite").path)
        do {
            let server = try await MockServer.start(configuration: configuration, stores: StoreOpener())
            await server.shutdown()
            Issue.record("the server started without its store")
        } catch let error as StartupError {
            #expect(error.description.contains("--store sqlite:"), "\(error)")
        }
    }
}
