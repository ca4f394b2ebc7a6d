import APNsMock
import NIOCore
import Testing

@testable import APNsMockServer

/// The provider connection's lifecycle without sockets: every state × event pair, as a table.
///
/// `Self.table` lists each pair that does something (actions out, or another state). Every pair it does not
/// list must change nothing and return nothing, which `everyPairNotInTheTableChangesNothing` checks: a new
/// state or event that is left out of the table fails there.
@Suite("Provider connection state machine")
struct ProviderConnectionStateMachineTests {
    typealias Machine = ProviderConnectionHandler.StateMachine

    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let limits = Machine.Limits(handshakeTimeout: .seconds(10), idleTimeout: .seconds(60))

    /// The states, each reached by events from a new machine.
    enum Start: String, CaseIterable, Sendable {
        case idle
        /// Active, no TLS event yet (plain TCP, or TLS under way).
        case handshaking
        /// TLS done with `h2`: SETTINGS are out, the preface has not come.
        case handshakingH2
        /// TLS done with `http/1.1`: nothing binary is written to it.
        case handshakingHTTP1
        case active
        /// Stream 5's answer is to be followed by GOAWAY and a close.
        case closingAfterAnswer
        case draining
        case closing
        case closingNow
        case closed

        func machine() -> Machine {
            var machine = Machine(limits: ProviderConnectionStateMachineTests.limits)
            let at = ProviderConnectionStateMachineTests.start
            switch self {
            case .idle: break
            case .handshaking: _ = machine.channelActive(overLimit: false, outage: nil)
            case .handshakingH2, .handshakingHTTP1:
                _ = machine.channelActive(overLimit: false, outage: nil)
                _ = machine.tlsCompleted(speaksHTTP2: self == .handshakingH2)
            case .active, .closingAfterAnswer, .draining, .closing, .closingNow, .closed:
                _ = machine.channelActive(overLimit: false, outage: nil)
                _ = machine.tlsCompleted(speaksHTTP2: true)
                _ = machine.sessionAccepted(at: at)
                switch self {
                case .closingAfterAnswer: _ = machine.decided(streamID: 5, answered: true, actions: [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .close])
                case .draining: _ = machine.shutdownRequested(lastReceivedStreamID: 9)
                case .closing: machine.failed(because: "failed")
                case .closingNow: machine.failed(because: "dropped", immediately: true)
                case .closed: _ = machine.settle(because: "gone")
                default: break
                }
            }
            return machine
        }
    }

    /// The events, each with fixed arguments.
    enum Event: String, CaseIterable, Sendable {
        case activate, activateOverLimit, activateInOutage, activateInGoAwayOutage
        case tlsH2, tlsHTTP1
        case bytes, accepted
        case http1RequestLine, garbage
        case failed, closeNow
        case decideClose, decideCloseUnanswered, decideDrop, decideStreamLimit, decideGoAwayOnly
        case endStream5, endStream3
        case shutdown, handshakeTimer
        case idleTimerSilent, idleTimerAfterRead, idleTimerBusy
        case flush, flushSessionFinished
        case settle

