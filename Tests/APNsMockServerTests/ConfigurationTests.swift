import Foundation
import APNsMock
import APNsMockServer
import Logging
import Testing

private func resolve(
    flags: [ConfigurationKey: String] = [:],
    environment: [String: String] = [:]
) throws(ConfigurationError) -> ServerConfiguration {
    try ServerConfiguration.resolve(flags: flags, environment: environment)
}

private func resolveError(
    flags: [ConfigurationKey: String] = [:],
    environment: [String: String] = [:]
) -> ConfigurationError? {
    do {
        _ = try resolve(flags: flags, environment: environment)
        return nil
    } catch {
        return error
    }
}

/// A value each key must refuse, with the reason it is bad.
private let badValues: [(ConfigurationKey, String)] = [
    (.store, "sqlite:"),
    (.store, "postgres"),
    (.store, "postgres://localhost/apns"),
    (.store, "postgres://mock@localhost:99999/apns"),
    (.store, "postgres://mock@localhost:5432/"),
    (.replica, "a b"), (.replica, "a:b"),
    (.port, "abc"), (.port, "65536"), (.port, "-1"), (.port, "80.5"),
    (.adminPort, "http"), (.adminPort, "70000"),
    (.environment, "staging"),
    (.maxRecorded, "0"), (.maxRecorded, "many"),
    (.maxPayload, "0"), (.maxPayload, "4k"),
    (.maxVoIPPayload, "-5120"), (.maxVoIPPayload, "big"),
    (.bodyDiscardLimit, "0"),
    (.minTokenLength, "1"), (.minTokenLength, "sixty-four"),
    (.maxTokenLength, "4097"),
    (.missingTopic, "maybe"),
    (.invalidJSON, "yes"),
    (.topicMismatch, "ignore"),
    (.backgroundPriority10, "sometimes"),
    (.maxConcurrentStreams, "0"), (.maxConcurrentStreams, "2147483648"),
    (.threads, "0"), (.threads, "257"),
    (.logLevel, "verbose"),
    (.auth, "jwt"),
    (.providerKey, "garbage"),
    (.acceptUnknownKeys, "maybe"),
    (.acceptAnyClientCertificate, "2"),
    (.tokenClockSkew, "-1"), (.tokenClockSkew, "86401"), (.tokenClockSkew, "2x"), (.tokenClockSkew, "-5s"),
    (.shutdownGracePeriod, "soon"), (.shutdownGracePeriod, "2h"),
    (.environmentKeyReason, "badEnvironmentKeyInToken"),
    (.expiredTokenPoisonsConnection, "perhaps"),
    (.maxChannels, "0"), (.maxChannels, "lots"),
    (.channelPolicyReason, "Unregistered"), (.channelPolicyReason, "NoSuchReason"),
    (.broadcastExpirationRequired, "sometimes"),
    (.lint, "true"),
]

@Suite("Configuration")
struct ConfigurationTests {
    // MARK: Defaults

    @Test func durationsTakeSecondsOrTheScenarioGrammar() throws {
        let configuration = try ServerConfiguration.resolve(
            flags: [.shutdownGracePeriod: "1m30s", .tokenClockSkew: "2m"], environment: [:]
        )
        #expect(configuration.shutdownGracePeriod == .seconds(90))
        #expect(configuration.tokenClockSkewSeconds == 120)
        let bare = try ServerConfiguration.resolve(flags: [.shutdownGracePeriod: "7"], environment: ["APNS_MOCK_TOKEN_CLOCK_SKEW": "2500ms"])
        #expect(bare.shutdownGracePeriod == .seconds(7))
        #expect(bare.tokenClockSkewSeconds == 2)
    }

