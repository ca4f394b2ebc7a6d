import Foundation
import APNsMock
import Logging
import NIOCore

/// How log lines are written.
package enum LogFormat: String, Sendable, CaseIterable {
    case text
    /// One JSON object per line, for log collectors.
    case json
}

/// Everything the server needs to run. The defaults let `apns-mock` start with nothing else given:
/// provider on `127.0.0.1:2197` (TLS), admin on `127.0.0.1:8080`, certificates from `Certs/`.
package struct ServerConfiguration: Sendable, Equatable {
    package var host = "127.0.0.1"
    /// The provider port; `0` picks a free one (the start-up log line and `APNsMockServer.providerPort` say which).
    package var port = 2197
    package var adminHost = "127.0.0.1"
    package var adminPort = 8080
    /// The broadcast channel-management port (APNs: 2195 in development, 2196 in production); `0` picks a free one.
    package var channelsPort = 2195
    /// Holds `server.pem` and `server-key.pem` (and, later, the CA and signing keys).
    package var certsDirectory = "Certs"
    /// Overrides `<certsDirectory>/server.pem`.
    package var serverCertificatePath: String?
    /// Overrides `<certsDirectory>/server-key.pem`.
    package var serverPrivateKeyPath: String?
    package var environment: APNsEnvironment = .development
    package var maxRecorded = 100_000
    package var validation = ValidationPolicy()
    package var http2 = HTTP2Settings()
    package var requestLimits = HTTP2RequestLimits()
    /// libnghttp2 limits that can end a connection (the stream-reset rate limit).
    package var sessionLimits = HTTP2SessionLimits()
    /// Event-loop threads for the provider and channel-management ports. Default: one per core the process may
    /// use, counting the cgroup's limit and the affinity mask (see `UsableCores`).
    package var threads: Int = UsableCores.count
    package var logLevel: Logger.Level = .info
    package var authMode: AuthenticationMode = .either
    /// Token keys to trust besides the `AuthKey_<KEYID>.p8` files in `certsDirectory`.
    package var providerKeys: [ProviderKeySpec] = []
    /// The team the `AuthKey_<KEYID>.p8` files in `certsDirectory` belong to.
    package var certsTeamID = "TEAM000001"
    package var acceptUnknownKeys = false
    package var acceptAnyClientCertificate = false
    /// Overrides `<certsDirectory>/ca.pem` as the CA client certificates must chain to.
    package var clientCAPath: String?
    package var tokenClockSkewSeconds: Int64 = 60
    package var environmentKeyReason: Reason = .badEnvironmentKeyInToken
    package var expiredTokenPoisonsConnection = true
    /// The broadcast API's undocumented choices and the channel limit.
    package var broadcast = BroadcastSettings()
    /// The simulated devices' store-and-forward settings.
    package var delivery = DeliveryPolicy()
    /// `delivery` with the devices' logs bounded in all by `maxRecorded`: a log is kept about as long as its
    /// recording.
    package var devicePolicy: DeliveryPolicy {
        var policy = delivery
        policy.recordsInAll = maxRecorded
        return policy
    }
    /// What recordings keep of provider tokens (`--record-credentials`).
    package var recordCredentials = RecordCredentials.redacted
    /// The admin API over TLS with the server certificate (`--admin-tls`).
    package var adminTLS = false
    /// How long a recording is kept, in milliseconds (`--retention`); `nil`: as long as `maxRecorded` allows.
    package var retention: Int64?
    /// Payload warnings on every recording.
    package var lint = true
    /// The YAML file the settings were read from, if any.
    package var configFile: String?
    /// Write every recording here too, as NDJSON.
    package var recordFile: String?
    /// Where recordings are kept (`--store`).
    package var store: RecordingStoreSetting = .memory
    /// This instance's name among replicas sharing a PostgreSQL store (`--replica`); `nil`: the host name and
    /// process id.
    package var replica: String?

    /// `--replica`, or the host name and process id (unique among processes on one host, and readable in a row).
    package var replicaName: String {
        replica ?? "\(ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "apns-mock")-\(ProcessInfo.processInfo.processIdentifier)"
    }
    package var logFormat: LogFormat = .text
    /// The admin API's tokens: with any, admin routes (except health) need `Authorization: Bearer <token>`.
    package var adminTokens = AdminTokens()
    /// The unscoped admin token (`--admin-token SECRET`), which sees and changes every tenant.
    package var adminToken: String? {
        get { adminTokens.unscoped }
        set { adminTokens.unscoped = newValue }
    }
    /// How the mock tells teams apart (`--tenants`).
    package var tenants: TenantMode = .off
    package var shutdownGracePeriod: Duration = .seconds(10)
    /// How long the admin port waits for a request still arriving (a body shorter than its `content-length`), or
    /// for the next request on an idle connection. A `wait` being answered is never cut off.
    package var adminReadTimeout: Duration = .seconds(30)
    /// Timeouts and the connection limit of the provider port.
    package var connectionLimits = ProviderConnectionLimits()
    /// The scenario to start with.
    package var scenarioFile: String?

    package init() {}

    package var resolvedCertificatePath: String { serverCertificatePath ?? certsDirectory + "/server.pem" }
    package var resolvedPrivateKeyPath: String { serverPrivateKeyPath ?? certsDirectory + "/server-key.pem" }
    package var resolvedClientCAPath: String { clientCAPath ?? certsDirectory + "/ca.pem" }

    /// Every trusted token key: the development keys of the certs folder, then the configured ones.
    package func loadProviderKeys() throws(ConfigurationError) -> [ProviderKey] {
        let specs = ProviderKeySpec.developmentKeys(in: certsDirectory, teamID: certsTeamID) + providerKeys
        var keys: [ProviderKey] = []
        for spec in specs { keys.append(try spec.load()) }
        return keys
    }

    /// The authentication rules these settings describe (reads the key files).
    package func makeAuthenticationPolicy() throws(ConfigurationError) -> AuthenticationPolicy {
        AuthenticationPolicy(
            mode: authMode,
            verifier: ProviderTokenVerifier(keys: try loadProviderKeys(), acceptUnknownKeys: acceptUnknownKeys),
            clockSkewSeconds: tokenClockSkewSeconds,
            environmentKeyReason: environmentKeyReason,
            expiredTokenPoisonsConnection: expiredTokenPoisonsConnection
        )
    }
}

