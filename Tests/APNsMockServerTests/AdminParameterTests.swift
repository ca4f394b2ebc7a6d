import APNsMock
import Testing

@testable import APNsMockServer

private let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"

private func query(_ parameters: [(String, String)]) throws(AdminInputError) -> NotificationQuery {
    try NotificationQuery(parameters: parameters)
}

private func queryError(_ parameters: [(String, String)]) -> AdminInputError? {
    do {
        _ = try query(parameters)
        return nil
    } catch {
        return error
    }
}

private func waitError(_ parameters: [(String, String)]) -> AdminInputError? {
    do {
        _ = try AdminRoutes.waitParameters(parameters)
        return nil
    } catch {
        return error
    }
}

@Suite("Admin query parameters")
struct AdminQueryParameterTests {
    @Test func parsesNoParametersAsMatchEverything() throws {
        #expect(try query([]) == NotificationQuery())
    }

    @Test func parsesToken() throws {
        #expect(try query([("token", token)]) == NotificationQuery(deviceToken: token))
    }

    @Test func parsesDeviceTokenAsAnAliasOfToken() throws {
        #expect(try query([("device-token", token)]) == NotificationQuery(deviceToken: token))
    }

    @Test func parsesTopic() throws {
        #expect(try query([("topic", "com.example.MyApp.voip")]) == NotificationQuery(topic: "com.example.MyApp.voip"))
    }

    @Test(arguments: PushType.allCases)
    func parsesEveryPushType(pushType: PushType) throws {
        #expect(try query([("push-type", pushType.rawValue)]) == NotificationQuery(pushType: pushType.rawValue))
    }

    @Test func parsesStatus() throws {
        #expect(try query([("status", "410")]) == NotificationQuery(status: 410))
    }

    @Test func parsesReason() throws {
        #expect(try query([("reason", "BadDeviceToken")]) == NotificationQuery(reason: "BadDeviceToken"))
    }

    @Test func parsesApnsID() throws {
        let apnsID = "eabeae54-14a8-11e5-b60b-1697f925ec7b"
        #expect(try query([("apns-id", apnsID)]) == NotificationQuery(apnsID: apnsID))
    }

    @Test func parsesSinceAsMilliseconds() throws {
        #expect(try query([("since", "1732245600123")]) == NotificationQuery(since: 1_732_245_600_123))
    }

    @Test func parsesSinceAsISO8601() throws {
        #expect(try query([("since", "2024-11-22T03:20:00Z")]) == NotificationQuery(since: 1_732_245_600_000))
    }

    @Test func parsesSinceAsISO8601WithOffset() throws {
        #expect(try query([("since", "2024-11-22T04:20:00+01:00")]) == NotificationQuery(since: 1_732_245_600_000))
    }

    @Test func parsesSinceAsISO8601WithMilliseconds() throws {
        #expect(try query([("since", "2024-11-22T03:20:00.123Z")]) == NotificationQuery(since: 1_732_245_600_123))
    }

    @Test func parsesEveryMillisecondOfAnISO8601SinceExactly() {
        let wrong = (0..<1000).filter { millis in
            let text = "2026-11-22T03:20:00." + String(String(millis + 1000).dropFirst()) + "Z"
            return AdminTime.milliseconds(text) != 1_795_317_600_000 + Int64(millis)
        }
        #expect(wrong == [])
    }

    @Test func parsesLimit() throws {
        #expect(try query([("limit", "25")]) == NotificationQuery(limit: 25))
        #expect(try query([("limit", "0")]) == NotificationQuery(limit: 0))
    }

    @Test func combinesSeveralFilters() throws {
        let parsed = try query([("token", token), ("push-type", "voip"), ("status", "200"), ("limit", "3")])
        #expect(parsed == NotificationQuery(deviceToken: token, pushType: "voip", status: 200, limit: 3))
    }

    // MARK: Errors

    @Test func rejectsUnknownParameterNamingIt() throws {
        let error = try #require(queryError([("tokn", token)]))
        #expect(error == AdminInputError(parameter: "tokn", message: "unknown parameter"))
        #expect(error.description == "tokn: unknown parameter")
    }

    @Test func rejectsWaitParametersOnAPlainQuery() throws {
        #expect(queryError([("count", "1")])?.parameter == "count")
        #expect(queryError([("timeout", "5s")])?.parameter == "timeout")
    }

    @Test(arguments: ["abc", "99", "600", "-200", ""])
    func rejectsBadStatus(value: String) throws {
        let error = try #require(queryError([("status", value)]))
        #expect(error == AdminInputError(parameter: "status", message: "'\(value)' is not an HTTP status code"))
    }

    @Test(arguments: ["-1", "ten", "1.5", ""])
    func rejectsBadLimit(value: String) throws {
        let error = try #require(queryError([("limit", value)]))
        #expect(error == AdminInputError(parameter: "limit", message: "'\(value)' is not a non-negative whole number"))
    }

    @Test(arguments: ["sms", "Alert", ""])
    func rejectsUnknownPushTypeListingTheValidOnes(value: String) throws {
        let error = try #require(queryError([("push-type", value)]))
        #expect(error.parameter == "push-type")
        #expect(error.message.hasPrefix("'\(value)' is not a push type"))
        for pushType in PushType.allCases {
            #expect(error.message.contains(pushType.rawValue))
        }
    }

