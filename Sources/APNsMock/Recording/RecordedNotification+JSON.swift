extension RecordedNotification {
    /// The recording's JSON form, as the admin API serves it and the record file keeps it: the request as received
    /// (headers in order, duplicates kept), the payload as a JSON value when it is a JSON object, and the answer.
    public func writeJSON(into json: inout JSONWriter) {
        let request = self.request
        json.beginObject()
        json.key("sequence")
        json.uint(sequence)
        json.key("receivedAt")
        json.string(Self.iso8601(milliseconds: receivedAt))
        json.key("receivedAtMillis")
        json.int(receivedAt)
        json.key("connectionId")
        json.uint(connectionID)
        json.key("streamId")
        json.int(Int64(streamID))
        json.key("method")
        json.string(request.method)
        json.key("path")
        json.string(request.path)
        json.key("authority")
        json.string(request.authority)
        json.key("deviceToken")
        json.string(deviceToken)
        json.key("topic")
        json.string(topic)
        json.key("pushType")
        json.string(pushType)
        json.key("headers")
        json.beginArray()
        for header in request.headers {
            json.beginObject()
            json.key("name")
            json.string(header.name)
            json.key("value")
            json.string(header.value)
            json.endObject()
        }
        json.endArray()
        json.key("payloadSize")
        json.int(request.payloadSize)
        json.key("payloadTruncated")
        json.bool(request.payload.count < request.payloadSize)
        json.key("payloadText")
        request.payload.withUnsafeBufferPointer { json.string(utf8: $0) }
        json.key("payload")
        if let first = request.payload.first(where: { !Self.isJSONWhitespace($0) }), first == UInt8(ascii: "{"),
            let object = JSONScanner.parse(request.payload)
        {
            json.value(object)
        } else {
            json.null()
        }
        json.key("authentication")
        if let authentication { Self.write(authentication, into: &json) } else { json.null() }
        json.key("scenarioRule")
        json.string(scenarioRule)
        if !faults.isEmpty {
            json.key("faults")
            json.beginArray()
            for fault in faults { json.string(fault) }
            json.endArray()
        }
        json.key("response")
        if let response {
            json.beginObject()
            json.key("status")
            json.int(response.status)
            json.key("reason")
            json.string(response.reason?.rawValue)
            json.key("apnsId")
            json.string(response.apnsID)
            json.key("apnsUniqueId")
            json.string(response.uniqueID)
            if let timestamp = response.timestamp, response.reason?.carriesTimestamp == true {
                json.key("timestamp")
                json.int(timestamp)
            }
            json.endObject()
        } else {
            json.null()
            json.key("abandoned")
            json.string(abandonedBecause ?? "no answer")
        }
        json.endObject()
    }

    /// The JSON form as bytes (see `writeJSON(into:)`).
    public func jsonBytes() -> [UInt8] {
        var json = JSONWriter(reservingCapacity: 1024)
        writeJSON(into: &json)
        return json.bytes
    }

    static func write(_ authentication: AuthenticationRecord, into json: inout JSONWriter) {
        json.beginObject()
        json.key("method")
        json.string(authentication.method)
        switch authentication {
        case .none, .missing:
            break
        case .token(let keyID, let teamID, let issuedAt, let signatureVerified, let error):
            json.key("keyId")
            json.string(keyID)
            json.key("teamId")
            json.string(teamID)
            json.key("issuedAt")
            if let issuedAt { json.int(issuedAt) } else { json.null() }
            json.key("signatureVerified")
            json.bool(signatureVerified)
            if let error {
                json.key("error")
                json.string(error)
            }
        case .certificate(let subject, let topics):
            json.key("subject")
            json.string(subject)
            json.key("topics")
            json.beginArray()
            for topic in topics { json.string(topic) }
            json.endArray()
        }
        json.endObject()
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// `2026-11-22T03:01:09.612Z` (see `ISO8601Time`).
    static func iso8601(milliseconds: Int64) -> String { ISO8601Time.format(milliseconds: milliseconds) }
}