        /// Applies the event; returns what came out, as text.
        func apply(to machine: inout Machine) -> String {
            let at = ProviderConnectionStateMachineTests.start
            let closeAfterAnswer: [ConnectionAction] = [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .close]
            switch self {
            case .activate: return Self.text(machine.channelActive(overLimit: false, outage: nil))
            case .activateOverLimit: return Self.text(machine.channelActive(overLimit: true, outage: nil))
            case .activateInOutage: return Self.text(machine.channelActive(overLimit: false, outage: .refuse))
            case .activateInGoAwayOutage: return Self.text(machine.channelActive(overLimit: false, outage: .goAway(errorCode: 0, debugData: "down")))
            case .tlsH2: return Self.text(machine.tlsCompleted(speaksHTTP2: true))
            case .tlsHTTP1: return Self.text(machine.tlsCompleted(speaksHTTP2: false))
            case .bytes:
                switch machine.bytesReceived(at: at + .seconds(1)) {
                case .receive: return "receive"
                case .startSessionThenReceive(let actions): return "startSessionThenReceive " + Self.text(actions)
                case .discard: return "discard"
                }
            case .accepted: return Self.text(machine.sessionAccepted(at: at))
            case .http1RequestLine: return machine.notHTTP2(looksLikeHTTP1: true).map { "\($0)" } ?? ""
            case .garbage: return machine.notHTTP2(looksLikeHTTP1: false).map { "\($0)" } ?? ""
            case .failed:
                machine.failed(because: "failed")
                return ""
            case .closeNow:
                machine.failed(because: "dropped", immediately: true)
                return ""
            case .decideClose: return Self.text(machine.decided(streamID: 5, answered: true, actions: closeAfterAnswer))
            case .decideCloseUnanswered: return Self.text(machine.decided(streamID: 5, answered: false, actions: closeAfterAnswer))
            case .decideDrop: return Self.text(machine.decided(streamID: 5, answered: false, actions: [.drop]))
            case .decideStreamLimit: return Self.text(machine.decided(streamID: 5, answered: true, actions: [.setMaxConcurrentStreams(1000)]))
            case .decideGoAwayOnly:
                return Self.text(machine.decided(streamID: 5, answered: true, actions: [.goAway(errorCode: 0, lastStreamID: 1, debugData: "x")]))
            case .endStream5: return Self.text(machine.streamEnded(5))
            case .endStream3: return Self.text(machine.streamEnded(3))
            case .shutdown: return Self.text(machine.shutdownRequested(lastReceivedStreamID: 41))
            case .handshakeTimer: return Self.text(machine.handshakeTimerFired())
            case .idleTimerSilent: return Self.text(machine.idleTimerFired(now: at + .seconds(61), streamsInFlight: 0, lastReceivedStreamID: 7))
            case .idleTimerAfterRead: return Self.text(machine.idleTimerFired(now: at + .seconds(30), streamsInFlight: 0, lastReceivedStreamID: 7))
            case .idleTimerBusy: return Self.text(machine.idleTimerFired(now: at + .seconds(61), streamsInFlight: 1, lastReceivedStreamID: 7))
            case .flush: return Self.text(machine.flushed(sessionFinished: false))
            case .flushSessionFinished: return Self.text(machine.flushed(sessionFinished: true))
            case .settle: return machine.settle(because: "fallback").map { "settle \($0.reason) counted=\($0.wasCounted)" } ?? ""
            }
        }

        /// How a flush closes: `now(because:)` without writing, `afterWrites(because:)` after what is queued.
        static func text(_ closing: Machine.Closing?) -> String {
            guard let closing else { return "" }
            return (closing.immediately ? "now" : "afterWrites") + #"(because: "\#(closing.reason)")"#
        }

        static func text(_ actions: [Machine.Action]) -> String {
            actions.map { action in
                switch action {
                case .goAway(let code, let last, let debug): "goAway(\(code),\(last.map(String.init) ?? "answered"),\(debug))"
                case .setMaxConcurrentStreams(let value): "streams(\(value))"
                case .startSession: "startSession"
                case .armHandshakeTimer(let delay): "handshakeTimer(\(delay.nanoseconds / 1_000_000_000)s)"
                case .armIdleTimer(let deadline): "idleTimer(+\((deadline - ProviderConnectionStateMachineTests.start).nanoseconds / 1_000_000_000)s)"
                case .countClosedBy(let limit): "count(\(limit))"
                }
            }.joined(separator: " ")
        }
    }

    /// A state as text: its case and the payload fields the table cares about.
    static func describe(_ machine: Machine) -> String {
        switch machine.state {
        case .idle: "idle"
        case .handshaking(let handshaking):
            "handshaking" + (handshaking.sessionStarted ? " started" : "") + (handshaking.writesFrames ? " h2" : "")
                + (handshaking.refusal != nil ? " refusing" : "")
        case .active(let active): "active read+\((active.lastRead - start).nanoseconds / 1_000_000_000)s"
        case .closingAfterAnswer(let waiting): "closingAfterAnswer(\(waiting.streamID))"
        case .draining: "draining"
        case .closing(let closing): "closing\(closing.immediately ? " now" : ""): \(closing.reason)"
        case .closed: "closed"
        }
    }