    @Test(arguments: ["badDeviceToken", "Bad Device Token", "NoSuchReason", ""])
    func rejectsUnknownReason(value: String) throws {
        let error = try #require(queryError([("reason", value)]))
        #expect(error == AdminInputError(parameter: "reason", message: "'\(value)' is not an APNs reason"))
    }

    @Test(arguments: ["yesterday", "2024-11-22", "1.5e12", ""])
    func rejectsUnreadableSince(value: String) throws {
        let error = try #require(queryError([("since", value)]))
        #expect(error.parameter == "since")
        #expect(error.message.hasPrefix("'\(value)' is not a time"))
    }

    @Test func sinceReadsNowAndTimesRelativeToNow() throws {
        let now: Int64 = 1_700_000_000_000
        #expect(try NotificationQuery(parameters: [("since", "now")], now: now).since == now)
        #expect(try NotificationQuery(parameters: [("since", "-30s")], now: now).since == now - 30_000)
        #expect(try NotificationQuery(parameters: [("since", "2023-11-14T22:13:20Z")], now: now).since == now)
    }

    @Test func camelCaseSpellingsOfTheJSONFieldsAreAccepted() throws {
        let query = try NotificationQuery(parameters: [("pushType", "alert"), ("apnsId", "x"), ("keyId", "k"), ("teamId", "t"), ("deviceToken", token)])
        #expect(query.pushType == "alert" && query.apnsID == "x" && query.keyID == "k" && query.teamID == "t" && query.deviceToken == token)
    }

    @Test(arguments: [[("status", "200"), ("status", "400")], [("push-type", "alert"), ("pushType", "voip")], [("token", token), ("deviceToken", token)]])
    func aFilterGivenTwiceIsAnError(parameters: [(String, String)]) throws {
        let error = try #require(queryError(parameters))
        #expect(error.message.hasPrefix("given more than once"), "\(error)")
    }

    @Test func pagingAndTheNewFilters() throws {
        let query = try NotificationQuery(parameters: [
            ("order", "newest"), ("before", "42"), ("limit", "10"), ("connection", "7"), ("abandoned", "true"),
            ("header", "apns-priority:5"), ("header", "X-Note: a:b"),
        ])
        #expect(query.newestFirst && query.beforeSequence == 42 && query.limit == 10 && query.connectionID == 7 && query.abandoned == true)
        #expect(query.headers == [HeaderField(name: "apns-priority", value: "5"), HeaderField(name: "x-note", value: "a:b")])
        #expect(queryError([("order", "latest")])?.message == "'latest' is not oldest or newest")
        #expect(queryError([("header", "novalue")])?.parameter == "header")
    }
}

@Suite("Admin wait parameters")
struct AdminWaitParameterTests {
    @Test func waitsForOneNotificationForFiveSecondsByDefault() throws {
        let (query, count, timeout) = try AdminRoutes.waitParameters([])
        var expected = NotificationQuery()
        expected.limit = 1
        #expect(query == expected, "exactly the first match")
        #expect(count == 1)
        #expect(timeout == .seconds(5))
    }

    @Test func parsesCount() throws {
        #expect(try AdminRoutes.waitParameters([("count", "3")]).1 == 3)
    }

    @Test func passesFiltersThrough() throws {
        let (query, count, _) = try AdminRoutes.waitParameters([("token", token), ("count", "2"), ("topic", "t")])
        #expect(query == NotificationQuery(deviceToken: token, topic: "t", limit: 2))
        #expect(count == 2)
    }

    @Test func rejectsUnknownParameterInWait() throws {
        #expect(waitError([("cuont", "2")]) == AdminInputError(parameter: "cuont", message: "unknown parameter"))
    }

    @Test(arguments: ["0", "-1", "two", "1.5", ""])
    func rejectsCountBelowOneOrNotWhole(value: String) throws {
        let error = try #require(waitError([("count", value)]))
        #expect(error == AdminInputError(parameter: "count", message: "'\(value)' is not a whole number of at least 1"))
    }

    @Test(arguments: [
        ("5s", Duration.seconds(5)),
        ("500ms", .milliseconds(500)),
        ("2m", .seconds(120)),
        ("1.5", .milliseconds(1500)),
        ("0.25s", .milliseconds(250)),
        ("0", .zero),
        ("10m", .seconds(600)),
        ("600", .seconds(600)),
    ])
    func parsesTimeout(text: String, expected: Duration) throws {
        #expect(try AdminRoutes.waitParameters([("timeout", text)]).2 == expected)
    }

    @Test(arguments: ["11m", "601s", "600001ms", "3600"])
    func rejectsTimeoutOverTenMinutes(value: String) throws {
        let error = try #require(waitError([("timeout", value)]))
        #expect(error.parameter == "timeout")
        #expect(error.message == "'\(value)' is not a duration such as 5s, 500ms or 2m (at most 10m)")
    }

    @Test(arguments: ["-1s", "-1", "-500ms", "soon", "5 s", "s", "ms", "", "5h", "nan", "infs"])
    func rejectsNegativeOrUnreadableTimeout(value: String) throws {
        let error = try #require(waitError([("timeout", value)]))
        #expect(error.parameter == "timeout")
    }

    @Test(arguments: ["1e300", "1e300s", "99999999999999999999ms", "1e17m"])
    func rejectsHugeTimeoutWithoutCrashing(value: String) throws {
        let error = try #require(waitError([("timeout", value)]))
        #expect(error.parameter == "timeout")
    }
}
