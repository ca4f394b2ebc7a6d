import APNsMock

extension ProviderConnectionHandler {
    /// A provider connection's lifecycle as a value: events in, actions out, no sockets (tested on its own, as
    /// swift-nio-http2's `…+StateMachine` types are). The handler carries the actions out.
    ///
    /// - `gated`: one stream at a time until a valid provider token arrives (APNs' behaviour with token auth);
    /// - `open`: serving;
    /// - `closingAfterAnswer`: a decision asked to close (a scenario fault, a connection policy); the GOAWAY waits
    ///   until that answer's HEADERS and DATA have been sent, so the client reads the answer before the GOAWAY;
    /// - `draining`: GOAWAY sent for a shutdown; the streams in flight are still answered;
    /// - `closing`: the socket closes once what was written has left;
    /// - `closed`.
    struct StateMachine: Equatable {
        enum State: Equatable {
            case gated
            case open
            case closingAfterAnswer(streamID: Int32)
            case draining
            case closing
            case closed
        }

        enum Action: Equatable {
            case goAway(errorCode: UInt32, lastStreamID: Int32?, debugData: String)
            case setMaxConcurrentStreams(UInt32)
            /// Close once the frames written so far have left.
            case closeAfterWrites
            /// Close at once, with no further frame (a scripted drop).
            case closeNow
        }

        private(set) var state: State
        /// GOAWAY frames waiting for an answer to be sent first.
        private var deferred: [Action] = []

        init(gated: Bool) {
            state = gated ? .gated : .open
        }

        var isServing: Bool {
            switch state {
            case .gated, .open, .closingAfterAnswer, .draining: return true
            case .closing, .closed: return false
            }
        }

        /// A request was decided: `answered` when an answer was handed to the session for it.
        mutating func decided(streamID: Int32, answered: Bool, actions: [ConnectionAction]) -> [Action] {
            var now: [Action] = []
            var goAways: [Action] = []
            var closes = false
            for action in actions {
                switch action {
                case .setMaxConcurrentStreams(let value):
                    now.append(.setMaxConcurrentStreams(value))
                    if state == .gated, value > 1 { state = .open }
                case .goAway(let errorCode, let lastStreamID, let debugData):
                    goAways.append(.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData))
                case .close:
                    closes = true
                case .drop:
                    guard state != .closed else { return now }
                    state = .closing
                    deferred = []
                    return now + [.closeNow]
                }
            }
            guard closes || !goAways.isEmpty else { return now }
            switch state {
            case .gated, .open, .draining:
                guard closes else { return now + goAways }
                if answered {
                    state = .closingAfterAnswer(streamID: streamID)
                    deferred = goAways + [.closeAfterWrites]
                    return now
                }
                state = .closing
                return now + goAways + [.closeAfterWrites]
            case .closingAfterAnswer, .closing, .closed:
                // The first decision to close wins: one GOAWAY, one close.
                return now
            }
        }

        /// A stream's answer left (or its stream closed without it): a close waiting for it goes ahead.
        mutating func answerFinished(streamID: Int32) -> [Action] {
            guard case .closingAfterAnswer(let waiting) = state, waiting == streamID else { return [] }
            state = .closing
            defer { deferred = [] }
            return deferred
        }

        /// The server is stopping: GOAWAY `{"reason":"Shutdown"}` naming the last stream received, whose streams
        /// are all still answered.
        mutating func shutdownRequested(lastReceivedStreamID: Int32) -> [Action] {
            switch state {
            case .gated, .open:
                state = .draining
                return [.goAway(errorCode: 0, lastStreamID: lastReceivedStreamID, debugData: Reason.shutdown.body())]
            case .closingAfterAnswer, .draining, .closing, .closed:
                return []
            }
        }

        /// Nothing arrived for the idle timeout: GOAWAY `{"reason":"IdleTimeout"}` naming the last stream received,
        /// then close.
        mutating func idleTimedOut(lastReceivedStreamID: Int32) -> [Action] {
            switch state {
            case .gated, .open, .draining:
                state = .closing
                deferred = []
                return [
                    .goAway(errorCode: 0, lastStreamID: lastReceivedStreamID, debugData: Reason.idleTimeout.body()),
                    .closeAfterWrites,
                ]
            case .closingAfterAnswer, .closing, .closed:
                return []
            }
        }

        /// A scenario outage refuses the connection as soon as it is up.
        mutating func refused(goAway: (errorCode: UInt32, debugData: String)?) -> [Action] {
            guard state != .closed, state != .closing else { return [] }
            state = .closing
            guard let goAway else { return [.closeNow] }
            return [.goAway(errorCode: goAway.errorCode, lastStreamID: 0, debugData: goAway.debugData), .closeAfterWrites]
        }

        /// libnghttp2 has nothing more to read or write (GOAWAY exchanged and every stream done, or it gave up).
        mutating func sessionFinished() -> [Action] {
            switch state {
            case .gated, .open, .draining, .closingAfterAnswer:
                state = .closing
                return [.closeAfterWrites]
            case .closing, .closed:
                return []
            }
        }

        /// A fatal error (HTTP/2, TLS, a client that does not speak HTTP/2): close after what was queued.
        mutating func failed() -> [Action] {
            guard state != .closed, state != .closing else { return [] }
            state = .closing
            deferred = []
            return [.closeAfterWrites]
        }

        /// The socket is gone. Returns whether this is the first time (the connection's requests must be settled).
        mutating func closed() -> Bool {
            guard state != .closed else { return false }
            state = .closed
            deferred = []
            return true
        }
    }
}
