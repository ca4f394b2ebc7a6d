/// One request the provider endpoint received, accepted or not, and the answer it got.
public struct RecordedNotification: Sendable, Equatable {
    /// Arrival order, from 1; never reused, not even after a clear.
    public var sequence: UInt64
    /// When the request's last frame arrived, in milliseconds since the epoch.
    public var receivedAt: Int64
    public var connectionID: UInt64
    public var streamID: Int32
    public var request: APNsRequest
    /// The answer given, or `nil` when the request never completed (see `abandonedBecause`).
    public var response: APNsResponse?
    /// Why there is no answer: the client reset the stream, or the connection closed before the request ended.
    public var abandonedBecause: String?
    /// How the request was authenticated (`nil` when it was refused before authentication, e.g. 404, or
    /// answered by a scenario rule).
    public var authentication: AuthenticationRecord?
    /// The scenario rule that decided the answer, if one did.
    public var scenarioRule: String?
    /// Faults a scenario injected with or instead of the answer (`RST_STREAM CANCEL`, `GOAWAY …`, `drop`).
    public var faults: [String] = []

    public init(
        sequence: UInt64,
        receivedAt: Int64,
        connectionID: UInt64,
        streamID: Int32,
        request: APNsRequest,
        response: APNsResponse?,
        abandonedBecause: String? = nil,
        authentication: AuthenticationRecord? = nil
    ) {
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.connectionID = connectionID
        self.streamID = streamID
        self.request = request
        self.response = response
        self.abandonedBecause = abandonedBecause
        self.authentication = authentication
    }

    public var deviceToken: String? { request.deviceToken }
    public var topic: String? { request.header("apns-topic") }
    public var pushType: String? { request.header("apns-push-type") }
    public var apnsID: String? { response?.apnsID ?? request.header("apns-id") }
    public var status: Int? { response?.status }
}
