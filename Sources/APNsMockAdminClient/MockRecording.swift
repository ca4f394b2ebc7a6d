import Foundation

/// One request the mock received and the answer it sent, with the same fields as the admin API's JSON
/// (`GET /admin/notifications`) and the record file.
///
/// Optional fields are `nil` where the JSON has `null` or leaves the member out: `response` is `nil` for a request
/// that was never answered (`abandoned` says why), `deviceToken` for a path that is not `/3/device/<token>`.
public struct MockRecording: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// One request header, as received (names in lower case, in arrival order, duplicates kept).
    public struct Header: Sendable, Hashable, Decodable {
        /// The name, in lower case.
        public var name: String
        /// The value as received.
        public var value: String
    }

    /// The answer the mock sent.
    public struct Response: Sendable, Hashable, Decodable {
        /// The HTTP status: 200 for an accepted push.
        public var status: Int
        /// The APNs reason of an error answer (`BadDeviceToken`, `Unregistered`, …).
        public var reason: String?
        /// The `apns-id` sent back (pushes).
        public var apnsId: String?
        /// The `apns-request-id` sent back (the broadcast API).
        public var requestId: String?
        /// The `apns-unique-id` sent back (development environment).
        public var apnsUniqueId: String?
        /// With `410 Unregistered`: when the device stopped being valid, in milliseconds since the epoch.
        public var timestamp: Int64?
    }

    /// How the request was authenticated.
    public struct Authentication: Sendable, Hashable, Decodable {
        /// `token`, `certificate`, `none` (the mock runs with `--auth none`) or `missing`.
        public var method: String
        /// The token's key id (`kid`).
        public var keyId: String?
        /// The token's team id (`iss`).
        public var teamId: String?
        /// The token's `iat`, in seconds since the epoch.
        public var issuedAt: Int64?
        /// Whether the token's signature checked out against a known key.
        public var signatureVerified: Bool?
        /// Why the token was refused, when it was.
        public var error: String?
        /// The client certificate's subject.
        public var subject: String?
        /// The topics the client certificate allows.
        public var topics: [String]?
    }

    /// A payload warning: something iOS would do differently from what the provider probably meant.
    public struct Warning: Sendable, Hashable, Decodable {
        /// The warning's code (the README lists them all).
        public var code: String
        /// Where in the payload, as a JSON path.
        public var path: String
        /// What iOS would do, in a sentence.
        public var message: String
    }

    /// Order of arrival, unique for the process's lifetime.
    public var sequence: UInt64
    /// When the request arrived: ISO 8601 with milliseconds, UTC.
    public var receivedAt: String
    /// When the request arrived, in milliseconds since the epoch.
    public var receivedAtMillis: Int64
    /// The provider connection it came on (`connection` filter).
    public var connectionId: UInt64
    /// The HTTP/2 stream it came on.
    public var streamId: Int
    /// `push`, or the broadcast API's `broadcast`, `channel-create`, `channel-read`, `channel-delete`, `channel-list`.
    public var kind: String
    /// The tenant it was recorded for, when the mock runs with `--tenants`.
    public var tenant: String?
    /// Broadcast API: the app the request was for.
    public var bundleId: String?
    /// Broadcast API: the channel.
    public var channelId: String?
    /// `:method`, as received.
    public var method: String
    /// `:path`, as received.
    public var path: String
    /// `:authority` (or `host`).
    public var authority: String?
    /// The token in a `/3/device/<token>` path.
    public var deviceToken: String?
    /// `apns-topic`.
    public var topic: String?
    /// `apns-push-type`.
    public var pushType: String?
    /// Every header, in arrival order.
    public var headers: [Header]
    /// The body's size in bytes as received (the kept text may be cut at the recorder's limit).
    public var payloadSize: Int
    /// True when the kept text is cut at the recorder's limit.
    public var payloadTruncated: Bool?
    /// The body as text (UTF-8, invalid bytes replaced).
    public var payloadText: String?
    /// The body as JSON when it is a JSON object.
    public var payload: MockJSON?
    /// How the request authenticated (`nil` before the mock could tell, e.g. a malformed request).
    public var authentication: Authentication?
    /// The scenario rule that decided the answer, `default` when none did.
    public var scenarioRule: String?
    /// Scenario faults applied to it (a delay, a reset).
    public var faults: [String]?
    /// What iOS would do differently from what the payload probably means (see the README's table).
    public var warnings: [Warning]
    /// `nil` when the request was never answered.
    public var response: Response?
    /// Why there was no answer (e.g. the client reset the stream).
    public var abandoned: String?

    /// The first value of a header (names are compared in lower case).
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }

    /// The answer's status, `nil` when there was none.
    public var status: Int? { response?.status }
    /// The answer's APNs reason.
    public var reason: String? { response?.reason }
    /// When the request arrived.
    public var receivedDate: Date { Date(timeIntervalSince1970: Double(receivedAtMillis) / 1000) }

    /// `#12 POST /3/device/ab12… topic com.example.app → 410 Unregistered`: one line, for error messages.
    public var description: String {
        let answer = response.map { "\($0.status)" + ($0.reason.map { " " + $0 } ?? "") } ?? "no answer (\(abandoned ?? "abandoned"))"
        return "#\(sequence) \(method) \(path)" + (topic.map { " topic \($0)" } ?? "") + " → " + answer
    }
}

/// A JSON value (a recorded payload, a scenario), `Sendable` and comparable.
public enum MockJSON: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([MockJSON])
    /// An object.
    case object([String: MockJSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MockJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: MockJSON].self))
        }
    }

    /// A member of an object (`payload["aps"]?["alert"]`); `nil` for anything else.
    public subscript(key: String) -> MockJSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// An element of an array; `nil` for anything else or out of range.
    public subscript(index: Int) -> MockJSON? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The number, when this is a whole one.
    public var int: Int? {
        if case .number(let value) = self, let exact = Int(exactly: value) { return exact }
        return nil
    }

    /// The value, when this is a boolean.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var array: [MockJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// True for JSON's `null`.
    public var isNull: Bool { self == .null }

    /// The string, when this is one.
    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, when this is one.
    public var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): Int(exactly: value).map(String.init) ?? "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let object):
            "{" + object.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
    }
}
