import Foundation
import APNsMock
import Logging
import NIOCore

/// How log lines are written.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    /// One JSON object per line, for log collectors.
    case json
}

/// Everything the server needs to run. The defaults let `apns-mock` start with nothing else given:
/// provider on `127.0.0.1:2197` (TLS), admin on `127.0.0.1:8080`, certificates from `Certs/`.
public struct ServerConfiguration: Sendable, Equatable {
    public var host = "127.0.0.1"
    /// The provider port; `0` picks a free one (the start-up log line and `APNsMockServer.providerPort` say which).
    public var port = 2197
    public var adminHost = "127.0.0.1"
    public var adminPort = 8080
    /// The broadcast channel-management port (APNs: 2195 in development, 2196 in production); `0` picks a free one.
    public var channelsPort = 2195
    /// Holds `server.pem` and `server-key.pem` (and, later, the CA and signing keys).
    public var certsDirectory = "Certs"
    /// Overrides `<certsDirectory>/server.pem`.
    public var serverCertificatePath: String?
    /// Overrides `<certsDirectory>/server-key.pem`.
    public var serverPrivateKeyPath: String?
    public var environment: APNsEnvironment = .development
    public var maxRecorded = 100_000
    public var validation = ValidationPolicy()
    public var http2 = HTTP2Settings()
    public var requestLimits = HTTP2RequestLimits()
    /// libnghttp2 limits that can end a connection (the stream-reset rate limit).
    public var sessionLimits = HTTP2SessionLimits()
    /// Event-loop threads for the provider and channel-management ports. Default: one per core the process may
    /// use, counting the cgroup's limit and the affinity mask (see `UsableCores`).
    public var threads: Int = UsableCores.count
    public var logLevel: Logger.Level = .info
    public var authMode: AuthenticationMode = .either
    /// Token keys to trust besides the `AuthKey_<KEYID>.p8` files in `certsDirectory`.
    public var providerKeys: [ProviderKeySpec] = []
    /// The team the `AuthKey_<KEYID>.p8` files in `certsDirectory` belong to.
    public var certsTeamID = "TEAM000001"
    public var acceptUnknownKeys = false
    public var acceptAnyClientCertificate = false
    /// Overrides `<certsDirectory>/ca.pem` as the CA client certificates must chain to.
    public var clientCAPath: String?
    public var tokenClockSkewSeconds: Int64 = 60
    public var environmentKeyReason: Reason = .badEnvironmentKeyInToken
    public var expiredTokenPoisonsConnection = true
    /// The broadcast API's undocumented choices and the channel limit.
    public var broadcast = BroadcastSettings()
    /// Payload warnings on every recording.
    public var lint = true
    /// The YAML file the settings were read from, if any.
    public var configFile: String?
    /// Write every recording here too, as NDJSON.
    public var recordFile: String?
    /// Where recordings are kept (`--store`).
    public var store: RecordingStoreSetting = .memory
    /// This instance's name among replicas sharing a PostgreSQL store (`--replica`); `nil`: the host name and
    /// process id.
    public var replica: String?

    /// `--replica`, or the host name and process id (unique among processes on one host, and readable in a row).
    public var replicaName: String {
        replica ?? "\(ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "apns-mock")-\(ProcessInfo.processInfo.processIdentifier)"
    }
    public var logFormat: LogFormat = .text
    /// When set, admin routes (except health) need `Authorization: Bearer <adminToken>`.
    public var adminToken: String?
    public var shutdownGracePeriod: Duration = .seconds(10)
    /// How long the admin port waits for a request still arriving (a body shorter than its `content-length`), or
    /// for the next request on an idle connection. A `wait` being answered is never cut off.
    public var adminReadTimeout: Duration = .seconds(30)
    /// Timeouts and the connection limit of the provider port.
    public var connectionLimits = ProviderConnectionLimits()
    /// The scenario to start with.
    public var scenarioFile: String?

    public init() {}

    public var resolvedCertificatePath: String { serverCertificatePath ?? certsDirectory + "/server.pem" }
    public var resolvedPrivateKeyPath: String { serverPrivateKeyPath ?? certsDirectory + "/server-key.pem" }
    public var resolvedClientCAPath: String { clientCAPath ?? certsDirectory + "/ca.pem" }

    /// Every trusted token key: the development keys of the certs folder, then the configured ones.
    public func loadProviderKeys() throws(ConfigurationError) -> [ProviderKey] {
        let specs = ProviderKeySpec.developmentKeys(in: certsDirectory, teamID: certsTeamID) + providerKeys
        var keys: [ProviderKey] = []
        for spec in specs { keys.append(try spec.load()) }
        return keys
    }

    /// The authentication rules these settings describe (reads the key files).
    public func makeAuthenticationPolicy() throws(ConfigurationError) -> AuthenticationPolicy {
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
public struct BroadcastSettings: Sendable, Equatable {
    public var maxChannelsPerApp = 10_000
    public var missingStoragePolicyReason: Reason = .missingChannelQueueSize
    public var requireExpiration = false

    public init() {}

    /// The engine's policy for these settings.
    public var policy: BroadcastPolicy {
        BroadcastPolicy(missingStoragePolicyReason: missingStoragePolicyReason, requireExpiration: requireExpiration)
    }
}

/// `--store`: where recordings are kept.
public enum RecordingStoreSetting: Sendable, Equatable {
    /// In memory only (the default): gone when the process ends.
    case memory
    /// Also in a SQLite database, written in batches by a thread of its own; the newest `--max-recorded` are
    /// loaded back at start.
    case sqlite(path: String)

    /// Also in a PostgreSQL database shared by every replica pointed at it: recordings, devices, channels and the
    /// scenario in force are the cluster's.
    case postgres(PostgresStoreAddress)

    /// `memory`, `sqlite:PATH` or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
    public init?(_ text: String) {
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
public struct PostgresStoreAddress: Sendable, Equatable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String

    public init(user: String, password: String? = nil, host: String, port: Int = 5432, database: String) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
    }

    /// Parses the URL form; `nil` when a part is missing or malformed (no user, host or database, a bad port).
    public init?(_ text: String) {
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
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }
}
