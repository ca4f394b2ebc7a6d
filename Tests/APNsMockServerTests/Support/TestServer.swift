import APNsMock
import APNsMockServer
import APNsMockStores
import Foundation
import Logging

/// Where the repository's files are, found from this file's own path
/// (`Tests/APNsMockServerTests/Support/TestServer.swift`), so tests run from any working directory.
enum TestPaths {
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // APNsMockServerTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the repository

    static var certsDirectory: String { repositoryRoot.appendingPathComponent("Certs").path }
    /// The development CA that signed `Certs/server.pem`: what every client here trusts.
    static var caCertificate: String { certsDirectory + "/ca.pem" }
}

/// Values the provider tests send again and again.
enum TestData {
    static let topic = "com.example.app"
    static let alertPayload = #"{"aps":{"alert":"Hello"}}"#

    /// A fresh 64-hex-digit device token, so a test can find its own recordings by token.
    ///
    /// Never one that a shipped scenario singles out (bad-requests.yaml: a `dead` prefix is BadDeviceToken, a
    /// `0000` ending DeviceTokenNotForTopic): one random token in 32,768 would be, and a run of the suite drew one.
    static func deviceToken() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
            if !token.hasPrefix("dead") && !token.hasSuffix("0000") { return token }
        }
    }

    /// A JSON object of exactly `size` bytes (`size` ≥ 20): `{"aps":{},"pad":"xxx…"}`.
    static func payload(ofSize size: Int) -> String {
        let skeleton = #"{"aps":{},"pad":""}"#
        precondition(size >= skeleton.utf8.count, "payload(ofSize:) needs at least \(skeleton.utf8.count) bytes")
        return #"{"aps":{},"pad":""# + String(repeating: "x", count: size - skeleton.utf8.count) + #""}"#
    }

    /// An 8-4-4-4-12 UUID in upper case, as APNs generates `apns-id`.
    static func isUpperCaseUUID(_ text: String?) -> Bool { isUUID(text, digits: "0123456789ABCDEF") }
    /// An 8-4-4-4-12 UUID in lower case, as APNs generates `apns-unique-id`.
    static func isLowerCaseUUID(_ text: String?) -> Bool { isUUID(text, digits: "0123456789abcdef") }

    private static func isUUID(_ text: String?, digits: String) -> Bool {
        guard let text else { return false }
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.joined().allSatisfy { digits.contains($0) }
    }
}

/// A running mock server for one test: the server itself, where its ports are, and an admin client.
struct TestServer: Sendable {
    let server: MockServer
    let admin: AdminClient

    var providerPort: Int { server.providerPort }
    var adminPort: Int { server.adminPort }
    /// `https://127.0.0.1:<provider port>`; the development server certificate covers the IP address.
    var providerBaseURL: String { "https://127.0.0.1:\(server.providerPort)" }
    var authority: String { "127.0.0.1:\(server.providerPort)" }

    func deviceURL(_ token: String) -> String { providerBaseURL + "/3/device/" + token }
}

/// Starts a mock server on ephemeral ports (provider and admin), runs `body`, and shuts the server down
/// whether `body` returns or throws.
func withTestServer<Result>(
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    var configuration = testServerConfiguration()
    configure(&configuration)
    let server = try await MockServer.start(configuration: configuration, stores: StoreOpener(), logger: Logger(label: "apns-mock-test"))
    let testServer = TestServer(server: server, admin: AdminClient(port: server.adminPort))
    do {
        let result = try await body(testServer)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// The configuration every test server starts from: loopback, ephemeral ports, the repository's certificates.
func testServerConfiguration() -> ServerConfiguration {
    var configuration = ServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.adminHost = "127.0.0.1"
    configuration.adminPort = 0
    configuration.channelsPort = 0
    configuration.certsDirectory = TestPaths.certsDirectory
    configuration.threads = 2
    // Authentication has its own tests; everything else talks to an `--auth none` server (configure to change it).
    configuration.authMode = .none
    // Warnings and errors still show (they would explain a failure); the per-test start-up line does not.
    configuration.logLevel = .warning
    return configuration
}

/// A failure of the test machinery itself (a deadline passed, a tool is missing), with a message saying what.
struct TestFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Polls `condition` until it returns a value or `timeout` passes. For state that has no wait endpoint;
/// the short pause between polls is not a guess at how long anything takes.
func poll<Value>(
    timeout: Duration = .seconds(5),
    _ what: String,
    _ condition: () async throws -> Value?
) async throws -> Value {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while true {
        if let value = try await condition() { return value }
        guard clock.now < deadline else { throw TestFailure("timed out after \(timeout) waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
