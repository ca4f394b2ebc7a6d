/// The answer to one request, as plain values; the transport turns it into frames.
public struct APNsResponse: Sendable, Equatable, Codable {
    /// The HTTP status. Almost always `reason.status`; `200` has no reason, and `431` (a header list over the
    /// advertised limit, answered as Netty-based servers do) has none either.
    public var status: Int
    public var reason: Reason?
    /// The `apns-id` header: the request's own, echoed exactly, or one the mock made (upper case, like APNs).
    public var apnsID: String
    /// The `apns-unique-id` header, sent in the development environment only.
    public var uniqueID: String?
    /// Milliseconds since the epoch, in the body of 410 answers.
    public var timestamp: Int64?

    public init(status: Int, reason: Reason? = nil, apnsID: String, uniqueID: String? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.timestamp = timestamp
    }

    /// The JSON body (`{"reason":…}`, plus `timestamp` on 410), or `nil` for a bodiless answer.
    public var body: String? {
        reason.map { $0.body(timestamp: $0.carriesTimestamp ? timestamp : nil) }
    }
}
