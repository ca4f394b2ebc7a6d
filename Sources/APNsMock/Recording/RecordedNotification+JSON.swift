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

    static func iso8601(milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        return date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
