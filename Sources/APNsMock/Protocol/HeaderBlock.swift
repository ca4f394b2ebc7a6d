/// Header fields as bytes, the form in which the HTTP/2 layer builds a request and a recording keeps it.
///
/// Each field is a one-byte code for a name requests usually carry, or `literalName` followed by the name's
/// 16-bit little-endian length and bytes; then the value's 16-bit length and bytes. Building requests this way
/// replaced a `String` per name and value and an array per request; a recording copies the block as it is.
enum HeaderBlock {
    /// Names stored as one byte. The order is the codes' meaning: append only (and add the name to `Code` and `code(of:)`).
    static let knownNames: [StaticString] = [
        "apns-topic", "apns-push-type", "apns-id", "apns-priority", "apns-expiration", "apns-collapse-id",
        "authorization", "content-length", "content-type", "user-agent", "accept", "host", "accept-encoding",
        // The broadcast API's: looked up by code, so a broadcast's two lookups compare a byte per field, not names.
        "apns-channel-id", "apns-request-id",
    ]
    static let literalName: UInt8 = 0xFF
    /// Longer names and values are cut to this (far beyond any header list a client may send us).
    static let maxFieldLength = Int(UInt16.max)

    /// The APNs headers' codes are `0..<apnsCodeCount` (`RequestHead` keeps where their values are).
    static let apnsCodeCount: UInt8 = 7

    enum Code {
        static let topic: UInt8 = 0
        static let pushType: UInt8 = 1
        static let apnsID: UInt8 = 2
        static let priority: UInt8 = 3
        static let expiration: UInt8 = 4
        static let collapseID: UInt8 = 5
        static let authorization: UInt8 = 6
        static let contentLength: UInt8 = 7
        static let contentType: UInt8 = 8
        static let userAgent: UInt8 = 9
        static let accept: UInt8 = 10
        static let host: UInt8 = 11
        static let acceptEncoding: UInt8 = 12
        static let channelID: UInt8 = 13
        static let requestID: UInt8 = 14
    }

    /// The code of a known name (`knownNames[code] == name`), or `nil`.
    ///
    /// Compared only with the known names of its length (one to four), as literals: every header of every request
    /// comes through here, and a table of codes by length (arrays in a global, each access checked and counted)
    /// showed in profiles. A test holds this switch to `knownNames`.
    static func code(of name: UnsafeBufferPointer<UInt8>) -> UInt8? {
        guard let base = name.baseAddress else { return nil }
        // The switch has chosen the length: only the bytes are compared.
        func named(_ literal: StaticString, _ code: UInt8) -> UInt8? {
            ASCII.sameBytes(base, literal.utf8Start, count: literal.utf8CodeUnitCount) ? code : nil
        }
        switch name.count {
        case 4: return named("host", Code.host)
        case 6: return named("accept", Code.accept)
        case 7: return named("apns-id", Code.apnsID)
        case 10: return named("apns-topic", Code.topic) ?? named("user-agent", Code.userAgent)
        case 12: return named("content-type", Code.contentType)
        case 13: return named("apns-priority", Code.priority) ?? named("authorization", Code.authorization)
        case 14: return named("apns-push-type", Code.pushType) ?? named("content-length", Code.contentLength)
        case 15:
            return named("apns-expiration", Code.expiration) ?? named("apns-channel-id", Code.channelID)
                ?? named("apns-request-id", Code.requestID) ?? named("accept-encoding", Code.acceptEncoding)
        case 16: return named("apns-collapse-id", Code.collapseID)
        default: return nil
        }
    }

    static func code(of name: String) -> UInt8? {
        ASCII.withUTF8(of: name) { code(of: $0) }
    }

    /// Appends one field; returns its code (`literalName` for others) and where its value starts in `bytes`.
    @discardableResult
    static func append(
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        to bytes: inout [UInt8]
    ) -> (code: UInt8, valueOffset: Int) {
        let code = code(of: name) ?? literalName
        let valueLength = min(value.count, maxFieldLength)
        if code == literalName {
            bytes.append(code)
            appendWithLength(name, to: &bytes)
            appendWithLength(value, to: &bytes)
        } else {
            // The code and the value's length in one append: each append checks the buffer's uniqueness and
            // capacity, and four per field showed in profiles.
            var prefix = (code, UInt8(truncatingIfNeeded: valueLength), UInt8(truncatingIfNeeded: valueLength >> 8))
            withUnsafeBytes(of: &prefix) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value.prefix(valueLength)))
        }
        return (code, bytes.count - valueLength)
    }

    static func append(name: String, value: String, to bytes: inout [UInt8]) {
        ASCII.withUTF8(of: name) { name in
            ASCII.withUTF8(of: value) { value in _ = append(name: name, value: value, to: &bytes) }
        }
    }

    private static func appendWithLength(_ field: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        let length = min(field.count, maxFieldLength)
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes.append(UInt8(truncatingIfNeeded: length >> 8))
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: field.prefix(length)))
    }

    /// Calls `body` with each field's code (`literalName` for others), name and value, in order, until it
    /// returns `false`.
    static func forEach(
        in block: UnsafeBufferPointer<UInt8>,
        count: Int,
        _ body: (_ code: UInt8, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> Bool
    ) {
        guard let start = block.baseAddress else { return }
        var cursor = start
        for _ in 0..<count {
            let code = cursor[0]
            cursor += 1
            let name: UnsafeBufferPointer<UInt8>
            if code == literalName {
                let nameLength = Int(cursor[0]) | Int(cursor[1]) << 8
                name = UnsafeBufferPointer(start: cursor + 2, count: nameLength)
                cursor += 2 + nameLength
            } else {
                let known = knownNames[Int(code)]
                name = UnsafeBufferPointer(start: known.utf8Start, count: known.utf8CodeUnitCount)
            }
            let valueLength = Int(cursor[0]) | Int(cursor[1]) << 8
            let value = UnsafeBufferPointer(start: cursor + 2, count: valueLength)
            if !body(code, name, value) { return }
            cursor += 2 + valueLength
        }
    }
}
