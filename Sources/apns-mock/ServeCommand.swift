import APNsMockServer
import APNsMockStores
import ArgumentParser
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// `apns-mock serve`: runs the provider port and the admin API until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the mock (the default command). Every flag also reads an APNS_MOCK_* environment variable; flags win.",
        discussion: ConfigurationKey.allCases.map { "\($0.flag) / \($0.environmentVariable)" }.joined(separator: "\n")
    )

    @Option(help: ArgumentHelp(ConfigurationKey.host.help)) var host: String?
    @Option(help: ArgumentHelp(ConfigurationKey.port.help)) var port: String?
    @Option(name: .customLong("admin-host"), help: ArgumentHelp(ConfigurationKey.adminHost.help)) var adminHost: String?
    @Option(name: .customLong("admin-port"), help: ArgumentHelp(ConfigurationKey.adminPort.help)) var adminPort: String?
    @Option(name: .customLong("channels-port"), help: ArgumentHelp(ConfigurationKey.channelsPort.help)) var channelsPort: String?
    @Option(name: .customLong("certs-dir"), help: ArgumentHelp(ConfigurationKey.certsDir.help)) var certsDir: String?
    @Option(name: .customLong("server-cert"), help: ArgumentHelp(ConfigurationKey.serverCert.help)) var serverCert: String?
    @Option(name: .customLong("server-key"), help: ArgumentHelp(ConfigurationKey.serverKey.help)) var serverKey: String?
    @Option(help: ArgumentHelp(ConfigurationKey.environment.help)) var environment: String?
    @Option(name: .customLong("max-recorded"), help: ArgumentHelp(ConfigurationKey.maxRecorded.help)) var maxRecorded: String?
    @Option(name: .customLong("max-payload"), help: ArgumentHelp(ConfigurationKey.maxPayload.help)) var maxPayload: String?
    @Option(name: .customLong("max-voip-payload"), help: ArgumentHelp(ConfigurationKey.maxVoIPPayload.help))
    var maxVoIPPayload: String?
    @Option(name: .customLong("body-discard-limit"), help: ArgumentHelp(ConfigurationKey.bodyDiscardLimit.help))
    var bodyDiscardLimit: String?
    @Option(name: .customLong("min-token-length"), help: ArgumentHelp(ConfigurationKey.minTokenLength.help))
    var minTokenLength: String?
    @Option(name: .customLong("max-token-length"), help: ArgumentHelp(ConfigurationKey.maxTokenLength.help))
    var maxTokenLength: String?
    @Option(name: .customLong("missing-topic"), help: ArgumentHelp(ConfigurationKey.missingTopic.help)) var missingTopic: String?
    @Option(name: .customLong("invalid-json"), help: ArgumentHelp(ConfigurationKey.invalidJSON.help)) var invalidJSON: String?
    @Option(name: .customLong("topic-mismatch"), help: ArgumentHelp(ConfigurationKey.topicMismatch.help)) var topicMismatch: String?
    @Option(name: .customLong("background-priority-10"), help: ArgumentHelp(ConfigurationKey.backgroundPriority10.help))
    var backgroundPriority10: String?
    @Option(name: .customLong("max-concurrent-streams"), help: ArgumentHelp(ConfigurationKey.maxConcurrentStreams.help))
    var maxConcurrentStreams: String?
    @Option(help: ArgumentHelp(ConfigurationKey.threads.help)) var threads: String?
    @Option(name: .customLong("log-level"), help: ArgumentHelp(ConfigurationKey.logLevel.help)) var logLevel: String?
    @Option(help: ArgumentHelp(ConfigurationKey.auth.help)) var auth: String?
    @Option(name: .customLong("provider-key"), help: ArgumentHelp(ConfigurationKey.providerKey.help)) var providerKey: [String] = []
    @Option(name: .customLong("certs-team-id"), help: ArgumentHelp(ConfigurationKey.certsTeamID.help)) var certsTeamID: String?
    @Option(name: .customLong("accept-unknown-keys"), help: ArgumentHelp(ConfigurationKey.acceptUnknownKeys.help))
    var acceptUnknownKeys: String?
    @Option(
        name: .customLong("accept-any-client-certificate"),
        help: ArgumentHelp(ConfigurationKey.acceptAnyClientCertificate.help)
    )
    var acceptAnyClientCertificate: String?
    @Option(name: .customLong("client-ca"), help: ArgumentHelp(ConfigurationKey.clientCA.help)) var clientCA: String?
    @Option(name: .customLong("token-clock-skew"), help: ArgumentHelp(ConfigurationKey.tokenClockSkew.help)) var tokenClockSkew: String?
    @Option(name: .customLong("environment-key-reason"), help: ArgumentHelp(ConfigurationKey.environmentKeyReason.help))
    var environmentKeyReason: String?
    @Option(
        name: .customLong("expired-token-poisons-connection"),
        help: ArgumentHelp(ConfigurationKey.expiredTokenPoisonsConnection.help)
    )
    var expiredTokenPoisonsConnection: String?
    @Option(name: .customLong("max-channels"), help: ArgumentHelp(ConfigurationKey.maxChannels.help)) var maxChannels: String?
    @Option(name: .customLong("channel-policy-reason"), help: ArgumentHelp(ConfigurationKey.channelPolicyReason.help))
    var channelPolicyReason: String?
    @Option(name: .customLong("broadcast-expiration-required"), help: ArgumentHelp(ConfigurationKey.broadcastExpirationRequired.help))
    var broadcastExpirationRequired: String?
    @Option(help: ArgumentHelp(ConfigurationKey.lint.help)) var lint: String?
    @Option(help: ArgumentHelp(ConfigurationKey.config.help)) var config: String?
    @Option(name: .customLong("record-file"), help: ArgumentHelp(ConfigurationKey.recordFile.help)) var recordFile: String?
    @Option(name: .customLong("store"), help: ArgumentHelp(ConfigurationKey.store.help)) var store: String?
    @Option(name: .customLong("replica"), help: ArgumentHelp(ConfigurationKey.replica.help)) var replica: String?
    @Option(name: .customLong("log-format"), help: ArgumentHelp(ConfigurationKey.logFormat.help)) var logFormat: String?
    @Option(name: .customLong("admin-token"), help: ArgumentHelp(ConfigurationKey.adminToken.help)) var adminToken: [String] = []
    @Option(name: .customLong("shutdown-grace-period"), help: ArgumentHelp(ConfigurationKey.shutdownGracePeriod.help))
    var shutdownGracePeriod: String?
    @Option(name: .customLong("handshake-timeout"), help: ArgumentHelp(ConfigurationKey.handshakeTimeout.help)) var handshakeTimeout: String?
    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp(ConfigurationKey.idleTimeout.help)) var idleTimeout: String?
    @Option(name: .customLong("max-connections"), help: ArgumentHelp(ConfigurationKey.maxConnections.help)) var maxConnections: String?
    @Option(name: .customLong("admin-read-timeout"), help: ArgumentHelp(ConfigurationKey.adminReadTimeout.help)) var adminReadTimeout: String?
    @Option(help: ArgumentHelp(ConfigurationKey.scenario.help)) var scenario: String?
    @Option(name: .customLong("stored-per-app"), help: ArgumentHelp(ConfigurationKey.storedPerApp.help)) var storedPerApp: String?
    @Option(name: .customLong("max-storage"), help: ArgumentHelp(ConfigurationKey.maxStorage.help)) var maxStorage: String?
    @Option(name: .customLong("background-budget"), help: ArgumentHelp(ConfigurationKey.backgroundBudget.help)) var backgroundBudget: String?
    @Option(name: .customLong("low-priority-interval"), help: ArgumentHelp(ConfigurationKey.lowPriorityInterval.help))
    var lowPriorityInterval: String?
    @Option(name: .customLong("record-credentials"), help: ArgumentHelp(ConfigurationKey.recordCredentials.help)) var recordCredentials: String?
    @Option(help: ArgumentHelp(ConfigurationKey.retention.help)) var retention: String?
    @Option(name: .customLong("admin-tls"), help: ArgumentHelp(ConfigurationKey.adminTLS.help)) var adminTLS: String?
    @Option(help: ArgumentHelp(ConfigurationKey.tenants.help)) var tenants: String?

    var flags: [ConfigurationKey: String] {
        let pairs: [(ConfigurationKey, String?)] = [
            (.host, host), (.port, port), (.adminHost, adminHost), (.adminPort, adminPort), (.channelsPort, channelsPort), (.certsDir, certsDir),
            (.serverCert, serverCert), (.serverKey, serverKey), (.environment, environment),
            (.maxRecorded, maxRecorded), (.maxPayload, maxPayload), (.maxVoIPPayload, maxVoIPPayload),
            (.bodyDiscardLimit, bodyDiscardLimit), (.minTokenLength, minTokenLength),
            (.maxTokenLength, maxTokenLength), (.missingTopic, missingTopic), (.invalidJSON, invalidJSON),
            (.topicMismatch, topicMismatch), (.backgroundPriority10, backgroundPriority10),
            (.maxConcurrentStreams, maxConcurrentStreams), (.threads, threads), (.logLevel, logLevel),
            (.auth, auth), (.providerKey, providerKey.isEmpty ? nil : providerKey.joined(separator: ";")),
            (.certsTeamID, certsTeamID), (.acceptUnknownKeys, acceptUnknownKeys),
            (.acceptAnyClientCertificate, acceptAnyClientCertificate), (.clientCA, clientCA),
            (.tokenClockSkew, tokenClockSkew), (.environmentKeyReason, environmentKeyReason),
            (.expiredTokenPoisonsConnection, expiredTokenPoisonsConnection), (.maxChannels, maxChannels),
            (.channelPolicyReason, channelPolicyReason), (.broadcastExpirationRequired, broadcastExpirationRequired), (.lint, lint), (.config, config),
            (.recordFile, recordFile), (.store, store), (.replica, replica), (.logFormat, logFormat), (.adminToken, adminToken.isEmpty ? nil : adminToken.joined(separator: ";")),
            (.shutdownGracePeriod, shutdownGracePeriod), (.handshakeTimeout, handshakeTimeout), (.idleTimeout, idleTimeout),
            (.maxConnections, maxConnections), (.adminReadTimeout, adminReadTimeout), (.scenario, scenario),
            (.storedPerApp, storedPerApp), (.maxStorage, maxStorage), (.backgroundBudget, backgroundBudget),
            (.lowPriorityInterval, lowPriorityInterval), (.recordCredentials, recordCredentials), (.retention, retention), (.adminTLS, adminTLS), (.tenants, tenants),
        ]
        return Dictionary(uniqueKeysWithValues: pairs.compactMap { key, value in value.map { (key, $0) } })
    }

    func run() async throws {
        let configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.resolve(flags: flags, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.description)
        }
        let format = configuration.logFormat
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            switch format {
            case .json:
                return JSONLogHandler(label: label, logLevel: level)
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: "apns-mock")
        logger.logLevel = configuration.logLevel
        let service = MockServerService(configuration: configuration, logger: logger)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: service)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch let error as StartupError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        } catch let error as ConfigurationError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        }
    }
}

