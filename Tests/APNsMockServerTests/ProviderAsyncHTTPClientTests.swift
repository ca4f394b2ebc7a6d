import APNsMock
import APNsMockServer
import Testing

/// The provider port through AsyncHTTPClient over HTTP/2 and TLS, and the recordings it leaves in the admin API.
@Suite("Provider over AsyncHTTPClient (HTTP/2, TLS)")
struct ProviderAsyncHTTPClientTests {
    @Test func validPushIsAnswered200WithGeneratedIDsAndNoBody() async throws {
        try await withTestServer { server in
            let response = try await withProviderClient(server) { provider in
                try await provider.send(headers: [("apns-topic", TestData.topic), ("apns-push-type", "alert")])
            }
            #expect(response.status == 200)
            #expect(response.isHTTP2, "the provider port must answer over HTTP/2")
            let apnsID = try #require(response.header("apns-id"))
            #expect(TestData.isUpperCaseUUID(apnsID), "apns-id '\(apnsID)' is not an upper-case UUID")
            let uniqueID = try #require(response.header("apns-unique-id"), "development answers carry apns-unique-id")
            #expect(TestData.isLowerCaseUUID(uniqueID), "apns-unique-id '\(uniqueID)' is not a lower-case UUID")
            #expect(response.body.isEmpty)
            #expect(response.header("content-type") == nil, "a 200 has no body, so no content-type")
        }
    }

