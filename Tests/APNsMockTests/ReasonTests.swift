import Foundation
import Testing

@testable import APNsMock

/// Every reason and its status, copied from the protocol sheet (§3.4 for `/3/device`, §7.3 for broadcast and
/// channel management), not from `Reason.status`, so the two can disagree.
private let sheet: [(reason: String, status: Int)] = [
    // §3.4, 400
    ("BadCollapseId", 400), ("BadDeviceToken", 400), ("BadExpirationDate", 400), ("BadMessageId", 400),
    ("BadPriority", 400), ("BadTopic", 400), ("DeviceTokenNotForTopic", 400), ("DuplicateHeaders", 400),
    ("IdleTimeout", 400), ("InvalidPushType", 400), ("MissingDeviceToken", 400), ("MissingTopic", 400),
    ("PayloadEmpty", 400), ("TopicDisallowed", 400),
    // §3.4, 403
    ("BadCertificate", 403), ("BadCertificateEnvironment", 403), ("ExpiredProviderToken", 403), ("Forbidden", 403),
    ("InvalidProviderToken", 403), ("MissingProviderToken", 403), ("UnrelatedKeyIdInToken", 403),
    ("BadEnvironmentKeyIdInToken", 403), ("BadEnvironmentKeyInToken", 403),
    // §3.4, 404 / 405 / 410 / 413 / 429 / 500 / 503
    ("BadPath", 404), ("MethodNotAllowed", 405), ("ExpiredToken", 410), ("Unregistered", 410),
    ("PayloadTooLarge", 413), ("TooManyProviderTokenUpdates", 429), ("TooManyRequests", 429),
    ("InternalServerError", 500), ("ServiceUnavailable", 503), ("Shutdown", 503),
    // §7.3, broadcast and channel management (only those §3.4 lacks)
    ("FeatureNotEnabled", 400), ("MissingChannelId", 400), ("BadChannelId", 400), ("ChannelNotRegistered", 400),
    ("BadRequestParams", 400), ("BadRequestPayload", 400), ("MissingPushType", 400),
    ("CannotCreateChannelConfig", 400), ("MissingChannelQueueSize", 400), ("TopicMismatch", 403),
]

@Suite("Reason")
struct ReasonTests {
    @Test(arguments: sheet)
    func answersWithTheStatusInTheProtocolSheet(reason: String, status: Int) throws {
        let parsed = try #require(Reason(rawValue: reason), "missing reason \(reason)")
        #expect(parsed.status == status)
    }

    @Test func hasNoReasonMissingFromTheProtocolSheet() {
        let documented = Set(sheet.map(\.reason))
        let extra = Reason.allCases.map(\.rawValue).filter { !documented.contains($0) }
        #expect(extra == [])
        #expect(Reason.allCases.count == sheet.count)
    }

    @Test func hasBothSpellingsOfTheEnvironmentKeyReason() {
        #expect(Reason.badEnvironmentKeyInToken.rawValue == "BadEnvironmentKeyInToken")
        #expect(Reason.badEnvironmentKeyIdInToken.rawValue == "BadEnvironmentKeyIdInToken")
        #expect(Reason.badEnvironmentKeyInToken.status == 403)
        #expect(Reason.badEnvironmentKeyIdInToken.status == 403)
    }

    @Test func spellsServiceUnavailableWithoutASpace() {
        #expect(Reason(rawValue: "ServiceUnavailable") == .serviceUnavailable)
        #expect(Reason(rawValue: "Service Unavailable") == nil)
    }

    @Test func writesCompactBodyWithoutTimestamp() {
        #expect(Reason.badDeviceToken.body() == #"{"reason":"BadDeviceToken"}"#)
        #expect(Reason.missingTopic.body() == #"{"reason":"MissingTopic"}"#)
    }

    @Test func writesTimestampInMillisecondsAfterTheReason() {
        #expect(
            Reason.unregistered.body(timestamp: 1_496_371_306_210)
                == #"{"reason":"Unregistered","timestamp":1496371306210}"#
        )
    }

    @Test(arguments: Reason.allCases)
    func writesBodyThatParsesAsJSONWithTheReason(reason: Reason) throws {
        let object = try JSONSerialization.jsonObject(with: Data(reason.body().utf8)) as? [String: Any]
        #expect(object?.count == 1)
        #expect(object?["reason"] as? String == reason.rawValue)
    }

    @Test func carriesTimestampOnlyFor410Reasons() {
        let carrying = Reason.allCases.filter(\.carriesTimestamp)
        #expect(Set(carrying) == [.unregistered, .expiredToken])
    }

    @Test func responseBodyIncludesTimestampFor410() {
        let response = APNsResponse(status: 410, reason: .unregistered, apnsID: "A", timestamp: 1_454_948_015_990)
        #expect(response.body == #"{"reason":"Unregistered","timestamp":1454948015990}"#)
    }

    @Test func responseBodyOmitsTimestampForOtherStatuses() {
        let response = APNsResponse(status: 400, reason: .badDeviceToken, apnsID: "A", timestamp: 1_454_948_015_990)
        #expect(response.body == #"{"reason":"BadDeviceToken"}"#)
    }

    @Test func successResponseHasNoBody() {
        #expect(APNsResponse(status: 200, apnsID: "A").body == nil)
    }
}