    @Test func listensOnLoopbackPort2197ByDefault() throws {
        let configuration = try resolve()
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 2197)
    }

    @Test func servesAdminOnLoopbackPort8080ByDefault() throws {
        let configuration = try resolve()
        #expect(configuration.adminHost == "127.0.0.1")
        #expect(configuration.adminPort == 8080)
    }

    /// `--port 0` puts every port no source names on a free one, so two such instances never collide; a port that
    /// is named, by a flag, a variable or the file, stays as named.
    @Test func portZeroMakesTheUnnamedPortsZero() throws {
        let bare = try resolve(flags: [.port: "0"])
        #expect((bare.port, bare.adminPort, bare.channelsPort) == (0, 0, 0))
        let byVariable = try resolve(environment: ["APNS_MOCK_PORT": "0", "APNS_MOCK_ADMIN_PORT": "9090"])
        #expect((byVariable.adminPort, byVariable.channelsPort) == (9090, 0))
        let byFlag = try resolve(flags: [.port: "0", .channelsPort: "2295"])
        #expect((byFlag.adminPort, byFlag.channelsPort) == (0, 2295))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-ports-\(UUID().uuidString).yaml")
        try "port: 0\nadmin-port: 8181\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let byFile = try resolve(flags: [.config: file.path])
        #expect((byFile.port, byFile.adminPort, byFile.channelsPort) == (0, 8181, 0))
        let fixed = try resolve(flags: [.port: "2297"])
        #expect((fixed.adminPort, fixed.channelsPort) == (8080, 2195))
    }

    @Test func readsCertificatesFromCertsByDefault() throws {
        let configuration = try resolve()
        #expect(configuration.certsDirectory == "Certs")
        #expect(configuration.resolvedCertificatePath == "Certs/server.pem")
        #expect(configuration.resolvedPrivateKeyPath == "Certs/server-key.pem")
    }

    @Test func actsAsDevelopmentEnvironmentByDefault() throws {
        #expect(try resolve().environment == .development)
    }

    @Test func keeps100000RecordingsByDefault() throws {
        #expect(try resolve().maxRecorded == 100_000)
    }

    @Test func usesAppleLimitsAndDefaultPolicyByDefault() throws {
        let validation = try resolve().validation
        #expect(validation == ValidationPolicy())
        #expect(validation.maxPayloadBytes == 4096)
        #expect(validation.maxVoIPPayloadBytes == 5120)
        #expect(validation.deviceToken == DeviceTokenRules(minimumHexDigits: 64, maximumHexDigits: 200))
        #expect(validation.requireTopic)
    }

    @Test func logsAtInfoByDefault() throws {
        #expect(try resolve().logLevel == .info)
    }

    // MARK: Names

    @Test func namesEnvironmentVariablesWithTheAPNS_MOCK_Prefix() {
        let expected: [ConfigurationKey: String] = [
            .host: "APNS_MOCK_HOST", .port: "APNS_MOCK_PORT", .adminHost: "APNS_MOCK_ADMIN_HOST",
            .adminPort: "APNS_MOCK_ADMIN_PORT", .channelsPort: "APNS_MOCK_CHANNELS_PORT", .certsDir: "APNS_MOCK_CERTS_DIR", .serverCert: "APNS_MOCK_SERVER_CERT",
            .serverKey: "APNS_MOCK_SERVER_KEY", .environment: "APNS_MOCK_ENVIRONMENT",
            .maxRecorded: "APNS_MOCK_MAX_RECORDED", .maxPayload: "APNS_MOCK_MAX_PAYLOAD",
            .maxVoIPPayload: "APNS_MOCK_MAX_VOIP_PAYLOAD", .bodyDiscardLimit: "APNS_MOCK_BODY_DISCARD_LIMIT",
            .minTokenLength: "APNS_MOCK_MIN_TOKEN_LENGTH", .maxTokenLength: "APNS_MOCK_MAX_TOKEN_LENGTH",
            .missingTopic: "APNS_MOCK_MISSING_TOPIC", .invalidJSON: "APNS_MOCK_INVALID_JSON",
            .topicMismatch: "APNS_MOCK_TOPIC_MISMATCH", .backgroundPriority10: "APNS_MOCK_BACKGROUND_PRIORITY_10",
            .maxConcurrentStreams: "APNS_MOCK_MAX_CONCURRENT_STREAMS", .threads: "APNS_MOCK_THREADS",
            .logLevel: "APNS_MOCK_LOG_LEVEL", .auth: "APNS_MOCK_AUTH", .providerKey: "APNS_MOCK_PROVIDER_KEY",
            .certsTeamID: "APNS_MOCK_CERTS_TEAM_ID", .acceptUnknownKeys: "APNS_MOCK_ACCEPT_UNKNOWN_KEYS",
            .acceptAnyClientCertificate: "APNS_MOCK_ACCEPT_ANY_CLIENT_CERTIFICATE", .clientCA: "APNS_MOCK_CLIENT_CA",
            .tokenClockSkew: "APNS_MOCK_TOKEN_CLOCK_SKEW", .environmentKeyReason: "APNS_MOCK_ENVIRONMENT_KEY_REASON",
            .expiredTokenPoisonsConnection: "APNS_MOCK_EXPIRED_TOKEN_POISONS_CONNECTION",
            .maxChannels: "APNS_MOCK_MAX_CHANNELS", .channelPolicyReason: "APNS_MOCK_CHANNEL_POLICY_REASON",
            .broadcastExpirationRequired: "APNS_MOCK_BROADCAST_EXPIRATION_REQUIRED", .lint: "APNS_MOCK_LINT",
            .config: "APNS_MOCK_CONFIG", .recordFile: "APNS_MOCK_RECORD_FILE", .store: "APNS_MOCK_STORE", .replica: "APNS_MOCK_REPLICA", .logFormat: "APNS_MOCK_LOG_FORMAT",
            .adminToken: "APNS_MOCK_ADMIN_TOKEN", .shutdownGracePeriod: "APNS_MOCK_SHUTDOWN_GRACE_PERIOD",
            .handshakeTimeout: "APNS_MOCK_HANDSHAKE_TIMEOUT", .idleTimeout: "APNS_MOCK_IDLE_TIMEOUT",
            .maxConnections: "APNS_MOCK_MAX_CONNECTIONS", .adminReadTimeout: "APNS_MOCK_ADMIN_READ_TIMEOUT",
            .scenario: "APNS_MOCK_SCENARIO", .storedPerApp: "APNS_MOCK_STORED_PER_APP", .maxStorage: "APNS_MOCK_MAX_STORAGE",
            .backgroundBudget: "APNS_MOCK_BACKGROUND_BUDGET", .lowPriorityInterval: "APNS_MOCK_LOW_PRIORITY_INTERVAL",
            .recordCredentials: "APNS_MOCK_RECORD_CREDENTIALS", .retention: "APNS_MOCK_RETENTION", .adminTLS: "APNS_MOCK_ADMIN_TLS", .tenants: "APNS_MOCK_TENANTS",
        ]
        #expect(Set(expected.keys) == Set(ConfigurationKey.allCases))
        for key in ConfigurationKey.allCases {
            #expect(key.environmentVariable == expected[key], "\(key)")
        }
    }

    @Test func namesFlagsAfterTheKey() {
        #expect(ConfigurationKey.port.flag == "--port")
        #expect(ConfigurationKey.adminPort.flag == "--admin-port")
        #expect(ConfigurationKey.maxVoIPPayload.flag == "--max-voip-payload")
        #expect(ConfigurationKey.backgroundPriority10.flag == "--background-priority-10")
    }

    // MARK: Environment variables

    @Test func appliesEveryEnvironmentVariable() throws {
        let configuration = try resolve(environment: [
            "APNS_MOCK_HOST": "0.0.0.0",
            "APNS_MOCK_PORT": "2443",
            "APNS_MOCK_ADMIN_HOST": "::1",
            "APNS_MOCK_ADMIN_PORT": "9090",
            "APNS_MOCK_CERTS_DIR": "/tmp/certs",
            "APNS_MOCK_SERVER_CERT": "/tmp/chain.pem",
            "APNS_MOCK_SERVER_KEY": "/tmp/key.pem",
            "APNS_MOCK_ENVIRONMENT": "production",
            "APNS_MOCK_MAX_RECORDED": "500",
            "APNS_MOCK_MAX_PAYLOAD": "2048",
            "APNS_MOCK_MAX_VOIP_PAYLOAD": "6000",
            "APNS_MOCK_BODY_DISCARD_LIMIT": "1048576",
            "APNS_MOCK_MIN_TOKEN_LENGTH": "32",
            "APNS_MOCK_MAX_TOKEN_LENGTH": "256",
            "APNS_MOCK_MISSING_TOPIC": "accept",
            "APNS_MOCK_INVALID_JSON": "reject",
            "APNS_MOCK_TOPIC_MISMATCH": "accept",
            "APNS_MOCK_BACKGROUND_PRIORITY_10": "reject",
            "APNS_MOCK_MAX_CONCURRENT_STREAMS": "50",
            "APNS_MOCK_THREADS": "3",
            "APNS_MOCK_LOG_LEVEL": "debug",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 2443)
        #expect(configuration.adminHost == "::1")
        #expect(configuration.adminPort == 9090)
        #expect(configuration.certsDirectory == "/tmp/certs")
        #expect(configuration.resolvedCertificatePath == "/tmp/chain.pem")
        #expect(configuration.resolvedPrivateKeyPath == "/tmp/key.pem")
        #expect(configuration.environment == .production)
        #expect(configuration.maxRecorded == 500)
        #expect(configuration.validation.maxPayloadBytes == 2048)
        #expect(configuration.validation.maxVoIPPayloadBytes == 6000)
        #expect(configuration.requestLimits.discardedBodyBound == 1_048_576)
        #expect(configuration.validation.deviceToken == DeviceTokenRules(minimumHexDigits: 32, maximumHexDigits: 256))
        #expect(configuration.validation.requireTopic == false)
        #expect(configuration.validation.invalidPayload == .reject)
        #expect(configuration.validation.topicMismatch == .accept)
        #expect(configuration.validation.backgroundPriority10 == .reject)
        #expect(configuration.http2.maxConcurrentStreams == 50)
        #expect(configuration.threads == 3)
        #expect(configuration.logLevel == .debug)
    }

    @Test func derivesCertificatePathsFromCertsDirectory() throws {
        let configuration = try resolve(environment: ["APNS_MOCK_CERTS_DIR": "/etc/apns"])
        #expect(configuration.resolvedCertificatePath == "/etc/apns/server.pem")
        #expect(configuration.resolvedPrivateKeyPath == "/etc/apns/server-key.pem")
    }

    @Test func ignoresVariablesWithoutThePrefix() throws {
        let configuration = try resolve(environment: ["PORT": "1", "APNS_PORT": "2", "apns_mock_port": "3"])
        #expect(configuration.port == 2197)
    }

    @Test func acceptsChoicesInAnyCase() throws {
        let configuration = try resolve(environment: [
            "APNS_MOCK_ENVIRONMENT": "PRODUCTION", "APNS_MOCK_MISSING_TOPIC": "Accept", "APNS_MOCK_LOG_LEVEL": "TRACE",
        ])
        #expect(configuration.environment == .production)
        #expect(configuration.validation.requireTopic == false)
        #expect(configuration.logLevel == .trace)
    }

    @Test func acceptsPortZeroToPickAFreePort() throws {
        let configuration = try resolve(flags: [.port: "0", .adminPort: "0"])
        #expect(configuration.port == 0)
        #expect(configuration.adminPort == 0)
    }

    // MARK: Flags

    @Test func appliesFlags() throws {
        let configuration = try resolve(flags: [.port: "3000", .maxVoIPPayload: "8192", .missingTopic: "accept"])
        #expect(configuration.port == 3000)
        #expect(configuration.validation.maxVoIPPayloadBytes == 8192)
        #expect(configuration.validation.requireTopic == false)
    }

    @Test func flagsBeatEnvironmentVariables() throws {
        let configuration = try resolve(
            flags: [.port: "3000", .environment: "development"],
            environment: ["APNS_MOCK_PORT": "4000", "APNS_MOCK_ENVIRONMENT": "production"]
        )
        #expect(configuration.port == 3000)
        #expect(configuration.environment == .development)
    }

    @Test func keepsEnvironmentVariablesNoFlagOverrides() throws {
        let configuration = try resolve(flags: [.port: "3000"], environment: ["APNS_MOCK_ADMIN_PORT": "4000"])
        #expect(configuration.port == 3000)
        #expect(configuration.adminPort == 4000)
    }

    // MARK: Errors

    @Test(arguments: badValues)
    func rejectsBadFlagValueNamingFlagAndValue(key: ConfigurationKey, value: String) throws {
        let error = try #require(resolveError(flags: [key: value]))
        #expect(error.source == key.flag)
        #expect(error.description.hasPrefix(key.flag + ": "))
        #expect(error.description.contains("'\(value)'"))
    }

    @Test(arguments: badValues)
    func rejectsBadEnvironmentValueNamingVariableAndValue(key: ConfigurationKey, value: String) throws {
        let error = try #require(resolveError(environment: [key.environmentVariable: value]))
        #expect(error.source == key.environmentVariable)
        #expect(error.description.hasPrefix(key.environmentVariable + ": "))
        #expect(error.description.contains("'\(value)'"))
    }

    @Test(arguments: [ConfigurationKey.host, .adminHost, .certsDir, .serverCert, .serverKey, .certsTeamID, .clientCA])
    func rejectsEmptyTextValueNamingTheFlag(key: ConfigurationKey) throws {
        let error = try #require(resolveError(flags: [key: ""]))
        #expect(error == ConfigurationError(source: key.flag, message: "must not be empty"))
        #expect(error.description == key.flag + ": must not be empty")
    }

    @Test func listsTheAllowedChoicesInTheError() throws {
        let error = try #require(resolveError(flags: [.invalidJSON: "maybe"]))
        #expect(error.description == "--invalid-json: 'maybe' is not one of: accept, reject")
    }

    @Test func givesTheAllowedRangeInTheError() throws {
        let error = try #require(resolveError(environment: ["APNS_MOCK_PORT": "99999"]))
        #expect(error.description == "APNS_MOCK_PORT: '99999' is not a port number (0...65535)")
    }

    @Test func rejectsMinimumTokenLengthAboveMaximum() throws {
        let error = try #require(resolveError(flags: [.minTokenLength: "100", .maxTokenLength: "80"]))
        #expect(error.source == "--min-token-length")
        #expect(error.description.contains("100"))
        #expect(error.description.contains("80"))
    }

    @Test func rejectsMinimumTokenLengthAboveDefaultMaximum() throws {
        let error = try #require(resolveError(environment: ["APNS_MOCK_MIN_TOKEN_LENGTH": "300"]))
        #expect(error.description.contains("300"))
        #expect(error.description.contains("200"))
    }

    @Test func acceptsEqualMinimumAndMaximumTokenLength() throws {
        let configuration = try resolve(flags: [.minTokenLength: "64", .maxTokenLength: "64"])
        #expect(configuration.validation.deviceToken == DeviceTokenRules(minimumHexDigits: 64, maximumHexDigits: 64))
    }
}

@Suite("Configuration: --store")
struct StoreSettingTests {
    @Test func readsEveryStoreForm() {
        #expect(RecordingStoreSetting("memory") == .memory)
        #expect(RecordingStoreSetting("sqlite:/tmp/r.sqlite") == .sqlite(path: "/tmp/r.sqlite"))
        #expect(
            RecordingStoreSetting("postgres://mock@db:5433/apns")
                == .postgres(PostgresStoreAddress(user: "mock", host: "db", port: 5433, database: "apns"))
        )
        let withPassword = PostgresStoreAddress("postgresql://mock:s%40cret@127.0.0.1/apns")
        #expect(withPassword == PostgresStoreAddress(user: "mock", password: "s@cret", host: "127.0.0.1", port: 5432, database: "apns"))
        // Logs and /admin/stats show the address without its password.
        #expect(withPassword?.description == "postgres://mock@127.0.0.1:5432/apns")
    }
}