    /// Every pair that does something: start state, event, what comes out, the state after.
    static let table: [(Start, Event, String, String)] = [
        (.idle, .activate, "handshakeTimer(10s)", "handshaking"),
        (.idle, .activateOverLimit, "count(over-limit)", "closing now: connection refused: --max-connections reached"),
        (.idle, .activateInOutage, "", "closing now: connection refused by the scenario's outage"),
        (.idle, .activateInGoAwayOutage, "handshakeTimer(10s)", "handshaking refusing"),
        (.idle, .bytes, "discard", "idle"),
        (.idle, .failed, "", "closed"),
        (.idle, .closeNow, "", "closed"),
        (.idle, .shutdown, "", "closing now: connection closed: the server is shutting down"),
        (.idle, .settle, "settle fallback counted=false", "closed"),

        (.handshaking, .tlsH2, "startSession", "handshaking started h2"),
        (.handshaking, .tlsHTTP1, "startSession", "handshaking started"),
        (.handshaking, .bytes, "startSessionThenReceive startSession", "handshaking started"),
        (.handshaking, .accepted, "idleTimer(+60s)", "active read+0s"),
        (.handshaking, .http1RequestLine, "http1VersionNotSupported", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshaking, .garbage, "goAwayProtocolError", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshaking, .failed, "", "closing: failed"),
        (.handshaking, .closeNow, "", "closing now: dropped"),
        (.handshaking, .decideClose, "", "closingAfterAnswer(5)"),
        (.handshaking, .decideCloseUnanswered, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.handshaking, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.handshaking, .decideStreamLimit, "streams(1000)", "handshaking"),
        (.handshaking, .decideGoAwayOnly, "goAway(0,1,x)", "handshaking"),
        (.handshaking, .shutdown, "", "closing now: connection closed: the server is shutting down"),
        (.handshaking, .handshakeTimer, "count(handshake-timeout)", "closing now: no TLS handshake or HTTP/2 preface within the handshake timeout"),
        (.handshaking, .settle, "settle fallback counted=true", "closed"),

        (.handshakingH2, .accepted, "idleTimer(+60s)", "active read+0s"),
        (.handshakingH2, .http1RequestLine, "goAwayProtocolError", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshakingH2, .garbage, "goAwayProtocolError", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshakingH2, .failed, "", "closing: failed"),
        (.handshakingH2, .closeNow, "", "closing now: dropped"),
        (.handshakingH2, .decideClose, "", "closingAfterAnswer(5)"),
        (.handshakingH2, .decideCloseUnanswered, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.handshakingH2, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.handshakingH2, .decideStreamLimit, "streams(1000)", "handshaking started h2"),
        (.handshakingH2, .decideGoAwayOnly, "goAway(0,1,x)", "handshaking started h2"),
        (.handshakingH2, .shutdown, #"goAway(0,41,{"reason":"Shutdown"})"#, "closing: connection closed: the server is shutting down"),
        (.handshakingH2, .handshakeTimer, "count(handshake-timeout)", "closing now: no TLS handshake or HTTP/2 preface within the handshake timeout"),
        (.handshakingH2, .settle, "settle fallback counted=true", "closed"),

        (.handshakingHTTP1, .accepted, "idleTimer(+60s)", "active read+0s"),
        (.handshakingHTTP1, .http1RequestLine, "http1VersionNotSupported", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshakingHTTP1, .garbage, "goAwayProtocolError", "closing now: connection closed: client does not speak HTTP/2"),
        (.handshakingHTTP1, .failed, "", "closing: failed"),
        (.handshakingHTTP1, .closeNow, "", "closing now: dropped"),
        (.handshakingHTTP1, .decideClose, "", "closingAfterAnswer(5)"),
        (.handshakingHTTP1, .decideCloseUnanswered, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.handshakingHTTP1, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.handshakingHTTP1, .decideStreamLimit, "streams(1000)", "handshaking started"),
        (.handshakingHTTP1, .decideGoAwayOnly, "goAway(0,1,x)", "handshaking started"),
        (.handshakingHTTP1, .shutdown, "", "closing now: connection closed: the server is shutting down"),
        (.handshakingHTTP1, .handshakeTimer, "count(handshake-timeout)", "closing now: no TLS handshake or HTTP/2 preface within the handshake timeout"),
        (.handshakingHTTP1, .settle, "settle fallback counted=true", "closed"),

        (.active, .bytes, "receive", "active read+1s"),
        (.active, .failed, "", "closing: failed"),
        (.active, .closeNow, "", "closing now: dropped"),
        (.active, .decideClose, "", "closingAfterAnswer(5)"),
        (.active, .decideCloseUnanswered, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.active, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.active, .decideStreamLimit, "streams(1000)", "active read+0s"),
        (.active, .decideGoAwayOnly, "goAway(0,1,x)", "active read+0s"),
        (.active, .shutdown, #"goAway(0,41,{"reason":"Shutdown"})"#, "draining"),
        (.active, .idleTimerSilent, #"goAway(0,7,{"reason":"IdleTimeout"}) count(idle-timeout)"#, "closing: connection closed: idle"),
        (.active, .idleTimerAfterRead, "idleTimer(+60s)", "active read+0s"),
        (.active, .idleTimerBusy, "idleTimer(+121s)", "active read+0s"),
        (.active, .flushSessionFinished, #"afterWrites(because: "connection closed by the server before the answer was sent")"#, "closing: connection closed by the server before the answer was sent"),
        (.active, .settle, "settle fallback counted=true", "closed"),

        (.closingAfterAnswer, .failed, "", "closing: failed"),
        (.closingAfterAnswer, .closeNow, "", "closing now: dropped"),
        (.closingAfterAnswer, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.closingAfterAnswer, .decideStreamLimit, "streams(1000)", "closingAfterAnswer(5)"),
        (.closingAfterAnswer, .endStream5, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.closingAfterAnswer, .flushSessionFinished, #"afterWrites(because: "connection closed by the server before the answer was sent")"#, "closing: connection closed by the server before the answer was sent"),
        (.closingAfterAnswer, .settle, "settle fallback counted=true", "closed"),

        (.draining, .failed, "", "closing: failed"),
        (.draining, .closeNow, "", "closing now: dropped"),
        (.draining, .decideClose, "", "closingAfterAnswer(5)"),
        (.draining, .decideCloseUnanswered, "goAway(0,answered,)", "closing: connection closed by the server before the answer was sent"),
        (.draining, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.draining, .decideStreamLimit, "streams(1000)", "draining"),
        (.draining, .decideGoAwayOnly, "goAway(0,1,x)", "draining"),
        (.draining, .idleTimerSilent, #"goAway(0,7,{"reason":"IdleTimeout"}) count(idle-timeout)"#, "closing: connection closed: idle"),
        (.draining, .idleTimerAfterRead, "idleTimer(+60s)", "draining"),
        (.draining, .idleTimerBusy, "idleTimer(+121s)", "draining"),
        (.draining, .flushSessionFinished, #"afterWrites(because: "connection closed by the server before the answer was sent")"#, "closing: connection closed by the server before the answer was sent"),
        (.draining, .settle, "settle fallback counted=true", "closed"),

        (.closing, .closeNow, "", "closing now: failed"),
        (.closing, .decideDrop, "", "closing now: connection dropped by the scenario before the request ended"),
        (.closing, .decideStreamLimit, "streams(1000)", "closing: failed"),
        (.closing, .flush, #"afterWrites(because: "failed")"#, "closing: failed"),
        (.closing, .flushSessionFinished, #"afterWrites(because: "failed")"#, "closing: failed"),
        (.closing, .settle, "settle failed counted=true", "closed"),

        (.closingNow, .decideStreamLimit, "streams(1000)", "closing now: dropped"),
        (.closingNow, .flush, #"now(because: "dropped")"#, "closing now: dropped"),
        (.closingNow, .flushSessionFinished, #"now(because: "dropped")"#, "closing now: dropped"),
        (.closingNow, .settle, "settle dropped counted=true", "closed"),

        (.closed, .bytes, "discard", "closed"),
    ]

    @Test(arguments: table.indices)
    func aPairInTheTableDoesWhatItSays(row: Int) {
        let (start, event, actions, after) = Self.table[row]
        var machine = start.machine()
        let out = event.apply(to: &machine)
        #expect(out == actions, "\(start) × \(event)")
        #expect(Self.describe(machine) == after, "\(start) × \(event)")
    }

    @Test(arguments: Start.allCases)
    func everyPairNotInTheTableChangesNothing(start: Start) {
        for event in Event.allCases where !Self.table.contains(where: { $0.0 == start && $0.1 == event }) {
            var machine = start.machine()
            let before = Self.describe(machine)
            let out = event.apply(to: &machine)
            #expect(out == "" || out == "receive", "\(start) × \(event) is not in the table but returned \(out)")
            #expect(Self.describe(machine) == before, "\(start) × \(event) is not in the table but moved to \(Self.describe(machine))")
        }
    }

    @Test func readsWaitWhileTheSinksAreFullAndOneReadIsKeptForTheRelease() {
        var machine = Machine(limits: Self.limits)
        // In order: read, sinks full, full again, two reads while paused, release, release again, read, full,
        // release with no read asked for meanwhile.
        let answers = [
            machine.readRequested(), machine.sinksFull(), machine.sinksFull(), machine.readRequested(), machine.readRequested(),
            machine.sinksReleased(), machine.sinksReleased(), machine.readRequested(), machine.sinksFull(), machine.sinksReleased(),
        ]
        #expect(answers == [true, true, false, false, false, true, false, true, true, false])
    }
}
