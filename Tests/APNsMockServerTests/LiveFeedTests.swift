import APNsMock
import Foundation
import Testing

@testable import APNsMockServer

/// `GET /admin/notifications/stream`: each recording as it is made, filtered, resumable, never slowing the
/// provider port.
@Suite("Live feed (Server-Sent Events)")
struct LiveFeedTests {
    static let reader = TestPaths.repositoryRoot.appendingPathComponent("Tests/Clients/sse_read.py").path

    static func feed(_ server: TestServer) throws -> LiveFeed {
        try #require(server.server.recorder.sinks.compactMap { $0 as? LiveFeed }.first)
    }

    /// Reads `count` notification events with httpx in a process of its own, started before the pushes.
    static func read(
        _ server: TestServer, count: Int, of event: String = "notification", query: String = "", lastEventID: String? = nil,
        pushes: () async throws -> Void
    ) async throws -> JSON {
        let feed = try feed(server)
        let before = feed.streamsOpen
        var arguments = [reader, "http://127.0.0.1:\(server.adminPort)/admin/notifications/stream\(query)", "--count", String(count), "--event", event]
        if let lastEventID { arguments += ["--last-event-id", lastEventID] }
        async let result = ExternalTool.run("python3", arguments, timeout: .seconds(30))
        _ = try await poll(timeout: .seconds(30), "the stream to open") { feed.streamsOpen > before ? true : nil }
        try await pushes()
        let finished = try await result
        #expect(finished.exitCode == 0, "\(finished)")
        return try JSON(parsing: Array(finished.stdout.utf8))
    }

    @Test func aReaderGetsEachMatchingRecordingAsItIsMade() async throws {
        try await withTestServer { server in
            let events = try await Self.read(server, count: 2, query: "?status=400") {
                let client = try await RawPusher.open(server)
                _ = try await client.push()
                _ = try await client.push(token: "abc")
                _ = try await client.push()
                _ = try await client.push(token: "abcd")
                await client.close()
            }
            let notifications = events.array?.filter { $0["event"]?.string == "notification" } ?? []
            #expect(notifications.count == 2, "\(events)")
            #expect(notifications.allSatisfy { $0["data"]?["response"]?["reason"]?.string == "BadDeviceToken" }, "\(events)")
            #expect(notifications.map { $0["id"]?.string } == notifications.map { $0["data"]?["sequence"]?.int.map(String.init) }, "\(events)")
        }
    }

    @Test func lastEventIDResumesWithoutAGap() async throws {
        try await withTestServer { server in
            let client = try await RawPusher.open(server)
            for _ in 0..<3 { _ = try await client.push() }
            let events = try await Self.read(server, count: 3, lastEventID: "1") {
                _ = try await client.push()
            }
            await client.close()
            #expect(events.array?.compactMap { $0["id"]?.string } == ["2", "3", "4"], "\(events)")
        }
    }

    @Test func aBadFilterIsA400() async throws {
        try await withTestServer { server in
            let answer = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/admin/notifications/stream?status=ok")
            #expect(answer.status == 400 && answer.body.contains("status"), "\(answer)")
        }
    }

    /// A reader that reads nothing loses the oldest recordings past its queue, is told how many, and costs the
    /// provider port nothing: every push is answered and recorded.
    @Test func aStalledReaderSkipsAheadAndIsTold() async throws {
        let feed = LiveFeed(capacityPerStream: 4)
        let subscription = feed.subscribe(NotificationQuery())
        let recorder = Recorder(sinks: [feed])
        for index in 0..<10 {
            let request = APNsRequest(method: "POST", path: "/3/device/" + String(repeating: "ab", count: 32), payload: Array("{\"n\":\(index)}".utf8))
            recorder.recordAbandoned(request, streamID: Int32(index * 2 + 1), connection: ConnectionInfo(id: 1), at: 0, because: "test")
        }
        let batch = try #require(await subscription.next(timeout: .seconds(1)))
        #expect(batch.skipped == 6 && batch.recordings.map(\.sequence) == [7, 8, 9, 10])
        #expect(recorder.store.statistics().received == 10)
        feed.unsubscribe(subscription)
        #expect(await subscription.next(timeout: .seconds(1)) == nil)
    }

