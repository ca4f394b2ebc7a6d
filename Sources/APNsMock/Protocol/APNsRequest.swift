/// One HTTP header as it arrived: HTTP/2 names are lower case on the wire, values are kept as sent.
package struct HeaderField: Sendable, Equatable, Codable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A request as the HTTP/2 layer delivered it, once its stream ended: plain values, no transport types.
///
/// Its text (pseudo-headers and headers) is kept as bytes in one buffer (`RequestHead`), as the HTTP/2 layer
/// received it; the `String` properties decode it when read. The provider's hot path reads the bytes instead
/// (`withPath`, `methodIs`, `APNsHeaders(request)`), and a recording copies them.
package struct APNsRequest: Sendable, Equatable {
    package var head: RequestHead
    /// The body, or its first `payloadBytesKept` bytes when it was larger than the mock keeps.
    package var payload: [UInt8]
    /// How many body bytes the client sent, whether kept or discarded.
    package var payloadSize: Int
    /// The header block went over the advertised SETTINGS_MAX_HEADER_LIST_SIZE; the headers past it were not kept.
    package var headerListTooLarge: Bool

    package init(
        method: String,
        path: String,
        scheme: String? = "https",
        authority: String? = nil,
        headers: [HeaderField] = [],
        payload: [UInt8] = [],
        payloadSize: Int? = nil,
        headerListTooLarge: Bool = false
    ) {
        self.head = RequestHead(method: method, path: path, scheme: scheme, authority: authority, headers: headers)
        self.payload = payload
        self.payloadSize = payloadSize ?? payload.count
        self.headerListTooLarge = headerListTooLarge
    }

    package init(head: RequestHead, payload: [UInt8], payloadSize: Int, headerListTooLarge: Bool) {
        self.head = head
        self.payload = payload
        self.payloadSize = payloadSize
        self.headerListTooLarge = headerListTooLarge
    }

    package var method: String {
        get { head.text(head.method) ?? "" }
        set { rebuildHead(method: newValue) }
    }

    package var path: String {
        get { head.text(head.path) ?? "" }
        set { rebuildHead(path: newValue) }
    }

    package var scheme: String? {
        get { head.text(head.scheme) }
        set { rebuildHead(scheme: .some(newValue)) }
    }

    /// `:authority`, or the `host` header (aioapns sends only `host`).
    package var authority: String? {
        get { head.text(head.authority ?? head.host) }
        set { rebuildHead(authority: .some(newValue)) }
    }

    /// Regular (non-pseudo) headers in arrival order.
    package var headers: [HeaderField] {
        get {
            var fields: [HeaderField] = []
            fields.reserveCapacity(head.headerCount)
            head.forEachHeader { _, name, value in
                fields.append(HeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
                return true
            }
            return fields
        }
        set { rebuildHead(headers: newValue) }
    }

    private mutating func rebuildHead(
        method: String? = nil,
        path: String? = nil,
        scheme: String?? = nil,
        authority: String?? = nil,
        headers: [HeaderField]? = nil
    ) {
        head = RequestHead(
            method: method ?? self.method,
            path: path ?? self.path,
            scheme: scheme ?? self.scheme,
            authority: authority ?? self.authority,
            headers: headers ?? self.headers
        )
    }

    /// The first value of a header, by its lower-case name.
    package func header(_ name: String) -> String? {
        var found: String?
        let code = HeaderBlock.code(of: name)
        // A known name the request did not carry (a broadcast's `apns-request-id`, mostly): no walk.
        if let code, !head.hasCode(code) { return nil }
        ASCII.withUTF8(of: name) { wanted in
            head.forEachHeader { fieldCode, fieldName, value in
                let matches = code.map { $0 == fieldCode } ?? (fieldCode == HeaderBlock.literalName && fieldName.elementsEqual(wanted))
                if matches { found = String(decoding: value, as: UTF8.self) }
                return !matches
            }
        }
        return found
    }

    /// The device token from a `/3/device/<token>` path, or `nil` for any other path.
    package var deviceToken: String? {
        withPath { path in
            guard let token = APNsPath.tokenBytes(in: path), !token.isEmpty else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
    }

    /// The path's bytes, without making a `String`.
    func withPath<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        head.withBytes(head.path, body)
    }

    /// Whether the method is exactly `literal`.
    func methodIs(_ literal: StaticString) -> Bool {
        head.withBytes(head.method) { method in
            method.count == literal.utf8CodeUnitCount
                && (method.isEmpty || ASCII.sameBytes(method.baseAddress!, literal.utf8Start, count: method.count))
        }
    }

    package static func == (lhs: APNsRequest, rhs: APNsRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.scheme == rhs.scheme && lhs.authority == rhs.authority
            && lhs.headers == rhs.headers && lhs.payload == rhs.payload && lhs.payloadSize == rhs.payloadSize
            && lhs.headerListTooLarge == rhs.headerListTooLarge
    }
}

/// Where a value lies in `RequestHead.bytes`.
package struct ByteSpan: Sendable, Equatable {
    var offset: Int
    var count: Int
}

/// A request's text in one buffer: the pseudo-headers' values as they arrived, then its header fields in
/// `HeaderBlock` form, up to the end. Built by the HTTP/2 layer one field at a time, or from strings.
package struct RequestHead: Sendable, Equatable {
    private(set) var bytes: [UInt8] = []
    private(set) var method: ByteSpan?
    private(set) var path: ByteSpan?
    private(set) var scheme: ByteSpan?
    private(set) var authority: ByteSpan?
    /// The `host` header's value, the authority when `:authority` is absent.
    private(set) var host: ByteSpan?
    /// What the device token in a `/3/device/<token>` path is made of, read once as the path arrives (`nil` for
    /// another path): the route, the validation and the recording each scanned the token, two or three times
    /// per push.
    private(set) var deviceTokenDigits: ASCII.HexDigits?
    /// Where the header block starts: the first regular field ends the pseudo-headers (RFC 9113 §8.3).
    private(set) var headerBlockStart: Int?
    private(set) var headerCount = 0
    /// The known names (`HeaderBlock` codes) seen so far, one bit each.
    private var codesSeen: UInt32 = 0
    /// A known name came more than once.
    private(set) var repeatsKnownName = false
    /// Fields whose names are not known ones (compared with each other only when asked: `repeatsLiteralName`).
    private var literalNameCount = 0
    /// Where the first value of each APNs header (codes `0..<apnsCodeCount`) starts in `bytes`, for the ones
    /// `codesSeen` has: `APNsHeaders` reads them without walking the block (a closure over the header block per
    /// request, and the copy of the headers it made, showed in profiles).
    private var apnsValueOffsets: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0)

    /// Equal when the bytes and where each part lies are: what is noted about the header fields follows from them.
    package static func == (lhs: RequestHead, rhs: RequestHead) -> Bool {
        lhs.bytes == rhs.bytes && lhs.method == rhs.method && lhs.path == rhs.path && lhs.scheme == rhs.scheme
            && lhs.authority == rhs.authority && lhs.host == rhs.host && lhs.headerBlockStart == rhs.headerBlockStart
            && lhs.headerCount == rhs.headerCount
    }

    package enum Pseudo {
        case method, path, scheme, authority
    }

    package init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Empty again, keeping the buffer for the next request when no one else holds it.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        method = nil
        path = nil
        scheme = nil
        authority = nil
        host = nil
        deviceTokenDigits = nil
        headerBlockStart = nil
        headerCount = 0
        codesSeen = 0
        repeatsKnownName = false
        literalNameCount = 0
    }

    init(method: String, path: String, scheme: String?, authority: String?, headers: [HeaderField]) {
        self.init()
        var method = method
        var path = path
        method.withUTF8 { setPseudo(.method, $0) }
        path.withUTF8 { setPseudo(.path, $0) }
        if var scheme { scheme.withUTF8 { setPseudo(.scheme, $0) } }
        if var authority { authority.withUTF8 { setPseudo(.authority, $0) } }
        for field in headers {
            var name = field.name
            var value = field.value
            name.withUTF8 { name in value.withUTF8 { value in appendHeader(name: name, value: value) } }
        }
    }

    /// Keeps a pseudo-header's value; the first one wins, and none is taken once regular fields began (libnghttp2
    /// refuses such requests before they get here).
    package mutating func setPseudo(_ pseudo: Pseudo, _ value: UnsafeBufferPointer<UInt8>) {
        guard headerBlockStart == nil else { return }
        let span = ByteSpan(offset: bytes.count, count: value.count)
        switch pseudo {
        case .method: guard method == nil else { return }; method = span
        case .path:
            guard path == nil else { return }
            path = span
            deviceTokenDigits = APNsPath.tokenBytes(in: value).map { ASCII.hexDigits($0) }
        case .scheme: guard scheme == nil else { return }; scheme = span
        case .authority: guard authority == nil else { return }; authority = span
        }
        bytes.append(contentsOf: value)
    }

    package mutating func appendHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard headerCount < Int(UInt16.max) else { return }
        if headerBlockStart == nil { headerBlockStart = bytes.count }
        let (code, valueOffset) = HeaderBlock.append(name: name, value: value, to: &bytes)
        headerCount += 1
        if code == HeaderBlock.literalName {
            literalNameCount += 1
            return
        }
        let bit: UInt32 = 1 << UInt32(code)
        if codesSeen & bit != 0 {
            repeatsKnownName = true
            return
        }
        codesSeen |= bit
        if code < HeaderBlock.apnsCodeCount {
            withUnsafeMutableBytes(of: &apnsValueOffsets) { offsets in
                offsets.storeBytes(of: UInt32(truncatingIfNeeded: valueOffset), toByteOffset: Int(code) * 4, as: UInt32.self)
            }
        } else if code == HeaderBlock.Code.host {
            host = ByteSpan(offset: valueOffset, count: bytes.count - valueOffset)
        }
    }

    /// Whether a field with this known name's code (`HeaderBlock.knownNames`) is in the block.
    func hasCode(_ code: UInt8) -> Bool { codesSeen & (1 << UInt32(code)) != 0 }

    /// The first value of an APNs header (a code below `HeaderBlock.apnsCodeCount`) as text, `nil` when absent.
    func apnsValue(_ code: UInt8) -> String? {
        guard codesSeen & (1 << UInt32(code)) != 0 else { return nil }
        return withAPNsValue(code) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the first value of an APNs header (present: its bit is in `codesSeen`).
    private func withAPNsValue<Result>(_ code: UInt8, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let offset = withUnsafeBytes(of: apnsValueOffsets) { Int($0.load(fromByteOffset: Int(code) * 4, as: UInt32.self)) }
        return bytes.withUnsafeBufferPointer { all in
            // The value's 16-bit length precedes it (`HeaderBlock`).
            let count = Int(all[offset - 2]) | Int(all[offset - 1]) << 8
            return body(UnsafeBufferPointer(rebasing: all[offset..<offset + count]))
        }
    }

    /// Whether the APNs header `code` is present with exactly `value`.
    func apnsValue(_ code: UInt8, equals value: String) -> Bool {
        guard codesSeen & (1 << UInt32(code)) != 0 else { return false }
        return withAPNsValue(code) { field in ASCII.withUTF8(of: value) { ASCII.equal($0, field) } }
    }

    /// Whether a name that is not a known one appears more than once (compared only when there are two).
    func repeatsLiteralName() -> Bool {
        guard literalNameCount > 1 else { return false }
        var names: [UnsafeBufferPointer<UInt8>] = []
        var repeated = false
        // The pointers into the block live only inside this call, so the names are compared in it.
        forEachHeader { code, name, _ in
            guard code == HeaderBlock.literalName else { return true }
            if names.contains(where: { $0.elementsEqual(name) }) {
                repeated = true
                return false
            }
            names.append(name)
            return true
        }
        return repeated
    }

    func text(_ span: ByteSpan?) -> String? {
        guard let span else { return nil }
        return bytes.withUnsafeBufferPointer { String(decoding: $0[span.offset..<span.offset + span.count], as: UTF8.self) }
    }

    /// The span's bytes (empty when absent).
    func withBytes<Result>(_ span: ByteSpan?, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { all in
            guard let span else { return body(UnsafeBufferPointer(start: all.baseAddress, count: 0)) }
            return body(UnsafeBufferPointer(rebasing: all[span.offset..<span.offset + span.count]))
        }
    }

    /// The header block's bytes, as `HeaderBlock.forEach` reads them.
    func withHeaderBlock<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { all in
            body(UnsafeBufferPointer(rebasing: all[(headerBlockStart ?? all.count)...]))
        }
    }

    func forEachHeader(_ body: (UInt8, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        withHeaderBlock { HeaderBlock.forEach(in: $0, count: headerCount, body) }
    }
}

enum APNsPath {
    static let devicePrefix = "/3/device/"
    static let devicePrefixBytes: StaticString = "/3/device/"

    /// What follows `/3/device/` (possibly empty), or `nil` when the path does not start with it.
    static func tokenBytes(in path: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let prefixLength = devicePrefixBytes.utf8CodeUnitCount
        guard path.count >= prefixLength else { return nil }
        for index in 0..<prefixLength where path[index] != devicePrefixBytes.utf8Start[index] { return nil }
        return UnsafeBufferPointer(rebasing: path[prefixLength...])
    }
}
