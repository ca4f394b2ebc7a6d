import Foundation
import Testing

/// The shipped `Scenarios/*.yaml` files that script answers, each loaded at start (as `--scenario` does) and
/// driven by real HTTP/2 clients (curl, AsyncHTTPClient, h2load, and hand-written frames where the client must
/// see the connection itself). Each test follows the comments of its file.
@Suite("Shipped scenarios: answers")
struct ScenarioShippedFilesTests {
    // MARK: happy-path.yaml

    @Test func happyPathAcceptsValidPushesAfterItsLatencyAndKnowsItsDevices() async throws {
        try await withShippedScenario("happy-path") { server in
            let alice = "3f1a2b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7a8"
            let bob = "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9"

            let snapshot = try await server.admin.scenario()
            #expect(snapshot["scenario"]?["name"]?.string == "happy-path")
            #expect(snapshot["seed"]?.int == 1)
            #expect(snapshot["rules"]?.array?.isEmpty == true)
            let (status, devices) = try await server.admin.call("GET", "/admin/devices")
            #expect(status == 200)
            let listed = devices["devices"]?.array ?? []
            #expect(listed.map { $0["name"]?.string } == ["alice-iphone", "bob-ipad"], "\(devices)")
            #expect(listed.map { $0["token"]?.string } == [alice, bob])
            #expect(listed.allSatisfy { $0["topic"]?.string == "com.example.app" && $0["environment"]?.string == "development" })

            // curl, the client people try first: 200 after the 5-25 ms latency.
            let started = ContinuousClock.now
            let result = try await ProviderCurlTests.curl([
                "--http2", "-D", "-", "-w", "\n%{http_code}", "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                "-d", TestData.alertPayload, server.deviceURL(alice),
            ])
            let curlElapsed = ContinuousClock.now - started
            #expect(result.exitCode == 0, "\(result)")
            let output = ProviderCurlTests.CurlOutput(result.stdout)
            #expect(output.code == "200", "\(result)")
            #expect(output.statusLine.hasPrefix("HTTP/2 200"), "\(result)")
            #expect(TestData.isUpperCaseUUID(output.header("apns-id")), "\(result)")
            #expect(curlElapsed >= .milliseconds(5))

            try await withProviderClient(server) { provider in
                // A registered device with its own topic, and a token nobody registered: 200 after the latency.
                for token in [bob, TestData.deviceToken()] {
                    let (answer, elapsed) = try await provider.timedSend(token: token)
                    #expect(answer.status == 200 && answer.body.isEmpty, "\(answer.bodyText)")
                    #expect(elapsed >= .milliseconds(5), "answered after \(elapsed), under the scenario's 5 ms minimum latency")
                }
                // A registered device pushed with another topic: the registry says it is not for that topic.
                let wrongTopic = try await provider.send(token: bob, headers: [("apns-topic", "com.example.other")])
                #expect(wrongTopic.status == 400)
                #expect(wrongTopic.bodyText == #"{"reason":"DeviceTokenNotForTopic"}"#)
                // No rule matches, so bad requests still get APNs' own reasons.
                let noTopic = try await provider.send(headers: [])
                #expect(noTopic.status == 400)
                #expect(noTopic.reason == "MissingTopic")
                let badToken = try await provider.send(token: "not-a-token")
                #expect(badToken.status == 400)
                #expect(badToken.reason == "BadDeviceToken")
            }

            let recordings = try await server.admin.recordingsInOrder()
            #expect(recordings.count == 6)
            // No rule decided any of them.
            #expect(recordings.allSatisfy { $0.scenarioRule == nil && $0.faults.isEmpty }, "\(recordings)")
            #expect(try await server.admin.scenario()["requests"]?.int == 6)
        }
    }

    // MARK: token-lifecycle.yaml

    static let active = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
    static let uninstalled = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
    static let uninstallsSoon = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
    static let productionPhone = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
    static let otherApp = "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5"
    static let expiring = "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"
    static let flapping = "0707070707070707070707070707070707070707070707070707070707070707"

