import APNsMock
import NIOCore

extension ProviderConnectionHandler {
    /// A provider connection's whole lifecycle as a value: events in, actions out, no sockets. It is the only
    /// owner of lifecycle state, each state's data in its payload (as in swift-nio-http2's `…+StateMachine`
    /// types); the handler carries the actions out.
    ///
    /// `idle` (not active yet) → `handshaking` (TLS and the preface not both done; the handshake timeout runs) →
    /// `active` (the idle timeout runs) → `closingAfterAnswer` (a decision asked to close: the GOAWAY waits for that
    /// answer's last frame) or `draining` (GOAWAY sent for a shutdown, the streams in flight still answered) →
    /// `closing` (at the next flush, after what was written or at once) → `closed` (settled: every request recorded).
    struct StateMachine {
        enum State: Equatable {
            case idle
            case handshaking(Handshaking)
            case active(Active)
            case closingAfterAnswer(ClosingAfterAnswer)
            case draining(Active)
            case closing(Closing)
            case closed
        }

        struct Handshaking: Equatable {
            /// The server's SETTINGS have been asked for (TLS completed, or the first bytes arrived without TLS).
            var sessionStarted = false
            /// The peer negotiated `h2` (or no ALPN, as aioapns does): frames may be written before its preface.
            var writesFrames = false
            /// A scenario outage said to refuse the connection with this GOAWAY once its session is up.
            var refusal: Refusal?
        }

        /// `lastRead`: when the last bytes arrived, for the idle timeout.
        struct Active: Equatable { var lastRead: NIODeadline }

        struct ClosingAfterAnswer: Equatable { var streamID: Int32, goAways: [Action] }

        struct Closing: Equatable {
            /// Why the requests still open when it closes got no answer: the recording says so.
            var reason: String
            /// Close without writing what is queued (a drop, a refusal, a limit).
            var immediately: Bool
        }

        struct Limits: Equatable { var handshakeTimeout: TimeAmount, idleTimeout: TimeAmount? }
        struct Refusal: Equatable { var errorCode: UInt32, debugData: String }

        enum Action: Equatable {
            case goAway(errorCode: UInt32, lastStreamID: Int32?, debugData: String)
            case setMaxConcurrentStreams(UInt32)
            /// Submit the server's SETTINGS (the peer's certificate, which the handler reads, decides them).
            case startSession
            case armHandshakeTimer(TimeAmount)
            case armIdleTimer(NIODeadline)
            /// Counted in `apns_mock_connections_closed_by_limit_total`.
            case countClosedBy(limit: String)
        }

        /// What a peer whose first bytes are not the HTTP/2 preface gets.
        enum Refuse: Equatable {
            /// An HTTP/1.1 `505` text: nothing binary has been written to it.
            case http1VersionNotSupported
            /// GOAWAY PROTOCOL_ERROR (RFC 9113 §3.4): not an HTTP/1 request, or our SETTINGS are already out.
            case goAwayProtocolError
        }

        /// What to do with bytes that arrived: `startSessionThenReceive` when no TLS said who the client is.
        enum Read: Equatable { case receive, startSessionThenReceive([Action]), discard }

        let limits: Limits
        private(set) var state = State.idle
        /// Reads are paused while a recording sink is full; a read asked for meanwhile waits for the release.
        private(set) var readsPaused = false
        private var readPending = false

        init(limits: Limits) {
            self.limits = limits
        }

        /// Whether decided answers are still carried out (a delayed one, when its timer fires).
        var answersStreams: Bool {
            switch state {
            case .handshaking, .active, .closingAfterAnswer, .draining: true
            case .idle, .closing, .closed: false
            }
        }

        /// Whether the session's frames may be written: not to a peer not known to speak HTTP/2, nor when closing at once.
        var writesFrames: Bool {
            switch state {
            case .handshaking(let handshaking): handshaking.writesFrames
            case .active, .draining, .closingAfterAnswer: true
            case .closing(let closing): !closing.immediately
            case .idle, .closed: false
            }
        }

        // MARK: Connection events

        /// The channel is active, `overLimit` when more connections are open than allowed; `outage` is what a
        /// scenario outage says to do with new connections now.
        mutating func channelActive(overLimit: Bool, outage: OutageMode?) -> [Action] {
            guard case .idle = state else { return [] }
            switch (overLimit, outage) {
            case (true, _):
                state = .closing(Closing(reason: "connection refused: --max-connections reached", immediately: true))
                return [.countClosedBy(limit: "over-limit")]
            case (false, .refuse?):
                state = .closing(Closing(reason: Self.refusedByOutage, immediately: true))
                return []
            case (false, .goAway(let errorCode, let debugData)?):
                state = .handshaking(Handshaking(refusal: Refusal(errorCode: errorCode, debugData: debugData)))
            case (false, nil):
                state = .handshaking(Handshaking())
            }
            return [.armHandshakeTimer(limits.handshakeTimeout)]
        }

