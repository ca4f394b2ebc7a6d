@_exported import APNsMockAdminClient
import APNsMockServer
import Foundation
import Logging
import Synchronization

/// apns-mock inside a test process: the provider port (HTTP/2 + TLS), the broadcast channel port and the admin
/// API on free loopback ports, with fresh development credentials, and typed access to what it received.
///
/// ```swift
/// try await MockAPNs.withRunningServer { mock in
///     // point the provider at mock.providerURL, trusting mock.credentials.caCertificatePEM,
///     // with mock.providerToken() as its bearer token
///     let pushes = try await mock.waitForNotifications(count: 1, matching: .init(deviceToken: token))
///     #expect(pushes[0].status == 200)
/// }
/// ```
///
/// The admin calls (``APNsMockAdministration``) act on the running mock directly, without HTTP; ``adminClient``
/// gives the same calls over HTTP, and ``APNsMockAdminClient`` drives a mock running elsewhere.
public final class MockAPNs: APNsMockAdministration {
    /// The configuration the mock runs with (the ports as asked, `0` for a free one; see ``providerPort``).
    public let configuration: ServerConfiguration
    /// The development CA, signing key and client certificates this mock trusts.
    public let credentials: MockCredentials
    /// The host every port listens on (`127.0.0.1` unless configured).
    public var host: String { configuration.host }
    /// The provider port: HTTP/2 over TLS, Apple's provider API.
    public var providerPort: Int { server.providerPort }
    /// The broadcast channel-management port.
    public var channelsPort: Int { server.channelsPort }
    /// The admin API's port (HTTP/1.1).
    public var adminPort: Int { server.adminPort }
    /// `https://127.0.0.1:<provider port>`: what a provider sends pushes to (the server certificate covers it).
    public var providerURL: URL { URL(string: "https://\(Self.urlHost(host)):\(providerPort)")! }
    /// `https://127.0.0.1:<channels port>`.
    public var channelsURL: URL { URL(string: "https://\(Self.urlHost(host)):\(channelsPort)")! }
    /// `http://127.0.0.1:<admin port>`.
    public var adminURL: URL { URL(string: "http://\(Self.urlHost(configuration.adminHost)):\(adminPort)")! }
    /// The same admin calls over HTTP to this mock (with its admin token), e.g. to check the HTTP path itself.
    public var adminClient: APNsMockAdminClient {
        APNsMockAdminClient(baseURL: adminURL.absoluteString, adminToken: configuration.adminToken)
    }

    let server: MockServer
    private let temporaryDirectory: URL?
    private let cachedToken = Mutex<(String, Date)?>(nil)

    private init(configuration: ServerConfiguration, credentials: MockCredentials, server: MockServer, temporaryDirectory: URL?) {
        self.configuration = configuration
        self.credentials = credentials
        self.server = server
        self.temporaryDirectory = temporaryDirectory
    }

    /// Where the mock's TLS and signing credentials come from.
    public enum Credentials: Sendable {
        /// A fresh development set for this mock (CA, server and client certificates, signing key) in a temporary
        /// directory, removed at ``stop()``. Clients must trust ``MockCredentials/caCertificatePEM``.
        case generated
        /// A directory laid out as `Certs/` (or `apns-mock certs generate --out DIR`): for a CA the tests already trust.
        case directory(String)
    }

    /// The configuration the testing module starts from: loopback, free ports (`0`), one event loop thread,
    /// warnings and errors logged only. Everything else is the CLI's default (token or certificate auth,
    /// development environment, validation and payload warnings on).
    public static var testingConfiguration: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.channelsPort = 0
        configuration.adminHost = "127.0.0.1"
        configuration.adminPort = 0
        configuration.threads = 1
        configuration.logLevel = .warning
        configuration.shutdownGracePeriod = .seconds(2)
        return configuration
    }

    /// Starts a mock and returns once every port listens. Call ``stop()`` when done (XCTest: `setUp` / `tearDown`).
    ///
    /// - Parameters:
    ///   - configuration: as the CLI fills it; ``testingConfiguration`` unless given. Its certificate settings are
    ///     replaced by `credentials`.
    ///   - credentials: ``Credentials/generated`` unless given.
    ///   - logger: where the server logs (a logger labelled `apns-mock` at `configuration.logLevel` unless given).
    public static func start(
        _ configuration: ServerConfiguration = testingConfiguration,
        credentials: Credentials = .generated,
        logger: Logger? = nil
    ) async throws -> MockAPNs {
        var configuration = configuration
        let temporaryDirectory: URL?
        let material: MockCredentials
        switch credentials {
        case .generated:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-\(UUID().uuidString)")
            material = try MockCredentials.generate(in: directory.path, teamID: configuration.certsTeamID)
            temporaryDirectory = directory
        case .directory(let path):
            material = try MockCredentials.load(from: path, teamID: configuration.certsTeamID)
            temporaryDirectory = nil
        }
        configuration.certsDirectory = material.directory
        configuration.serverCertificatePath = nil
        configuration.serverPrivateKeyPath = nil
        configuration.clientCAPath = nil
        do {
            let server = try await MockServer.start(configuration: configuration, logger: logger)
            return MockAPNs(configuration: configuration, credentials: material, server: server, temporaryDirectory: temporaryDirectory)
        } catch {
            if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
            throw error
        }
    }

    /// Stops gracefully (open connections get GOAWAY and their streams in flight are answered, for at most the
    /// configuration's grace period) and removes generated credentials. Calling it again does nothing.
    public func stop() async {
        await server.shutdown()
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// Starts a mock, runs `body` with it, and stops it whether `body` returns or throws.
    public static func withRunningServer<Result>(
        _ configuration: ServerConfiguration = testingConfiguration,
        credentials: Credentials = .generated,
        logger: Logger? = nil,
        _ body: (MockAPNs) async throws -> Result
    ) async throws -> Result {
        let mock = try await start(configuration, credentials: credentials, logger: logger)
        do {
            let result = try await body(mock)
            await mock.stop()
            return result
        } catch {
            await mock.stop()
            throw error
        }
    }

    /// A provider token (JWT, ES256) signed with the mock's development key, for `authorization: bearer …`.
    ///
    /// The same token on every call for 40 minutes, as a provider must reuse it: like APNs, the mock answers
    /// `429 TooManyProviderTokenUpdates` when a connection changes its token more often than every 20 minutes,
    /// and `403 ExpiredProviderToken` for one older than an hour.
    public func providerToken() throws -> String {
        let now = Date()
        if let (token, issuedAt) = cachedToken.withLock({ $0 }), now.timeIntervalSince(issuedAt) < 40 * 60 {
            return token
        }
        let token = try credentials.providerToken(issuedAt: now)
        cachedToken.withLock { $0 = (token, now) }
        return token
    }

    /// A new provider token with this `iat` (e.g. two hours ago, to see `ExpiredProviderToken`).
    public func providerToken(issuedAt: Date) throws -> String {
        try credentials.providerToken(issuedAt: issuedAt)
    }

    private static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}
