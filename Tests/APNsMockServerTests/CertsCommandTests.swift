import Foundation
import Testing

/// `apns-mock certs server` and `certs client --team-id`, run as a user runs them, checked with openssl.
@Suite("apns-mock certs")
struct CertsCommandTests {
    static func run(_ arguments: [String]) async throws -> ToolResult {
        try await ExternalTool.run(try ContainerFilesTests.builtBinary(), arguments, timeout: .seconds(60))
    }

    @Test func aServerCertificateForYourOwnNamesChainsToTheDevelopmentCA() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-certs-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try await Self.run(["certs", "server", "--dns", "*.apns.example.com", "--out", folder, "--certs-dir", TestPaths.certsDirectory])
        #expect(made.exitCode == 0, "\(made)")
        let verified = try await ExternalTool.run("openssl", [
            "verify", "-CAfile", TestPaths.caCertificate, "-verify_hostname", "team-a.apns.example.com", folder + "/server.pem",
        ])
        #expect(verified.exitCode == 0 && verified.stdout.contains("OK"), "\(verified)")
        let names = try await ExternalTool.run("openssl", ["x509", "-in", folder + "/server.pem", "-noout", "-ext", "subjectAltName"])
        #expect(names.stdout.contains("DNS:api.sandbox.push.apple.com") && names.stdout.contains("DNS:*.apns.localhost"), "\(names)")
    }

    @Test func aClientCertificatesTeamIsItsSubjectsOU() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-certs-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let made = try await Self.run([
            "certs", "client", "--topic", "com.teamb.app", "--team-id", "TEAM000002", "--name", "team-b", "--out", folder,
            "--certs-dir", TestPaths.certsDirectory,
        ])
        #expect(made.exitCode == 0, "\(made)")
        let subject = try await ExternalTool.run("openssl", ["x509", "-in", folder + "/team-b.pem", "-noout", "-subject"])
        #expect(subject.stdout.contains("OU = TEAM000002") || subject.stdout.contains("OU=TEAM000002"), "\(subject)")
    }
}