        /// TLS is done; `speaksHTTP2` unless the client negotiated `http/1.1`.
        mutating func tlsCompleted(speaksHTTP2: Bool) -> [Action] {
            guard case .handshaking(var handshaking) = state, !handshaking.sessionStarted else { return [] }
            handshaking.writesFrames = speaksHTTP2
            return startSession(handshaking)
        }

        private mutating func startSession(_ handshaking: Handshaking) -> [Action] {
            guard let refusal = handshaking.refusal else {
                state = .handshaking(Handshaking(sessionStarted: true, writesFrames: handshaking.writesFrames))
                return [.startSession]
            }
            state = .closing(Closing(reason: Self.refusedByOutage, immediately: false))
            return [.startSession, .goAway(errorCode: refusal.errorCode, lastStreamID: 0, debugData: refusal.debugData)]
        }

        /// Bytes arrived at `now` (every read: nothing is allocated on this path).
        mutating func bytesReceived(at now: NIODeadline) -> Read {
            switch state {
            case .active: state = .active(Active(lastRead: now))
            case .draining: state = .draining(Active(lastRead: now))
            case .handshaking(let handshaking) where !handshaking.sessionStarted: return .startSessionThenReceive(startSession(handshaking))
            case .handshaking, .closingAfterAnswer, .closing: break
            case .idle, .closed: return .discard
            }
            return .receive
        }

        /// The session took bytes without error: the preface has arrived, the peer speaks HTTP/2.
        mutating func sessionAccepted(at now: NIODeadline) -> [Action] {
            guard case .handshaking = state else { return [] }
            state = .active(Active(lastRead: now))
            return limits.idleTimeout.map { [.armIdleTimer(now + $0)] } ?? []
        }

        /// The first bytes were not the HTTP/2 preface; `looksLikeHTTP1` when they are an HTTP/1 request line.
        mutating func notHTTP2(looksLikeHTTP1: Bool) -> Refuse? {
            guard case .handshaking(let handshaking) = state else { return nil }
            state = .closing(Closing(reason: "connection closed: client does not speak HTTP/2", immediately: true))
            return looksLikeHTTP1 && !handshaking.writesFrames ? .http1VersionNotSupported : .goAwayProtocolError
        }

        /// libnghttp2 failed, or a limit ended the connection: close after what is queued, or `immediately`.
        mutating func failed(because reason: String, immediately: Bool = false) {
            switch state {
            case .idle: state = .closed
            case .closing(let closing): state = .closing(Closing(reason: closing.reason, immediately: immediately || closing.immediately))
            case .handshaking, .active, .closingAfterAnswer, .draining: state = .closing(Closing(reason: reason, immediately: immediately))
            case .closed: break
            }
        }

        // MARK: Streams

        /// A request was decided: `answered` when its answer was handed to the session.
        mutating func decided(streamID: Int32, answered: Bool, actions: [ConnectionAction]) -> [Action] {
            if state == .idle || state == .closed { return [] }
            var now: [Action] = []
            var goAways: [Action] = []
            var closes = false
            for action in actions {
                switch action {
                case .setMaxConcurrentStreams(let value): now.append(.setMaxConcurrentStreams(value))
                case .goAway(let errorCode, let lastStreamID, let debugData):
                    goAways.append(.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData))
                case .close: closes = true
                case .drop:
                    if case .closing(let closing) = state, closing.immediately { return now }
                    state = .closing(Closing(reason: "connection dropped by the scenario before the request ended", immediately: true))
                    return now
                }
            }
            switch state {
            case .handshaking, .active, .draining:
                guard closes else { return now + goAways }
                guard answered else {
                    state = .closing(Closing(reason: Self.closedByServer, immediately: false))
                    return now + goAways
                }
                state = .closingAfterAnswer(ClosingAfterAnswer(streamID: streamID, goAways: goAways))
                return now
            case .idle, .closingAfterAnswer, .closing, .closed:
                return now  // The first decision to close wins: one GOAWAY, one close.
            }
        }

