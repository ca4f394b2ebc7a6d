import APNsMock
import Testing

@testable import APNsMockServer

/// The provider connection's lifecycle as event sequences, without sockets.
@Suite("Provider connection state machine")
struct ProviderConnectionStateMachineTests {
    typealias Machine = ProviderConnectionHandler.StateMachine

    private static let closeAfterAnswer: [ConnectionAction] = [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .close]

    @Test func aTokenConnectionIsGatedUntilTheStreamLimitIsRaised() {
        var machine = Machine(gated: true)
        #expect(machine.state == .gated)
        #expect(machine.decided(streamID: 1, answered: true, actions: []) == [])
        #expect(machine.state == .gated)
        #expect(machine.decided(streamID: 3, answered: true, actions: [.setMaxConcurrentStreams(1000)]) == [.setMaxConcurrentStreams(1000)])
        #expect(machine.state == .open)
    }

    @Test func closeAfterAnAnsweredRequestWaitsUntilTheAnswerIsSent() {
        var machine = Machine(gated: false)
        // Deciding sends nothing yet: the GOAWAY must not overtake the answer's HEADERS and DATA.
        #expect(machine.decided(streamID: 5, answered: true, actions: Self.closeAfterAnswer) == [])
        #expect(machine.state == .closingAfterAnswer(streamID: 5))
        // Another stream's answer leaving changes nothing.
        #expect(machine.answerFinished(streamID: 3) == [])
        #expect(machine.answerFinished(streamID: 5) == [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .closeAfterWrites])
        #expect(machine.state == .closing)
        #expect(!machine.isServing)
    }

    @Test func closeWithoutAnAnswerGoesAtOnce() {
        var machine = Machine(gated: false)
        let refuse: [ConnectionAction] = [
            .goAway(errorCode: 0, lastStreamID: 0, debugData: #"{"reason":"BadCertificateEnvironment"}"#),
            .goAway(errorCode: 0, lastStreamID: 0, debugData: ""), .close,
        ]
        #expect(
            machine.decided(streamID: 1, answered: false, actions: refuse) == [
                .goAway(errorCode: 0, lastStreamID: 0, debugData: #"{"reason":"BadCertificateEnvironment"}"#),
                .goAway(errorCode: 0, lastStreamID: 0, debugData: ""), .closeAfterWrites,
            ]
        )
        #expect(machine.state == .closing)
    }

    @Test func theFirstDecisionToCloseWins() {
        var machine = Machine(gated: false)
        _ = machine.decided(streamID: 1, answered: true, actions: Self.closeAfterAnswer)
        #expect(machine.decided(streamID: 3, answered: true, actions: Self.closeAfterAnswer) == [])
        #expect(machine.answerFinished(streamID: 3) == [])
        #expect(machine.answerFinished(streamID: 1).count == 2)
        #expect(machine.decided(streamID: 5, answered: true, actions: Self.closeAfterAnswer) == [])
    }

    @Test func aDropClosesAtOnceAndCancelsAWaitingGoAway() {
        var machine = Machine(gated: false)
        _ = machine.decided(streamID: 1, answered: true, actions: Self.closeAfterAnswer)
        #expect(machine.decided(streamID: 3, answered: false, actions: [.drop]) == [.closeNow])
        #expect(machine.answerFinished(streamID: 1) == [])
    }

    @Test func aStreamLimitChangeGoesOutAtOnceEvenWhileClosing() {
        var machine = Machine(gated: false)
        #expect(
            machine.decided(streamID: 1, answered: true, actions: [.setMaxConcurrentStreams(1)] + Self.closeAfterAnswer)
                == [.setMaxConcurrentStreams(1)]
        )
    }

    @Test func aGoAwayWithoutCloseGoesOutAtOnce() {
        var machine = Machine(gated: false)
        let goAway = ConnectionAction.goAway(errorCode: 0, lastStreamID: 1, debugData: "x")
        #expect(machine.decided(streamID: 1, answered: true, actions: [goAway]) == [.goAway(errorCode: 0, lastStreamID: 1, debugData: "x")])
        #expect(machine.state == .open)
    }

    @Test func shutdownSendsOneGoAwayNamingTheLastStreamReceivedThenClosesWhenTheSessionIsDone() {
        var machine = Machine(gated: false)
        #expect(machine.shutdownRequested(lastReceivedStreamID: 41) == [.goAway(errorCode: 0, lastStreamID: 41, debugData: Reason.shutdown.body())])
        #expect(machine.state == .draining)
        #expect(machine.isServing, "streams in flight are still answered")
        #expect(machine.shutdownRequested(lastReceivedStreamID: 43) == [])
        #expect(machine.sessionFinished() == [.closeAfterWrites])
        #expect(machine.state == .closing)
        let first = machine.closed()
        let second = machine.closed()
        #expect(first)
        #expect(!second, "settled once")
    }

    @Test func shutdownWhileClosingAfterAnAnswerLeavesThatCloseAlone() {
        var machine = Machine(gated: false)
        _ = machine.decided(streamID: 7, answered: true, actions: Self.closeAfterAnswer)
        #expect(machine.shutdownRequested(lastReceivedStreamID: 7) == [])
        #expect(machine.answerFinished(streamID: 7).count == 2)
    }

    @Test func anAnswerCloseDuringShutdownStillWaitsForTheAnswer() {
        var machine = Machine(gated: false)
        _ = machine.shutdownRequested(lastReceivedStreamID: 9)
        #expect(machine.decided(streamID: 9, answered: true, actions: Self.closeAfterAnswer) == [])
        #expect(machine.answerFinished(streamID: 9).count == 2)
    }

    @Test func anIdleConnectionGetsGoAwayIdleTimeoutThenCloses() {
        var machine = Machine(gated: false)
        #expect(
            machine.idleTimedOut(lastReceivedStreamID: 7)
                == [.goAway(errorCode: 0, lastStreamID: 7, debugData: Reason.idleTimeout.body()), .closeAfterWrites]
        )
        #expect(machine.state == .closing)
        #expect(machine.idleTimedOut(lastReceivedStreamID: 7) == [])
        var closing = Machine(gated: false)
        _ = closing.decided(streamID: 1, answered: true, actions: Self.closeAfterAnswer)
        #expect(closing.idleTimedOut(lastReceivedStreamID: 1) == [], "a close already under way is left alone")
    }

    @Test func anOutageRefusesWithOrWithoutAGoAway() {
        var plain = Machine(gated: false)
        #expect(plain.refused(goAway: nil) == [.closeNow])
        var polite = Machine(gated: false)
        #expect(polite.refused(goAway: (errorCode: 0, debugData: "down")) == [.goAway(errorCode: 0, lastStreamID: 0, debugData: "down"), .closeAfterWrites])
        #expect(polite.refused(goAway: nil) == [], "already closing")
    }

    @Test func aFailureClosesAfterWhatWasQueuedOnce() {
        var machine = Machine(gated: true)
        #expect(machine.failed() == [.closeAfterWrites])
        #expect(machine.failed() == [])
        #expect(machine.sessionFinished() == [])
        #expect(machine.shutdownRequested(lastReceivedStreamID: 1) == [])
    }

    @Test func nothingHappensAfterTheSocketIsClosed() {
        var machine = Machine(gated: false)
        let closed = machine.closed()
        #expect(closed)
        #expect(machine.decided(streamID: 1, answered: false, actions: [.drop]) == [])
        #expect(machine.decided(streamID: 1, answered: true, actions: Self.closeAfterAnswer) == [])
        #expect(machine.answerFinished(streamID: 1) == [])
    }
}
