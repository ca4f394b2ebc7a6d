#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A recording in one allocation: the answer's scalars in the header, the request's bytes in the tail: the path,
/// then its *shape*: method, scheme, authority, the request's header block as it arrived (in `HeaderBlock` form)
/// and the payload.
///
/// Measured before this layout: about 1,400 bytes per recording of a 200-byte push (a dozen separate allocations
/// for strings and arrays); with it, one allocation of roughly the request's own size plus 100 bytes.
///
/// A shape equal to the one of the connection's previous recording is not stored again: the recording keeps a
/// reference to the recording that holds it (`Header.shapeSource`) and only its path. Load tests send one payload
/// and the same headers over and over, to one token after another; sharing makes such a recording about 210
/// bytes instead of 490 for a 200-byte push, and the fresh memory a recorder touches per request (a page fault
/// per 4 KiB, the largest and least steady cost in profiles) shrinks with it.
///
/// Shared across threads although `ManagedBuffer` is not `Sendable`: the header and the bytes are written once,
/// in `make`, before the object is shared, and never again; every later access only reads
/// (see `RecordedNotification.storage`).
final class RecordStorage: ManagedBuffer<RecordStorage.Header, UInt8> {
    /// 88 bytes, so that with the object's own 16 and a 32-byte token a shared recording is a 144-byte block from
    /// malloc: no `Optional` of a scalar (each costs a byte and its alignment), IDs as bits plus a kind.
    struct Header {
        var methodLength: UInt16 = 0
        var schemeLength: UInt16 = RecordStorage.absent
        var authorityLength: UInt16 = RecordStorage.absent
        var headerCount: UInt16 = 0
        /// Bytes of the path as stored: the text, or the device token's bytes (see `pathEncoding`).
        var pathLength: UInt32 = 0
        var headerBlockLength: UInt32 = 0
        var payloadLength: UInt32 = 0
        /// Body bytes the client sent, kept or not (a body goes nowhere near 4 GiB: it is reset past its bound).
        var payloadSize: UInt32 = 0
        var status: UInt16 = 0
        var pathEncoding: PathEncoding = .text
        var hasResponse = false
        var headerListTooLarge = false
        var reason: Reason?
        var apnsIDKind: IDKind = .none
        var uniqueIDKind: IDKind = .none
        /// `RecordStorage.noTimestamp` when the answer has none.
        var timestamp: Int64 = RecordStorage.noTimestamp
        /// An ID's bits (`.uppercase`, `.lowercase`), or for `.text` its length in `.0` (the text is in the tail).
        var apnsID: (UInt64, UInt64) = (0, 0)
        var uniqueID: (UInt64, UInt64) = (0, 0)
        var extras: RecordExtras?
        /// Where the shape's bytes are when they are not in this tail: a recording that holds them itself.
        var shapeSource: RecordStorage?

        /// Tail bytes taken by text IDs, between the path and the shape.
        var idTextLength: Int {
            (apnsIDKind == .text ? Int(apnsID.0) : 0) + (uniqueIDKind == .text ? Int(uniqueID.0) : 0)
        }
    }

    static let noTimestamp = Int64.min

    /// How an ID is kept in the header (see `CompactID`).
    enum IDKind: UInt8 {
        case none, echoed, uppercase, lowercase, text
    }

    /// `/3/device/<hex>` is kept as the token's bytes (half the size); anything else as text.
    enum PathEncoding: UInt8 {
        case text
        case deviceTokenLowercase
        case deviceTokenUppercase
    }

    /// How `path` is stored: as the token's bytes when it is `/3/device/` and an even number of hex digits in
    /// one case, as text otherwise.
    static func pathEncoding(_ path: UnsafeBufferPointer<UInt8>) -> PathEncoding {
        guard let hex = APNsPath.tokenBytes(in: path), !hex.isEmpty, hex.count % 2 == 0 else { return .text }
        let digits = ASCII.hexDigits(hex)
        guard digits.allHex, !(digits.hasUppercaseLetter && digits.hasLowercaseLetter) else { return .text }
        return digits.hasUppercaseLetter ? .deviceTokenUppercase : .deviceTokenLowercase
    }

