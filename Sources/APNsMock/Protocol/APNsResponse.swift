/// The answer to one request, as plain values; the transport turns it into frames.
package struct APNsResponse: Sendable, Equatable, Codable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    /// The HTTP status. Almost always `reason.status`; `200` has no reason, and `431` (a header list over the
    /// advertised limit, answered as Netty-based servers do) has none either.
    package var status: Int
    package var reason: Optional<Reason>
    /// The `apns-id` header, as an `ID`: the request's own, echoed exactly, or one the mock made.
    package var apnsIDValue: ID
    /// The `apns-unique-id` header, as an `ID`.
    package var uniqueIDValue: Optional<ID>
    /// Milliseconds since the epoch, in the body of 410 answers.
    package var timestamp: Optional<Int64>
    /// The header the ID goes in: `apns-id` for device pushes, `apns-request-id` for the broadcast API.
    package var idHeader: IDHeader
    /// `apns-channel-id`: the channel a create made.
    package var channelID: Optional<String>
    /// The JSON body of a successful channel read or list (errors carry `{"reason":…}` instead).
    package var successBody: Optional<String>

    /// Where an answer's ID goes.
    package enum IDHeader: String, Sendable, Equatable {
        case apnsID = "apns-id"
        case requestID = "apns-request-id"
    }

    /// An ID header's value: text, or the 128 bits of one the mock made, written out only when read.
    ///
    /// The bits go from the generator to the HEADERS frame and to the recording without a `String` in between
    /// (two per request, each an allocation, showed in profiles).
    package enum ID: Sendable, Hashable {
        case text(String)
        case generated(high: UInt64, low: UInt64, uppercase: Bool)

        package var text: String {
            switch self {
            case .text(let text): return text
            case .generated(let high, let low, let uppercase): return APNsIDGenerator.format(high: high, low: low, uppercase: uppercase)
            }
        }

        /// Calls `body` with the value's UTF-8, written on the stack for a generated ID.
        ///
        /// Not generic: its caller is in another module, where a generic would run unspecialised (metadata
        /// lookups per call showed in profiles).
        package func withUTF8(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
            switch self {
            case .text(var text):
                text.withUTF8(body)
            case .generated(let high, let low, let uppercase):
                // A tuple on the stack: `withUnsafeTemporaryAllocation` is generic too.
                var digits: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &digits) { raw in
                    let buffer = raw.bindMemory(to: UInt8.self)
                    APNsIDGenerator.write(high: high, low: low, uppercase: uppercase, into: buffer)
                    body(UnsafeBufferPointer(rebasing: buffer[..<APNsIDGenerator.textLength]))
                }
            }
        }
    }

    package init(status: Int, reason: Reason? = nil, apnsID: String, uniqueID: String? = nil, timestamp: Int64? = nil) {
        self.init(status: status, reason: reason, apnsID: .text(apnsID), uniqueID: uniqueID.map { .text($0) }, timestamp: timestamp)
    }

    package init(
        status: Int, reason: Reason? = nil, apnsID: ID, uniqueID: ID? = nil, timestamp: Int64? = nil, idHeader: IDHeader = .apnsID,
        channelID: String? = nil, successBody: String? = nil
    ) {
        self.status = status
        self.reason = reason
        self.apnsIDValue = apnsID
        self.uniqueIDValue = uniqueID
        self.timestamp = timestamp
        self.idHeader = idHeader
        self.channelID = channelID
        self.successBody = successBody
    }

    /// The `apns-id` header: the request's own, echoed exactly, or one the mock made (upper case, like APNs).
    package var apnsID: String {
        get { apnsIDValue.text }
        set { apnsIDValue = .text(newValue) }
    }

    /// The `apns-unique-id` header, sent in the development environment only.
    package var uniqueID: String? {
        get { uniqueIDValue?.text }
        set { uniqueIDValue = newValue.map { .text($0) } }
    }

    /// The JSON body (`{"reason":…}`, plus `timestamp` on 410), or `nil` for a bodiless answer.
    package var body: String? {
        reason.map { $0.body(timestamp: $0.carriesTimestamp ? timestamp : nil) } ?? successBody
    }

    /// Equal when the headers would be: an ID made by the mock equals the same text.
    package static func == (lhs: APNsResponse, rhs: APNsResponse) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.timestamp == rhs.timestamp
            && lhs.apnsID == rhs.apnsID && lhs.uniqueID == rhs.uniqueID && lhs.idHeader == rhs.idHeader
            && lhs.channelID == rhs.channelID && lhs.successBody == rhs.successBody
    }

    private enum CodingKeys: String, CodingKey {
        case status, reason, apnsID, uniqueID, timestamp
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            status: try container.decode(Int.self, forKey: .status),
            reason: try container.decodeIfPresent(Reason.self, forKey: .reason),
            apnsID: try container.decode(String.self, forKey: .apnsID),
            uniqueID: try container.decodeIfPresent(String.self, forKey: .uniqueID),
            timestamp: try container.decodeIfPresent(Int64.self, forKey: .timestamp)
        )
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(apnsID, forKey: .apnsID)
        try container.encodeIfPresent(uniqueID, forKey: .uniqueID)
        try container.encodeIfPresent(timestamp, forKey: .timestamp)
    }
}
