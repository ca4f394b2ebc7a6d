import Foundation
import Testing

/// Each connection fault and delay of the scenario format, put in force with `PUT /admin/scenario` (or loaded at
/// start) in a short scenario of its own, and observed by the client: nghttp, curl, AsyncHTTPClient or
/// hand-written frames.
@Suite("Scenario faults seen by clients")
struct ScenarioFaultTests {
    /// Leaves every push to `com.example.hang` unanswered.
    static let blackHole = """
        rules:
          - name: black-hole
            match: {topic: com.example.hang}
            hang: true
        """

    @Test func resetAnswersWithRSTStreamAndTheChosenErrorCode() async throws {
        let yaml = """
            rules:
              - name: refused
                match: {topic: com.example.refused}
                reset: REFUSED_STREAM
              - name: cancelled
                match: {topic: com.example.cancelled}
                reset: true
              - name: late-reset
                match: {topic: com.example.late}
                delay: 200ms
                reset: {errorCode: 2}
            """
        try await withScenario(yaml) { server in
            for (topic, code) in [("com.example.refused", "REFUSED_STREAM(0x07)"), ("com.example.cancelled", "CANCEL(0x08)")] {
                let (result, frames, stream) = try await ScenarioNghttp.push(server, headers: [("apns-topic", topic)])
                let received = frames.filter { $0.direction == "recv" && $0.streamID == stream }
                #expect(received.map(\.type) == ["RST_STREAM"], "\(received)\n\(result)")
                #expect(received.first?.details.contains("(error_code=\(code))") == true, "\(received)\n\(result)")
                #expect(!result.stdout.contains("recv (stream_id=\(stream)) :status:"), "no answer besides the reset: \(result)")
            }
            // A delay applies before the fault too.
            let pusher = try await RawPusher.open(server)
            let late = try await pusher.push(headers: [("apns-topic", "com.example.late")])
            #expect(late.end == .reset(0x2), "\(late)")
            #expect(late.elapsed >= .milliseconds(200), "\(late)")
            // The connection goes on after a reset.
            #expect(try await pusher.push().isBareHeaders)
            await pusher.close()

            let refused = try #require(try await server.admin.notifications([("rule", "refused")]).first)
            #expect(refused.hasNullResponse)
            #expect(refused.faults == ["RST_STREAM REFUSED_STREAM"])
            #expect(refused.abandoned == "no answer: RST_STREAM REFUSED_STREAM")
            #expect(try await server.admin.notifications([("rule", "late-reset")]).first?.faults == ["RST_STREAM INTERNAL_ERROR"])
        }
    }

    @Test func goAwayWithoutAnAnswerCarriesItsErrorCodeAndDebugDataThenCloses() async throws {
        let yaml = """
            rules:
              - name: calm-down
                match: {topic: com.example.goaway}
                goaway: {errorCode: ENHANCE_YOUR_CALM, lastStreamId: 0, debugData: '{"reason":"Shutdown"}'}
            """
        try await withScenario(yaml) { server in
            // nghttp prints the GOAWAY it got and that its request was not processed.
            let (result, frames, _) = try await ScenarioNghttp.push(server, headers: [("apns-topic", "com.example.goaway")])
            let goAway = try #require(frames.first { $0.direction == "recv" && $0.type == "GOAWAY" }, "\(result)")
            #expect(
                goAway.details.contains(#"(last_stream_id=0, error_code=ENHANCE_YOUR_CALM(0x0b), opaque_data(21)=[{"reason":"Shutdown"}])"#),
                "\(goAway.details)"
            )
            #expect((result.stdout + result.stderr).contains("Some requests were not processed"), "\(result)")

            // Hand-written frames: GOAWAY, no answer on the stream, then the connection closes.
            let pusher = try await RawPusher.open(server)
            #expect(try await pusher.push().isBareHeaders)
            let outcome = try await pusher.push(headers: [("apns-topic", "com.example.goaway")])
            #expect(outcome.end == .connectionClosed && outcome.frames.isEmpty, "\(outcome)")
            #expect(outcome.goAway?.errorCode == 11 && outcome.goAway?.lastStreamID == 0, "\(outcome)")
            #expect(outcome.goAway?.debugData == #"{"reason":"Shutdown"}"#)
            await pusher.close()
            #expect(try await server.admin.hits("calm-down") == 2)
        }
    }