    /// Writes the token's bytes for a path `pathEncoding` accepted; returns how many it wrote.
    private static func writeDeviceToken(of path: UnsafeBufferPointer<UInt8>, to cursor: UnsafeMutablePointer<UInt8>) -> Int {
        let hex = APNsPath.tokenBytes(in: path)!
        func value(_ digit: UInt8) -> UInt8 {
            if digit <= UInt8(ascii: "9") { return digit &- UInt8(ascii: "0") }
            return (digit | 0x20) &- UInt8(ascii: "a") &+ 10
        }
        for index in 0..<hex.count / 2 {
            cursor[index] = value(hex[2 * index]) << 4 | value(hex[2 * index + 1])
        }
        return hex.count / 2
    }

    /// A UUID string kept as 16 bytes, or how to find it otherwise.
    enum CompactID {
        case none
        /// The same text as the request's `apns-id` header.
        case echoed
        case uppercase(UInt64, UInt64)
        case lowercase(UInt64, UInt64)
        /// Not a canonical UUID in one case: kept as written.
        case text(String)
    }

    static let absent: UInt16 = .max

    /// - Parameter shapes: the connection's last shape, shared when the request's is the same, and replaced by
    ///   this recording's when it is not.
    static func make(
        request: borrowing APNsRequest,
        response: borrowing APNsResponse?,
        extras: RecordExtras?,
        shapes: inout RecordShapeCache
    ) -> RecordStorage {
        // The request's bytes are copied as they are: its header block is already in the stored form.
        let head = request.head
        return head.withBytes(head.method) { method in
            head.withBytes(head.path) { path in
                head.withBytes(head.scheme) { scheme in
                    head.withBytes(head.authority ?? head.host) { authority in
                        head.withHeaderBlock { block in
                            make(
                                method: method, path: path,
                                scheme: head.scheme == nil ? nil : scheme,
                                authority: head.authority == nil && head.host == nil ? nil : authority,
                                headerBlock: block, headerCount: head.headerCount,
                                request: request, response: response, extras: extras, shapes: &shapes
                            )
                        }
                    }
                }
            }
        }
    }

    private static func make(
        method: UnsafeBufferPointer<UInt8>,
        path: UnsafeBufferPointer<UInt8>,
        scheme: UnsafeBufferPointer<UInt8>?,
        authority: UnsafeBufferPointer<UInt8>?,
        headerBlock: UnsafeBufferPointer<UInt8>,
        headerCount: Int,
        request: APNsRequest,
        response: APNsResponse?,
        extras: RecordExtras?,
        shapes: inout RecordShapeCache
    ) -> RecordStorage {
        let methodLength = min(method.count, Int(absent - 1))
        let encoding = pathEncoding(path)
        let pathLength = encoding == .text
            ? min(path.count, Int(UInt32.max))
            : (path.count - APNsPath.devicePrefixBytes.utf8CodeUnitCount) / 2
        let schemeLength = scheme.map { min($0.count, Int(absent - 1)) }
        let authorityLength = authority.map { min($0.count, Int(absent - 1)) }
        var header = Header()
        header.methodLength = UInt16(methodLength)
        header.pathLength = UInt32(pathLength)
        header.pathEncoding = encoding
        header.schemeLength = schemeLength.map { UInt16($0) } ?? absent
        header.authorityLength = authorityLength.map { UInt16($0) } ?? absent
        header.headerCount = UInt16(headerCount)
        header.headerBlockLength = UInt32(headerBlock.count)
        header.payloadLength = UInt32(request.payload.count)
        header.payloadSize = UInt32(clamping: request.payloadSize)
        header.headerListTooLarge = request.headerListTooLarge
        header.extras = extras
        var apnsIDText: String?
        var uniqueIDText: String?
        if let response {
            header.hasResponse = true
            header.status = UInt16(clamping: response.status)
            header.reason = response.reason
            header.timestamp = response.timestamp ?? noTimestamp
            (header.apnsIDKind, header.apnsID, apnsIDText) = store(compact(response.apnsIDValue, echoing: request.header("apns-id")))
            (header.uniqueIDKind, header.uniqueID, uniqueIDText) = store(response.uniqueIDValue.map { compact($0, echoing: nil) } ?? .none)
        }
        let idTextLength = header.idTextLength

        return request.payload.withUnsafeBufferPointer { payload in
            let parts = ShapeParts(
                method: UnsafeBufferPointer(rebasing: method[..<methodLength]),
                scheme: scheme.map { UnsafeBufferPointer(rebasing: $0[..<schemeLength!]) },
                authority: authority.map { UnsafeBufferPointer(rebasing: $0[..<authorityLength!]) },
                headerBlock: headerBlock,
                payload: payload
            )
            let shared = shapes.source.flatMap { $0.holdsShape(header, parts) ? $0 : nil }
            header.shapeSource = shared
            let shapeLength = shared == nil ? parts.count : 0
            let storage = RecordStorage.create(minimumCapacity: pathLength + idTextLength + shapeLength) { _ in header } as! RecordStorage
            storage.withUnsafeMutablePointerToElements { base in
                var cursor = base
                if encoding == .text {
                    if pathLength > 0 { cursor.update(from: path.baseAddress!, count: pathLength) }
                    cursor += pathLength
                } else {
                    cursor += writeDeviceToken(of: path, to: cursor)
                }
                func put(_ text: String?) {
                    guard var text else { return }
                    text.withUTF8 { cursor.update(from: $0.baseAddress!, count: $0.count) }
                    cursor += text.utf8.count
                }
                put(apnsIDText)
                put(uniqueIDText)
                guard shared == nil else { return }
                _ = parts.forEach { part in
                    cursor.update(from: part.baseAddress!, count: part.count)
                    cursor += part.count
                    return true
                }
            }
            if shared == nil { shapes.source = storage }
            return storage
        }
    }

