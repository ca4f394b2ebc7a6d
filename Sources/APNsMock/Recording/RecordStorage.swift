/// What a recording keeps of its own, inside the recording (the recorder's index element): the answer's scalars,
/// the device token as bytes, the request's flags and the extras. Everything else, the request's bytes, is in a
/// `RecordStorage` that recordings with the same bytes share.
///
/// Kept out of line, these made every recording an allocation of its own; inline, a recording whose bytes are
/// shared allocates nothing, and the fresh memory a growing recorder touches per request (a page fault per
/// 4 KiB, the largest and least steady cost in profiles) is little more than this.
struct RecordFields {
    /// The device token's bytes when `pathEncoding` is not `.text` (then the path is in the storage).
    var token: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// An ID's bits (`.uppercase`, `.lowercase`); for `.text` its length in `.0` (the text is in the storage).
    var apnsID: (UInt64, UInt64) = (0, 0)
    var uniqueID: (UInt64, UInt64) = (0, 0)
    /// `RecordFields.noTimestamp` when the answer has none.
    var timestamp: Int64 = RecordFields.noTimestamp
    var extras: RecordExtras?
    /// Body bytes the client sent, kept or not (a body goes nowhere near 4 GiB: it is reset past its bound).
    var payloadSize: UInt32 = 0
    var status: UInt16 = 0
    var pathEncoding: RecordStorage.PathEncoding = .text
    /// Bytes of `token` in use.
    var tokenLength: UInt8 = 0
    var hasResponse = false
    var headerListTooLarge = false
    var reason: Reason?
    var apnsIDKind: IDKind = .none
    var uniqueIDKind: IDKind = .none
    /// The storage was another recording's (its request had the same bytes), not made for this one.
    var sharesStorage = false
    /// The `authorization` header is shown as sent (`--record-credentials full`), not redacted.
    var keepsCredentials = false
    /// An accepted push a simulated device takes: to a registered token, or a broadcast (see
    /// `RecordingOutcome.reachesDevices`).
    var reachesDevices = false

    static let noTimestamp = Int64.min
    /// The longest device token kept here: 64 hex digits, as APNs issues them. Longer ones stay text.
    static let maxTokenBytes = 32

    /// How an ID is kept (see `RecordStorage.CompactID`).
    enum IDKind: UInt8 {
        case none, echoed, uppercase, lowercase, text
    }

    /// Text bytes the IDs take in the storage, after the text path.
    var idTextLength: Int {
        (apnsIDKind == .text ? Int(apnsID.0) : 0) + (uniqueIDKind == .text ? Int(uniqueID.0) : 0)
    }
}

/// A recorded request's bytes in one allocation: its *shape* (method, scheme, authority, the header block as it
/// arrived, in `HeaderBlock` form, and the payload), preceded by what only one recording can use: a path that is
/// not a device token, and IDs that are not UUIDs (see `RecordFields`).
///
/// Measured before this layout: about 1,400 bytes per recording of a 200-byte push (a dozen separate allocations
/// for strings and arrays).
///
/// A recording whose shape equals the one of its connection's previous recording, and which has nothing of its
/// own to keep here, takes that recording's storage instead of making one. Load tests send one payload and the
/// same headers over and over, to one token after another: such a recording is then about 140 bytes instead of
/// 490 for a 200-byte push, and allocates nothing.
///
/// Shared across threads although `ManagedBuffer` is not `Sendable`: the header and the bytes are written once,
/// in `make`, before the object is shared, and never again; every later access only reads
/// (see `RecordedNotification.storage`).
final class RecordStorage: ManagedBuffer<RecordStorage.Header, UInt8> {
    struct Header {
        var methodLength: UInt16 = 0
        var schemeLength: UInt16 = RecordStorage.absent
        var authorityLength: UInt16 = RecordStorage.absent
        var headerCount: UInt16 = 0
        /// Bytes of the text path at the tail's start (0 when the recordings keep a device token instead).
        var pathLength: UInt32 = 0
        /// Bytes of text IDs after the path (0 for IDs kept as bits).
        var idTextLength: UInt32 = 0
        var headerBlockLength: UInt32 = 0
        var payloadLength: UInt32 = 0

        var shapeStart: Int { Int(pathLength) + Int(idTextLength) }
    }

    /// `/3/device/<hex>` is kept as the token's bytes (half the size); anything else as text.
    enum PathEncoding: UInt8 {
        case text
        case deviceTokenLowercase
        case deviceTokenUppercase
    }