    @Test(arguments: ["eabeae54-14a8-11e5-b60b-1697f925ec7b", "EABEAE54-14A8-11E5-B60B-1697F925EC7B", "EaBeAe54-14a8-11E5-b60b-1697F925ec7b"])
    func sentAPNsIDIsEchoedExactly(apnsID: String) async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { provider in
                let accepted = try await provider.send(headers: [("apns-topic", TestData.topic), ("apns-id", apnsID)])
                #expect(accepted.status == 200)
                #expect(accepted.values("apns-id") == [apnsID])
                // Errors echo it too: clients match answers to requests by it.
                let rejected = try await provider.send(headers: [("apns-id", apnsID)])
                #expect(rejected.status == 400)
                #expect(rejected.values("apns-id") == [apnsID])
            }
        }
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var reason: String
        var status: Int
        var token: String = TestData.deviceToken()
        var path: String?
        var method: ProviderClient.Method = .post
        var headers: [(String, String)] = [("apns-topic", TestData.topic)]
        var body: String? = TestData.alertPayload

        var testDescription: String { "\(status) \(reason)" }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(reason: "BadDeviceToken", status: 400, token: "not-a-hex-token"),
        ErrorCase(reason: "MissingTopic", status: 400, headers: [("apns-push-type", "alert")]),
        ErrorCase(reason: "BadPath", status: 404, path: "/3/devices/" + String(repeating: "ab", count: 32)),
        ErrorCase(reason: "MethodNotAllowed", status: 405, method: .get, body: nil),
        ErrorCase(reason: "PayloadEmpty", status: 400, body: ""),
        ErrorCase(reason: "PayloadTooLarge", status: 413, body: TestData.payload(ofSize: 4097)),
        ErrorCase(
            reason: "PayloadTooLarge",
            status: 413,
            headers: [("apns-topic", TestData.topic + ".voip"), ("apns-push-type", "voip")],
            body: TestData.payload(ofSize: 5121)
        ),
    ]

    @Test(arguments: errorCases)
    func errorIsAnsweredWithStatusJSONReasonAndAPNsID(_ error: ErrorCase) async throws {
        try await withTestServer { server in
            let response = try await withProviderClient(server) { provider in
                try await provider.send(
                    token: error.token,
                    path: error.path,
                    method: error.method,
                    headers: error.headers,
                    body: error.body
                )
            }
            #expect(response.status == error.status)
            #expect(response.isHTTP2)
            #expect(response.values("content-type") == ["application/json"])
            #expect(response.bodyText == #"{"reason":""# + error.reason + #""}"#)
            let apnsID = try #require(response.header("apns-id"), "errors carry apns-id too")
            #expect(TestData.isUpperCaseUUID(apnsID))
        }
    }

    @Test func payloadOfExactly4096BytesIsAccepted() async throws {
        try await withTestServer { server in
            let response = try await withProviderClient(server) { provider in
                try await provider.send(body: TestData.payload(ofSize: 4096))
            }
            #expect(response.status == 200)
        }
    }

    @Test func voipPayloadOf5120BytesIsAccepted() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let payload = TestData.payload(ofSize: 5120)
            let response = try await withProviderClient(server) { provider in
                try await provider.send(
                    token: token,
                    headers: [("apns-topic", TestData.topic + ".voip"), ("apns-push-type", "voip")],
                    body: payload
                )
            }
            #expect(response.status == 200)
            let recording = try #require(try await server.admin.notifications([("token", token)]).first)
            #expect(recording.payloadSize == 5120)
            #expect(recording.payloadText == payload)
        }
    }

    @Test func productionEnvironmentSendsNoUniqueID() async throws {
        try await withTestServer(configure: { $0.environment = .production }) { server in
            try await withProviderClient(server) { provider in
                let accepted = try await provider.send()
                #expect(accepted.status == 200)
                #expect(accepted.header("apns-id") != nil)
                #expect(accepted.values("apns-unique-id").isEmpty)
                let rejected = try await provider.send(token: "xyz")
                #expect(rejected.status == 400)
                #expect(rejected.header("apns-id") != nil)
                #expect(rejected.values("apns-unique-id").isEmpty)
            }
            let recordings = try await server.admin.notifications()
            #expect(recordings.count == 2)
            #expect(recordings.allSatisfy { $0.response?["apnsUniqueId"] == .null })
        }
    }

    @Test func recordingMatchesWhatWasSentAndAnswered() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let apnsID = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
            let headers = [
                ("apns-topic", TestData.topic),
                ("apns-push-type", "alert"),
                ("apns-id", apnsID),
                ("apns-priority", "5"),
                ("apns-expiration", "0"),
                ("apns-collapse-id", "game-42"),
            ]
            let payload = #"{"aps":{"alert":{"title":"Hi","body":"There"},"badge":3},"custom":[1,true,null]}"#
            let response = try await withProviderClient(server) { provider in
                try await provider.send(token: token, headers: headers, body: payload)
            }
            #expect(response.status == 200)

            let recording = try #require(try await server.admin.notification(apnsID: apnsID))
            #expect(recording.deviceToken == token)
            #expect(recording.topic == TestData.topic)
            #expect(recording.pushType == "alert")
            #expect(recording.method == "POST")
            #expect(recording.path == "/3/device/" + token)
            #expect(recording.authority == server.authority)
            for (name, value) in headers {
                #expect(recording.headers.contains { $0.name == name && $0.value == value }, "header \(name): \(value) not recorded")
            }
            #expect(recording.payloadText == payload)
            #expect(recording.payloadSize == payload.utf8.count)
            #expect(recording.payload == (try JSON(parsing: payload.utf8)))
            #expect(recording.status == 200)
            #expect(recording.response?["reason"] == .null)
            #expect(recording.responseAPNsID == apnsID)
            #expect(recording.responseUniqueID == response.header("apns-unique-id"))
        }
    }

    @Test func rejectedRequestIsRecordedWithItsReasonAndGeneratedID() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let response = try await withProviderClient(server) { provider in
                try await provider.send(token: token, headers: [("apns-push-type", "background")], body: #"{"aps":{"content-available":1}}"#)
            }
            #expect(response.status == 400)
            let apnsID = try #require(response.header("apns-id"))

            let recordings = try await server.admin.notifications([("token", token)])
            try #require(recordings.count == 1)
            let recording = recordings[0]
            #expect(recording.topic == nil)
            #expect(recording.pushType == "background")
            #expect(recording.status == 400)
            #expect(recording.reason == "MissingTopic")
            #expect(recording.responseAPNsID == apnsID)
            #expect(recording.responseUniqueID == response.header("apns-unique-id"))
            // The same recording is found by the answer's apns-id and by the reason filter.
            #expect(try await server.admin.notification(apnsID: apnsID)?.deviceToken == token)
            #expect(try await server.admin.notifications([("reason", "MissingTopic")]).count == 1)
        }
    }

    @Test func manyPushesOnOneConnectionAreAllRecordedInOrder() async throws {
        try await withTestServer { server in
            let token = TestData.deviceToken()
            let apnsIDs = try await withProviderClient(server) { provider in
                var ids: [String] = []
                for index in 0..<20 {
                    let response = try await provider.send(token: token, body: #"{"aps":{},"n":\#(index)}"#)
                    #expect(response.status == 200)
                    ids.append(try #require(response.header("apns-id")))
                }
                return ids
            }
            let recordings = try await server.admin.waitForNotifications(count: 20, [("token", token)])
            #expect(recordings.map(\.responseAPNsID) == apnsIDs)
            #expect(Set(apnsIDs).count == 20, "generated apns-ids must be unique")
            let stats = try await server.admin.stats()
            #expect(stats["received"]?.int == 20)
            #expect(stats["byStatus"]?["200"]?.int == 20)
        }
    }
}
