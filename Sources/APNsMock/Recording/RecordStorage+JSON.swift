extension RecordStorage {
    /// Writes the request's members of a recording's JSON straight from the stored bytes: no `String`, array or
    /// dictionary is made (rebuilding the request first cost the record file's writer more than answering it).
    func writeRequestJSON(_ fields: RecordFields, into json: inout JSONWriter) {
        let header = self.header
        let offsets = self.offsets
        withUnsafeMutablePointerToElements { base in
            func bytes(_ offset: Int, _ length: Int) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(start: UnsafePointer(base + offset), count: length)
            }
            let block = bytes(offsets.headers, Int(header.headerBlockLength))
            var topic: UnsafeBufferPointer<UInt8>?
            var pushType: UnsafeBufferPointer<UInt8>?
            var host: UnsafeBufferPointer<UInt8>?
            HeaderBlock.forEach(in: block, count: Int(header.headerCount)) { code, _, value in
                switch code {
                case HeaderBlock.Code.topic where topic == nil: topic = value
                case HeaderBlock.Code.pushType where pushType == nil: pushType = value
                case HeaderBlock.Code.host where host == nil: host = value
                default: break
                }
                return true
            }

            json.key("method")
            json.string(utf8: bytes(offsets.method, Int(header.methodLength)))
            json.key("path")
            writePath(fields, text: bytes(0, Int(header.pathLength)), into: &json, prefix: true)
            json.key("authority")
            if header.authorityLength != Self.absent {
                json.string(utf8: bytes(offsets.authority, Int(header.authorityLength)))
            } else if let host {
                json.string(utf8: host)
            } else {
                json.null()
            }
            json.key("deviceToken")
            writePath(fields, text: bytes(0, Int(header.pathLength)), into: &json, prefix: false)
            json.key("topic")
            if let topic { json.string(utf8: topic) } else { json.null() }
            json.key("pushType")
            if let pushType { json.string(utf8: pushType) } else { json.null() }
            json.key("headers")
            json.beginArray()
            HeaderBlock.forEach(in: block, count: Int(header.headerCount)) { _, name, value in
                json.beginObject()
                json.key("name")
                json.string(utf8: name)
                json.key("value")
                json.string(utf8: value)
                json.endObject()
                return true
            }
            json.endArray()
            let payload = bytes(offsets.payload, Int(header.payloadLength))
            json.key("payloadSize")
            json.int(Int(fields.payloadSize))
            json.key("payloadTruncated")
            json.bool(payload.count < Int(fields.payloadSize))
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
            let digits: StaticString = fields.pathEncoding == .deviceTokenUppercase ? "0123456789ABCDEF" : "0123456789abcdef"
            var hex: [UInt8] = []
            hex.reserveCapacity(10 + 2 * Int(fields.tokenLength))
            if prefix { hex.append(contentsOf: APNsPath.devicePrefix.utf8) }
            var token = fields.token
            withUnsafeBytes(of: &token) { raw in
                for byte in raw.prefix(Int(fields.tokenLength)) {
                    hex.append(digits.utf8Start[Int(byte >> 4)])
                    hex.append(digits.utf8Start[Int(byte & 0x0F)])
                }
            }
            hex.withUnsafeBufferPointer { json.string(utf8: $0) }
        }
    }

    /// Writes the answer's object (status, reason, IDs, timestamp) from the fields, generated IDs from their bits.
    /// - Parameter idKey: the ID's member: `apnsId`, or `requestId` for the broadcast API (`apns-request-id`).
    func writeResponseJSON(_ fields: RecordFields, idKey: StaticString = "apnsId", into json: inout JSONWriter) {
        json.beginObject()
        json.key("status")
        json.int(Int(fields.status))
        json.key("reason")
        json.string(fields.reason?.rawValue)
        let textStart = Int(header.pathLength)
        json.key(idKey)
        writeID(fields.apnsIDKind, fields.apnsID, textAt: textStart, into: &json)
        json.key("apnsUniqueId")
        writeID(fields.uniqueIDKind, fields.uniqueID, textAt: textStart + (fields.apnsIDKind == .text ? Int(fields.apnsID.0) : 0), into: &json)
        if fields.timestamp != RecordFields.noTimestamp, fields.reason?.carriesTimestamp == true {
            json.key("timestamp")
            json.int(fields.timestamp)
        }
        json.endObject()
    }

    private func writeID(_ kind: RecordFields.IDKind, _ bits: (UInt64, UInt64), textAt offset: Int, into json: inout JSONWriter) {
        switch kind {
        case .uppercase: json.uuid(high: bits.0, low: bits.1, uppercase: true)
        case .lowercase: json.uuid(high: bits.0, low: bits.1, uppercase: false)
        case .none: json.null()
        case .echoed, .text: json.string(expand(kind, bits, textAt: offset))
        }
    }
}
