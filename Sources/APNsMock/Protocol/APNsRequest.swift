/// One HTTP header as it arrived: HTTP/2 names are lower case on the wire, values are kept as sent.
public struct HeaderField: Sendable, Equatable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A request as the HTTP/2 layer delivered it, once its stream ended: plain values, no transport types.
public struct APNsRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    public var scheme: String?
    /// `:authority`, or the `host` header (aioapns sends only `host`).
    public var authority: String?
    /// Regular (non-pseudo) headers in arrival order.
    public var headers: [HeaderField]
    /// The body, or its first `payloadBytesKept` bytes when it was larger than the mock keeps.
    public var payload: [UInt8]
    /// How many body bytes the client sent, whether kept or discarded.
    public var payloadSize: Int
    /// The header block went over the advertised SETTINGS_MAX_HEADER_LIST_SIZE; the headers past it were not kept.
    public var headerListTooLarge: Bool

    public init(
        method: String,
        path: String,
        scheme: String? = "https",
        authority: String? = nil,
        headers: [HeaderField] = [],
        payload: [UInt8] = [],
        payloadSize: Int? = nil,
        headerListTooLarge: Bool = false
    ) {
        self.method = method
        self.path = path
        self.scheme = scheme
        self.authority = authority
        self.headers = headers
        self.payload = payload
        self.payloadSize = payloadSize ?? payload.count
        self.headerListTooLarge = headerListTooLarge
    }

    /// The first value of a header, by its lower-case name.
    public func header(_ name: String) -> String? {
        headers.first(where: { $0.name == name })?.value
    }

    /// The device token from a `/3/device/<token>` path, or `nil` for any other path.
    public var deviceToken: String? {
        var path = self.path
        return path.withUTF8 { path in
            guard let token = APNsPath.tokenBytes(in: path), !token.isEmpty else { return nil }
            return String(decoding: token, as: UTF8.self)
        }
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
