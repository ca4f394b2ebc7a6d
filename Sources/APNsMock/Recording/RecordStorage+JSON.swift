extension RecordStorage {
    /// Writes the request's members of a recording's JSON straight from the stored bytes: no `String`, array or
    /// dictionary is made (rebuilding the request first cost the record file's writer more than answering it).
    func writeRequestJSON(_ fields: RecordFields, into json: inout JSONWriter) {
        let text = pathText
        let known = knownHeaders
        json.key("method")
        writeMethod(into: &json)
        json.key("path")
        writePath(fields, text: text, into: &json, prefix: true)
        json.key("authority")
        writeAuthority(host: known.host, into: &json)
        json.key("deviceToken")
        writePath(fields, text: text, into: &json, prefix: false)
        writeShapeTail(known, payloadSize: fields.payloadSize, keepsCredentials: fields.keepsCredentials, into: &json)
    }

    /// As above, with the members that only the shared bytes decide (all but the path and the device token) taken
    /// from `shapes` when a recording with this storage was written recently.
    func writeRequestJSON(_ fields: RecordFields, into json: inout JSONWriter, shapes: inout RecordShapeJSONCache) {
        // A text path lives in the storage, which is then the recording's own: nothing to share.
        guard fields.pathEncoding != .text else { return writeRequestJSON(fields, into: &json) }
        let entry = shapes.entry(for: self, payloadSize: fields.payloadSize) {
            let known = knownHeaders
            var members = JSONWriter(reservingCapacity: 1024)
            members.continueObject()
            members.key("method")
            writeMethod(into: &members)
            let afterMethod = members.bytes.count
            members.key("authority")
            writeAuthority(host: known.host, into: &members)
            let afterAuthority = members.bytes.count
            writeShapeTail(known, payloadSize: fields.payloadSize, keepsCredentials: fields.keepsCredentials, into: &members)
            return RecordShapeJSONCache.Entry(json: members.bytes, afterMethod: afterMethod, afterAuthority: afterAuthority)
        }
        var token = fields.token
        let uppercase = fields.pathEncoding == .deviceTokenUppercase
        withUnsafeBytes(of: &token) { raw in
            let token = UnsafeRawBufferPointer(rebasing: raw.prefix(Int(fields.tokenLength)))
            let bound = 2 * token.count + 32
            entry.json.withUnsafeBufferPointer { members in
                json.members(UnsafeBufferPointer(rebasing: members[..<entry.afterMethod]))
                json.bounded(atMost: bound) { path in
                    path.key("path")
                    path.hexString(prefix: APNsPath.devicePrefixBytes, bytes: token, uppercase: uppercase)
                }
                json.members(UnsafeBufferPointer(rebasing: members[entry.afterMethod..<entry.afterAuthority]))
                json.bounded(atMost: bound) { deviceToken in
                    deviceToken.key("deviceToken")
                    deviceToken.hexString(prefix: "", bytes: token, uppercase: uppercase)
                }
                json.members(UnsafeBufferPointer(rebasing: members[entry.afterAuthority...]))
            }
        }
    }

    /// The stored bytes at `offset`; valid while the storage lives (it is immutable once made).
    private func bytes(_ offset: Int, _ length: Int) -> UnsafeBufferPointer<UInt8> {
        withUnsafeMutablePointerToElements { base in UnsafeBufferPointer(start: UnsafePointer(base + offset), count: length) }
    }

    private var pathText: UnsafeBufferPointer<UInt8> { bytes(0, Int(header.pathLength)) }

    private var headerBlock: UnsafeBufferPointer<UInt8> { bytes(offsets.headers, Int(header.headerBlockLength)) }

    /// The first `apns-topic`, `apns-push-type` and `host` values of the header block.
    private typealias KnownHeaders = (topic: UnsafeBufferPointer<UInt8>?, pushType: UnsafeBufferPointer<UInt8>?, host: UnsafeBufferPointer<UInt8>?)

    /// The `KnownHeaders`, found in one pass over the header block.
    private var knownHeaders: KnownHeaders {
        var known: KnownHeaders = (nil, nil, nil)
        HeaderBlock.forEach(in: headerBlock, count: Int(header.headerCount)) { code, _, value in
            switch code {
            case HeaderBlock.Code.topic where known.topic == nil: known.topic = value
            case HeaderBlock.Code.pushType where known.pushType == nil: known.pushType = value
            case HeaderBlock.Code.host where known.host == nil: known.host = value
            default: break
            }
            return true
        }
        return known
    }

    private func writeMethod(into json: inout JSONWriter) {
        json.string(utf8: bytes(offsets.method, Int(header.methodLength)))
    }

    /// `:authority`, or the `host` header when there was none.
    private func writeAuthority(host: UnsafeBufferPointer<UInt8>?, into json: inout JSONWriter) {
        if header.authorityLength != Self.absent {
            json.string(utf8: bytes(offsets.authority, Int(header.authorityLength)))
        } else if let host {
            json.string(utf8: host)
        } else {
            json.null()
        }
    }

    /// `topic` … `payload`: what the header block and the payload decide.
    private func writeShapeTail(
        _ known: KnownHeaders,
        payloadSize: UInt32,
        keepsCredentials: Bool,
        into json: inout JSONWriter
    ) {
        json.key("topic")
        if let topic = known.topic { json.string(utf8: topic) } else { json.null() }
        json.key("pushType")
        if let pushType = known.pushType { json.string(utf8: pushType) } else { json.null() }
        json.key("headers")
        json.beginArray()
        HeaderBlock.forEach(in: headerBlock, count: Int(header.headerCount)) { _, name, value in
            json.beginObject()
            json.key("name")
            json.string(utf8: name)
            json.key("value")
            if !keepsCredentials, CredentialRedaction.isCredential(name: name) {
                json.string(CredentialRedaction.redacted(value))
            } else {
                json.string(utf8: value)
            }
            json.endObject()
            return true
        }
        json.endArray()
        let payload = bytes(offsets.payload, Int(header.payloadLength))
        json.key("payloadSize")
        json.int(Int(payloadSize))
        json.key("payloadTruncated")
        json.bool(payload.count < Int(payloadSize))
        json.key("payloadText")
        json.string(utf8: payload)
        json.key("payload")
        if JSONSyntax.isCleanObject(payload) {
            // A JSON object (RFC 8259, strictly: valid UTF-8, escaped control characters, no trailing commas):
            // copied as it was sent, so the recording shows the provider's own bytes, key order and all. Its
            // line breaks can only be whitespace between tokens: they become spaces, so a record file line
            // stays one line.
            json.rawOnOneLine(payload)
        } else {
            json.null()
        }
    }

    /// The path (`prefix`) or the device token in it (`nil` when the path is not `/3/device/<token>`).
    private func writePath(_ fields: RecordFields, text: UnsafeBufferPointer<UInt8>, into json: inout JSONWriter, prefix: Bool) {
        switch fields.pathEncoding {
        case .text:
            let devicePrefix = APNsPath.devicePrefix.utf8
            if prefix {
                json.string(utf8: text)
            } else if text.starts(with: devicePrefix), text.count > devicePrefix.count {
                json.string(utf8: UnsafeBufferPointer(rebasing: text[devicePrefix.count...]))
            } else {
                json.null()
            }
        case .deviceTokenLowercase, .deviceTokenUppercase:
            var token = fields.token
            withUnsafeBytes(of: &token) { raw in
                json.hexString(prefix: prefix ? APNsPath.devicePrefixBytes : "", bytes: UnsafeRawBufferPointer(rebasing: raw.prefix(Int(fields.tokenLength))),
                               uppercase: fields.pathEncoding == .deviceTokenUppercase)
            }
        }
    }

    /// Writes the answer's object (status, reason, IDs, timestamp) from the fields, generated IDs from their bits.
    /// - Parameter idKey: the ID's member: `apnsId`, or `requestId` for the broadcast API (`apns-request-id`).
    func writeResponseJSON(_ fields: RecordFields, idKey: StaticString = "apnsId", into json: inout JSONWriter) {
        let reason = fields.reason
        json.bounded(atMost: 48) { head in
            head.beginObject()
            head.key("status")
            head.int(Int64(fields.status))
            head.key("reason")
            if reason == nil { head.null() }
        }
        if let reason { json.string(reason.rawValue) }
        let textStart = Int(header.pathLength)
        writeID(fields.apnsIDKind, fields.apnsID, key: idKey, textAt: textStart, into: &json)
        writeID(
            fields.uniqueIDKind, fields.uniqueID, key: "apnsUniqueId",
            textAt: textStart + (fields.apnsIDKind == .text ? Int(fields.apnsID.0) : 0), into: &json
        )
        if fields.timestamp != RecordFields.noTimestamp, reason?.carriesTimestamp == true {
            json.key("timestamp")
            json.int(fields.timestamp)
        }
        json.endObject()
    }

    /// The member `key` with an ID: a generated one written from its bits, with its name, at once.
    private func writeID(_ kind: RecordFields.IDKind, _ bits: (UInt64, UInt64), key: StaticString, textAt offset: Int, into json: inout JSONWriter) {
        switch kind {
        case .uppercase, .lowercase:
            json.bounded(atMost: key.utf8CodeUnitCount + APNsIDGenerator.textLength + 8) { id in
                id.key(key)
                id.uuid(high: bits.0, low: bits.1, uppercase: kind == .uppercase)
            }
        case .none:
            json.key(key)
            json.null()
        case .echoed, .text:
            json.key(key)
            json.string(expand(kind, bits, textAt: offset))
        }
    }
}