    /// Whether this recording's own tail holds a shape of the lengths in `header` with the bytes of `parts`.
    private func holdsShape(_ other: Header, _ parts: ShapeParts) -> Bool {
        // Field by field through the pointer: a copy of the whole header (a retain of each reference) showed.
        let shapeStart = withUnsafeMutablePointerToHeader { header -> Int? in
            let mine = UnsafePointer(header)
            guard mine.pointee.shapeSource == nil, mine.pointee.methodLength == other.methodLength,
                  mine.pointee.schemeLength == other.schemeLength, mine.pointee.authorityLength == other.authorityLength,
                  mine.pointee.headerCount == other.headerCount, mine.pointee.headerBlockLength == other.headerBlockLength,
                  mine.pointee.payloadLength == other.payloadLength
            else { return nil }
            return Int(mine.pointee.pathLength) + mine.pointee.idTextLength
        }
        guard let shapeStart else { return false }
        return withUnsafeMutablePointerToElements { base in
            var cursor = UnsafePointer(base + shapeStart)
            return parts.forEach { part in
                defer { cursor += part.count }
                return memcmp(cursor, part.baseAddress!, part.count) == 0
            }
        }
    }

    /// The bytes of a request's shape, in their stored order (no array: one per recording would be an allocation).
    private struct ShapeParts {
        var method: UnsafeBufferPointer<UInt8>
        var scheme: UnsafeBufferPointer<UInt8>?
        var authority: UnsafeBufferPointer<UInt8>?
        var headerBlock: UnsafeBufferPointer<UInt8>
        var payload: UnsafeBufferPointer<UInt8>

        var count: Int { method.count + (scheme?.count ?? 0) + (authority?.count ?? 0) + headerBlock.count + payload.count }

        /// Calls `body` with each non-empty part in order while it returns `true`; whether all returned `true`.
        func forEach(_ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
            func visit(_ part: UnsafeBufferPointer<UInt8>?) -> Bool {
                guard let part, !part.isEmpty else { return true }
                return body(part)
            }
            return visit(method) && visit(scheme) && visit(authority) && visit(headerBlock) && visit(payload)
        }
    }

    // MARK: Reading

    /// Where each part of the shape starts, from the shape's first byte.
    private struct Offsets {
        var scheme: Int
        var authority: Int
        var headers: Int
        var payload: Int
    }