    /// Delivery data points a reader has not taken are bounded like its recordings: the oldest go, and it is told
    /// how many; a data point whose push the stream's filters do not match never reaches it.
    @Test func aStalledReadersDataPointsSkipAheadAndItIsTold() async throws {
        let feed = LiveFeed(capacityPerStream: 2)
        let subscription = feed.subscribe(try NotificationQuery(parameters: [("status", "200")]))
        func point(_ apnsID: String, status: Int) -> DeliveryRecord {
            let recording = RecordedNotification(
                sequence: 1, receivedAt: 0, connectionID: 1, streamID: 1, request: APNsRequest(method: "POST", path: "/3/device/ab"),
                response: APNsResponse(status: status, reason: status == 200 ? nil : .badDeviceToken, apnsID: apnsID)
            )
            return DeliveryRecord(
                token: "ab", topic: nil, apnsID: apnsID, uniqueID: nil, pushType: "alert", priority: 10, collapseID: nil,
                expiration: nil, expiresAt: nil, events: [DeliveryEvent(.received, at: 0)], recording: recording
            )
        }
        #expect(feed.wantsDeliveries)
        feed.enqueue(deliveries: [point("1", status: 200), point("2", status: 200), point("x", status: 400), point("3", status: 200)])
        let batch = try #require(await subscription.next(timeout: .milliseconds(300)))
        #expect(batch.deliveries.map(\.apnsID) == ["2", "3"])
        #expect(batch.deliveriesSkipped == 1)
        #expect(batch.recordings.isEmpty && batch.skipped == 0)
        feed.unsubscribe(subscription)
        #expect(!feed.wantsDeliveries)
    }

    /// An idle stream waits out each heartbeat interval: a timer left over from an earlier wait must not end the
    /// next one at once (that made a reader spin, writing heartbeats as fast as it could).
    @Test func anIdleStreamWaitsForItsHeartbeats() async throws {
        let feed = LiveFeed()
        let subscription = feed.subscribe(NotificationQuery())
        let recorder = Recorder(sinks: [feed])
        recorder.recordAbandoned(APNsRequest(method: "POST", path: "/3/device/ab"), streamID: 1, connection: ConnectionInfo(id: 1), at: 0, because: "test")
        #expect(await subscription.next(timeout: .milliseconds(300))?.recordings.count == 1)
        let clock = ContinuousClock()
        let started = clock.now
        for _ in 0..<3 {
            let idle = await subscription.next(timeout: .milliseconds(200))
            #expect(idle?.recordings.isEmpty == true)
        }
        // Three idle waits of 200 ms each cannot end sooner than 600 ms unless they are cut short.
        #expect(clock.now - started >= .milliseconds(550), "\(clock.now - started)")
        feed.unsubscribe(subscription)
    }

    /// Shutdown ends an open stream instead of waiting for it (a stream never ends by itself: without that, the
    /// admin server would wait for it, and this test would run into its time limit).
    @Test(.timeLimit(.minutes(3)))
    func shutdownEndsOpenStreams() async throws {
        let server = try await MockServer.start(configuration: testServerConfiguration())
        // The reader would wait 120 s for its one recording; shutdown must end its stream long before. The bound
        // is loose on purpose: a test machine busy with hundreds of other tests once took 10.4 s to shut down.
        let reader = Task {
            try await ExternalTool.run(
                "python3",
                [Self.reader, "http://127.0.0.1:\(server.adminPort)/admin/notifications/stream", "--count", "1", "--timeout", "120"],
                timeout: .seconds(150)
            )
        }
        let feed = try #require(server.recorder.sinks.compactMap { $0 as? LiveFeed }.first)
        _ = try await poll(timeout: .seconds(30), "the stream to open") { feed.streamsOpen > 0 ? true : nil }
        let clock = ContinuousClock()
        let started = clock.now
        await server.shutdown()
        #expect(clock.now - started < .seconds(60), "shutdown waited for the open stream")
        let result = try await reader.value
        #expect(result.exitCode == 0 && result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(result)")
    }

    /// A reader that connects and never reads, during an h2load run: every push is answered and recorded, the
    /// reader's stream skips ahead instead of holding the provider back.
    @Test func aReaderThatNeverReadsDoesNotHoldBackTheProviderPort() async throws {
        try await withTestServer { server in
            let feed = try Self.feed(server)
            let stalled = try await LaunchedProcess(
                executable: try ExternalTool.require("python3"),
                arguments: ["-c", """
                    import socket, sys, time
                    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    s.sendall(b"GET /admin/notifications/stream HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
                    time.sleep(120)
                    """, String(server.adminPort)],
                environment: ProcessInfo.processInfo.environment,
                workingDirectory: FileManager.default.temporaryDirectory
            )
            defer { stalled.signal(SIGKILL); stalled.cleanUp() }
            _ = try await poll(timeout: .seconds(30), "the stalled stream to open") { feed.streamsOpen > 0 ? true : nil }
            let result = try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payload in
                try await ExternalTool.run("h2load", [
                    "-n", "30000", "-c", "4", "-m", "50", "-d", payload, "-H", "apns-topic: \(TestData.topic)",
                    server.deviceURL(TestData.deviceToken()),
                ], timeout: .seconds(60))
            }
            #expect(result.stdout.contains("status codes: 30000 2xx"), "\(result)")
            #expect(server.server.store.statistics().received == 30_000)
            #expect(feed.streamsOpen == 1, "the stalled reader is still connected")
        }
    }
}