        /// A stream ended (one per request, each recorded by the handler whatever the state): what follows, which is
        /// nothing but for a close waiting for this stream's answer.
        mutating func streamEnded(_ streamID: Int32) -> [Action] {
            guard case .closingAfterAnswer(let waiting) = state, waiting.streamID == streamID else { return [] }
            state = .closing(Closing(reason: Self.closedByServer, immediately: false))
            return waiting.goAways
        }

        // MARK: Shutdown and timers

        /// The server is stopping: GOAWAY `{"reason":"Shutdown"}` naming the last stream received, whose streams
        /// are still answered; a peer that has had no frame yet is closed.
        mutating func shutdownRequested(lastReceivedStreamID: Int32) -> [Action] {
            let goAway = Action.goAway(errorCode: 0, lastStreamID: lastReceivedStreamID, debugData: Reason.shutdown.body())
            switch state {
            case .active(let active):
                state = .draining(active)
                return [goAway]
            case .handshaking(let handshaking):
                state = .closing(Closing(reason: "connection closed: the server is shutting down", immediately: !handshaking.writesFrames))
                return handshaking.writesFrames ? [goAway] : []
            case .idle:
                state = .closing(Closing(reason: "connection closed: the server is shutting down", immediately: true))
                return []
            case .closingAfterAnswer, .draining, .closing, .closed:
                return []
            }
        }

        /// The handshake timer fired: a connection still without its preface is closed.
        mutating func handshakeTimerFired() -> [Action] {
            guard case .handshaking = state else { return [] }
            state = .closing(Closing(reason: "no TLS handshake or HTTP/2 preface within the handshake timeout", immediately: true))
            return [.countClosedBy(limit: "handshake-timeout")]
        }

        /// The idle timer fired at `now`. Only silence counts: a connection that read since is looked at again when
        /// it could be idle at the earliest, and one whose streams wait for their answers is not silent.
        mutating func idleTimerFired(now: NIODeadline, streamsInFlight: Int, lastReceivedStreamID: Int32) -> [Action] {
            guard let idle = limits.idleTimeout else { return [] }
            let lastRead: NIODeadline
            switch state {
            case .active(let active), .draining(let active): lastRead = active.lastRead
            case .idle, .handshaking, .closingAfterAnswer, .closing, .closed: return []
            }
            if streamsInFlight > 0 { return [.armIdleTimer(now + idle)] }
            guard now - lastRead >= idle else { return [.armIdleTimer(lastRead + idle)] }
            state = .closing(Closing(reason: "connection closed: idle", immediately: false))
            return [
                .goAway(errorCode: 0, lastStreamID: lastReceivedStreamID, debugData: Reason.idleTimeout.body()),
                .countClosedBy(limit: "idle-timeout"),
            ]
        }

        // MARK: Output and the end

        /// The handler has written what it may; `sessionFinished` when libnghttp2 wants neither to read nor to
        /// write (GOAWAY exchanged and every stream done, or it gave up). Returns how to close, if it is time.
        mutating func flushed(sessionFinished: Bool) -> Closing? {
            switch state {
            case .idle, .handshaking, .closed:
                return nil
            case .active, .draining, .closingAfterAnswer:
                guard sessionFinished else { return nil }
                state = .closing(Closing(reason: Self.closedByServer, immediately: false))
                return Closing(reason: Self.closedByServer, immediately: false)
            case .closing(let closing):
                return closing
            }
        }

        /// The session is settled (closed, its requests recorded); `nil` when it already was. Returns the reason its
        /// unanswered requests get, and whether the connection had been counted as open.
        mutating func settle(because fallback: String) -> (reason: String, wasCounted: Bool)? {
            defer { state = .closed }
            switch state {
            case .closed: return nil
            case .idle: return (fallback, false)
            case .closing(let closing): return (closing.reason, true)
            case .handshaking, .active, .closingAfterAnswer, .draining: return (fallback, true)
            }
        }

        // MARK: Back-pressure

        /// The handler was asked to read: `true` to read now, `false` when the read waits for the sinks.
        mutating func readRequested() -> Bool {
            readPending = readsPaused
            return !readsPaused
        }

        /// A recording sink is full: `true` when reading has just been paused (wait for the sinks' release).
        mutating func sinksFull() -> Bool {
            defer { readsPaused = true }
            return !readsPaused
        }

        /// The sinks have room again: `true` when a read was waiting for them.
        mutating func sinksReleased() -> Bool {
            defer { (readsPaused, readPending) = (false, false) }
            return readsPaused && readPending
        }

        static let closedByServer = "connection closed by the server before the answer was sent"
        static let refusedByOutage = "connection refused by the scenario's outage"
    }
}