    private var offsets: Offsets {
        let header = self.header
        let scheme = Int(header.methodLength)
        let authority = scheme + (header.schemeLength == Self.absent ? 0 : Int(header.schemeLength))
        let headers = authority + (header.authorityLength == Self.absent ? 0 : Int(header.authorityLength))
        return Offsets(scheme: scheme, authority: authority, headers: headers, payload: headers + Int(header.headerBlockLength))
    }

    /// Calls `body` with the shape's first byte, in this tail or in the recording that holds it.
    private func withShape<Result>(_ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        let (source, start) = withUnsafeMutablePointerToHeader { ($0.pointee.shapeSource, Int($0.pointee.pathLength) + $0.pointee.idTextLength) }
        if let source { return source.withShape(body) }
        return withUnsafeMutablePointerToElements { body(UnsafePointer($0 + start)) }
    }

    private func shapeText(at offset: Int, length: Int) -> String {
        withShape { base in
            String(decoding: UnsafeBufferPointer(start: base + offset, count: length), as: UTF8.self)
        }
    }

    private func forEachHeader(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        let start = offsets.headers
        let header = self.header
        withShape { base in
            let block = UnsafeBufferPointer(start: base + start, count: Int(header.headerBlockLength))
            HeaderBlock.forEach(in: block, count: Int(header.headerCount)) { _, name, value in body(name, value) }
        }
    }

    /// The first value of a header, by its lower-case name.
    func header(named name: String) -> String? {
        var found: String?
        let wanted = Array(name.utf8)
        forEachHeader { fieldName, value in
            if fieldName.elementsEqual(wanted) {
                found = String(decoding: value, as: UTF8.self)
                return false
            }
            return true
        }
        return found
    }