/// Runs the mock inside a service group, so SIGTERM and SIGINT stop it cleanly.
struct MockServerService: Service {
    let configuration: ServerConfiguration
    let logger: Logger

    func run() async throws {
        let server = try await MockServer.start(configuration: configuration, stores: StoreOpener(), logger: logger)
        // Listening from the start and counting every SIGTERM and SIGINT: the first starts the graceful stop (up to
        // the grace period plus the sinks' flush bound), a second one means "now", as an operator pressing Ctrl-C
        // twice expects. Made only once the stop began, the sources missed a second signal sent at once after it.
        let impatience = SecondSignal.exitAtOnce(logger: logger)
        try? await gracefulShutdown()
        await server.shutdown()
        withExtendedLifetime(impatience) {}
    }
}

/// Signals received so far, of both kinds.
private final class SignalCount: Sendable {
    private let count = Mutex(0)

    func add(_ number: Int) -> Int {
        count.withLock { count in
            count += max(1, number)
            return count
        }
    }
}

/// Exits the process at once on a second SIGTERM or SIGINT (of either), while a graceful stop is under way.
enum SecondSignal {
    /// Returns the signal sources; they work while they are kept alive.
    static func exitAtOnce(logger: Logger) -> [any DispatchSourceSignal] {
        let received = SignalCount()
        return [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            // The handler holds its source: both live as long as the process.
            source.setEventHandler {
                // `data`: how many arrived since the handler last ran (signals coalesce).
                let count = received.add(Int(source.data))
                guard count >= 2 else { return }
                logger.warning("second signal during shutdown: exiting at once, without waiting for connections or sinks")
                _exit(128 + number)
            }
            source.resume()
            return source
        }
    }
}