    @Test func tokenLifecycleAnswersEachDeviceAsItsCommentSays() async throws {
        try await withShippedScenario("token-lifecycle") { server in
            let startedAt = try #require(try await server.admin.scenario()["startedAt"]?.int)
            try await withProviderClient(server) { provider in
                // active: always accepted.
                #expect(try await provider.send(token: Self.active).status == 200)

                // uninstalled: 410 Unregistered, dated exactly two days before the scenario started.
                let gone = try await provider.send(token: Self.uninstalled)
                #expect(gone.status == 410)
                #expect(gone.reason == "Unregistered")
                #expect(gone.timestamp == startedAt - 2 * millisecondsPerDay, "\(gone.bodyText); started at \(startedAt)")
                #expect(gone.bodyText == #"{"reason":"Unregistered","timestamp":\#(startedAt - 2 * millisecondsPerDay)}"#)

                // uninstalls-soon: accepted during the first 30 seconds.
                #expect(try await provider.send(token: Self.uninstallsSoon).status == 200)

                // production-phone: a production token sent to the sandbox mock.
                let production = try await provider.send(token: Self.productionPhone)
                #expect(production.status == 400)
                #expect(production.bodyText == #"{"reason":"BadDeviceToken"}"#)

                // other-app: another app's token; with its own topic it is fine.
                let otherApp = try await provider.send(token: Self.otherApp)
                #expect(otherApp.status == 400)
                #expect(otherApp.bodyText == #"{"reason":"DeviceTokenNotForTopic"}"#)
                #expect(try await provider.send(token: Self.otherApp, headers: [("apns-topic", "com.example.otherapp")]).status == 200)

                // expiring: 410 ExpiredToken dated a week before each push.
                let before = epochMilliseconds()
                let expired = try await provider.send(token: Self.expiring)
                let after = epochMilliseconds()
                #expect(expired.status == 410)
                #expect(expired.reason == "ExpiredToken")
                let expiredAt = try #require(expired.timestamp, "\(expired.bodyText)")
                #expect(
                    (before - 7 * millisecondsPerDay...after - 7 * millisecondsPerDay).contains(expiredAt),
                    "timestamp \(expiredAt) is not 7 days before the push (sent \(before)...\(after))"
                )

                // flapping: 200, 200, then 410 Unregistered dated at that push, forever after.
                #expect(try await provider.send(token: Self.flapping).status == 200)
                #expect(try await provider.send(token: Self.flapping).status == 200)
                for _ in 0..<2 {
                    let sent = epochMilliseconds()
                    let answer = try await provider.send(token: Self.flapping)
                    let answered = epochMilliseconds()
                    #expect(answer.status == 410)
                    #expect(answer.reason == "Unregistered")
                    let timestamp = try #require(answer.timestamp, "\(answer.bodyText)")
                    #expect((sent...answered).contains(timestamp), "timestamp \(timestamp) is not the push's time (\(sent)...\(answered))")
                }
            }

            // The registry shows each device's state; uninstalls-soon is due 30 s after the start.
            let (_, devices) = try await server.admin.call("GET", "/admin/devices")
            let byName = Dictionary(
                (devices["devices"]?.array ?? []).map { ($0["name"]?.string ?? "?", $0) },
                uniquingKeysWith: { first, _ in first }
            )
            #expect(byName.count == 7, "\(devices)")
            #expect(byName["uninstalls-soon"]?["unregisteredAt"]?.int == startedAt + 30_000)
            #expect(byName["uninstalled"]?["unregisteredAt"]?.int == startedAt - 2 * millisecondsPerDay)
            #expect(byName["production-phone"]?["environment"]?.string == "production")
            #expect(byName["active"]?["unregisteredAt"] == nil)

            // The rules' answers are marked with their rule; the registry's are not rules.
            let expired = try await server.admin.notifications([("rule", "expired-token")])
            #expect(expired.count == 1 && expired.first?.deviceToken == Self.expiring)
            #expect(try await server.admin.notifications([("rule", "uninstalled-after-two-pushes")]).count == 4)
            let registry = try #require(try await server.admin.notifications([("token", Self.uninstalled)]).first)
            #expect(registry.scenarioRule == nil && registry.status == 410)
            #expect(try await server.admin.hits("uninstalled-after-two-pushes") == 4)
        }
    }

    /// `uninstalls-soon` with its 30 s shortened to 1 s: accepted until then, then 410 Unregistered dated exactly
    /// at the scenario's start + 1 s.
    @Test func tokenLifecycleDeviceUninstalledDuringTheRunAnswers410WithThatTime() async throws {
        let yaml = try ScenarioFiles.text("token-lifecycle", replacing: [("unregisteredAt: +30s", "unregisteredAt: +1s")])
        try await withScenario(yaml) { server in
            let startedAt = try #require(try await server.admin.scenario()["startedAt"]?.int)
            let dueAt = startedAt + 1000
            try await withProviderClient(server) { provider in
                let gone = try await poll(timeout: .seconds(10), "uninstalls-soon to answer 410") { () -> ProviderResponse? in
                    let sent = epochMilliseconds()
                    let answer = try await provider.send(token: Self.uninstallsSoon)
                    if answer.status == 200 {
                        #expect(sent < dueAt + 5, "accepted at \(sent), after it was due to be uninstalled at \(dueAt)")
                        return nil
                    }
                    return answer
                }
                #expect(gone.status == 410)
                #expect(gone.bodyText == #"{"reason":"Unregistered","timestamp":\#(dueAt)}"#)
                #expect(epochMilliseconds() >= dueAt)
            }
        }
    }

    // MARK: bad-requests.yaml

    @Test func badRequestsForcesEachReasonOnOtherwiseValidPushes() async throws {
        try await withShippedScenario("bad-requests") { server in
            try await withProviderClient(server) { provider in
                func expect(
                    token: String = TestData.deviceToken(),
                    headers: [(String, String)] = [("apns-topic", TestData.topic)],
                    body: String = TestData.alertPayload,
                    _ status: Int,
                    _ reason: String?,
                    rule: String?,
                    sourceLocation: SourceLocation = #_sourceLocation
                ) async throws {
                    let answer = try await provider.send(token: token, headers: headers, body: body)
                    #expect(answer.status == status, "\(answer.bodyText)", sourceLocation: sourceLocation)
                    #expect(answer.reason == reason, "\(answer.bodyText)", sourceLocation: sourceLocation)
                    let recording = try #require(
                        try await server.admin.notifications([("token", token)]).last,
                        sourceLocation: sourceLocation
                    )
                    #expect(recording.scenarioRule == rule, "\(recording)", sourceLocation: sourceLocation)
                }
                let hex = TestData.deviceToken()
                // bad-token: prefix "dead", compared without regard to case.
                try await expect(token: "dead" + hex.dropFirst(4), 400, "BadDeviceToken", rule: "bad-token")
                try await expect(token: "DEAD" + hex.dropFirst(4), 400, "BadDeviceToken", rule: "bad-token")
                // wrong-app: 64 hex digits ending in 0000; 63 digits + "0000" is not 64.
                try await expect(token: String(hex.prefix(60)) + "0000", 400, "DeviceTokenNotForTopic", rule: "wrong-app")
                try await expect(token: String(hex.prefix(58)) + "10000", 400, "BadDeviceToken", rule: nil)  // 63 digits: odd
                // disallowed-topic: either topic of the list.
                try await expect(headers: [("apns-topic", "com.example.forbidden")], 400, "TopicDisallowed", rule: "disallowed-topic")
                try await expect(
                    headers: [("apns-topic", "com.example.forbidden.voip"), ("apns-push-type", "voip"), ("apns-expiration", "0")],
                    400, "TopicDisallowed", rule: "disallowed-topic"
                )
                // bad-collapse-id: that exact header value only.
                try await expect(headers: [("apns-topic", TestData.topic), ("apns-collapse-id", "too-long-on-purpose")], 400, "BadCollapseId", rule: "bad-collapse-id")
                try await expect(headers: [("apns-topic", TestData.topic), ("apns-collapse-id", "fine")], 200, nil, rule: nil)
                // expiration-required-for-voip: a VoIP push without apns-expiration; with it, accepted.
                try await expect(headers: [("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip")], 400, "BadExpirationDate", rule: "expiration-required-for-voip")
                try await expect(headers: [("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip"), ("apns-expiration", "0")], 200, nil, rule: nil)
                // huge-payload: a value in the payload gets 413 PayloadTooLarge.
                try await expect(body: #"{"aps":{"alert":{"title":"pretend I am too large"}}}"#, 413, "PayloadTooLarge", rule: "huge-payload")
                try await expect(body: #"{"aps":{"alert":{"title":"small"}}}"#, 200, nil, rule: nil)
                // background-at-priority-10: explicit 10, or no priority (which counts as 10); 5 is fine.
                let background = #"{"aps":{"content-available":1}}"#
                try await expect(headers: [("apns-topic", TestData.topic), ("apns-push-type", "background"), ("apns-priority", "10")], body: background, 400, "BadPriority", rule: "background-at-priority-10")
                try await expect(headers: [("apns-topic", TestData.topic), ("apns-push-type", "background")], body: background, 400, "BadPriority", rule: "background-at-priority-10")
                try await expect(headers: [("apns-topic", TestData.topic), ("apns-push-type", "background"), ("apns-priority", "5")], body: background, 200, nil, rule: nil)
            }
            let snapshot = try await server.admin.scenario()
            let hits = Dictionary(uniqueKeysWithValues: (snapshot["rules"]?.array ?? []).map { ($0["name"]?.string ?? "?", $0["hits"]?.int ?? -1) })
            #expect(
                hits == [
                    "bad-token": 2, "wrong-app": 1, "disallowed-topic": 2, "bad-collapse-id": 1, "expiration-required-for-voip": 1,
                    "huge-payload": 1, "background-at-priority-10": 2,
                ],
                "\(snapshot)"
            )
        }
    }

    /// `connection:` of bad-requests.yaml: SETTINGS_MAX_CONCURRENT_STREAMS=1 after a rejection, restored after the
    /// next 200, untouched by a 410; and GOAWAY NO_ERROR, then close, after the 5th BadDeviceToken on a connection.
    @Test func badRequestsLowersTheStreamLimitAndClosesAfterFiveBadDeviceTokens() async throws {
        try await withShippedScenario("bad-requests") { server in
            // A device unregistered through the admin API, for a 410 that must not count as a rejection.
            let gone = TestData.deviceToken()
            #expect(try await server.admin.call("POST", "/admin/devices", body: #"{"token":"\#(gone)","topic":"\#(TestData.topic)"}"#).status == 201)
            #expect(try await server.admin.call("POST", "/admin/devices/\(gone)/unregister", body: #"{"timestamp":1700000000000}"#).status == 200)

            let pusher = try await RawPusher.open(server)
            let initial = pusher.initialSettings.settings.first { $0.0 == 0x3 }?.1
            #expect(initial == 1000)

            let rejected = try await pusher.push(token: String(TestData.deviceToken().prefix(60)) + "0000")
            #expect(rejected.body == #"{"reason":"DeviceTokenNotForTopic"}"#, "\(rejected)")
            #expect(rejected.maxConcurrentStreamsChanges == [1], "a rejection must lower the limit to 1: \(rejected)")

            let unregistered = try await pusher.push(token: gone)
            #expect(unregistered.body == #"{"reason":"Unregistered","timestamp":1700000000000}"#, "\(unregistered)")
            #expect(unregistered.maxConcurrentStreamsChanges == [], "410 is no rejection: \(unregistered)")

            let accepted = try await pusher.push()
            #expect(accepted.isBareHeaders, "\(accepted)")
            #expect(accepted.maxConcurrentStreamsChanges == [1000], "the next 200 restores the limit: \(accepted)")

            let anotherAccepted = try await pusher.push()
            #expect(anotherAccepted.maxConcurrentStreamsChanges == [], "SETTINGS go out only on a change: \(anotherAccepted)")

            let fresh = TestData.deviceToken().dropFirst(4)
            for count in 1...5 {
                let answer = try await pusher.push(token: "dead" + fresh)
                #expect(answer.end == .answered, "BadDeviceToken #\(count) must be answered: \(answer)")
                #expect(answer.body == #"{"reason":"BadDeviceToken"}"#, "\(answer)")
                #expect(answer.maxConcurrentStreamsChanges == (count == 1 ? [1] : []), "#\(count): \(answer)")
                if count < 5 {
                    #expect(answer.goAway == nil, "closed after only \(count) BadDeviceToken answers: \(answer)")
                } else {
                    // The GOAWAY follows the answer's HEADERS and DATA, so it comes after the stream ended.
                    let after = try await pusher.framesUntilClosed()
                    let goAway = try #require(answer.goAway ?? after.compactMap(GoAway.init).first, "no GOAWAY after the 5th BadDeviceToken: \(answer) \(after)")
                    #expect(goAway.errorCode == 0)
                    #expect(goAway.lastStreamID == answer.frames.first.map { $0.streamID })
                }
            }
            #expect(pusher.isClosed)
            await pusher.close()

            // Counted per connection: a new one starts from zero.
            let next = try await RawPusher.open(server)
            let again = try await next.push(token: "dead" + fresh)
            #expect(again.body == #"{"reason":"BadDeviceToken"}"#)
            #expect(again.goAway == nil && !next.isClosed)
            await next.close()
        }
    }

    // MARK: throttling.yaml

    @Test func throttlingRefusesTheSixthAndLaterPushesToOneTokenAfter50ms() async throws {
        try await withShippedScenario("throttling") { server in
            let token = TestData.deviceToken()
            try await withProviderClient(server) { provider in
                for ordinal in 1...8 {
                    let (answer, elapsed) = try await provider.timedSend(token: token)
                    let recording = try #require(try await server.admin.notifications([("token", token)]).last)
                    if ordinal <= 5 {
                        // random-throttle could take one of these; with seed 42 it takes none of the first five.
                        #expect(answer.status == 200, "push #\(ordinal): \(answer.bodyText), \(recording)")
                        #expect(elapsed >= .milliseconds(10), "push #\(ordinal) answered after \(elapsed), under the 10 ms latency")
                    } else {
                        #expect(answer.status == 429, "push #\(ordinal)")
                        #expect(answer.bodyText == #"{"reason":"TooManyRequests"}"#)
                        #expect(elapsed >= .milliseconds(50), "push #\(ordinal) answered after \(elapsed), under its 50 ms delay")
                        #expect(recording.scenarioRule == "burst-per-token")
                    }
                }
                // Other tokens are not throttled by the burst.
                #expect(try await provider.send().status == 200)
            }
            #expect(try await server.admin.hits("burst-per-token") == 3)
        }
    }

    /// random-throttle draws from seed 42: the same requests get 429 on every run (here: before and after a reset),
    /// and every 100th request is slow.
    @Test func throttlingRandomThrottlesRepeatForTheSeedAndEvery100thIsSlow() async throws {
        try await withShippedScenario("throttling") { server in
            let uris = (1...99).map { _ in server.deviceURL(TestData.deviceToken()) }.joined(separator: "\n")
            func run() async throws -> [Int] {
                // One connection, one stream at a time, so the server decides them in the order sent. (With more
                // streams in flight, the SETTINGS_MAX_CONCURRENT_STREAMS=1 that follows a 429 would refuse some.)
                let result = try await ExternalTool.withTemporaryFile(Data(uris.utf8)) { urisPath in
                    try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payloadPath in
                        try await ExternalTool.run(
                            "h2load",
                            ["-c", "1", "-m", "1", "-n", "99", "-i", urisPath, "-H", "apns-topic: \(TestData.topic)", "-d", payloadPath]
                        )
                    }
                }
                #expect(result.exitCode == 0, "\(result)")
                #expect(result.stdout.contains("99 done"), "\(result)")
                let recordings = try await server.admin.recordingsInOrder()
                #expect(recordings.count == 99)
                let throttled = recordings.enumerated().filter { $0.element.scenarioRule != nil }
                for (_, recording) in throttled {
                    #expect(recording.scenarioRule == "random-throttle", "\(recording)")
                    #expect(recording.status == 429 && recording.reason == "TooManyRequests", "\(recording)")
                }
                // h2load's own count of 4xx answers agrees with the recordings.
                #expect(result.stdout.contains("\(99 - throttled.count) 2xx, 0 3xx, \(throttled.count) 4xx"), "\(result)")
                return throttled.map { $0.offset + 1 }
            }

            let first = try await run()
            #expect(!first.isEmpty, "seed 42 throttles some of 99 requests at 5 %")
            #expect(first.count < 20)

            // The 100th request overall: slow-every-100th delays it by 500 ms to 1.5 s, and it is accepted.
            #expect(try await server.admin.scenario()["requests"]?.int == 99)
            try await withProviderClient(server) { provider in
                let (answer, elapsed) = try await provider.timedSend()
                #expect(answer.status == 200)
                #expect(elapsed >= .milliseconds(500), "the 100th request was answered after \(elapsed)")
            }
            #expect(try await server.admin.hits("slow-every-100th") == 1)

            try await server.admin.resetScenario()
            try await server.admin.clear()
            let second = try await run()
            #expect(second == first, "the same seed must throttle the same requests: \(first) then \(second)")
        }
    }

    /// lowerStreamLimitAfterRejection in throttling.yaml: a 429 lowers SETTINGS_MAX_CONCURRENT_STREAMS to 1.
    @Test func throttlingLowersTheStreamLimitAfterA429() async throws {
        try await withShippedScenario("throttling") { server in
            let token = TestData.deviceToken()
            let pusher = try await RawPusher.open(server)
            for _ in 1...5 {
                let answer = try await pusher.push(token: token)
                #expect(answer.isBareHeaders && answer.maxConcurrentStreamsChanges.isEmpty, "\(answer)")
            }
            let throttled = try await pusher.push(token: token)
            #expect(throttled.body == #"{"reason":"TooManyRequests"}"#, "\(throttled)")
            #expect(throttled.elapsed >= .milliseconds(50))
            #expect(throttled.maxConcurrentStreamsChanges == [1], "\(throttled)")
            let accepted = try await pusher.push()
            #expect(accepted.isBareHeaders)
            #expect(accepted.maxConcurrentStreamsChanges == [1000], "\(accepted)")
            await pusher.close()
        }
    }

    // MARK: auth-failures.yaml

    static let bearer = ("authorization", "bearer some-provider-token")

    @Test func authFailuresForcesEach403() async throws {
        try await withShippedScenario("auth-failures") { server in
            try await withProviderClient(server) { provider in
                // missing-token: no authorization header at all.
                let missing = try await provider.send()
                #expect(missing.status == 403)
                #expect(missing.bodyText == #"{"reason":"MissingProviderToken"}"#)
                // With a header, the same push is accepted (the server itself runs with --auth none).
                #expect(try await provider.send(headers: [("apns-topic", TestData.topic), Self.bearer]).status == 200)

                // revoked-key: exactly this bearer value.
                let revoked = try await provider.send(headers: [("apns-topic", TestData.topic), ("authorization", "bearer revoked")])
                #expect(revoked.status == 403)
                #expect(revoked.bodyText == #"{"reason":"InvalidProviderToken"}"#)

                // wrong-environment-key: one topic.
                let wrongEnvironment = try await provider.send(headers: [("apns-topic", "com.example.prodonly"), Self.bearer])
                #expect(wrongEnvironment.status == 403)
                #expect(wrongEnvironment.bodyText == #"{"reason":"BadEnvironmentKeyInToken"}"#)

                // forbidden-every-other: 200, 403 Forbidden, and again.
                let token = "1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"
                var statuses: [Int] = []
                for _ in 1...4 {
                    let answer = try await provider.send(token: token, headers: [("apns-topic", TestData.topic), Self.bearer])
                    statuses.append(answer.status)
                    if answer.status == 403 { #expect(answer.bodyText == #"{"reason":"Forbidden"}"#) }
                }
                #expect(statuses == [200, 403, 200, 403])
            }
            let recordings = try await server.admin.recordingsInOrder()
            #expect(
                recordings.map { $0.scenarioRule ?? "-" }
                    == ["missing-token", "-", "revoked-key", "wrong-environment-key"] + Array(repeating: "forbidden-every-other", count: 4),
                "\(recordings.map { $0.scenarioRule ?? "-" })"
            )
        }
    }

    @Test func authFailuresRefusesTheThirdToFifthRefresherPushes() async throws {
        try await withShippedScenario("auth-failures") { server in
            try await withProviderClient(server) { provider in
                var answers: [String] = []
                for _ in 1...6 {
                    let answer = try await provider.send(headers: [("apns-topic", "com.example.refresher"), Self.bearer])
                    answers.append("\(answer.status) \(answer.reason ?? "-")")
                }
                #expect(
                    answers == [
                        "200 -", "200 -", "429 TooManyProviderTokenUpdates", "429 TooManyProviderTokenUpdates",
                        "429 TooManyProviderTokenUpdates", "200 -",
                    ]
                )
            }
        }
    }

    /// The file's comment says "the 3rd to 5th pushes to this topic get 429", but `nth` counts every request since
    /// the start: after pushes to other topics, the refresher's own 3rd to 5th pushes are accepted.
    @Test func authFailuresRefresherCountsPushesToItsTopicOnly() async throws {
        try await withShippedScenario("auth-failures") { server in
            try await withProviderClient(server) { provider in
                for _ in 1...3 {
                    #expect(try await provider.send(headers: [("apns-topic", TestData.topic), Self.bearer]).status == 200)
                }
                var statuses: [Int] = []
                for _ in 1...5 {
                    statuses.append(try await provider.send(headers: [("apns-topic", "com.example.refresher"), Self.bearer]).status)
                }
                #expect(statuses == [200, 200, 429, 429, 429])
            }
        }
    }

    /// stale-token-on-long-connections: from the 500th request on one connection, 403 ExpiredProviderToken, and it
    /// stays so on that connection; a new connection is fine.
    @Test func authFailuresRejectsTheFiveHundredthAndLaterRequestsOnAConnection() async throws {
        try await withShippedScenario("auth-failures") { server in
            let result = try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payload in
                try await ExternalTool.run(
                    "h2load",
                    [
                        "-c", "1", "-m", "1", "-n", "503", "-H", "apns-topic: \(TestData.topic)", "-H", "authorization: bearer long-lived",
                        "-d", payload, server.deviceURL(TestData.deviceToken()),
                    ]
                )
            }
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout.contains("status codes: 499 2xx, 0 3xx, 4 4xx"), "\(result)")
            let stale = try await server.admin.recordingsInOrder([("rule", "stale-token-on-long-connections")])
            #expect(stale.count == 4)
            #expect(stale.allSatisfy { $0.status == 403 && $0.reason == "ExpiredProviderToken" }, "\(stale)")
            #expect(Set(stale.compactMap(\.connectionID)).count == 1)
            #expect(try await server.admin.hits("stale-token-on-long-connections") == 4)
            let fresh = try await withProviderClient(server) { provider in
                try await provider.send(headers: [("apns-topic", TestData.topic), Self.bearer])
            }
            #expect(fresh.status == 200)
        }
    }
}
