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
/// The admin calls (`APNsMockAdministration`) act on the running mock directly, without HTTP; ``adminClient``
/// gives the same calls over HTTP, and `APNsMockAdminClient` drives a mock running elsewhere.
public final class MockAPNs: APNsMockAdministration {
    /// The settings the mock was started with (the ports it listens on are ``providerPort`` and the others).
    public let configuration: Configuration
    /// What those settings made, over the testing defaults.
    let serverConfiguration: ServerConfiguration
    /// The development CA, signing key and client certificates this mock trusts.
    public let credentials: MockCredentials
    /// The host every port listens on (`127.0.0.1` unless configured).
    public var host: String { serverConfiguration.host }
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
    public var adminURL: URL { URL(string: "http://\(Self.urlHost(serverConfiguration.adminHost)):\(adminPort)")! }
    /// The same admin calls over HTTP to this mock (with its admin token), e.g. to check the HTTP path itself.
    public var adminClient: APNsMockAdminClient {
        APNsMockAdminClient(baseURL: adminURL.absoluteString, adminToken: serverConfiguration.adminToken)
    }
    /// The admin calls of one tenant (the `tenants` setting): its recordings, scenario, devices and channels only,
    /// over HTTP with this mock's admin token. The mock's own calls (``notifications(matching:limit:)``, …) see every
    /// tenant's recordings and act on the pushes that name none.
    public func adminClient(tenant: String) -> APNsMockAdminClient {
        APNsMockAdminClient(baseURL: adminURL.absoluteString, adminToken: serverConfiguration.adminToken, tenant: tenant)
    }

    let server: MockServer
    private let temporaryDirectory: URL?
    private let cachedToken = Mutex<(String, Date)?>(nil)

    private init(
        configuration: Configuration, serverConfiguration: ServerConfiguration, credentials: MockCredentials, server: MockServer,
        temporaryDirectory: URL?
    ) {
        self.configuration = configuration
        self.serverConfiguration = serverConfiguration
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

    /// Starts a mock and returns once every port listens. Call ``stop()`` when done (XCTest: `setUp` / `tearDown`).
    ///
    /// - Parameters:
    ///   - configuration: settings over the testing defaults (``Configuration``); none unless given.
    ///   - credentials: ``Credentials/generated`` unless given.
    ///   - logger: where the server logs (a logger labelled `apns-mock` at the configured level unless given).
    /// - Throws: ``MockConfigurationRejected`` for a bad setting, or why the server could not start.
    public static func start(
        _ configuration: Configuration = Configuration(),
        credentials: Credentials = .generated,
        logger: Logger? = nil
    ) async throws -> MockAPNs {
        var server = try configuration.serverConfiguration()
        let temporaryDirectory: URL?
        let material: MockCredentials
        switch credentials {
        case .generated:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-\(UUID().uuidString)")
            material = try MockCredentials.generate(in: directory.path, teamID: server.certsTeamID)
            temporaryDirectory = directory
        case .directory(let path):
            material = try MockCredentials.load(from: path, teamID: server.certsTeamID)
            temporaryDirectory = nil
        }
        server.certsDirectory = material.directory
        server.serverCertificatePath = nil
        server.serverPrivateKeyPath = nil
        server.clientCAPath = nil
        do {
            let running = try await MockServer.start(configuration: server, logger: logger)
            return MockAPNs(
                configuration: configuration, serverConfiguration: server, credentials: material, server: running,
                temporaryDirectory: temporaryDirectory
            )
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
        _ configuration: Configuration = Configuration(),
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
