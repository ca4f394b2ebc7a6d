import Foundation
import Testing

/// The fuzz targets' committed seeds (`Tests/Fuzz/TARGET`) replayed through a normal build of `apns-mock-fuzz`
/// on every test run, so a parser change that breaks on one of them fails here, not only under `scripts/fuzz`.
@Suite("Fuzz seeds replay")
struct FuzzCorpusTests {
    static let targets = ["jwt", "payload", "json-path", "scenario", "admin-query", "client-certificate", "request"]

    @Test(arguments: targets)
    func everySeedRunsToTheEnd(target: String) async throws {
        let seeds = TestPaths.repositoryRoot.appendingPathComponent("Tests/Fuzz/\(target)")
        let count = try FileManager.default.contentsOfDirectory(atPath: seeds.path).count
        #expect(count > 0, "no seeds for \(target)")
        let result = try await ExternalTool.run(try Self.replayer(), [target, seeds.path], timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("\(target): \(count) inputs ran"), "\(result)")
    }

    @Test func anUnknownTargetIsAClearError() async throws {
        let result = try await ExternalTool.run(try Self.replayer(), ["jwtt", "/dev/null"], timeout: .seconds(30))
        #expect(result.exitCode == 2 && result.stderr.contains("usage: apns-mock-fuzz jwt|payload"), "\(result)")
    }

    static func replayer() throws -> String {
        let server = try ContainerFilesTests.builtBinary()
        let path = URL(fileURLWithPath: server).deletingLastPathComponent().appendingPathComponent("apns-mock-fuzz").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestFailure("no built apns-mock-fuzz at \(path); run `swift build --product apns-mock-fuzz` first")
        }
        return path
    }
}