    @Test func goAwayAfterAnAnswerAndCloseConnection() async throws {
        let yaml = """
            rules:
              - name: answer-then-goaway
                match: {topic: com.example.goaway}
                status: 503
                reason: Shutdown
                goaway: {errorCode: 0, debugData: 'maintenance'}
              - name: rotate
                match: {topic: com.example.rotate}
                accept: true
                closeConnection: true
            """
        try await withScenario(yaml) { server in
            let pusher = try await RawPusher.open(server)
            let shutdown = try await pusher.push(headers: [("apns-topic", "com.example.goaway")])
            #expect(shutdown.end == .answered && shutdown.body == #"{"reason":"Shutdown"}"#, "answered first: \(shutdown)")
            // The GOAWAY follows the answer's HEADERS and DATA: it arrives after the stream has ended.
            let afterShutdown = try await pusher.framesUntilClosed()
            let goAway = try #require(shutdown.goAway ?? afterShutdown.compactMap(GoAway.init).first, "\(shutdown) \(afterShutdown)")
            #expect(goAway.errorCode == 0 && goAway.debugData == "maintenance" && goAway.lastStreamID == 1, "\(goAway)")
            await pusher.close()

            let rotating = try await RawPusher.open(server)
            #expect(try await rotating.push().isBareHeaders)
            let rotated = try await rotating.push(headers: [("apns-topic", "com.example.rotate")])
            #expect(rotated.isBareHeaders, "accepted, then the connection closes: \(rotated)")
            let afterRotation = try await rotating.framesUntilClosed()
            #expect(rotating.isClosed)
            // docs/scenarios.md: "closeConnection: after the answer, close the connection (GOAWAY NO_ERROR, then close)".
            let closingGoAway = rotated.goAway ?? afterRotation.compactMap(GoAway.init).first
            #expect(closingGoAway?.errorCode == 0 && closingGoAway?.lastStreamID == 3, "closeConnection must send GOAWAY NO_ERROR: \(rotated)")
            await rotating.close()

            let recorded = try #require(try await server.admin.notifications([("rule", "rotate")]).first)
            #expect(recorded.status == 200 && recorded.faults == ["GOAWAY NO_ERROR and close after the answer"], "\(recorded)")
            let shutdownRecorded = try #require(try await server.admin.notifications([("rule", "answer-then-goaway")]).first)
            #expect(shutdownRecorded.status == 503 && shutdownRecorded.reason == "Shutdown", "\(shutdownRecorded)")
            #expect(shutdownRecorded.faults == ["GOAWAY NO_ERROR maintenance, then close"])
        }
    }