/// The broadcast API's settings: `BroadcastPolicy`'s choices and the channel registry's limit.
package struct BroadcastSettings: Sendable, Equatable {
    package var maxChannelsPerApp = 10_000
    package var missingStoragePolicyReason: Reason = .missingChannelQueueSize
    package var requireExpiration = false

    package init() {}

    /// The engine's policy for these settings.
    package var policy: BroadcastPolicy {
        BroadcastPolicy(missingStoragePolicyReason: missingStoragePolicyReason, requireExpiration: requireExpiration)
    }
}

/// `--store`: where recordings are kept.
package enum RecordingStoreSetting: Sendable, Equatable {
    /// In memory only (the default): gone when the process ends.
    case memory
    /// Also in a SQLite database, written in batches by a thread of its own; the newest `--max-recorded` are
    /// loaded back at start.
    case sqlite(path: String)

    /// Also in a PostgreSQL database shared by every replica pointed at it: recordings, devices, channels and the
    /// scenario in force are the cluster's.
    case postgres(PostgresStoreAddress)

    /// `memory`, `sqlite:PATH` or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
    package init?(_ text: String) {
        if text == "memory" {
            self = .memory
        } else if text.hasPrefix("sqlite:"), text.count > "sqlite:".count {
            self = .sqlite(path: String(text.dropFirst("sqlite:".count)))
        } else if let address = PostgresStoreAddress(text) {
            self = .postgres(address)
        } else {
            return nil
        }
    }
}

/// `--store postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (`postgresql://` too), as libpq spells it.
package struct PostgresStoreAddress: Sendable, Equatable, CustomStringConvertible {
    package var user: String
    package var password: String?
    package var host: String
    package var port: Int
    package var database: String

    package init(user: String, password: String? = nil, host: String, port: Int = 5432, database: String) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses the URL form; `nil` when a part is missing or malformed (no user, host or database, a bad port).
    package init?(_ text: String) {
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"),
            let components = URLComponents(string: text),
            let user = components.user, !user.isEmpty,
            let host = components.host, !host.isEmpty
        else { return nil }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { return nil }
        if let port = components.port, !(1...65535).contains(port) { return nil }
        self.init(
            user: user.removingPercentEncoding ?? user,
            password: components.password.map { $0.removingPercentEncoding ?? $0 },
            host: host,
            port: components.port ?? 5432,
            database: database.removingPercentEncoding ?? database
        )
    }

    /// The address without its password, for logs and `/admin/stats`.
    package var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