    /// How `path` is stored: as the token's bytes when it is `/3/device/` and an even number of hex digits in
    /// one case, at most `RecordFields.maxTokenBytes` of them, as text otherwise.
    /// - Parameter digits: what the token is made of, read as the path arrived (`RequestHead.deviceTokenDigits`).
    static func pathEncoding(_ path: UnsafeBufferPointer<UInt8>, digits: ASCII.HexDigits?) -> PathEncoding {
        guard let digits, let hex = APNsPath.tokenBytes(in: path), !hex.isEmpty, hex.count % 2 == 0,
              hex.count <= 2 * RecordFields.maxTokenBytes
        else { return .text }
        guard digits.allHex, !(digits.hasUppercaseLetter && digits.hasLowercaseLetter) else { return .text }
        return digits.hasUppercaseLetter ? .deviceTokenUppercase : .deviceTokenLowercase
    }

    /// Writes the token's bytes for a path `pathEncoding` accepted; returns how many it wrote.
    static func writeDeviceToken(of path: UnsafeBufferPointer<UInt8>, to cursor: UnsafeMutableRawPointer) -> Int {
        let hex = APNsPath.tokenBytes(in: path)!
        func value(_ digit: UInt8) -> UInt8 {
            if digit <= UInt8(ascii: "9") { return digit &- UInt8(ascii: "0") }
            return (digit | 0x20) &- UInt8(ascii: "a") &+ 10
        }
        // Eight digits at a time in one register (every device push's recording writes its token). The digits are
        // known to be hex: a digit's value is its low four bits, plus 9 for a letter (bit 6 set in either case).
        var index = 0
        if let base = hex.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= hex.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let values = (word & 0x0F0F_0F0F_0F0F_0F0F) &+ ((word >> 6) & 0x0101_0101_0101_0101) &* 9
                // Each even byte becomes (its value << 4) | the next byte's value; then the even bytes are packed.
                let pairs = ((values << 4) | (values >> 8)) & 0x00FF_00FF_00FF_00FF
                let halves = (pairs | (pairs >> 8)) & 0x0000_FFFF_0000_FFFF
                let packed = UInt32(truncatingIfNeeded: halves | (halves >> 16))
                cursor.storeBytes(of: packed.littleEndian, toByteOffset: index / 2, as: UInt32.self)
                index += 8
            }
        }
        while index < hex.count {
            cursor.storeBytes(of: value(hex[index]) << 4 | value(hex[index + 1]), toByteOffset: index / 2, as: UInt8.self)
            index += 2
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

    /// A recording's fields and the storage of its bytes.
    /// - Parameter shapes: the connection's last storage, taken when the request's shape is the same and the
    ///   recording has nothing of its own to store, and replaced by this recording's when it makes one.
    static func make(
        request: borrowing APNsRequest,
        response: borrowing APNsResponse?,
        extras: RecordExtras?,
        shapes: inout RecordShapeCache
    ) -> (RecordFields, RecordStorage) {
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
    ) -> (RecordFields, RecordStorage) {
        var fields = RecordFields()
        fields.keepsCredentials = shapes.keepsCredentials
        fields.pathEncoding = pathEncoding(path, digits: request.head.deviceTokenDigits)
        fields.payloadSize = UInt32(clamping: request.payloadSize)
        fields.headerListTooLarge = request.headerListTooLarge
        fields.extras = extras
        var apnsIDText: String?
        var uniqueIDText: String?
        if let response {
            fields.hasResponse = true
            fields.status = UInt16(clamping: response.status)
            fields.reason = response.reason
            fields.timestamp = response.timestamp ?? RecordFields.noTimestamp
            (fields.apnsIDKind, fields.apnsID, apnsIDText) = store(compact(response.apnsIDValue, echoing: request.header("apns-id")))
            (fields.uniqueIDKind, fields.uniqueID, uniqueIDText) = store(response.uniqueIDValue.map { compact($0, echoing: nil) } ?? .none)
        }
        let pathLength: Int
        if fields.pathEncoding == .text {
            pathLength = min(path.count, Int(UInt32.max))
        } else {
            pathLength = 0
            fields.tokenLength = UInt8(withUnsafeMutableBytes(of: &fields.token) { writeDeviceToken(of: path, to: $0.baseAddress!) })
        }

        let methodLength = min(method.count, Int(absent - 1))
        let schemeLength = scheme.map { min($0.count, Int(absent - 1)) }
        let authorityLength = authority.map { min($0.count, Int(absent - 1)) }
        var header = Header()
        header.methodLength = UInt16(methodLength)
        header.schemeLength = schemeLength.map { UInt16($0) } ?? absent
        header.authorityLength = authorityLength.map { UInt16($0) } ?? absent
        header.headerCount = UInt16(headerCount)
        header.pathLength = UInt32(pathLength)
        header.idTextLength = UInt32(fields.idTextLength)
        header.headerBlockLength = UInt32(headerBlock.count)
        header.payloadLength = UInt32(request.payload.count)

        return request.payload.withUnsafeBufferPointer { payload in
            let parts = ShapeParts(
                method: UnsafeBufferPointer(rebasing: method[..<methodLength]),
                scheme: scheme.map { UnsafeBufferPointer(rebasing: $0[..<schemeLength!]) },
                authority: authority.map { UnsafeBufferPointer(rebasing: $0[..<authorityLength!]) },
                headerBlock: headerBlock,
                payload: payload
            )
            if pathLength == 0, header.idTextLength == 0, let cached = shapes.source, cached.holdsShape(header, parts) {
                fields.sharesStorage = true
                return (fields, cached)
            }
            let total = pathLength + Int(header.idTextLength) + parts.count
            let storage = RecordStorage.create(minimumCapacity: total) { _ in header } as! RecordStorage
            storage.withUnsafeMutablePointerToElements { base in
                var cursor = base
                func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                    guard !bytes.isEmpty else { return }
                    cursor.update(from: bytes.baseAddress!, count: bytes.count)
                    cursor += bytes.count
                }
                func put(_ text: String?) {
                    guard let text else { return }
                    ASCII.withUTF8(of: text) { put($0) }
                }
                put(UnsafeBufferPointer(rebasing: path[..<pathLength]))
                put(apnsIDText)
                put(uniqueIDText)
                _ = parts.forEach { part in
                    put(part)
                    return true
                }
            }
            shapes.source = storage
            return (fields, storage)
        }
    }

    /// Whether this storage holds a shape of the lengths in `other` with the bytes of `parts`.
    private func holdsShape(_ other: Header, _ parts: ShapeParts) -> Bool {
        // Field by field through the pointer: no copy of the header.
        let shapeStart = withUnsafeMutablePointerToHeader { header -> Int? in
            let mine = UnsafePointer(header)
            guard mine.pointee.methodLength == other.methodLength,
                  mine.pointee.schemeLength == other.schemeLength, mine.pointee.authorityLength == other.authorityLength,
                  mine.pointee.headerCount == other.headerCount, mine.pointee.headerBlockLength == other.headerBlockLength,
                  mine.pointee.payloadLength == other.payloadLength
            else { return nil }
            return mine.pointee.shapeStart
        }
        guard let shapeStart else { return false }
        return withUnsafeMutablePointerToElements { base in
            var cursor = UnsafePointer(base + shapeStart)
            return parts.forEach { part in
                defer { cursor += part.count }
                return ASCII.sameBytes(cursor, part.baseAddress!, count: part.count)
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

    /// Where each part of the shape starts, from the tail's first byte.
    struct Offsets {
        var method: Int
        var scheme: Int
        var authority: Int
        var headers: Int
        var payload: Int
    }

    var offsets: Offsets {
        let header = self.header
        let method = header.shapeStart
        let scheme = method + Int(header.methodLength)
        let authority = scheme + (header.schemeLength == Self.absent ? 0 : Int(header.schemeLength))
        let headers = authority + (header.authorityLength == Self.absent ? 0 : Int(header.authorityLength))
        return Offsets(method: method, scheme: scheme, authority: authority, headers: headers, payload: headers + Int(header.headerBlockLength))
    }

    private func text(at offset: Int, length: Int) -> String {
        withUnsafeMutablePointerToElements { base in
            String(decoding: UnsafeBufferPointer(start: base + offset, count: length), as: UTF8.self)
        }
    }

    func forEachHeader(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        let start = offsets.headers
        let header = self.header
        withUnsafeMutablePointerToElements { base in
            let block = UnsafeBufferPointer(start: UnsafePointer(base + start), count: Int(header.headerBlockLength))
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

    /// The device token of the recording with `fields`.
    func deviceToken(_ fields: RecordFields) -> String? {
        var token = fields.token
        switch fields.pathEncoding {
        case .deviceTokenLowercase, .deviceTokenUppercase:
            return withUnsafeBytes(of: &token) { bytes in
                Self.hex(UnsafeBufferPointer(rebasing: bytes.bindMemory(to: UInt8.self)[..<Int(fields.tokenLength)]),
                         uppercase: fields.pathEncoding == .deviceTokenUppercase)
            }
        case .text:
            let length = Int(header.pathLength)
            return withUnsafeMutablePointerToElements { base -> String? in
                let stored = UnsafeBufferPointer(start: base, count: length)
                let prefix = APNsPath.devicePrefix.utf8
                guard stored.starts(with: prefix), stored.count > prefix.count else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: stored[prefix.count...]), as: UTF8.self)
            }
        }
    }

    private func path(_ fields: RecordFields) -> String {
        if fields.pathEncoding == .text { return text(at: 0, length: Int(header.pathLength)) }
        return APNsPath.devicePrefix + (deviceToken(fields) ?? "")
    }

    private static func hex(_ bytes: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            HexDigits.write(UnsafeRawBufferPointer(bytes), uppercase: uppercase, to: buffer.baseAddress!)
            return bytes.count * 2
        }
    }

    /// The request of the recording with `fields`.
    func request(_ fields: RecordFields) -> APNsRequest {
        let header = self.header
        let offsets = self.offsets
        var fieldList: [HeaderField] = []
        fieldList.reserveCapacity(Int(header.headerCount))
        forEachHeader { name, value in
            fieldList.append(HeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            return true
        }
        let payload = withUnsafeMutablePointerToElements { base in
            Array(UnsafeBufferPointer(start: base + offsets.payload, count: Int(header.payloadLength)))
        }
        return APNsRequest(
            method: text(at: offsets.method, length: Int(header.methodLength)),
            path: path(fields),
            scheme: header.schemeLength == Self.absent ? nil : text(at: offsets.scheme, length: Int(header.schemeLength)),
            authority: header.authorityLength == Self.absent ? nil : text(at: offsets.authority, length: Int(header.authorityLength)),
            headers: fieldList,
            payload: payload,
            payloadSize: Int(fields.payloadSize),
            headerListTooLarge: fields.headerListTooLarge
        )
    }

    /// The answer of the recording with `fields`.
    func response(_ fields: RecordFields) -> APNsResponse? {
        guard fields.hasResponse else { return nil }
        let textStart = Int(header.pathLength)
        return APNsResponse(
            status: Int(fields.status),
            reason: fields.reason,
            apnsID: expand(fields.apnsIDKind, fields.apnsID, textAt: textStart) ?? "",
            uniqueID: expand(
                fields.uniqueIDKind, fields.uniqueID,
                textAt: textStart + (fields.apnsIDKind == .text ? Int(fields.apnsID.0) : 0)
            ),
            timestamp: fields.timestamp == RecordFields.noTimestamp ? nil : fields.timestamp
        )
    }

    func expand(_ kind: RecordFields.IDKind, _ bits: (UInt64, UInt64), textAt offset: Int) -> String? {
        switch kind {
        case .none: return nil
        case .echoed: return header(named: "apns-id")
        case .uppercase: return APNsIDGenerator.format(high: bits.0, low: bits.1, uppercase: true)
        case .lowercase: return APNsIDGenerator.format(high: bits.0, low: bits.1, uppercase: false)
        case .text: return text(at: offset, length: Int(bits.0))
        }
    }

    /// How `id` goes into the fields, and the text that goes into the storage when it is kept as text.
    private static func store(_ id: CompactID) -> (RecordFields.IDKind, (UInt64, UInt64), String?) {
        switch id {
        case .none: return (.none, (0, 0), nil)
        case .echoed: return (.echoed, (0, 0), nil)
        case .uppercase(let high, let low): return (.uppercase, (high, low), nil)
        case .lowercase(let high, let low): return (.lowercase, (high, low), nil)
        case .text(let text): return (.text, (UInt64(text.utf8.count), 0), text)
        }
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

/// The storage (see `RecordStorage`) a connection's next recording may share.
struct RecordShapeCache: Sendable {
    /// Immutable once made (see `RecordStorage`), so holding it on any thread is safe.
    nonisolated(unsafe) var source: RecordStorage?
    /// The recorder's `--record-credentials full`.
    var keepsCredentials = false

    init() {}
}