    @Test func dropClosesTheConnectionWithoutAFrame() async throws {
        let yaml = """
            rules:
              - name: drop
                match: {topic: com.example.drop}
                drop: true
            """
        try await withScenario(yaml) { server in
            // curl: the transfer fails with no HTTP status at all.
            let token = TestData.deviceToken()
            let curl = try await ProviderCurlTests.curl([
                "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: com.example.drop", "-d", TestData.alertPayload,
                server.deviceURL(token),
            ])
            #expect(curl.exitCode != 0 && curl.stdout == "000", "\(curl)")

            // Hand-written frames: the connection ends with no frame for the stream and no GOAWAY; another stream
            // still waiting on that connection is abandoned.
            let pusher = try await RawPusher.open(server)
            let hungToken = TestData.deviceToken()
            try await server.admin.putScenario(yaml + "\n  - name: wait\n    match: {topic: com.example.wait}\n    delay: 10s\n")
            let waiting = await pusher.send(token: hungToken, headers: [("apns-topic", "com.example.wait")])
            // Its recording waits for the delay, so watch the server's open streams to know it has arrived.
            _ = try await poll("the delayed stream to be open") { server.server.tracker.openStreams >= 1 ? true : nil }
            let dropped = try await pusher.push(headers: [("apns-topic", "com.example.drop")])
            #expect(dropped.end == .connectionClosed, "\(dropped)")
            #expect(dropped.frames.isEmpty && dropped.goAway == nil && dropped.settings.isEmpty, "no frame at all: \(dropped)")
            let other = try await pusher.outcome(of: waiting, timeout: .seconds(5))
            #expect(other.end == .connectionClosed && other.frames.isEmpty, "\(other)")
            await pusher.close()

            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.hasNullResponse && recording.faults == ["connection dropped"], "\(recording)")
            #expect(recording.abandoned == "no answer: connection dropped")
            #expect(try await expectServerStillAnswers(server).status == 200)
        }
    }

    /// A delayed answer is recorded when the request is decided, before the delay. When the client gives up (or the
    /// connection closes) during the delay, the answer is never sent, but the recording still says it was.
    @Test func answerNeverSentBecauseTheClientLeftDuringTheDelayIsNotRecordedAsSent() async throws {
        let yaml = """
            rules:
              - name: very-slow
                match: {topic: com.example.slow}
                delay: 5s
            """
        try await withScenario(yaml) { server in
            let token = TestData.deviceToken()
            let curl = try await ProviderCurlTests.curl([
                "--http2", "--max-time", "0.5", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: com.example.slow",
                "-d", TestData.alertPayload, server.deviceURL(token),
            ])
            #expect(curl.exitCode == 28, "curl must time out: \(curl)")
            // curl has closed its connection: the answer can never be sent now.
            try await ProviderAbuseTests.expectNoOpenConnections(server)
            let recordings = try await server.admin.notifications([("token", token)])
            #expect(recordings.count == 1, "\(recordings)")
            #expect(recordings.first?.hasNullResponse == true, "the client never got an answer: \(recordings)")
        }
    }

    @Test func hangLeavesTheStreamUnansweredUntilTheClientGivesUp() async throws {
        try await withScenario(Self.blackHole) { server in
            let token = TestData.deviceToken()
            let started = ContinuousClock.now
            let curl = try await ProviderCurlTests.curl([
                "--http2", "--max-time", "1", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: com.example.hang",
                "-d", TestData.alertPayload, server.deviceURL(token),
            ])
            #expect(curl.exitCode == 28, "curl must time out (exit 28): \(curl)")
            #expect(ContinuousClock.now - started >= .seconds(1))
            // The server recorded the request once, unanswered, with the fault.
            let recordings = try await server.admin.notifications([("token", token)])
            #expect(recordings.count == 1, "\(recordings)")
            #expect(recordings.first?.hasNullResponse == true)
            #expect(recordings.first?.faults == ["no answer (hang)"])
            #expect(recordings.first?.scenarioRule == "black-hole")

            // On a connection that stays open, the stream gets nothing while others are answered.
            let pusher = try await RawPusher.open(server)
            let hung = await pusher.send(headers: [("apns-topic", "com.example.hang")])
            #expect(try await pusher.push().isBareHeaders)
            let outcome = try await pusher.outcome(of: hung, timeout: .milliseconds(300))
            #expect(outcome.end == .timedOut && outcome.frames.isEmpty, "\(outcome)")
            await pusher.close()
        }
    }

    /// Sessions tell the shared tracker their open streams once per read and write, not per stream: the gauge
    /// still counts streams left hanging, and comes back to exactly zero after a load and when they close.
    @Test func streamsOpenCountsHangingStreamsAndComesBackToZero() async throws {
        try await withScenario(Self.blackHole) { server in
            func streamsOpen() async throws -> Double? {
                OperationsTests.samples(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/metrics").body)["apns_mock_streams_open"]
            }
            let load = try await ExternalTool.run("h2load", [
                "-n", "3000", "-c", "3", "-m", "50", "-H", "apns-topic: \(TestData.topic)",
                "-d", "/dev/stdin", server.deviceURL(TestData.deviceToken()),
            ], stdin: Data(TestData.alertPayload.utf8))
            #expect(load.stdout.contains("3000 succeeded"), "\(load)")
            _ = try await poll("no stream open after the load") { try await streamsOpen() == 0 ? true : nil }

            // On a connection that stays open: answered streams close as their answers are written, hanging ones
            // stay open. Sent without waiting for the answers: waiting sends a PING, whose arrival would publish
            // the count again, and the count must be right after the answers' write alone.
            let pusher = try await RawPusher.open(server)
            for _ in 0..<3 { _ = await pusher.send() }
            _ = try await poll("no stream open on an idle connection") { try await streamsOpen() == 0 ? true : nil }
            for _ in 0..<3 { _ = await pusher.send(headers: [("apns-topic", "com.example.hang")]) }
            _ = await pusher.send()
            _ = try await poll("the three hanging streams counted") { try await streamsOpen() == 3 ? true : nil }
            await pusher.close()
            _ = try await poll("no stream open once their connection closed") { try await streamsOpen() == 0 ? true : nil }
        }
    }

    @Test func maxConcurrentStreamsSendsSettingsBeforeTheAnswer() async throws {
        let yaml = """
            rules:
              - name: shrink
                match: {topic: com.example.shrink}
                maxConcurrentStreams: 7
            """
        try await withScenario(yaml) { server in
            let (result, frames, stream) = try await ScenarioNghttp.push(server, headers: [("apns-topic", "com.example.shrink")])
            #expect(result.exitCode == 0, "\(result)")
            let received = frames.filter { $0.direction == "recv" }
            let changed = try #require(
                received.firstIndex { $0.type == "SETTINGS" && $0.details.contains("[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):7]") },
                "no SETTINGS_MAX_CONCURRENT_STREAMS=7: \(result)"
            )
            let answer = try #require(received.firstIndex { $0.type == "HEADERS" && $0.streamID == stream })
            #expect(changed < answer, "the SETTINGS must come before the answer: \(received)")
            #expect(received[changed].details.filter { $0.hasPrefix("[SETTINGS_") }.count == 1)
            #expect(result.stdout.contains("recv (stream_id=\(stream)) :status: 200"), "answered normally: \(result)")
        }
    }

    @Test func delaysHoldAnswersAtLeastThatLong() async throws {
        let yaml = """
            defaults:
              latency: 100ms
            rules:
              - name: fixed
                match: {topic: com.example.fixed}
                delay: 300ms
                status: 500
              - name: jittered
                match: {topic: com.example.jitter}
                delay: {min: 200ms, max: 250ms}
              - name: instant
                match: {topic: com.example.instant}
                delay: 0
            """
        try await withScenario(yaml) { server in
            try await withProviderClient(server) { provider in
                let (fixed, fixedElapsed) = try await provider.timedSend(headers: [("apns-topic", "com.example.fixed")])
                #expect(fixed.status == 500 && fixed.bodyText == #"{"reason":"InternalServerError"}"#)
                #expect(fixedElapsed >= .milliseconds(300), "\(fixedElapsed)")
                let (jittered, jitteredElapsed) = try await provider.timedSend(headers: [("apns-topic", "com.example.jitter")])
                #expect(jittered.status == 200)
                #expect(jitteredElapsed >= .milliseconds(200), "\(jitteredElapsed)")
                // No rule: the default latency.
                let (plain, plainElapsed) = try await provider.timedSend()
                #expect(plain.status == 200)
                #expect(plainElapsed >= .milliseconds(100), "\(plainElapsed)")
                let (instant, _) = try await provider.timedSend(headers: [("apns-topic", "com.example.instant")])
                #expect(instant.status == 200)
            }
        }
    }

    /// A scenario loaded at start whose outage refuses new connections for its first second: connecting fails
    /// (curl and a hand-written client), then succeeds once the window is over.
    @Test func outageRefusesConnectionsUntilItsWindowEnds() async throws {
        let yaml = """
            name: short-outage
            outages:
              - until: 1s
            """
        try await ExternalTool.withTemporaryFile(Data(yaml.utf8)) { path in
            try await withTestServer(configure: { $0.scenarioFile = path }) { server in
                // Six attempts, up to a 32 s window: with every suite running at once on 2 cores a first connection
                // has taken 18 s, and the fourth attempt's 8 s has been missed by half a second.
                try await retryingWhenLate(attempts: 6) { attempt in
                    // The first attempt sees the window that began when the server started; later ones (on a machine
                    // too busy for it) put in force the same outage with a window twice as long each time.
                    let second = 1000 << (attempt - 1)
                    let snapshot = attempt == 1 ? try await server.admin.scenario() : try await server.admin.putScenario("outages:\n  - until: \(second)ms\n")
                    let clock = ScenarioClock(startedAt: try #require(snapshot["startedAt"]?.int), attempt: attempt, second: second)
                    let first = try await clock.timely(before: clock.second, "the first connection") { await ConnectionProbe.probe(server) }
                    #expect(first.isRefused, "\(first)")
                    let curl = try await clock.timely(before: clock.second, "curl during the outage") {
                        try await ProviderCurlTests.curl([
                            "--http2", "-o", "/dev/null", "-w", "%{http_code}", "-H", "apns-topic: \(TestData.topic)",
                            "-d", TestData.alertPayload, server.deviceURL(TestData.deviceToken()),
                        ])
                    }
                    #expect(curl.exitCode != 0 && curl.stdout == "000", "\(curl)")
                    // The window, which grows with each attempt (32 s by the sixth), and then some: a fixed 10 s failed
                    // the fifth attempt by design, before its 16 s window had ended.
                    _ = try await poll(timeout: .milliseconds(second) + .seconds(10), "connections to be accepted again") { () -> Bool? in
                        await ConnectionProbe.probe(server).isWorking ? true : nil
                    }
                    #expect(clock.elapsed >= clock.second, "accepted before the outage ended")
                }
                let answer = try await withProviderClient(server) { provider in try await provider.send() }
                #expect(answer.status == 200)
                // Refused connections never reached HTTP/2: only the accepted pushes were recorded.
                let recorded = try await server.admin.notifications()
                #expect(!recorded.isEmpty && recorded.allSatisfy { $0.status == 200 }, "\(recorded)")
            }
        }
    }

    @Test func outageWithGoAwayRefusesAfterTheHandshakeUntilItsWindowEnds() async throws {
        let yaml = """
            outages:
              - until: 1s
                mode: goaway
                errorCode: ENHANCE_YOUR_CALM
                debugData: come back later
            """
        try await withScenario(yaml) { server in
            try await retryingWhenLate { attempt in
                // On a machine too busy for a 1 s window, the same outage with a window twice as long each time.
                let second = 1000 << (attempt - 1)
                let snapshot = try await server.admin.putScenario(yaml.replacingOccurrences(of: "until: 1s", with: "until: \(second)ms"))
                let clock = ScenarioClock(startedAt: try #require(snapshot["startedAt"]?.int), attempt: attempt, second: second)
                let first = try await clock.timely(before: clock.second, "the first connection") { await ConnectionProbe.probe(server) }
                guard case .goAway(let goAway) = first else {
                    Issue.record("expected a GOAWAY right after the handshake, got \(first)")
                    return
                }
                #expect(goAway.errorCode == 11 && goAway.lastStreamID == 0 && goAway.debugData == "come back later", "\(goAway)")
                _ = try await poll(timeout: .milliseconds(second) + .seconds(10), "connections to be served again") { () -> Bool? in
                    await ConnectionProbe.probe(server).isWorking ? true : nil
                }
                #expect(clock.elapsed >= clock.second)
            }
        }
    }

    /// Faults in a sequence, and `times`: the 1st request is dropped, the 2nd reset, then accepted from then on.
    @Test func sequenceOfFaultsThenAccept() async throws {
        let yaml = """
            rules:
              - name: warm-up
                match: {topic: com.example.warmup}
                sequence: [drop, reset, accept]
              - name: twice
                match: {topic: com.example.twice}
                times: 2
                status: 429
            """
        try await withScenario(yaml) { server in
            let headers = [("apns-topic", "com.example.warmup")]
            let first = try await RawPusher.open(server)
            let dropped = try await first.push(headers: headers)
            #expect(dropped.end == .connectionClosed && dropped.frames.isEmpty && dropped.goAway == nil, "\(dropped)")
            await first.close()
            let second = try await RawPusher.open(server)
            #expect(try await second.push(headers: headers).end == .reset(0x8))
            #expect(try await second.push(headers: headers).isBareHeaders)
            #expect(try await second.push(headers: headers).isBareHeaders)
            await second.close()

            try await withProviderClient(server) { provider in
                var statuses: [Int] = []
                for _ in 1...3 {
                    statuses.append(try await provider.send(headers: [("apns-topic", "com.example.twice")]).status)
                }
                #expect(statuses == [429, 429, 200])
            }
            let rules = try await server.admin.scenario()["rules"]?.array ?? []
            #expect(rules.first?["hits"]?.int == 4 && rules.first?["nextStep"]?.int == 2, "\(rules)")
            #expect(rules.last?["hits"]?.int == 2 && rules.last?["exhausted"]?.bool == true, "\(rules)")
        }
    }
}
