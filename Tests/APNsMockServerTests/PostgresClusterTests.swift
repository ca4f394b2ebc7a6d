import APNsMock
import APNsMockServer
import APNsMockStores
import Foundation
import Testing

/// `--store postgres://…` end to end: two replicas (the built binary, twice) share one PostgreSQL server of the
/// test's own, real clients push to each, and either admin API answers for both.
@Suite("PostgreSQL store: replicas as one service", .serialized)
struct PostgresClusterTests {
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func push(_ token: String, to port: Int) async throws -> (status: String, body: String) {
        let result = try await ProviderCurlTests.curl([
            "--http2", "-w", "\n%{http_code}", "-H", "apns-topic: \(TestData.topic)", "-d", TestData.alertPayload,
            "https://127.0.0.1:\(port)/3/device/\(token)",
        ])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    static func h2load(_ count: Int, token: String, port: Int) async throws -> Int {
        let result = try await ExternalTool.run(
            "h2load",
            ["-n", String(count), "-c", "2", "-m", "20", "-H", "apns-topic: \(TestData.topic)", "-d", "/dev/stdin",
             "https://127.0.0.1:\(port)/3/device/\(token)"],
            stdin: Data(TestData.alertPayload.utf8),
            timeout: .seconds(120)
        )
        return try #require(RecordingPipelineTests.status2xx(result.stdout), "\(result)")
    }

    @Test(.timeLimit(.minutes(5)))
    func twoReplicasShareRecordingsWaitsDevicesChannelsAndTheScenario() async throws {
        _ = try ExternalTool.require("h2load")
        try await withPostgres { postgres in
            let store = try await postgres.createDatabase()
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let (a, portsA) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "a"], in: folder)
            defer { a.cleanUp() }
            let (b, portsB) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "b"], in: folder)
            defer { b.cleanUp() }
            let adminA = AdminClient(port: portsA.admin)
            let adminB = AdminClient(port: portsB.admin)

            // A wait on A is woken by a push B answered.
            let awaited = TestData.deviceToken()
            let waiting = Task { try await adminA.waitForNotifications(count: 1, timeout: "30s", [("token", awaited)]) }
            #expect(try await Self.push(awaited, to: portsB.provider).status == "200")
            let woken = try await waiting.value
            #expect(woken.first?.status == 200)
            #expect(woken.first?.deviceToken == awaited)

            // Each replica answers half of the load; either admin API lists all of it.
            let tokenA = TestData.deviceToken()
            let tokenB = TestData.deviceToken()
            async let answeredA = Self.h2load(2_000, token: tokenA, port: portsA.provider)
            async let answeredB = Self.h2load(2_000, token: tokenB, port: portsB.provider)
            #expect(try await answeredA == 2_000)
            #expect(try await answeredB == 2_000)
            for admin in [adminA, adminB] {
                _ = try await poll(timeout: .seconds(60), "both replicas' 4,001 recordings on port \(admin.baseURL)") { () -> Bool? in
                    try await admin.stats()["received"]?.int == 4_001 ? true : nil
                }
                for token in [tokenA, tokenB] {
                    let page = try await admin.request(.get, "/admin/notifications", query: [("token", token), ("limit", "1")])
                    #expect(page.json["total"]?.int == 2_000, "\(admin.baseURL) \(token)")
                }
            }
            #expect(try await adminA.stats()["cluster"]?["receivedFromReplicas"]?.int == 2_001)
            _ = try await poll(timeout: .seconds(30), "4,001 rows in PostgreSQL") { () -> Bool? in
                try await postgres.count("apns_mock_recordings", in: store) == 4_001 ? true : nil
            }
            #expect(try await postgres.count("apns_mock_recordings", where: "replica = 'b'", in: store) == 2_001)

            // A device unregistered through A answers 410 on B, with A's timestamp.
            let device = TestData.deviceToken()
            let added = try await adminA.call(
                "POST", "/admin/devices", body: #"{"token":"\#(device)","topic":"\#(TestData.topic)","environment":"development"}"#
            )
            #expect(added.status == 201)
            let unregistered = try await adminA.call("POST", "/admin/devices/\(device)/unregister", body: #"{"timestamp":1700000000000}"#)
            #expect(unregistered.status == 200, "\(unregistered.json)")
            let gone = try await poll(timeout: .seconds(10), "B to answer 410 for the device A unregistered") { () -> String? in
                let answer = try await Self.push(device, to: portsB.provider)
                return answer.status == "410" ? answer.body : nil
            }
            #expect(gone.contains(#""reason":"Unregistered""#) && gone.contains("1700000000000"), "\(gone)")

            // A scenario put on A is in force on B, at the same version.
            let put = try await adminA.call("PUT", "/admin/scenario", body: "name: cluster-wide\nrules:\n  - name: down\n    match: {topic: com.example.down}\n    status: 503\n    reason: ServiceUnavailable\n")
            #expect(put.status == 200, "\(put.json)")
            let versionA = try await poll(timeout: .seconds(10), "A's scenario version from the database") { () -> Int? in
                let state = try await adminA.call("GET", "/admin/scenario").json
                return state["scenario"]?["name"]?.string == "cluster-wide" ? state["version"]?.int : nil
            }
            _ = try await poll(timeout: .seconds(10), "B to put A's scenario in force at A's version") { () -> Bool? in
                let state = try await adminB.call("GET", "/admin/scenario").json
                let version = try await adminA.call("GET", "/admin/scenario").json["version"]?.int
                return state["scenario"]?["name"]?.string == "cluster-wide" && state["version"]?.int == version ? true : nil
            }
            #expect(versionA >= 1)

            // A channel made on B is known to A.
            let channel = try await adminB.call("POST", "/admin/channels", body: #"{"bundleId":"\#(TestData.topic)"}"#)
            let channelID = try #require(channel.json["id"]?.string, "\(channel.json)")
            _ = try await poll(timeout: .seconds(10), "A to list the channel B made") { () -> Bool? in
                let list = try await adminA.call("GET", "/admin/channels").json["channels"]?.array ?? []
                return list.contains { $0["id"]?.string == channelID } ? true : nil
            }

            // A clear on B empties A and the table.
            try await adminB.clear()
            _ = try await poll(timeout: .seconds(10), "A to forget every recording after B's clear") { () -> Bool? in
                try await adminA.stats()["recorder"]?["stored"]?.int == 0 ? true : nil
            }
            #expect(try await postgres.count("apns_mock_recordings", in: store) == 0)
        }
    }

    @Test(.timeLimit(.minutes(4)))
    func aSignalUnderLoadLosesNothingAndARestartLoadsTheRecordingsBack() async throws {
        _ = try ExternalTool.require("h2load")
        try await withPostgres { postgres in
            let store = try await postgres.createDatabase()
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let (first, ports) = try await RecordingPipelineTests.serve(
                ["--store", store, "--shutdown-grace-period", "5", "--replica", "a"], in: folder
            )
            defer { first.cleanUp() }
            // The load goes to a simulated device: its snapshot is saved after the last connection closed.
            let phone = TestData.deviceToken()
            let register = try await SQLiteStoreTests.admin(ports, "POST", "/admin/devices", #"{"token":"\#(phone)","topic":"\#(TestData.topic)"}"#)
            #expect(register.status == 201, "\(register.json)")
            let (status, answered200) = try await RecordingPipelineTests.signalUnderLoad(first, ports: ports, token: phone, connections: 4)
            #expect(status == 0, "\(first.output)")
            #expect(answered200 >= 5_000)
            #expect(
                try await postgres.count("apns_mock_recordings", where: "status = 200", in: store) == answered200,
                "h2load counted \(answered200) 200s\n\(first.output)"
            )
            #expect(first.output.contains("postgres="), "the last log line names what the store wrote\n\(first.output)")

            let (second, secondPorts) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "a"], in: folder)
            defer { second.cleanUp() }
            let stats = try await AdminClient(port: secondPorts.admin).stats()
            #expect(stats["recorder"]?["stored"]?.int == min(answered200, 100_000), "\(stats)\n\(second.output)")
            // Every push was the device's: it keeps its newest 1,000 logs, each a 200 the load saw.
            let logs = try await SQLiteStoreTests.admin(secondPorts, "GET", "/admin/devices/\(phone)/deliveries")
            #expect(logs.json["deliveries"]?.array?.count == min(answered200, 1_000), "\(second.output)")
        }
    }

    /// A replica restarted with its name finds its simulated devices as it left them: states, what is stored, each
    /// push's delivery log with its recording, the clock's offset. Its recordings are numbered afresh when loaded
    /// (here the newest three of the cluster's five, another replica's first), and each log still finds its own.
    @Test(.timeLimit(.minutes(3)))
    func aRestartedReplicaKeepsItsDevicesStatesAndDeliveryLogs() async throws {
        try await withPostgres { postgres in
            let store = try await postgres.createDatabase()
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let (b, portsB) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "b"], in: folder)
            defer { b.cleanUp() }
            for index in 0..<3 { _ = try await SQLiteStoreTests.push(portsB, TestData.deviceToken(), "b \(index)") }
            let phone = TestData.deviceToken()
            let (first, ports) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "a"], in: folder)
            defer { first.cleanUp() }
            let sent = try await SQLiteStoreTests.deviceDeliveredThenStored(first, ports: ports, phone: phone)
            #expect(try await postgres.count("apns_mock_device_snapshots", where: "replica = 'a'", in: store) == 1)

            let (second, secondPorts) = try await RecordingPipelineTests.serve(["--store", store, "--replica", "a", "--max-recorded", "3"], in: folder)
            defer { second.cleanUp() }
            try await SQLiteStoreTests.expectDeviceBack(second, ports: secondPorts, phone: phone, sent: sent)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func startStopsWithTheDatabasesReasonWhenItRefuses() async throws {
        try await withPostgres { postgres in
            var configuration = testServerConfiguration()
            configuration.store = try #require(RecordingStoreSetting("postgres://postgres@127.0.0.1:\(postgres.port)/no_such_database"))
            let clock = ContinuousClock()
            let started = clock.now
            do {
                let server = try await MockServer.start(configuration: configuration, stores: StoreOpener())
                await server.shutdown()
                Issue.record("the server started without its store")
            } catch let error as StartupError {
                #expect(error.description.contains("no_such_database") && error.description.contains("does not exist"), "\(error)")
            }
            // The server answered: no point waiting for it as for one still starting.
            #expect(clock.now - started < .seconds(10))
        }
    }

    /// The inspector behind a balancer: its live feed lands on one replica and still shows what another answered.
    @Test(.timeLimit(.minutes(2)))
    func aLiveFeedOnOneReplicaShowsWhatAnotherAnswered() async throws {
        try await withPostgres { postgres in
            let store = try #require(RecordingStoreSetting(try await postgres.createDatabase()))
            try await withTestServer(configure: { $0.store = store; $0.replica = "a" }) { (a: TestServer) async throws -> Void in
                try await withTestServer(configure: { $0.store = store; $0.replica = "b" }) { (b: TestServer) async throws -> Void in
                    let token = TestData.deviceToken()
                    let events = try await LiveFeedTests.read(a, count: 2, query: "?token=\(token)") {
                        try await withProviderClient(b) { (provider: ProviderClient) async throws -> Void in
                            for _ in 0..<2 { #expect(try await provider.send(token: token).status == 200) }
                        }
                    }
                    let received = events.array?.filter { $0["event"]?.string == "notification" } ?? []
                    #expect(received.count == 2, "\(events)")
                    #expect(received.allSatisfy { $0["data"]?["deviceToken"]?.string == token }, "\(events)")
                }
            }
        }
    }

    /// Tenants across replicas: each replica lists a tenant's recordings whichever replica answered them, and one
    /// tenant's clear on one replica reaches the other and leaves the other tenant's whole.
    @Test(.timeLimit(.minutes(2)))
    func replicasKeepTenantsApartAndShareATenantsClear() async throws {
        try await withTwoTenantReplicas { a, b in
            func push(_ topic: String, to server: TestServer) async throws {
                let result = try await ProviderCurlTests.curl([
                    "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(topic)", "-d", TestData.alertPayload,
                    server.deviceURL(TestData.deviceToken()),
                ])
                #expect(result.stdout == "200", "\(result)")
            }
            for _ in 0..<3 { try await push("com.a.app", to: a) }
            for _ in 0..<2 { try await push("com.b.app", to: b) }
            try await push("com.a.app", to: b)
            let onB = try await b.admin.waitForNotifications(count: 4, timeout: "30s", [("tenant", "com.a.app")])
            #expect(onB.count == 4 && onB.allSatisfy { $0.json["tenant"]?.string == "com.a.app" }, "\(onB)")
            let onA = try await a.admin.waitForNotifications(count: 2, timeout: "30s", [("tenant", "com.b.app")])
            #expect(onA.count == 2 && onA.allSatisfy { $0.json["tenant"]?.string == "com.b.app" }, "\(onA)")

            let cleared = try await a.admin.request(.delete, "/admin/notifications", query: [("tenant", "com.a.app")])
            #expect(cleared.status == 200, "\(cleared.json)")
            _ = try await poll(timeout: .seconds(30), "A's recordings gone from replica b") { () -> Bool? in
                try await b.admin.notifications([("tenant", "com.a.app")]).isEmpty ? true : nil
            }
            #expect(try await b.admin.notifications([("tenant", "com.b.app")]).count == 2)
            #expect(try await a.admin.notifications([("tenant", "com.b.app")]).count == 2)
            #expect(try await a.admin.notifications([("tenant", "com.a.app")]).isEmpty)
            // The rows went too: the store's sink carried the clear out without an error.
            let sinks = try await a.admin.stats()["sinks"]?.array ?? []
            let postgresSink = try #require(sinks.first { $0["name"]?.string == "postgres" }, "\(sinks)")
            #expect(postgresSink["lastError"] == nil, "\(postgresSink)")
        }
    }

    /// A tenant's scenario put in force on one replica answers that tenant's pushes on the other: for a tenant the
    /// other had met (at once, through the notice) and for one it had not (when it first comes); the other
    /// tenants keep theirs.
    @Test(.timeLimit(.minutes(2)))
    func aTenantsScenarioReachesTheOtherReplica() async throws {
        try await withTwoTenantReplicas { a, b in
            func status(_ topic: String, on server: TestServer) async throws -> String {
                try await ProviderCurlTests.curl([
                    "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(topic)", "-d", TestData.alertPayload,
                    server.deviceURL(TestData.deviceToken()),
                ]).stdout
            }
            // b meets com.a.app before the change, and com.c.app only after it.
            #expect(try await status("com.a.app", on: b) == "200")
            let throttled = "name: throttled\nrules:\n  - name: every-push\n    reason: TooManyRequests\n"
            for tenant in ["com.a.app", "com.c.app"] {
                let put = try await BroadcastEndToEndTests.admin(a, "PUT", "/admin/scenario?tenant=\(tenant)", body: throttled)
                #expect(put.status == 200, "\(put)")
                #expect(try await status(tenant, on: a) == "429")
            }
            _ = try await poll(timeout: .seconds(30), "com.a.app's scenario on replica b") { () -> Bool? in
                try await status("com.a.app", on: b) == "429" ? true : nil
            }
            #expect(try await status("com.c.app", on: b) == "429", "a tenant b meets after the change starts with it")
            #expect(try await status("com.b.app", on: b) == "200")
            #expect(try await status("com.b.app", on: a) == "200")
            // And back: b's reset of com.a.app reaches a.
            let reset = try await BroadcastEndToEndTests.admin(b, "POST", "/admin/reset?tenant=com.a.app")
            #expect(reset.status == 200, "\(reset)")
            _ = try await poll(timeout: .seconds(30), "com.a.app's reset on replica a") { () -> Bool? in
                try await status("com.a.app", on: a) == "200" ? true : nil
            }
            #expect(try await status("com.c.app", on: a) == "429")
        }
    }

    /// A tenant's devices and channels made on one replica are that tenant's on the others, and on a replica that
    /// starts later; the other tenants do not see them; a tenant's reset takes them away everywhere.
    @Test(.timeLimit(.minutes(3)))
    func aTenantsDevicesAndChannelsReachTheOtherReplicas() async throws {
        try await withTwoTenantReplicas { a, b, configure in
            func status(_ topic: String, _ token: String, on server: TestServer) async throws -> String {
                try await ProviderCurlTests.curl([
                    "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(topic)", "-d", TestData.alertPayload,
                    server.deviceURL(token),
                ]).stdout
            }
            func channelIDs(_ tenant: String, on server: TestServer) async throws -> [String] {
                let list = try await server.admin.request(.get, "/admin/channels", query: [("tenant", tenant)])
                #expect(list.status == 200, "\(list.json)")
                return list.json["channels"]?.array?.compactMap { $0["id"]?.string } ?? []
            }
            // b meets com.a.app before the device comes; the unidentified tenant's device goes too.
            let removed = TestData.deviceToken()
            #expect(try await status("com.a.app", removed, on: b) == "200")
            let device = #"{"token":"\#(removed)","topic":"com.a.app","environment":"development"}"#
            #expect(try await BroadcastEndToEndTests.admin(a, "POST", "/admin/devices?tenant=com.a.app", body: device).status == 201)
            let unregister = try await BroadcastEndToEndTests.admin(
                a, "POST", "/admin/devices/\(removed)/unregister?tenant=com.a.app", body: #"{"timestamp":1700000000000}"#
            )
            #expect(unregister.status == 200, "\(unregister)")
            _ = try await poll(timeout: .seconds(30), "com.a.app's unregistered device on replica b") { () -> Bool? in
                try await status("com.a.app", removed, on: b) == "410" ? true : nil
            }
            #expect(try await status("com.b.app", removed, on: b) == "200", "another tenant's token is not that device")
            let devicesOfB = try await BroadcastEndToEndTests.admin(b, "GET", "/admin/devices?tenant=com.b.app")
            #expect(devicesOfB.status == 200 && !devicesOfB.body.contains(removed), "\(devicesOfB)")

            // A channel com.b.app makes on b is com.b.app's on a, and a tenant a meets only now.
            let made = try await BroadcastEndToEndTests.admin(b, "POST", "/admin/channels?tenant=com.b.app", body: #"{"bundleId":"com.b.app"}"#)
            let channelID = try #require(try JSON(parsing: Array(made.body.utf8))["id"]?.string, "\(made)")
            _ = try await poll(timeout: .seconds(30), "com.b.app's channel on replica a") { () -> Bool? in
                try await channelIDs("com.b.app", on: a).contains(channelID) ? true : nil
            }
            #expect(try await channelIDs("com.a.app", on: a).isEmpty)

            // A replica started now loads both.
            try await withTestServer(configure: configure("c")) { (c: TestServer) async throws -> Void in
                #expect(try await status("com.a.app", removed, on: c) == "410")
                #expect(try await channelIDs("com.b.app", on: c) == [channelID])
            }

            // com.a.app's reset on b takes its device away on a too; com.b.app keeps its channel.
            #expect(try await BroadcastEndToEndTests.admin(b, "POST", "/admin/reset?tenant=com.a.app").status == 200)
            _ = try await poll(timeout: .seconds(30), "com.a.app's reset on replica a") { () -> Bool? in
                try await status("com.a.app", removed, on: a) == "200" ? true : nil
            }
            #expect(try await channelIDs("com.b.app", on: a) == [channelID])
        }
    }

    /// Two replicas of one fresh database, with `--tenants by-topic`.
    private func withTwoTenantReplicas(_ body: (TestServer, TestServer) async throws -> Void) async throws {
        try await withTwoTenantReplicas { a, b, _ in try await body(a, b) }
    }

    /// Two replicas of one fresh database, with `--tenants by-topic`, and how to configure a third.
    private func withTwoTenantReplicas(
        _ body: (TestServer, TestServer, _ configure: (String) -> (inout ServerConfiguration) -> Void) async throws -> Void
    ) async throws {
        try await withPostgres { postgres in
            let store = try #require(RecordingStoreSetting(try await postgres.createDatabase()))
            func configure(_ replica: String) -> (inout ServerConfiguration) -> Void {
                { $0.store = store; $0.replica = replica; $0.tenants = .byTopic }
            }
            try await withTestServer(configure: configure("a")) { (a: TestServer) async throws -> Void in
                try await withTestServer(configure: configure("b")) { (b: TestServer) async throws -> Void in
                    try await body(a, b, configure)
                }
            }
        }
    }
}