/// The JSON a writer of many recordings (the record file) made from what recordings share (see `RecentlyShared`):
/// the members a request shape decides (see `RecordStorage.writeRequestJSON(_:into:shapes:)`), those a recording's
/// extras decide, and the current second's date. Escaping and checking the same payload for every line was most of
/// the record file's cost.
package struct RecordShapeJSONCache {
    struct Entry {
        /// `,"method":…` then `,"authority":…` then `,"topic":…` to the payload, each part starting with a comma.
        let json: [UInt8]
        let afterMethod: Int
        let afterAuthority: Int
    }

    private var shapes = RecentlyShared<RecordStorage, Entry>()
    private var extras = RecentlyShared<RecordExtras, [UInt8]>()
    /// The second of the most recent `receivedAt`.
    var second = ISO8601Time.SecondMemo()

    package init() {}

    /// The members `write` makes for `extras`, as a fragment for `JSONWriter.members(_:)`.
    mutating func extrasMembers(_ extras: RecordExtras?, write: (inout JSONWriter) -> Void) -> [UInt8] {
        self.extras.value(for: extras) {
            var members = JSONWriter(reservingCapacity: 128)
            members.continueObject()
            write(&members)
            return members.bytes
        }
    }

    mutating func entry(for storage: RecordStorage, payloadSize: UInt32, make: () -> Entry) -> Entry {
        shapes.value(for: storage, detail: payloadSize, make: make)
    }
}
