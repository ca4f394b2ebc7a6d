extension RecordedNotification {
    /// The recording's JSON form, as the admin API serves it and the record file keeps it: the request as received
    /// (headers in order, duplicates kept), the payload as a JSON value when it is a JSON object, and the answer.
    package func writeJSON(into json: inout JSONWriter) {
        var unshared: RecordShapeJSONCache?
        writeJSON(into: &json, shapes: &unshared)
    }

    /// As above, for a writer of many recordings: the request's shape is encoded once per storage in `shapes`
    /// (see `RecordShapeJSONCache`).
    package func writeJSON(into json: inout JSONWriter, shapes: inout RecordShapeJSONCache) {
        var cache: RecordShapeJSONCache? = consume shapes
        writeJSON(into: &json, shapes: &cache)
        shapes = cache!
    }

    private func writeJSON(into json: inout JSONWriter, shapes: inout RecordShapeJSONCache?) {
        let broadcast = self.broadcast
        // The members up to the kind, appended at once (see `BoundedJSONWriter`). The bound is the sum of what each
        // token reserves: 12 + 14 + 20 + 16 + 12 + 8 for the names, 4 × 21 for the numbers, 35 for the time, 7 for
        // "push", 2 for the brace: 210.
        json.bounded(atMost: 210) { head in
            head.beginObject()
            head.key("sequence")
            head.uint(sequence)
            head.key("receivedAt")
            if shapes != nil {
                head.iso8601(milliseconds: receivedAt, memo: &shapes!.second)
            } else {
                head.iso8601(milliseconds: receivedAt)
            }
            head.key("receivedAtMillis")
            head.int(receivedAt)
            head.key("connectionId")
            head.uint(connectionID)
            head.key("streamId")
            head.int(Int64(streamID))
            head.key("kind")
            if broadcast == nil { head.string(static: "push") }
        }
        if let broadcast {
            json.string(broadcast.kind.rawValue)
            json.key("bundleId")
            json.string(broadcast.bundleID)
            json.key("channelId")
            json.string(broadcast.channelID)
        }
        if shapes != nil {
            storage.writeRequestJSON(fields, into: &json, shapes: &shapes!)
            if extrasAreShareable {
                json.members(shapes!.extrasMembers(fields.extras) { writeExtrasMembers(into: &$0) })
            } else {
                writeExtrasMembers(into: &json)
            }
        } else {
            storage.writeRequestJSON(fields, into: &json)
            writeExtrasMembers(into: &json)
        }
        json.key("response")
        if fields.hasResponse {
            storage.writeResponseJSON(fields, idKey: broadcast == nil ? "apnsId" : "requestId", into: &json)
        } else {
            json.null()
            json.key("abandoned")
            json.string(abandonedBecause ?? "no answer")
        }
        json.endObject()
    }

    /// `authentication` … `warnings`: what the recording's extras decide (shared between recordings, see
    /// `RecordExtras`).
    private func writeExtrasMembers(into json: inout JSONWriter) {
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
        json.key("warnings")
        Self.write(warnings, into: &json)
        // Only with tenants: a mock with one tenant writes what it always wrote.
        if let tenant {
            json.key("tenant")
            json.string(tenant)
        }
    }

    /// The JSON form as bytes (see `writeJSON(into:)`).
    package func jsonBytes() -> [UInt8] {
        var json = JSONWriter(reservingCapacity: 1024)
        writeJSON(into: &json)
        return json.bytes
    }

    /// `[{"code", "path", "message"}, …]`: the recording's form, which a store's row keeps too.
    static func write(_ warnings: [PayloadWarning], into json: inout JSONWriter) {
        json.beginArray()
        for warning in warnings {
            json.beginObject()
            json.key("code")
            json.string(warning.code)
            json.key("path")
            json.string(warning.path)
            json.key("message")
            json.string(warning.message)
            json.endObject()
        }
        json.endArray()
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

    /// `2026-11-22T03:01:09.612Z` (see `ISO8601Time`).
    static func iso8601(milliseconds: Int64) -> String { ISO8601Time.format(milliseconds: milliseconds) }
}
