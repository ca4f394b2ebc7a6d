import Testing

@testable import APNsMock

private typealias F = ScenarioFixtures

/// Every kind of mistake is reported with its position and field, and all of them at once.
@Suite("Scenario errors")
struct ScenarioErrorTests {
    private func only(_ yaml: String) throws -> ScenarioProblem {
        let problems = F.problems(yaml)
        try #require(problems.count == 1, "expected one problem, got \(problems)")
        return problems[0]
    }

    @Test func unknownKeySuggestsTheNearestOne() throws {
        let problem = try only(
            """
            rules:
              - match:
                  tokenPrefx: abc
                accept: true
            """
        )
        #expect(
            problem.description == "test.yaml:3:7: rules[0].match.tokenPrefx: unknown key; did you mean 'tokenPrefix'?"
        )
    }

    @Test func aTabInTheIndentationIsNamed() throws {
        let problem = try only("rules:\n  - name: x\n\taccept: true\n")
        #expect(problem.line == 3, "\(problem)")
        #expect(problem.message.contains("tab"), "\(problem)")
    }

    @Test func aTokenThatCanNeverMatchIsAnError() throws {
        let problem = try only("rules:\n  - match: {token: not-a-token}\n    accept: true\n")
        #expect(problem.field == "rules[0].match.token", "\(problem)")
        #expect(problem.message.contains("is not a device token"), "\(problem)")
    }

    @Test func offsetGoesWithEvery() throws {
        let problem = try only("rules:\n  - match: {offset: 2}\n    accept: true\n")
        #expect(problem.message.hasPrefix("goes with every"), "\(problem)")
    }

    @Test func unknownRootKeyListsTheKnownOnes() throws {
        let problem = try only("colour: blue")
        #expect(problem.line == 1 && problem.column == 1)
        #expect(problem.field == "colour")
        #expect(problem.message.hasPrefix("unknown key; expected one of: name, description, seed"))
    }

    @Test func unknownReason() throws {
        let problem = try only("rules:\n  - reason: Unregistred\n")
        #expect(
            problem.description
                == "test.yaml:2:13: rules[0].reason: unknown reason 'Unregistred'; did you mean 'Unregistered'?"
        )
    }

    @Test func reasonInTheWrongCase() throws {
        let problem = try only("rules: [{reason: baddevicetoken}]")
        #expect(
            problem.message
                == "unknown reason 'baddevicetoken'; reasons are case-sensitive: did you mean 'BadDeviceToken'?"
        )
    }

    @Test func statusThatDoesNotGoWithTheReason() throws {
        let problem = try only(
            """
            rules:
              - name: wrong
                status: 400
                reason: Unregistered
            """
        )
        #expect(
            problem.description
                == "test.yaml:3:13: rules[0].status: status 400 does not go with reason Unregistered, which APNs answers with 410"
        )
    }

    @Test func statusAloneThatNeedsAReason() throws {
        let problem = try only("rules: [{status: 403}]")
        #expect(problem.field == "rules[0].status")
        #expect(problem.message.hasPrefix("status 403 needs a reason, one of: BadCertificate, "))
    }

    @Test func statusAPNsNeverSends() throws {
        let problem = try only("rules: [{status: 418}]")
        #expect(problem.message.hasPrefix("418 is not a status APNs answers with"))
    }

    @Test func timestampOnANon410Answer() throws {
        let problem = try only("rules: [{reason: BadTopic, timestamp: -2d}]")
        #expect(problem.field == "rules[0].timestamp")
        #expect(problem.message == "goes with 410 answers only (this one is 400)")
    }

    @Test func badRegex() throws {
        let problem = try only(
            """
            rules:
              - match: {tokenRegex: "(ab"}
                accept: true
            """
        )
        #expect(problem.line == 2 && problem.column == 25)
        #expect(problem.field == "rules[0].match.tokenRegex")
        #expect(problem.message.hasPrefix("is not a valid regular expression: "))
    }

    @Test func unknownDeviceName() throws {
        let problem = try only(
            """
            devices:
              - {name: alice, token: \(F.tokenA), topic: com.example.app}
            rules:
              - match: {device: alcie}
                accept: true
            """
        )
        #expect(
            problem.description
                == "test.yaml:4:21: rules[0].match.device: no device named 'alcie'; did you mean 'alice'?"
        )
    }

    @Test(arguments: [
        ("10", "'10' has no unit; write 10ms or 10s"),
        ("10y", "'10y' has unknown unit 'y'; use ms, s, m, h or d"),
        ("10 s", "'10 s' has no unit"),
        ("fast", "'fast' is not a duration"),
        ("-5s", "must not be negative"),
    ])
    func badDurations(text: String, message: String) throws {
        let problem = try only("rules: [{match: {after: \(text)}, accept: true}]")
        #expect(problem.field == "rules[0].match.after")
        #expect(problem.message.hasPrefix(message))
    }

    @Test func unknownPushType() throws {
        let problem = try only("rules: [{match: {pushType: [alert, liveActivity]}, accept: true}]")
        #expect(problem.field == "rules[0].match.pushType[1]")
        #expect(problem.message.hasPrefix("unknown push type 'liveActivity'; did you mean 'liveactivity'?"))
    }

    @Test func negativeTimesAndOrdinals() {
        let problems = F.problems(
            """
            rules:
              - match: {nth: 0, every: -2}
                times: -1
                accept: true
            """
        )
        #expect(problems.map(\.field) == ["rules[0].match.nth", "rules[0].match.every", "rules[0].times"])
        #expect(problems.allSatisfy { $0.message.contains("out of range") })
    }

    @Test func negativeAbsoluteTimestamp() throws {
        let problem = try only("devices: [{name: a, token: \(F.tokenA), topic: t, unregisteredAt: -5}]")
        #expect(problem.field == "devices[0].unregisteredAt")
        #expect(problem.message.hasPrefix("-5 is negative"))
    }

    @Test func badTime() throws {
        let problem = try only("rules: [{reason: Unregistered, timestamp: yesterday}]")
        #expect(problem.message.hasPrefix("'yesterday' is not a time"))
        #expect(problem.message.hasSuffix("or unregistered (the device's unregistration time)"))
    }

    @Test func badDevices() {
        let problems = F.problems(
            """
            devices:
              - {name: a, token: xyz, topic: t}
              - {name: a, token: \(F.tokenA), topic: t, environment: staging}
              - {name: b, token: \(F.tokenA.uppercased()), topic: t}
              - {name: c, token: \(F.tokenB)}
            """
        )
        #expect(
            problems.map(\.description) == [
                "test.yaml:2:22: devices[0].token: must be an even number of hexadecimal digits",
                "test.yaml:3:12: devices[1].name: device name 'a' is already used at line 2",
                "test.yaml:3:111: devices[1].environment: unknown environment 'staging'; expected development (or sandbox) or production",
                "test.yaml:4:22: devices[2].token: this token is already a device at line 3",
                "test.yaml:5:5: devices[3].topic: is required",
            ]
        )
    }

    @Test func conflictingFaults() {
        let problems = F.problems(
            """
            rules:
              - {name: a, drop: true, hang: true}
              - {name: b, accept: true, reset: true}
              - {name: c, goaway: true, closeConnection: true}
              - {name: d, sequence: [accept], status: 500}
              - {name: e, repeat: true, accept: true}
              - {name: f, accept: true, status: 500}
            """
        )
        #expect(
            problems.map { "\($0.field ?? ""): \($0.message)" } == [
                "rules[0].hang: cannot be combined with drop; pick one",
                "rules[1].reset: reset replaces the answer; remove accept",
                "rules[2].closeConnection: goaway closes the connection already",
                "rules[3].status: a rule with a sequence answers with its steps; move status into the steps",
                "rules[4].repeat: goes with a sequence only",
                "rules[5].status: accept answers 200; remove accept or status",
            ]
        )
    }

    @Test func badErrorCodeAndStep() {
        let problems = F.problems(
            """
            rules:
              - {name: a, reset: {errorCode: CANCELLED}}
              - {name: b, sequence: [accept, nope]}
            """
        )
        #expect(problems.count == 2)
        #expect(problems[0].message == "unknown HTTP/2 error code 'CANCELLED'; did you mean 'CANCEL'?")
        #expect(problems[1].field == "rules[1].sequence[1]")
        #expect(problems[1].message.hasPrefix("unknown step 'nope'"))
    }

    @Test func badJSONPathAndProbability() {
        let problems = F.problems(
            """
            rules:
              - match:
                  payload: {"$.aps[x]": 1, "$.aps..a": 2}
                  probability: 1.5
                accept: true
            """
        )
        #expect(
            problems.map { "\($0.field ?? ""): \($0.message)" } == [
                #"rules[0].match.payload["$.aps[x]"]: bad JSON path: '$.aps[x]' has index 'x'; write a number ≥ 0 or a quoted key"#,
                #"rules[0].match.payload["$.aps..a"]: bad JSON path: '$.aps..a' has an empty key"#,
                "rules[0].match.probability: 1.5 is not between 0 and 1",
            ]
        )
    }

    @Test func wrongShapes() {
        let problems = F.problems(
            """
            defaults: 5
            devices: {name: a}
            rules:
              - accept: yes please
            """
        )
        #expect(
            problems.map(\.description) == [
                "test.yaml:1:11: defaults: expected a mapping (key: value), found '5'",
                "test.yaml:2:10: devices: expected a list of devices ({name, token, topic, environment}), found a mapping",
                "test.yaml:4:13: rules[0].accept: expected true or false, found 'yes please'",
            ]
        )
    }

    @Test func timeWindowThatCannotMatch() throws {
        let problem = try only("rules: [{match: {after: 1m, before: 30s}, accept: true}]")
        #expect(problem.field == "rules[0].match.before")
        #expect(problem.message == "must be later than after (nothing could match)")
    }

    @Test func outageProblems() {
        let problems = F.problems(
            """
            outages:
              - {from: 30s, until: 10s}
              - {from: 1s, mode: refuse, debugData: x}
              - {from: 1s, mode: sulk}
            """
        )
        #expect(problems.map(\.field) == ["outages[0].until", "outages[1].debugData", "outages[2].mode"])
    }

    @Test func yamlSyntaxErrorHasAPosition() throws {
        let problem = try only("rules:\n  - name: a\n   accept: true\n")
        #expect(problem.line == 3)
        #expect(problem.field == nil)
        #expect(problem.description.hasPrefix("test.yaml:3:"))
        #expect(problem.message.hasPrefix("YAML syntax: "))
    }

    @Test func duplicateKeyIsReported() throws {
        let problem = try only("name: a\nname: b\n")
        #expect(problem.message == "duplicate key 'name' in one mapping")
    }

    @Test func emptyDocument() throws {
        let problem = try only("# only a comment\n")
        #expect(problem.description == "test.yaml:1:1: the scenario is empty; it needs at least a name or rules")
    }

    @Test func manyProblemsInOneFileAreAllReportedInFileOrder() {
        let problems = F.problems(
            """
            name: many
            devices:
              - {name: alice, token: \(F.tokenA), topic: com.example.app}
            rules:
              - name: one
                match: {device: carol, pushType: alrt}
                status: 400
                reason: Unregistered
              - name: two
                match: {tokenRegex: "[a-", after: soon}
                reason: NoSuchReason
                delay: 10
              - name: one
                sequence: []
            """,
            source: "Scenarios/many.yaml"
        )
        #expect(
            problems.map(\.description) == [
                "Scenarios/many.yaml:6:21: rules[0].match.device: no device named 'carol'; expected one of: alice",
                "Scenarios/many.yaml:6:38: rules[0].match.pushType: unknown push type 'alrt'; did you mean 'alert'?",
                "Scenarios/many.yaml:7:13: rules[0].status: status 400 does not go with reason Unregistered, which APNs answers with 410",
                "Scenarios/many.yaml:10:25: rules[1].match.tokenRegex: is not a valid regular expression: expected ']'",
                "Scenarios/many.yaml:10:39: rules[1].match.after: 'soon' is not a duration; write e.g. 200ms, 10s, 1m30s, 2h or 2d",
                "Scenarios/many.yaml:11:13: rules[1].reason: unknown reason 'NoSuchReason'; expected an APNs reason such as BadDeviceToken, "
                    + "Unregistered or TooManyRequests (the table is in docs/scenarios.md, section Reasons)",
                "Scenarios/many.yaml:12:12: rules[1].delay: '10' has no unit; write 10ms or 10s",
                "Scenarios/many.yaml:13:11: rules[2].name: rule name 'one' is already used at line 5",
                "Scenarios/many.yaml:14:15: rules[2].sequence: needs at least one step",
            ]
        )
    }
}
