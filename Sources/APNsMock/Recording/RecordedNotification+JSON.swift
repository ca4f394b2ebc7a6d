import Foundation

extension RecordedNotification {
    /// The admin API's JSON form: request as received (headers in order, duplicates kept), payload parsed when
    /// it is a JSON object, and the answer given.
    public func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "sequence": sequence,
            "receivedAt": Self.iso8601(milliseconds: receivedAt),
            "receivedAtMillis": receivedAt,
            "connectionId": connectionID,
            "streamId": streamID,
            "method": request.method,
            "path": request.path,
            "headers": request.headers.map { ["name": $0.name, "value": $0.value] },
            "payloadSize": request.payloadSize,
            "payloadTruncated": request.payload.count < request.payloadSize,
            "payloadText": String(decoding: request.payload, as: UTF8.self),
        ]
        object["deviceToken"] = deviceToken ?? NSNull()
        object["topic"] = topic ?? NSNull()
        object["pushType"] = pushType ?? NSNull()
        object["authority"] = request.authority ?? NSNull()
        object["payload"] = JSONObjectCheck.parseObject(request.payload) ?? NSNull()
        object["authentication"] = authentication.map(Self.json(authentication:)) ?? NSNull()
        object["scenarioRule"] = scenarioRule ?? NSNull()
        if !faults.isEmpty { object["faults"] = faults }
        if let response {
            var answer: [String: Any] = ["status": response.status, "apnsId": response.apnsID]
            answer["reason"] = response.reason?.rawValue ?? NSNull()
            answer["apnsUniqueId"] = response.uniqueID ?? NSNull()
            if let timestamp = response.timestamp, response.reason?.carriesTimestamp == true {
                answer["timestamp"] = timestamp
            }
            object["response"] = answer
        } else {
            object["response"] = NSNull()
            object["abandoned"] = abandonedBecause ?? "no answer"
        }
        return object
    }

    static func json(authentication: AuthenticationRecord) -> [String: Any] {
        var object: [String: Any] = ["method": authentication.method]
        switch authentication {
        case .none, .missing:
            break
        case .token(let keyID, let teamID, let issuedAt, let signatureVerified, let error):
            object["keyId"] = keyID ?? NSNull()
            object["teamId"] = teamID ?? NSNull()
            object["issuedAt"] = issuedAt ?? NSNull()
            object["signatureVerified"] = signatureVerified
            if let error { object["error"] = error }
        case .certificate(let subject, let topics):
            object["subject"] = subject
            object["topics"] = topics
        }
        return object
    }

    /// `2026-11-22T03:01:09.612Z`, exact to the millisecond (formatting a `Double` date can round it away).
    static func iso8601(milliseconds: Int64) -> String {
        let (seconds, remainder) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        let whole = seconds - (remainder < 0 ? 1 : 0)
        let millis = remainder < 0 ? remainder + 1000 : remainder
        let base = Date(timeIntervalSince1970: Double(whole)).formatted(.iso8601)
        let fraction = String(millis + 1000).dropFirst()
        return base.dropLast() + "." + fraction + "Z"
    }
}
