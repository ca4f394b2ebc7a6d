import APNsMock
import Foundation
import Testing

/// Hostile admin input is refused quickly and costs no memory: a YAML alias bomb and a 10 MB scenario.
@Suite("Admin input limits")
struct AdminInputLimitTests {
    /// 480-odd bytes standing for 9^7 (4.8 million) strings.
    static let aliasBomb: String = {
        var lines = [#"a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]"#]
        for level in 1...6 {
            let previous = "*a\(level - 1)"
            lines.append("a\(level): &a\(level) [" + Array(repeating: previous, count: 9).joined(separator: ",") + "]")
        }
        return lines.joined(separator: "\n") + "\n"
    }()

    /// The resident memory of another process, in kilobytes.
    static func residentKilobytes(of pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Against the binary in a process of its own, so that its memory is its alone (the test process runs the
    /// rest of the suite beside it).
    @Test(.timeLimit(.minutes(1)))
    func anAliasBombIsRefusedAtOnceWithoutGrowingTheProcess() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-bomb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (launched, ports) = try await RecordingPipelineTests.serve([], in: folder)
        defer { launched.cleanUp() }
        let admin = AdminClient(port: ports.admin)
        let pid = launched.pid
        let before = Self.residentKilobytes(of: pid)
        let started = ContinuousClock.now
        let answer = try await admin.call("PUT", "/admin/scenario", body: Self.aliasBomb)
        // Wall time, with the rest of the suite running beside it on two cores: a bound far below the 12-32 s
        // this took unbounded. The CPU it costs is checked against one second below.
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(answer.status == 400, "\(answer.json)")
        let problems = answer.json["problems"]?.array?.compactMap(\.string) ?? []
        #expect(problems.contains { $0.contains("more than 100000 values once its aliases") }, "\(problems)")
        #expect(Self.residentKilobytes(of: pid) - before < 50 * 1024, "RSS grew by more than 50 MB")
        // The scenario in force is still the empty one, and small.
        let snapshot = try await admin.call("GET", "/admin/scenario")
        #expect(snapshot.status == 200 && snapshot.json["rules"]?.array?.isEmpty == true)
    }

    @Test(.timeLimit(.minutes(1)))
    func aTenMegabyteScenarioIsRefusedAtOnce() async throws {
        try await withTestServer { server in
            let huge = "name: big\ndescription: " + String(repeating: "x", count: 10 * 1024 * 1024) + "\n"
            let started = ContinuousClock.now
            let answer = try await server.admin.call("PUT", "/admin/scenario", body: huge)
            // Mostly the upload of 10 MB; far below what reading and parsing it would cost.
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(answer.status == 400, "\(answer.json)")
            #expect(answer.json["problems"]?.array?.first?.string?.contains("the limit is 1048576") == true, "\(answer.json)")
        }
    }

    /// CPU time of this thread: what refusing costs, whatever else the machine is doing.
    static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    @Test func theSameLimitsHoldForScenarioFilesAndNestingDepth() throws {
        let before = Self.threadCPUTime()
        #expect(throws: ScenarioLoadError.self) { try ScenarioLoader.load(text: Self.aliasBomb, source: "bomb.yaml") }
        #expect(Self.threadCPUTime() - before < .seconds(1), "refusing the bomb takes well under a second of CPU")
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        do {
            _ = try ScenarioLoader.load(text: "rules: " + deep, source: "deep.yaml")
            Issue.record("a 100-deep document was accepted")
        } catch {
            #expect(error.description.contains("nests deeper than 64"), "\(error)")
        }
    }
}
