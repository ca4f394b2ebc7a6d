import APNsMock
import APNsMockServer
import Foundation
import Testing

/// The recording promise under load and at shutdown: every answer a client saw is in every sink, and a recording
/// says what was really sent.
@Suite("Recording pipeline: load, shutdown and the wire's truth", .serialized)
struct RecordingPipelineTests {
    /// h2load sends as fast as it can while the mock writes a record file; the signal comes mid-load. The
    /// process must exit 0 within the grace period plus the flush bound, and the file must hold exactly the
    /// 200s h2load counted, one parseable line each.
    @Test(.timeLimit(.minutes(3)), arguments: [("SIGTERM", SIGTERM), ("SIGTERM", SIGTERM), ("SIGTERM", SIGTERM), ("SIGINT", SIGINT)])
    func aSignalUnderLoadLosesNoRecordingAndExitsInTime(name: String, signal: Int32) async throws {
        _ = name
        _ = try ExternalTool.require("h2load")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-record-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let recordFile = folder.appendingPathComponent("recordings.ndjson").path
        let grace = 5
        let (launched, ports) = try await Self.serve(["--record-file", recordFile, "--shutdown-grace-period", String(grace)], in: folder)
        defer { launched.cleanUp() }
        let admin = AdminClient(port: ports.admin)
        let url = "https://127.0.0.1:\(ports.provider)/3/device/\(TestData.deviceToken())"
        let load = Task {
            try await ExternalTool.run(
                "h2load",
                ["-n", "5000000", "-c", "8", "-m", "50", "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: alert", "-d", "/dev/stdin", url],
                stdin: Data(TestData.alertPayload.utf8),
                timeout: .seconds(120)
            )
        }
        // Mid-load: once a good number of pushes has been answered.
        _ = try await poll(timeout: .seconds(60), "5,000 recordings before the signal") { () -> Bool? in
            let stats = try? await admin.request(.get, "/admin/stats")
            return (stats?.json["received"]?.int ?? 0) >= 5_000 ? true : nil
        }
        let signalled = ContinuousClock.now
        launched.signal(signal)
        let status = try await launched.waitForExit(timeout: .seconds(grace) + MockServer.sinkFlushBound + .seconds(10))
        let took = ContinuousClock.now - signalled
        let result = try await load.value

        #expect(status == 0, "\(name): apns-mock should exit 0 (status \(String(describing: status)), after \(took))\n\(launched.output)")
        #expect(!launched.exitedBySignal, "\(name) killed the process instead of stopping it\n\(launched.output)")
        #expect(took < .seconds(grace) + MockServer.sinkFlushBound, "\(name): took \(took)")

        let answered200 = try #require(Self.status2xx(result.stdout), "no status line from h2load: \(result)")
        let lines = try String(contentsOfFile: recordFile, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "the file ends with a complete line")
        var recorded200 = 0
        var sequences: [Int] = []
        for line in lines.dropLast() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line.prefix(200))")
            if (object["response"] as? [String: Any])?["status"] as? Int == 200 { recorded200 += 1 }
            sequences.append(object["sequence"] as? Int ?? -1)
        }
        #expect(answered200 >= 5_000, "\(result)")
        #expect(recorded200 == answered200, "\(name): h2load counted \(answered200) 200s, the record file holds \(recorded200)\n\(result.stdout)\n\(launched.output)")
        #expect(sequences == Array(1...sequences.count), "every recording, in sequence order")
        // Nothing was asked of a stopped event loop (connections paused by a full sink were once resumed after the
        // loops stopped, and Hummingbird's own stop once hopped to a stopped loop): under `SWIFTNIO_STRICT` that is a
        // crash whose backtrace is in the output.
        #expect(!launched.output.contains("Cannot schedule tasks on an EventLoop"), "\(name)\n\(launched.output)")
        // The log names what each sink wrote.
        let stopped = try #require(launched.stderr.split(separator: "\n").last { $0.contains("recordings written by each sink") }, "\(launched.output)")
        #expect(stopped.contains("file=\(lines.count - 1)"), "\(stopped)")
    }

    /// A stream the scenario never answers keeps the graceful stop waiting for its grace period (60 s here); a
    /// second signal ends the process at once.
    @Test(.timeLimit(.minutes(2)))
    func aSecondSignalDuringAGracefulStopExitsAtOnce() async throws {
        _ = try ExternalTool.require("curl")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-impatient-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = folder.appendingPathComponent("hang.yaml")
        try "rules:\n  - name: hang\n    match: {topic: com.example.app}\n    hang: true\n".write(to: scenario, atomically: true, encoding: .utf8)
        let (launched, ports) = try await Self.serve(["--scenario", scenario.path, "--shutdown-grace-period", "60"], in: folder)
        defer { launched.cleanUp() }
        let hanging = Task {
            try await ExternalTool.run("curl", [
                "--http2", "--silent", "--cacert", TestPaths.caCertificate, "--max-time", "90", "-H", "apns-topic: \(TestData.topic)",
                "-d", TestData.alertPayload, "https://127.0.0.1:\(ports.provider)/3/device/\(TestData.deviceToken())",
            ], timeout: .seconds(100))
        }
        defer { hanging.cancel() }
        _ = try await AdminClient(port: ports.admin).waitForNotifications(count: 1, timeout: "30s", [("rule", "hang")])
        launched.signal(SIGTERM)
        _ = try await poll(timeout: .seconds(20), "the graceful stop to begin") {
            launched.stderr.contains("apns-mock stopping") ? true : nil
        }
        #expect(launched.exitStatus == nil, "the hanging stream holds the graceful stop\n\(launched.output)")
        let second = ContinuousClock.now
        launched.signal(SIGTERM)
        let status = try await launched.waitForExit(timeout: .seconds(10))
        #expect(status == 128 + SIGTERM, "\(launched.output)")
        #expect(ContinuousClock.now - second < .seconds(5))
        #expect(launched.stderr.contains("second signal during shutdown"), "\(launched.output)")
    }

    /// The writers' threads are named for `top -H` and `perf`, and run at the event loops' priority: at nice 10
    /// they were starved by a busy machine at shutdown and missed the flush bound (a record file lost a third of
    /// a signal-under-load run in CI), and a process may not raise a thread's priority back.
    @Test(.timeLimit(.minutes(2)))
    func writerThreadsAreNamedAndRunAtTheEventLoopsPriority() async throws {
        #if os(Linux)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-writers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (launched, _) = try await Self.serve(
            ["--record-file", folder.appendingPathComponent("r.ndjson").path, "--store", "sqlite:" + folder.appendingPathComponent("r.db").path],
            in: folder
        )
        defer { launched.cleanUp() }
        let tasks = "/proc/\(launched.pid)/task"
        // name → nice (stat's 19th field, after the name in parentheses: the 17th after it).
        var threads: [String: Int] = [:]
        for task in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let name = try? String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "\(tasks)/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            threads[name.trimmingCharacters(in: .newlines)] = Int(fields[16])
        }
        #expect(threads["file writer"] == 0, "\(threads)")
        #expect(threads["sqlite writer"] == 0, "\(threads)")
        #expect(threads.filter { $0.key.hasPrefix("NIO-ELT") }.values.allSatisfy { $0 == 0 }, "\(threads)")
        #expect(threads.keys.contains { $0.hasPrefix("NIO-ELT") }, "\(threads)")
        #endif
    }

    /// The built binary's `serve` on free ports with `--auth none` and `arguments`, once it has said where it listens.
    static func serve(_ arguments: [String], in folder: URL) async throws -> (LaunchedProcess, (provider: Int, admin: Int)) {
        let launched = try await LaunchedProcess(
            executable: try ContainerFilesTests.builtBinary(),
            arguments: ["serve", "--port", "0", "--admin-port", "0", "--channels-port", "0", "--certs-dir", TestPaths.certsDirectory, "--auth", "none"] + arguments,
            // SwiftNIO's strict mode: work asked of a stopped event loop crashes with a backtrace naming the caller,
            // instead of printing one line that says nothing of where it came from.
            environment: ProcessInfo.processInfo.environment.merging([
                "SWIFTNIO_STRICT": "1",
                "SWIFT_BACKTRACE": "enable=yes,symbolicate=fast,threads=crashed,registers=none,images=none,limit=30",
            ]) { _, strict in strict },
            workingDirectory: folder
        )
        do {
            let ports = try await poll(timeout: .seconds(60), "the start-up line with the ports") {
                if let status = launched.exitStatus { throw TestFailure("apns-mock exited \(status) at start-up\n\(launched.output)") }
                return ContainerFilesTests.listeningPorts(in: launched.stderr + launched.stdout)
            }
            return (launched, ports)
        } catch {
            launched.cleanUp()
            throw error
        }
    }

    /// Loads a served mock with h2load (one token, `connections` × 50 streams), sends SIGTERM once it has recorded
    /// 5,000, and returns how it exited and how many 200s h2load counted: what a store's rows must then equal.
    static func signalUnderLoad(
        _ launched: LaunchedProcess, ports: (provider: Int, admin: Int), token: String, connections: Int
    ) async throws -> (status: Int32?, answered200: Int) {
        let admin = AdminClient(port: ports.admin)
        let load = Task {
            try await ExternalTool.run(
                "h2load",
                ["-n", "3000000", "-c", String(connections), "-m", "50", "-H", "apns-topic: \(TestData.topic)", "-H", "apns-push-type: alert",
                 "-d", "/dev/stdin", "https://127.0.0.1:\(ports.provider)/3/device/\(token)"],
                stdin: Data(TestData.alertPayload.utf8),
                timeout: .seconds(120)
            )
        }
        _ = try await poll(timeout: .seconds(60), "5,000 recordings before the signal") { () -> Bool? in
            let stats = try? await admin.request(.get, "/admin/stats")
            return (stats?.json["received"]?.int ?? 0) >= 5_000 ? true : nil
        }
        launched.signal(SIGTERM)
        let status = try await launched.waitForExit(timeout: .seconds(5) + MockServer.sinkFlushBound + .seconds(10))
        let result = try await load.value
        return (status, try #require(status2xx(result.stdout), "\(result)"))
    }

    /// `status codes: 41234 2xx, 0 3xx, 0 4xx, 0 5xx`.
    static func status2xx(_ output: String) -> Int? {
        guard let match = output.firstMatch(of: /status codes: (\d+) 2xx/) else { return nil }
        return Int(match.1)
    }

    /// A scripted close after an error answer: the client reads HEADERS, DATA, then GOAWAY, in that order.
    @Test(arguments: [
        """
        rules:
          - name: reject-and-close
            match: {topic: com.example.app}
            status: 400
            reason: BadDeviceToken
            closeConnection: true
        """,
        """
        connection:
          closeAfterBadDeviceTokens: 1
        rules:
          - name: bad-token
            match: {topic: com.example.app}
            status: 400
            reason: BadDeviceToken
        """,
    ])
    func aCloseAfterAnErrorSendsTheWholeAnswerBeforeTheGoAway(yaml: String) async throws {
        try await withScenario(yaml) { server in
            // Python's h2, reading until the server closes: nghttp sends its own GOAWAY and leaves once its request
            // is answered, before the server's GOAWAY can arrive.
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/h2_frames.py").path,
                "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
                "--token", TestData.deviceToken(), "--topic", TestData.topic,
            ], timeout: .seconds(30))
            #expect(result.exitCode == 0, "\(result)")
            let events = try result.stdout.split(separator: "\n").map { try JSON(parsing: Array($0.utf8)) }
            let kinds = events.compactMap { $0["event"]?.string }
            #expect(kinds == ["headers", "data", "goaway", "closed"], "expected HEADERS, DATA, GOAWAY, then close: \(result.stdout)")
            #expect(events.first?["status"]?.int == 400, "\(result.stdout)")
            #expect(events.count > 1 && events[1]["data"]?.string == #"{"reason":"BadDeviceToken"}"# && events[1]["end"] == .bool(true), "\(result.stdout)")
            #expect(events.count > 2 && events[2]["error"]?.int == 0 && events[2]["last_stream"]?.int == 1, "\(result.stdout)")
            let recorded = try await server.admin.waitForNotifications(count: 1, [("status", "400")])
            #expect(recorded.first?.reason == "BadDeviceToken")
        }
    }

    /// aioapns reads DATA after HEADERS; a GOAWAY before the DATA made it fail with RECV_DATA in state CLOSED.
    @Test func aioapnsGetsItsErrorAnswerBeforeTheConnectionCloses() async throws {
        let yaml = """
            rules:
              - name: reject-and-close
                match: {topic: com.example.app}
                status: 400
                reason: BadDeviceToken
                closeConnection: true
            """
        try await withScenario(yaml, configure: { $0.authMode = .certificate }) { server in
            let token = TestData.deviceToken()
            let result = try await ExternalTool.run("python3", [
                TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/aioapns_push.py").path,
                "--port", String(server.server.providerPort), "--ca", TestPaths.caCertificate,
                "--cert", TestPaths.certsDirectory + "/client-development.pem",
                "--cert-key", TestPaths.certsDirectory + "/client-development-key.pem",
                "--topic", TestData.topic, "--token", token,
            ], timeout: .seconds(40))
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout.contains(#""status": "400""#) && result.stdout.contains("BadDeviceToken"), "\(result)")
        }
    }

    /// curl resets every stream it has already got an answer on; libnghttp2's default reset limit (1,000, then
    /// 33/s) ended such a connection silently, and answers queued past its GOAWAY were recorded as 200s.
    @Test(.timeLimit(.minutes(3)))
    func curlSendsFiveThousandPushesOnOneConnectionAndEachRecordingSaysWhatItGot() async throws {
        let curl = try ExternalTool.require("curl")
        _ = curl
        try await withTestServer { server in
            let count = 5000
            let tokens = (0..<count).map { _ in TestData.deviceToken() }
            // One config file, one segment: the options apply to every URL, each transfer writes its own line.
            var config = """
                http2
                cacert = "\(TestPaths.caCertificate)"
                request = "POST"
                header = "apns-topic: \(TestData.topic)"
                data = "\(TestData.alertPayload.replacingOccurrences(of: "\"", with: "\\\""))"
                write-out = "%{http_code} %header{apns-id}\\n"

                """
            for token in tokens {
                config += "url = \"\(server.deviceURL(token))\"\noutput = \"/dev/null\"\n"
            }
            let result = try await ExternalTool.withTemporaryFile(Data(config.utf8)) { path in
                try await ExternalTool.run(
                    "curl",
                    ["--parallel", "--parallel-max", "100", "--silent", "--config", path],
                    timeout: .seconds(150)
                )
            }
            let answers = result.stdout.split(separator: "\n").map { $0.split(separator: " ") }
            #expect(answers.count == count, "\(result.stderr.prefix(2000))")
            #expect(answers.allSatisfy { $0.first == "200" && $0.count == 2 }, "\(answers.filter { $0.first != "200" }.prefix(5))")
            let stats = try await server.admin.stats()
            #expect(stats["received"]?.int == count, "\(stats)")
            #expect(stats["byStatus"] == .object(["200": .number(Double(count))]), "\(stats)")
            #expect(stats["connections"]?["accepted"]?.int == 1, "one connection: \(stats)")
            let recordedIDs = Set(server.server.store.list().notifications.compactMap { $0.response?.apnsID })
            let receivedIDs = Set(answers.compactMap { $0.count == 2 ? String($0[1]) : nil })
            #expect(recordedIDs == receivedIDs, "each recording's answer is the one curl received")
        }
    }
}