    var deviceToken: String? {
        let header = self.header
        let length = Int(header.pathLength)
        return withUnsafeMutablePointerToElements { base -> String? in
            let stored = UnsafeBufferPointer(start: base, count: length)
            switch header.pathEncoding {
            case .deviceTokenLowercase: return Self.hex(stored, uppercase: false)
            case .deviceTokenUppercase: return Self.hex(stored, uppercase: true)
            case .text:
                let prefix = APNsPath.devicePrefix.utf8
                guard stored.starts(with: prefix), stored.count > prefix.count else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: stored[prefix.count...]), as: UTF8.self)
            }
        }
    }

    private var path: String {
        let header = self.header
        if header.pathEncoding == .text {
            return withUnsafeMutablePointerToElements { base in
                String(decoding: UnsafeBufferPointer(start: base, count: Int(header.pathLength)), as: UTF8.self)
            }
        }
        return APNsPath.devicePrefix + (deviceToken ?? "")
    }

    private static func hex(_ bytes: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            digits.withUTF8Buffer { table in
                for (index, byte) in bytes.enumerated() {
                    buffer[2 * index] = table[Int(byte >> 4)]
                    buffer[2 * index + 1] = table[Int(byte & 0x0F)]
                }
            }
            return bytes.count * 2
        }
    }

    var request: APNsRequest {
        let header = self.header
        let offsets = self.offsets
        var fields: [HeaderField] = []
        fields.reserveCapacity(Int(header.headerCount))
        forEachHeader { name, value in
            fields.append(HeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            return true
        }
        let payload = withShape { base in
            Array(UnsafeBufferPointer(start: base + offsets.payload, count: Int(header.payloadLength)))
        }
        return APNsRequest(
            method: shapeText(at: 0, length: Int(header.methodLength)),
            path: path,
            scheme: header.schemeLength == Self.absent ? nil : shapeText(at: offsets.scheme, length: Int(header.schemeLength)),
            authority: header.authorityLength == Self.absent ? nil : shapeText(at: offsets.authority, length: Int(header.authorityLength)),
            headers: fields,
            payload: payload,
            payloadSize: Int(header.payloadSize),
            headerListTooLarge: header.headerListTooLarge
        )
    }

    var response: APNsResponse? {
        let header = self.header
        guard header.hasResponse else { return nil }
        return APNsResponse(
            status: Int(header.status),
            reason: header.reason,
            apnsID: expand(header.apnsIDKind, header.apnsID, textAt: Int(header.pathLength)) ?? "",
            uniqueID: expand(
                header.uniqueIDKind, header.uniqueID,
                textAt: Int(header.pathLength) + (header.apnsIDKind == .text ? Int(header.apnsID.0) : 0)
            ),
            timestamp: header.timestamp == Self.noTimestamp ? nil : header.timestamp
        )
    }

    private func expand(_ kind: IDKind, _ bits: (UInt64, UInt64), textAt offset: Int) -> String? {
        switch kind {
        case .none: return nil
        case .echoed: return header(named: "apns-id")
        case .uppercase: return APNsIDGenerator.format(high: bits.0, low: bits.1, uppercase: true)
        case .lowercase: return APNsIDGenerator.format(high: bits.0, low: bits.1, uppercase: false)
        case .text:
            return withUnsafeMutablePointerToElements { base in
                String(decoding: UnsafeBufferPointer(start: base + offset, count: Int(bits.0)), as: UTF8.self)
            }
        }
    }

    /// How `id` goes into the header, and the text that goes into the tail when it is kept as text.
    private static func store(_ id: CompactID) -> (IDKind, (UInt64, UInt64), String?) {
        switch id {
        case .none: return (.none, (0, 0), nil)
        case .echoed: return (.echoed, (0, 0), nil)
        case .uppercase(let high, let low): return (.uppercase, (high, low), nil)
        case .lowercase(let high, let low): return (.lowercase, (high, low), nil)
        case .text(let text): return (.text, (UInt64(text.utf8.count), 0), text)
        }
    }

    /// The answer's status, read without copying the header (`nil`: no answer).
    var status: Int? {
        withUnsafeMutablePointerToHeader { $0.pointee.hasResponse ? Int($0.pointee.status) : nil }
    }

    /// The answer's reason, read without copying the header.
    var reason: Reason? {
        withUnsafeMutablePointerToHeader { $0.pointee.hasResponse ? $0.pointee.reason : nil }
    }

    /// A response's ID as kept: a generated one by its bits, one equal to what the request sent as `.echoed`
    /// (read only for text IDs), other text by `compact(_:)`.
    private static func compact(_ id: APNsResponse.ID, echoing sent: @autoclosure () -> String?) -> CompactID {
        switch id {
        case .generated(let high, let low, let uppercase):
            return uppercase ? .uppercase(high, low) : .lowercase(high, low)
        case .text(let text):
            if let sent = sent(), text == sent { return .echoed }
            return compact(text)
        }
    }

    /// 16 bytes and a case for a canonical UUID written in one case; the text otherwise.
    static func compact(_ id: String) -> CompactID {
        let parsed = id.utf8.withContiguousStorageIfAvailable { bytes -> CompactID? in
            guard RequestValidator.isCanonicalUUID(bytes) else { return nil }
            var high: UInt64 = 0
            var low: UInt64 = 0
            var digits = 0
            var sawUpper = false
            var sawLower = false
            for byte in bytes where byte != UInt8(ascii: "-") {
                let value: UInt64
                if byte <= UInt8(ascii: "9") {
                    value = UInt64(byte &- UInt8(ascii: "0"))
                } else if byte <= UInt8(ascii: "F") {
                    value = UInt64(byte &- UInt8(ascii: "A") &+ 10)
                    sawUpper = true
                } else {
                    value = UInt64(byte &- UInt8(ascii: "a") &+ 10)
                    sawLower = true
                }
                if digits < 16 { high = high << 4 | value } else { low = low << 4 | value }
                digits += 1
            }
            if sawUpper && sawLower { return nil }
            return sawLower ? .lowercase(high, low) : .uppercase(high, low)
        }
        return (parsed ?? nil) ?? .text(id)
    }
}

/// The recording whose shape (see `RecordStorage`) a connection's next recording may share.
struct RecordShapeCache: Sendable {
    /// Immutable once made (see `RecordStorage`), so holding it on any thread is safe.
    nonisolated(unsafe) var source: RecordStorage?

    init() {}
}
