/// Something the connection must do besides (or instead of) answering a stream.
public enum ConnectionAction: Sendable, Equatable {
    /// Send GOAWAY with this error code, last stream id (`nil`: the last one processed) and debug data.
    case goAway(errorCode: UInt32, lastStreamID: Int32?, debugData: String)
    /// Close the TCP connection once pending frames are written.
    case close
    /// Send a SETTINGS frame with a new SETTINGS_MAX_CONCURRENT_STREAMS.
    case setMaxConcurrentStreams(UInt32)
}

/// What the provider endpoint decided for one request.
public struct ProviderDecision: Sendable, Equatable {
    /// The answer for the request's stream, or `nil` when the stream gets none (a connection-level refusal).
    public var response: APNsResponse?
    public var actions: [ConnectionAction]

    public init(response: APNsResponse?, actions: [ConnectionAction] = []) {
        self.response = response
        self.actions = actions
    }
}
