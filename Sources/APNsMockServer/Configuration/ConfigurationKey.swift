import APNsMock
import Foundation
import Logging
import NIOCore

/// A configuration problem, naming where the bad value came from (a flag or an environment variable).
package struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    package var source: String
    package var message: String

    package var description: String { "\(source): \(message)" }

    package init(source: String, message: String) {
        self.source = source
        self.message = message
    }

    /// A problem found before the source is known; `ConfigurationKey.apply` adds it.
    package struct Detail: Error, Equatable {
        package var message: String
        package init(_ message: String) { self.message = message }
    }
}

/// Every setting of `apns-mock serve`, with its flag and `APNS_MOCK_*` environment variable.
///
/// One table serves the CLI, the environment and the README, so the names (a contract users' CI scripts
/// depend on) are written once. Values arrive as text and are parsed here, with one error style for all.
package enum ConfigurationKey: String, CaseIterable, Sendable {
    case host
    case port
    case adminHost = "admin-host"
    case adminPort = "admin-port"
    case channelsPort = "channels-port"
    case certsDir = "certs-dir"
    case serverCert = "server-cert"
    case serverKey = "server-key"
    case environment
    case maxRecorded = "max-recorded"
    case maxPayload = "max-payload"
    case maxVoIPPayload = "max-voip-payload"
    case bodyDiscardLimit = "body-discard-limit"
    case minTokenLength = "min-token-length"
    case maxTokenLength = "max-token-length"
    case missingTopic = "missing-topic"
    case invalidJSON = "invalid-json"
    case topicMismatch = "topic-mismatch"
    case backgroundPriority10 = "background-priority-10"
    case maxConcurrentStreams = "max-concurrent-streams"
    case threads
    case logLevel = "log-level"
    case auth
    case providerKey = "provider-key"
    case certsTeamID = "certs-team-id"
    case acceptUnknownKeys = "accept-unknown-keys"
    case acceptAnyClientCertificate = "accept-any-client-certificate"
    case clientCA = "client-ca"
    case tokenClockSkew = "token-clock-skew"
    case environmentKeyReason = "environment-key-reason"
    case expiredTokenPoisonsConnection = "expired-token-poisons-connection"
    case maxChannels = "max-channels"
    case channelPolicyReason = "channel-policy-reason"
    case broadcastExpirationRequired = "broadcast-expiration-required"
    case lint
    case config
    case recordFile = "record-file"
    case store
    case replica
    case logFormat = "log-format"
    case adminToken = "admin-token"
    case shutdownGracePeriod = "shutdown-grace-period"
    case handshakeTimeout = "handshake-timeout"
    case idleTimeout = "idle-timeout"
    case maxConnections = "max-connections"
    case adminReadTimeout = "admin-read-timeout"
    case scenario
    case storedPerApp = "stored-per-app"
    case maxStorage = "max-storage"
    case backgroundBudget = "background-budget"
    case lowPriorityInterval = "low-priority-interval"
    case recordCredentials = "record-credentials"
    case retention
    case adminTLS = "admin-tls"
    case tenants

    /// `--port`
    package var flag: String { "--" + rawValue }

    /// `APNS_MOCK_PORT`
    package var environmentVariable: String {
        "APNS_MOCK_" + rawValue.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    package var help: String {
        switch self {
        case .host: return "Provider (TLS, HTTP/2) listen address. Default 127.0.0.1."
        case .port: return "Provider port; 0 picks a free port, and makes every port not set otherwise 0 too. Default 2197."
        case .adminHost: return "Admin API listen address. Default 127.0.0.1."
        case .adminPort: return "Admin API port (plain HTTP/1.1); 0 picks a free port. Default 8080."
        case .channelsPort: return "Broadcast channel-management port (TLS, HTTP/2, on --host); 0 picks a free port. Default 2195."
        case .certsDir: return "Folder with server.pem and server-key.pem. Default Certs."
        case .serverCert: return "Server certificate chain (PEM). Default <certs-dir>/server.pem."
        case .serverKey: return "Server private key (PEM). Default <certs-dir>/server-key.pem."
        case .environment: return "development (sends apns-unique-id) or production. Default development."
        case .maxRecorded: return "Recordings kept before the oldest are evicted, and the simulated devices' delivery logs kept in all. Default 100000."
        case .maxPayload: return "Largest payload in bytes; larger gets 413 PayloadTooLarge. Default 4096."
        case .maxVoIPPayload: return "Largest VoIP payload in bytes. Default 5120."
        case .bodyDiscardLimit:
            return "Body bytes read (and discarded) before a too-large request is answered 413 early and reset. Default 16777216."
        case .minTokenLength: return "Fewest hex digits in a device token. Default 64."
        case .maxTokenLength: return "Most hex digits in a device token. Default 200."
        case .missingTopic: return "reject (400 MissingTopic) or accept a request without apns-topic. Default reject."
        case .invalidJSON: return "accept or reject (400 BadRequestPayload) a payload that is not a JSON object. Default accept."
        case .topicMismatch:
            return "reject (400 DeviceTokenNotForTopic) or accept a topic whose suffix does not fit the push type. Default reject."
        case .backgroundPriority10: return "accept or reject (400 BadPriority) background pushes at priority 10. Default accept."
        case .maxConcurrentStreams: return "SETTINGS_MAX_CONCURRENT_STREAMS sent to clients. Default 1000."
        case .threads: return "Event-loop threads of the provider and channel-management ports (the admin API runs on SwiftNIO's shared loops). Default: the number of cores the process may use (its cgroup limit and affinity mask, so taskset and docker --cpus count)."
        case .logLevel: return "trace, debug, info, notice, warning, error or critical. Default info."
        case .auth: return "token, certificate, either (whichever the connection presents) or none. Default either."
        case .providerKey:
            return "A trusted token key: key-id=ID,team-id=TEAM,file=PATH[,environment=development|production][,topics=a|b]. "
                + "Repeatable; separate several with ';' in the environment variable."
        case .certsTeamID: return "Team id for the AuthKey_<KEYID>.p8 files found in the certs folder. Default TEAM000001."
        case .acceptUnknownKeys:
            return "true: accept tokens from unconfigured key ids (signature not checked, recorded as such). Default false."
        case .acceptAnyClientCertificate:
            return "true: accept client certificates that do not chain to the client CA. Default false."
        case .clientCA: return "CA that client certificates must chain to (PEM). Default <certs-dir>/ca.pem."
        case .tokenClockSkew: return "How far (seconds, or 90s, 2m) a token's iat may lie in the future before it is InvalidProviderToken. Default 60."
        case .environmentKeyReason:
            return "BadEnvironmentKeyInToken (what APNs sends) or BadEnvironmentKeyIdInToken (what its docs say). Default the first."
        case .expiredTokenPoisonsConnection:
            return "true: after ExpiredProviderToken the connection keeps rejecting, as APNs does. Default true."
        case .maxChannels: return "Broadcast channels per app and environment; one more gets CannotCreateChannelConfig. Default 10000 (APNs')."
        case .lint: return "on: every recording lists its payload's warnings (never changing an answer); off: none. Default on."
        case .channelPolicyReason:
            return "The reason for a channel create without a valid message-storage-policy (undocumented). Default MissingChannelQueueSize."
        case .broadcastExpirationRequired:
            return "true: a broadcast without apns-expiration gets BadExpirationDate (Apple's table says required; its examples omit it). Default false."
        case .config: return "A YAML file with any of these settings (flag names as keys). Flags and variables win over it."
        case .recordFile: return "Also write every recording to this file as NDJSON, as it happens, and each simulated device's delivery data point as a `{\"delivery\": …}` line. Default none."
        case .store:
            return "Where recordings are kept: memory; sqlite:PATH to keep them across restarts (the newest --max-recorded); or postgres://USER@HOST:PORT/DB, shared by replicas with devices, channels and the scenario. Default memory."
        case .replica: return "This instance's name in recordings shared through a PostgreSQL store. Default the host name and process id."
        case .logFormat: return "text or json (one JSON object per line). Default text."
        case .adminToken:
            return "Require 'Authorization: Bearer <token>' on every admin route except /healthz and /readyz; tenant=NAME:SECRET gives a token that sees and changes only that tenant's data. Repeatable; separate several with ';' in the environment variable. Default none."
        case .shutdownGracePeriod:
            return "How long (seconds, or 10s, 1m) in-flight streams get to finish after SIGTERM/SIGINT before connections close. Default 10."
        case .handshakeTimeout:
            return "How long (seconds, or 10s) a new connection gets to finish TLS and send the HTTP/2 preface before it is closed. Default 10."
        case .idleTimeout:
            return "How long (seconds, or 1h) a connection may send nothing, with no stream waiting for its answer, before GOAWAY {\"reason\":\"IdleTimeout\"} closes it; 0: never. Default 3600."
        case .maxConnections: return "Provider connections open at once; one more is closed at once (and counted). Default 10000."
        case .adminReadTimeout:
            return "How long (seconds, or 30s) the admin port waits for a request that is still arriving, or for the next one, before closing. Default 30."
        case .scenario: return "A scenario file (YAML or JSON) to start with; see Scenarios/. Default none."
        case .storedPerApp:
            return "Pushes a simulated device keeps in storage per app while it cannot take them; a newer one replaces the oldest. Default 1."
        case .maxStorage:
            return "How long (seconds, or 30d) a push without apns-expiration stays stored for a simulated device. Default 30d."
        case .backgroundBudget:
            return "Background pushes a simulated device takes per 24 hours (the rest wait for the next window); none: no budget. Default none."
        case .adminTLS:
            return "true: serve the admin API over TLS (HTTP/1.1) with the server certificate, so its token and recordings are not sent in clear. Default false."
        case .retention:
            return "How long (seconds, or 7d) a recording is kept, in memory and in the store, besides --max-recorded; 0: as long as the count allows. Default 0."
        case .recordCredentials:
            return "redacted: a recorded provider token keeps its header and claims and a fingerprint, never its signature, wherever recordings go; full: the authorization header as sent. Default redacted."
        case .tenants:
            return "off, by-team, by-topic or by-host: give each team its own recordings, scenario, devices, channels and statistics, found from the provider token's team ID or the certificate's team, the topic's bundle ID, or the host name's first label. Default off."
        case .lowPriorityInterval:
            return "Priority-1 pushes to a simulated device wait for the next multiple of this (seconds, or 15m) and arrive together. Default 15m."
        }
    }

    /// The setting a configuration file or the testing module names (a flag's name without dashes; `config`
    /// cannot name itself), or why there is none, with the nearest name.
    package static func named(_ name: String) throws(ConfigurationError.Detail) -> ConfigurationKey {
        guard let key = ConfigurationKey(rawValue: name), key != .config else {
            throw ConfigurationError.Detail(
                "unknown setting; " + NearMiss.suggestion(for: name, among: allCases.filter { $0 != .config }.map(\.rawValue))
            )
        }
        return key
    }

    /// Applies a textual value to a configuration; `source` names the flag or variable for error messages.
    package func apply(_ text: String, to configuration: inout ServerConfiguration, source: String) throws(ConfigurationError) {
        func fail(_ message: String) -> ConfigurationError {
            ConfigurationError(source: source, message: "'\(text)' \(message)")
        }
        func integer(_ range: ClosedRange<Int>, _ what: String) throws(ConfigurationError) -> Int {
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
                throw fail("is not \(what) (\(range.lowerBound)...\(range.upperBound))")
            }
            return value
        }
        /// Whole seconds as a bare number (`10`), or the duration grammar of scenario files (`10s`, `1m30s`, `500ms`).
        func duration(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Duration {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            let milliseconds: Int64
            if let seconds = Int(trimmed) {
                milliseconds = Int64(seconds) * 1000
            } else if case .success(let parsed) = ScenarioTimeSyntax.parseSignedDuration(trimmed) {
                milliseconds = parsed
            } else {
                throw fail("is not a duration: write seconds (10) or a duration (10s, 1m30s, 500ms)")
            }
            guard milliseconds >= Int64(range.lowerBound) * 1000, milliseconds <= Int64(range.upperBound) * 1000 else {
                throw fail("is not between \(range.lowerBound) s and \(range.upperBound) s")
            }
            return .milliseconds(milliseconds)
        }
        func choice<T: RawRepresentable & CaseIterable>(_ type: T.Type) throws(ConfigurationError) -> T where T.RawValue == String {
            guard let value = T(rawValue: text.lowercased()) else {
                throw fail("is not one of: " + T.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return value
        }
        func boolean() throws(ConfigurationError) -> Bool {
            switch text.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw fail("is not true or false")
            }
        }
        func nonEmpty() throws(ConfigurationError) -> String {
            guard !text.isEmpty else { throw ConfigurationError(source: source, message: "must not be empty") }
            return text
        }

        switch self {
        case .host: configuration.host = try nonEmpty()
        case .port: configuration.port = try integer(0...65535, "a port number")
        case .adminHost: configuration.adminHost = try nonEmpty()
        case .adminPort: configuration.adminPort = try integer(0...65535, "a port number")
        case .channelsPort: configuration.channelsPort = try integer(0...65535, "a port number")
        case .certsDir: configuration.certsDirectory = try nonEmpty()
        case .serverCert: configuration.serverCertificatePath = try nonEmpty()
        case .serverKey: configuration.serverPrivateKeyPath = try nonEmpty()
        case .environment: configuration.environment = try choice(APNsEnvironment.self)
        case .maxRecorded: configuration.maxRecorded = try integer(1...100_000_000, "a number of recordings")
        case .maxPayload: configuration.validation.maxPayloadBytes = try integer(1...(1 << 30), "a size in bytes")
        case .maxVoIPPayload: configuration.validation.maxVoIPPayloadBytes = try integer(1...(1 << 30), "a size in bytes")
        case .bodyDiscardLimit: configuration.requestLimits.discardedBodyBound = try integer(1...(1 << 40), "a size in bytes")
        case .minTokenLength: configuration.validation.deviceToken.minimumHexDigits = try integer(2...4096, "a number of hex digits")
        case .maxTokenLength: configuration.validation.deviceToken.maximumHexDigits = try integer(2...4096, "a number of hex digits")
        case .missingTopic:
            switch text.lowercased() {
            case "reject": configuration.validation.requireTopic = true
            case "accept": configuration.validation.requireTopic = false
            default: throw fail("is not one of: reject, accept")
            }
        case .invalidJSON: configuration.validation.invalidPayload = try choice(ValidationPolicy.InvalidPayloadHandling.self)
        case .topicMismatch: configuration.validation.topicMismatch = try choice(ValidationPolicy.TopicMismatchHandling.self)
        case .backgroundPriority10:
            configuration.validation.backgroundPriority10 = try choice(ValidationPolicy.BackgroundPriorityHandling.self)
        case .maxConcurrentStreams:
            configuration.http2.maxConcurrentStreams = UInt32(try integer(1...(1 << 31 - 1), "a number of streams"))
        case .threads: configuration.threads = try integer(1...256, "a number of threads")
        case .logLevel:
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw fail("is not one of: " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            configuration.logLevel = level
        case .auth: configuration.authMode = try choice(AuthenticationMode.self)
        case .providerKey:
            for entry in text.split(separator: ";") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
                do {
                    configuration.providerKeys.append(try ProviderKeySpec(parsing: String(entry)))
                } catch {
                    throw ConfigurationError(source: source, message: "'\(entry)': \(error.message)")
                }
            }
        case .certsTeamID: configuration.certsTeamID = try nonEmpty()
        case .acceptUnknownKeys: configuration.acceptUnknownKeys = try boolean()
        case .acceptAnyClientCertificate: configuration.acceptAnyClientCertificate = try boolean()
        case .clientCA: configuration.clientCAPath = try nonEmpty()
        case .tokenClockSkew: configuration.tokenClockSkewSeconds = try duration(0...86_400).components.seconds
        case .environmentKeyReason:
            switch text {
            case Reason.badEnvironmentKeyInToken.rawValue: configuration.environmentKeyReason = .badEnvironmentKeyInToken
            case Reason.badEnvironmentKeyIdInToken.rawValue: configuration.environmentKeyReason = .badEnvironmentKeyIdInToken
            default: throw fail("is not BadEnvironmentKeyInToken or BadEnvironmentKeyIdInToken")
            }
        case .expiredTokenPoisonsConnection: configuration.expiredTokenPoisonsConnection = try boolean()
        case .maxChannels: configuration.broadcast.maxChannelsPerApp = try integer(1...10_000_000, "a number of channels")
        case .channelPolicyReason:
            guard let reason = Reason(rawValue: text), reason.status == 400 else {
                throw fail("is not an APNs reason answered with 400 (e.g. MissingChannelQueueSize, BadRequestParams)")
            }
            configuration.broadcast.missingStoragePolicyReason = reason
        case .broadcastExpirationRequired: configuration.broadcast.requireExpiration = try boolean()
        case .lint:
            switch text {
            case "on": configuration.lint = true
            case "off": configuration.lint = false
            default: throw fail("is not on or off")
            }
        case .config: configuration.configFile = try nonEmpty()
        case .recordFile: configuration.recordFile = try nonEmpty()
        case .store:
            guard let store = RecordingStoreSetting(text) else {
                throw fail("is not memory, sqlite:PATH (a file the mock creates or reopens) or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
            }
            configuration.store = store
        case .replica:
            let name = try nonEmpty()
            guard name.count <= 200, name.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != ":" }) else {
                throw fail("is not a name of at most 200 ASCII characters without spaces or ':'")
            }
            configuration.replica = name
        case .logFormat: configuration.logFormat = try choice(LogFormat.self)
        case .adminToken:
            var tokens = AdminTokens()
            for entry in text.split(separator: ";") where !entry.trimmingCharacters(in: .whitespaces).isEmpty {
                do throws(AdminTokens.TokenError) {
                    try tokens.add(entry.trimmingCharacters(in: .whitespaces))
                } catch {
                    // Never the value itself: it is a secret.
                    throw ConfigurationError(source: source, message: "an admin token " + error.message)
                }
            }
            guard !tokens.isEmpty else { throw ConfigurationError(source: source, message: "is empty") }
            configuration.adminTokens = tokens
        case .tenants: configuration.tenants = try choice(TenantMode.self)
        case .shutdownGracePeriod:
            configuration.shutdownGracePeriod = try duration(0...3600)
        case .handshakeTimeout: configuration.connectionLimits.handshakeTimeout = try duration(1...3600)
        case .idleTimeout:
            let idle = try duration(0...(30 * 86_400))
            configuration.connectionLimits.idleTimeout = idle == .zero ? nil : idle
        case .maxConnections: configuration.connectionLimits.maxConnections = try integer(1...1_000_000, "a number of connections")
        case .adminReadTimeout: configuration.adminReadTimeout = try duration(1...3600)
        case .scenario: configuration.scenarioFile = try nonEmpty()
        case .storedPerApp: configuration.delivery.storedPerApp = try integer(1...10_000, "a number of pushes")
        case .maxStorage: configuration.delivery.maximumStorage = Int64(try duration(0...(366 * 86_400)).components.seconds) * 1000
        case .backgroundBudget:
            configuration.delivery.backgroundBudget = text.lowercased() == "none" ? nil : try integer(0...1_000_000, "a number of pushes, or none")
        case .recordCredentials: configuration.recordCredentials = try choice(RecordCredentials.self)
        case .adminTLS: configuration.adminTLS = try boolean()
        case .retention:
            let kept = try duration(0...(3660 * 86_400))
            configuration.retention = kept == .zero ? nil : Int64(kept.components.seconds) * 1000 + kept.components.attoseconds / 1_000_000_000_000_000
        case .lowPriorityInterval:
            configuration.delivery.lowPriorityInterval = Int64(try duration(1...86_400).components.seconds) * 1000
        }
    }
}

extension ServerConfiguration {
    /// Builds a configuration: built-in defaults, then the `--config` file, then `APNS_MOCK_*` variables, then
    /// flags (flags win). A provider port of 0 makes every other port that no source names 0 as well, so that
    /// `--port 0` starts an instance that never collides with another on the same host.
    package static func resolve(
        flags: [ConfigurationKey: String],
        environment: [String: String]
    ) throws(ConfigurationError) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        var named = Set(flags.keys)
        if let file = flags[.config] ?? environment[ConfigurationKey.config.environmentVariable] {
            named.formUnion(try ConfigurationFile.apply(path: file, to: &configuration))
        }
        // A flag replaces its variable entirely: a bad variable does not matter when a flag overrides it.
        for key in ConfigurationKey.allCases where flags[key] == nil {
            if let value = environment[key.environmentVariable] {
                try key.apply(value, to: &configuration, source: key.environmentVariable)
                named.insert(key)
            }
        }
        for key in ConfigurationKey.allCases {
            if let value = flags[key] {
                try key.apply(value, to: &configuration, source: key.flag)
            }
        }
        if configuration.port == 0 {
            if !named.contains(.adminPort) { configuration.adminPort = 0 }
            if !named.contains(.channelsPort) { configuration.channelsPort = 0 }
        }
        try configuration.check()
        return configuration
    }

    /// Checks that settings fit together.
    package func check() throws(ConfigurationError) {
        let tokens = validation.deviceToken
        if tokens.minimumHexDigits > tokens.maximumHexDigits {
            throw ConfigurationError(
                source: ConfigurationKey.minTokenLength.flag,
                message: "\(tokens.minimumHexDigits) is more than --max-token-length \(tokens.maximumHexDigits)"
            )
        }
    }
}
