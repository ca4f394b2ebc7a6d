import Testing

@testable import APNsMock

@Suite("Optional.isSome and isNone")
struct OptionalCaseTestTests {
    @Test
    func theCaseTestsAgreeWithComparingToNil() {
        // `.some(.none)`: an authentication record whose own case is named `none` is still a value.
        let records: [AuthenticationRecord?] = [
            nil, .some(.none), .missing, .token(keyID: "K", teamID: "T", issuedAt: 1, signatureVerified: true, error: nil),
            .certificate(subject: "CN=x", topics: ["a"]),
        ]
        for record in records {
            #expect(record.isSome == (record != nil))
            #expect(record.isNone == (record == nil))
            #expect(record.isSome != record.isNone)
        }
        let answers: [APNsResponse?] = [nil, APNsResponse(status: 200, apnsID: "8E1F2C6A-3B5D-4C7E-9F10-2A3B4C5D6E7F")]
        #expect(answers.map(\.isSome) == [false, true])
        #expect(answers.map(\.isNone) == [true, false])
    }

    @Test
    func aDecisionAnswersExactlyWhenItsOutcomeHasAnAnswer() {
        let answer = APNsResponse(status: 200, apnsID: "8E1F2C6A-3B5D-4C7E-9F10-2A3B4C5D6E7F")
        var decision = ProviderDecision(outcome: RecordingOutcome(receivedAt: 1, response: answer, extras: nil))
        #expect(decision.answers)
        decision.outcome = RecordingOutcome(receivedAt: 1, response: nil, extras: nil)
        #expect(!decision.answers)
        let fault = ProviderDecision(streamFault: .hang, outcome: RecordingOutcome(receivedAt: 1, response: nil, extras: nil))
        #expect(!fault.answers)
        decision.outcome = RecordingOutcome(receivedAt: 2, response: answer, extras: nil)
        #expect(decision.answers)
    }
}
