import Foundation
import Testing

/// `apns-mock scenario check` and `apns-mock serve --scenario`, run as the built binary.
@Suite("Scenario command line")
struct ScenarioCommandLineTests {
    /// The built `apns-mock`: next to the test binary (same configuration), or in `.build/debug` of the repository.
    static func binary() throws -> String {
        var candidates: [String] = []
        if let testBinary = CommandLine.arguments.first {
            var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
            while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
            candidates.append(directory.appendingPathComponent("apns-mock").path)
        }
        candidates.append(TestPaths.repositoryRoot.appendingPathComponent(".build/debug/apns-mock").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw TestFailure("no built apns-mock at \(candidates); run `swift build --product apns-mock` first")
    }

    /// Runs the binary with `arguments` (no shell), capturing its output in files, killed after `timeout`.
    static func run(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> ToolResult {
        // Settings from the environment must not leak in from whoever runs the tests.
        try await ExternalTool.run(
            try binary(), arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") },
            workingDirectory: TestPaths.repositoryRoot,
            timeout: timeout
        )
    }

    static let broken = """
        name: broken
        devices:
          - name: alice
            token: aaaa
            topic: com.example.app
        rules:
          - name: one
            match: {pushType: alrt}
            status: 400
            reason: Unregistered
          - name: two
            match: {device: carol}
            reason: NoSuchReason
          - name: three
            match: {tokenRegex: '[0-9'}
            delay: 10

        """

    static func expectedProblems(_ path: String) -> [String] {
        [
            "\(path):8:23: rules[0].match.pushType: unknown push type 'alrt'; did you mean 'alert'?",
            "\(path):9:13: rules[0].status: status 400 does not go with reason Unregistered, which APNs answers with 410",
            "\(path):12:21: rules[1].match.device: no device named 'carol'; expected one of: alice",
            "\(path):13:13: rules[1].reason: unknown reason 'NoSuchReason'; expected an APNs reason such as BadDeviceToken, Unregistered or TooManyRequests (the table is in docs/scenarios.md, section Reasons)",
            "\(path):15:25: rules[2].match.tokenRegex: is not a valid regular expression: expected ']'",
            "\(path):16:12: rules[2].delay: '10' has no unit; write 10ms or 10s",
        ]
    }

    @Test func checkAcceptsEveryShippedFile() async throws {
        let paths = ScenarioFiles.shipped.map(ScenarioFiles.path)
        let result = try await Self.run(["scenario", "check"] + paths)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == paths.count, "\(result)")
        for (path, name) in zip(paths, ScenarioFiles.shipped) {
            #expect(lines.contains { $0.hasPrefix("\(path): ok (\(name): ") }, "no ok line for \(path): \(result)")
        }
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test func checkPrintsEveryProblemWithLineColumnAndFieldAndFails() async throws {
        try await ExternalTool.withTemporaryFile(Data(Self.broken.utf8)) { path in
            let happy = ScenarioFiles.path("happy-path")
            let result = try await Self.run(["scenario", "check", path, happy])
            #expect(result.exitCode == 1, "\(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines == Self.expectedProblems(path) + ["\(happy): ok (happy-path: 0 rules, 2 devices)"], "\(result)")
        }
    }

    @Test func checkReportsAYAMLSyntaxErrorAloneWithItsPosition() async throws {
        try await ExternalTool.withTemporaryFile(Data("rules:\n  - name: a\n   bad: [\n".utf8)) { path in
            let result = try await Self.run(["scenario", "check", path])
            #expect(result.exitCode == 1, "\(result)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 1, "\(result)")
            #expect(lines.first?.hasPrefix("\(path):3:") == true && lines.first?.contains(": YAML syntax: ") == true, "\(result)")
        }
    }

    @Test func checkAcceptsTheJSONForm() async throws {
        let json = #"{"name":"json-example","devices":[{"name":"bob","token":"b2b2","topic":"com.example.app","unregisteredAt":"-2d"}],"rules":[{"name":"bob","match":{"device":"bob"},"reason":"Unregistered","timestamp":"unregistered"}]}"#
        try await ExternalTool.withTemporaryFile(Data(json.utf8)) { path in
            let result = try await Self.run(["scenario", "check", path])
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.stdout == "\(path): ok (json-example: 1 rule, 1 device)\n", "\(result)")
        }
    }

    @Test func serveRefusesToStartWithAnInvalidScenario() async throws {
        try await ExternalTool.withTemporaryFile(Data(Self.broken.utf8)) { path in
            let result = try await Self.run([
                "serve", "--scenario", path, "--host", "127.0.0.1", "--port", "0", "--admin-host", "127.0.0.1", "--admin-port", "0", "--channels-port", "0",
                "--certs-dir", TestPaths.certsDirectory,
            ])
            #expect(!result.timedOut, "the server started instead of refusing: \(result)")
            #expect(result.exitCode != 0, "\(result)")
            let output = result.stdout + result.stderr
            #expect(output.contains("the scenario file is not valid"), "\(result)")
            for problem in Self.expectedProblems(path) {
                #expect(output.contains(problem), "missing '\(problem)': \(result)")
            }
        }
    }

    /// The same refusal in-process: `MockServer.start` throws `StartupError.scenario` with the problems.
    @Test func startingWithAnInvalidScenarioThrowsTheProblems() async throws {
        try await ExternalTool.withTemporaryFile(Data(Self.broken.utf8)) { path in
            do {
                _ = try await withTestServer(configure: { $0.scenarioFile = path }) { _ in
                    Issue.record("the server started with an invalid scenario")
                }
            } catch {
                let description = "\(error)"
                #expect(description.hasPrefix("the scenario file is not valid:\n"), "\(description)")
                #expect(description.split(separator: "\n").dropFirst().map(String.init) == Self.expectedProblems(path), "\(description)")
            }
        }
    }
}
