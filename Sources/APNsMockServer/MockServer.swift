#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import APNsMock
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import ServiceLifecycle
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A running apns-mock: the provider port (TLS, HTTP/2), the admin API, and the recorder they share.
///
/// `start` returns once both ports listen, so tests can use `providerPort` and `adminPort` at once;
/// `shutdown` closes both and waits for them.
package final class MockServer: Sendable {
    package let configuration: ServerConfiguration
    /// Every recording goes here: the in-memory store, then the other sinks (the record file).
    package let recorder: Recorder
    /// The in-memory store of recordings (the admin API's).
    package var store: NotificationStore { recorder.store }
    package let tracker: ConnectionTracker
    /// The scenario in force; `replace(with:)` changes it at run time.
    package let scenario: ActiveScenario
    package let providerPort: Int
    package let adminPort: Int
    /// The broadcast channel-management port.
    package let channelsPort: Int
    /// Broadcast channels, shared by the provider port, the channel-management port and the admin API.
    package let channels: ChannelRegistry

    private let group: MultiThreadedEventLoopGroup
    private let provider: ProviderListener
    private let channelManagement: ProviderListener
    private let adminTask: Task<Void, any Error>
    private let adminServices: ServiceGroup
    private let logger: Logger
    private let stopped = Mutex(false)
    /// What the admin API acts on; the in-process testing module acts on it directly.
    package let admin: AdminContext
    /// Every route the admin API serves.
    package let adminRoutes: [AdminRoute]
    /// This replica's part in a PostgreSQL-backed cluster (`--store postgres://…`).
    private let cluster: (any ClusterMember)?
    /// Keeps the simulated devices in the store across restarts (`--store sqlite:…`).
    private let deviceSaver: DeviceStateSaver?

    private init(
        configuration: ServerConfiguration,
        recorder: Recorder,
        tracker: ConnectionTracker,
        scenario: ActiveScenario,
        group: MultiThreadedEventLoopGroup,
        provider: ProviderListener,
        channelManagement: ProviderListener,
        channels: ChannelRegistry,
        adminPort: Int,
        adminTask: Task<Void, any Error>,
        adminServices: ServiceGroup,
        admin: AdminContext,
        adminRoutes: [AdminRoute],
        cluster: (any ClusterMember)?,
        deviceSaver: DeviceStateSaver?,
        logger: Logger
    ) {
        self.cluster = cluster
        self.deviceSaver = deviceSaver
        self.adminServices = adminServices
        self.admin = admin
        self.adminRoutes = adminRoutes
        self.configuration = configuration
        self.recorder = recorder
        self.tracker = tracker
        self.scenario = scenario
        self.group = group
        self.provider = provider
        self.providerPort = provider.port
        self.channelManagement = channelManagement
        self.channelsPort = channelManagement.port
        self.channels = channels
        self.adminPort = adminPort
        self.adminTask = adminTask
        self.logger = logger
    }

    /// Binds both ports and starts serving.
    /// - Parameter stores: opens `--store sqlite:` and `postgres://` (the executable's `APNsMockStores`); without it,
    ///   only the in-memory store can be used.
    package static func start(
        configuration: ServerConfiguration, stores: (any DurableStoreOpener)? = nil, logger: Logger? = nil
    ) async throws -> MockServer {
        var logger = logger ?? Logger(label: "apns-mock")
        logger.logLevel = configuration.logLevel
        let sslContext: NIOSSLContext
        do {
            let wantsClientCertificates = configuration.authMode == .certificate || configuration.authMode == .either
            sslContext = try ProviderTLS.makeContext(
                certificatePath: configuration.resolvedCertificatePath,
                privateKeyPath: configuration.resolvedPrivateKeyPath,
                clientCAPath: wantsClientCertificates ? configuration.resolvedClientCAPath : nil
            )
        } catch {
            throw StartupError.certificates(
                certificate: configuration.resolvedCertificatePath,
                key: configuration.resolvedPrivateKeyPath,
                underlying: "\(error)"
            )
        }
        let authentication = try configuration.makeAuthenticationPolicy()
        let scenario = ActiveScenario(
            channels: ChannelRegistry(limitPerApp: configuration.broadcast.maxChannelsPerApp),
            delivery: configuration.devicePolicy
        )
        if let file = configuration.scenarioFile {
            do {
                scenario.replace(with: try ScenarioLoader.load(file: file))
            } catch {
                throw StartupError.scenario(error.description)
            }
        }
        // Everything below is undone in reverse order if a later step fails: one place, not one per step.
        var started = StartedParts()
        do {
            return try await start(
                configuration: configuration, stores: stores, sslContext: sslContext, authentication: authentication,
                scenario: scenario, started: &started, logger: logger
            )
        } catch {
            await started.stopAll()
            throw error
        }
    }

    private static func start(
        configuration: ServerConfiguration,
        stores: (any DurableStoreOpener)?,
        sslContext: NIOSSLContext,
        authentication: AuthenticationPolicy,
        scenario: ActiveScenario,
        started: inout StartedParts,
        logger: Logger
    ) async throws -> MockServer {
        let backPressure = RecordingBackPressure()
        var sinks: [any RecordingSink] = []
        if let path = configuration.recordFile {
            do {
                let sink = WriterThreadSink(name: "file", writer: try NDJSONFileWriter(path: path), backPressure: backPressure)
                sinks.append(sink)
                started.started { _ = await sink.finish(timeout: Self.sinkFlushBound) }
            } catch {
                throw StartupError.recordFile(error.description)
            }
        }
        var restored: [RecordedNotification] = []
        var cluster: (any ClusterMember)?
        var fromCluster: [RecordedNotification] = []
        var fromThisReplica: [Bool] = []
        var devicePersistence: (any DeviceStatePersistence)?
        if configuration.store != .memory {
            guard let stores else {
                throw StartupError.store(
                    "--store \(path(of: configuration.store)): this build keeps recordings in memory only; the apns-mock binary has the SQLite and PostgreSQL stores"
                )
            }
            let opened = try await stores.open(configuration: configuration, backPressure: backPressure, started: &started, logger: logger)
            sinks.append(opened.sink)
            restored = opened.restored
            fromCluster = opened.shared
            fromThisReplica = opened.sharedFromThisReplica
            cluster = opened.cluster
            devicePersistence = opened.devices
        }
        let liveFeed = LiveFeed()
        sinks.append(liveFeed)
        // The devices' delivery data points go to the sinks that write them (the record file, the live feed).
        scenario.devices.reportDeliveries(to: sinks)
        let tenants = Self.makeTenants(configuration: configuration, primary: scenario, sinks: sinks)
        let recorder = Recorder(
            capacity: configuration.maxRecorded, sinks: sinks, backPressure: backPressure, devices: scenario.devices,
            credentials: configuration.recordCredentials, retention: configuration.retention, tenants: tenants
        )
        if !restored.isEmpty {
            recorder.store.restore(restored)
            logger.info(
                "recordings loaded back from the store",
                metadata: ["store": "\(path(of: configuration.store))", "recordings": "\(restored.count)", "last-sequence": "\(restored.last!.sequence)"]
            )
        }
        // The cluster's recordings before the devices: a replica's saved logs find its own among them.
        var savedRecordings = SavedRecordings(bySequence: restored)
        if cluster != nil {
            let first = recorder.store.ingest(fromCluster)
            let dropped = max(0, fromCluster.count - configuration.maxRecorded)
            let own = fromCluster.indices.dropFirst(dropped).filter { fromThisReplica.indices.contains($0) && fromThisReplica[$0] }
            savedRecordings = SavedRecordings(
                byAPNsID: own.map { index in
                    var ingested = fromCluster[index]
                    ingested.sequence = first + UInt64(index - dropped)
                    return ingested
                }
            )
        }
        var deviceSaver: DeviceStateSaver?
        if let devicePersistence {
            do {
                if let snapshot = try await devicePersistence.loadDevices() {
                    // With tenants, every tenant's devices; without, the one registry's (a tenants snapshot's
                    // `unidentified` devices).
                    let count = try tenants?.restore(snapshot, recordings: savedRecordings)
                        ?? scenario.devices.restoreEither(snapshot, recordings: savedRecordings)
                    logger.info(
                        "simulated devices loaded back from the store",
                        metadata: ["store": "\(path(of: configuration.store))", "devices": "\(count)", "clock-offset": "\(scenario.clock.jsonObject()["offset"] ?? "")"]
                    )
                }
            } catch {
                throw StartupError.store("--store \(path(of: configuration.store)): \(error)")
            }
            let saver = DeviceStateSaver(registry: tenants ?? scenario.devices, persistence: devicePersistence, logger: logger)
            saver.start()
            started.started { await saver.finish() }
            deviceSaver = saver
        }
        let channels = scenario.channels
        if let cluster {
            // After the saved devices: what the replicas share (registrations, states) is newer than a snapshot.
            do {
                try await cluster.attach(
                    .init(store: recorder.store, scenario: scenario, channels: channels, tenants: tenants), publishScenario: configuration.scenarioFile != nil
                )
            } catch {
                throw StartupError.store("--store \(path(of: configuration.store)): \(cluster.describe(error))")
            }
            logger.info(
                "joined the cluster",
                metadata: ["store": "\(path(of: configuration.store))", "replica": "\(cluster.replica)", "recordings": "\(fromCluster.count)"]
            )
        }
        let tracker = ConnectionTracker()
        let metrics = ProviderMetrics()
        let processor = NotificationProcessor(
            validator: RequestValidator(policy: configuration.validation),
            authentication: authentication,
            environment: configuration.environment,
            maxConcurrentStreams: configuration.http2.maxConcurrentStreams,
            scenario: scenario,
            broadcastValidator: BroadcastValidator(policy: configuration.broadcast.policy),
            lint: configuration.lint,
            tenants: tenants
        )
        let group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.threads)
        started.started { try? await group.shutdownGracefully() }
        // Both listeners take the same TLS, HTTP/2 engine, authentication and recorder; channel management is
        // served on a port of its own, as APNs serves it on hosts and ports of its own.
        func bind(port: Int, service: ConnectionInfo.Service, what: String, flag: ConfigurationKey) async throws -> ProviderListener {
            do {
                let listener = try await ProviderListener.bind(
                    host: configuration.host,
                    port: port,
                    group: group,
                    sslContext: sslContext,
                    acceptAnyClientCertificate: configuration.acceptAnyClientCertificate,
                    setup: ProviderConnectionSetup(
                        processor: processor, recorder: recorder, settings: configuration.http2,
                        requestLimits: configuration.requestLimits, sessionLimits: configuration.sessionLimits,
                        connectionLimits: configuration.connectionLimits, tracker: tracker, metrics: metrics, logger: logger,
                        service: service
                    )
                )
                return listener
            } catch {
                throw StartupError.bind(what: what, flag: flag.flag, host: configuration.host, port: port, underlying: StartupError.reason(error))
            }
        }
        let provider = try await bind(port: configuration.port, service: .provider, what: "provider", flag: .port)
        started.started { await provider.close() }
        let channelManagement = try await bind(
            port: configuration.channelsPort, service: .channelManagement, what: "channel-management", flag: .channelsPort
        )
        started.started { await channelManagement.close() }

        let admin = AdminContext(
            recorder: recorder,
            tracker: tracker,
            metrics: metrics,
            scenario: scenario,
            channels: channels,
            liveFeed: liveFeed,
            environment: configuration.environment,
            providerIsListening: { provider.channel.isActive && channelManagement.channel.isActive },
            adminTokens: configuration.adminTokens,
            cluster: cluster,
            audit: AdminAudit(logger: logger),
            adminHost: configuration.adminHost,
            tenants: tenants
        )
        let router = AdminRoutes.makeRouter(admin)
        let (adminPort, adminTask, adminServices) = try await startAdmin(configuration: configuration, router: router.router, logger: logger)
        let server = MockServer(
            configuration: configuration,
            recorder: recorder,
            tracker: tracker,
            scenario: scenario,
            group: group,
            provider: provider,
            channelManagement: channelManagement,
            channels: channels,
            adminPort: adminPort,
            adminTask: adminTask,
            adminServices: adminServices,
            admin: admin,
            adminRoutes: router.routes,
            cluster: cluster,
            deviceSaver: deviceSaver,
            logger: logger
        )
        logger.info(
            "apns-mock listening",
            metadata: [
                "provider": "https://\(configuration.host):\(server.providerPort)",
                "channels": "https://\(configuration.host):\(server.channelsPort)",
                "admin": "\(configuration.adminTLS ? "https" : "http")://\(configuration.adminHost):\(adminPort)",
                "environment": "\(configuration.environment.rawValue)",
                "auth": "\(configuration.authMode.rawValue)",
                "scenario": "\(configuration.scenarioFile.map { _ in scenario.current.scenario.name } ?? "none")",
                "token-keys": "\(authentication.verifier.keys.keys.sorted().joined(separator: ","))",
                // The default loop count follows the usable cores: both said, so a user can see what was chosen.
                "threads": "\(configuration.threads)",
                "cores": "\(UsableCores.count)",
                // What recordings keep of provider tokens: said at every start, so `full` is never a surprise.
                "credentials": "\(configuration.recordCredentials.rawValue)",
                "tenants": "\(configuration.tenants.rawValue)",
            ]
        )
        if let warning = admin.access.warning { logger.warning("\(warning)") }
        return server
    }

    /// `--tenants`: each tenant's scenario made as the primary one was, with the start scenario in force.
    private static func makeTenants(configuration: ServerConfiguration, primary: ActiveScenario, sinks: [any RecordingSink]) -> TenantDirectory? {
        guard configuration.tenants != .off else { return nil }
        return TenantDirectory(
            mode: configuration.tenants,
            primary: primary,
            startScenario: configuration.scenarioFile == nil ? nil : primary.current.scenario,
            makeScenario: {
                let made = ActiveScenario(channels: ChannelRegistry(limitPerApp: configuration.broadcast.maxChannelsPerApp), delivery: configuration.devicePolicy)
                made.devices.reportDeliveries(to: sinks)
                return made
            }
        )
    }

    private static func startAdmin(
        configuration: ServerConfiguration,
        router: Router<AdminRequestContext>,
        logger: Logger
    ) async throws -> (Int, Task<Void, any Error>, ServiceGroup) {
        let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var adminLogger = logger
        // Hummingbird logs every request at info; admin polling would drown the provider's lines.
        adminLogger.logLevel = max(logger.logLevel, .notice)
        var server = HTTPServerBuilder.http1(configuration: .init(idleTimeout: TimeAmount(configuration.adminReadTimeout)))
        if configuration.adminTLS {
            do {
                server = try .tls(
                    server,
                    tlsConfiguration: ProviderTLS.makeAdminConfiguration(
                        certificatePath: configuration.resolvedCertificatePath, privateKeyPath: configuration.resolvedPrivateKeyPath
                    )
                )
            } catch {
                throw StartupError.certificates(
                    certificate: configuration.resolvedCertificatePath, key: configuration.resolvedPrivateKeyPath, underlying: "--admin-tls: \(error)"
                )
            }
        }
        let application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.adminHost, port: configuration.adminPort),
                serverName: nil
            ),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            // SwiftNIO's shared loops, not the provider's: Hummingbird ends its graceful stop in a task of its own,
            // which can finish after `run` has returned and drop its last reference to NIO's quiescing helper,
            // whose deinit hops to a loop. On the provider's group, stopped by then, that asked a stopped loop to
            // run work (SWIFTNIO_STRICT=1 crashes there; seen in the signal-under-load test on a busy machine).
            eventLoopGroupProvider: .singleton,
            logger: adminLogger
        )
        // In a service group of its own, so shutdown can be graceful: cancelling Hummingbird logs errors.
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [.init(service: application)], logger: adminLogger)
        )
        let task = Task {
            defer { portContinuation.finish() }
            try await services.run()
        }
        var iterator = portStream.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // The application ended before it listened: report why.
            do {
                try await task.value
            } catch {
                throw StartupError.bind(
                    what: "admin",
                    flag: ConfigurationKey.adminPort.flag,
                    host: configuration.adminHost,
                    port: configuration.adminPort,
                    underlying: StartupError.reason(error)
                )
            }
            throw StartupError.bind(
                what: "admin", flag: ConfigurationKey.adminPort.flag, host: configuration.adminHost, port: configuration.adminPort,
                underlying: "the admin server stopped before listening"
            )
        }
        return (port, task, services)
    }

    /// Runs until the task is cancelled (e.g. by a signal handler), then shuts down.
    package func waitUntilShutdown() async {
        await withTaskCancellationHandler {
            _ = await adminTask.result
        } onCancel: {
            Task { await self.shutdown() }
        }
        await shutdown()
    }

    /// How long shutdown waits for the sinks to write what they have queued, after the grace period. A full file
    /// queue (65,536 recordings) takes well under a second to write here, so this bound is only reached when the
    /// disk itself stalls; what is still queued then is counted in the log as not written.
    package static let sinkFlushBound: Duration = .seconds(10)

    /// Stops gracefully: no new connections; every open connection gets a GOAWAY and its streams in flight
    /// are answered, for at most `grace`; then both ports and the event loops close (requests cut off at that
    /// point are recorded as abandoned) and every sink writes what it has queued, for at most `sinkFlushBound`.
    /// The log says how many recordings each sink wrote. Recordings stay readable through `store`.
    package func shutdown(grace: Duration? = nil) async {
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        let grace = grace ?? configuration.shutdownGracePeriod
        logger.info("apns-mock stopping: GOAWAY to every connection", metadata: ["grace": "\(grace)"])
        async let channelsDrained = channelManagement.shutdownGracefully(grace: grace)
        let providerDrained = await provider.shutdownGracefully(grace: grace)
        let drained = await channelsDrained && providerDrained
        if !drained {
            logger.warning("connections still open after the grace period: closing them", metadata: ["grace": "\(grace)"])
        }
        // Live streams never end by themselves: end them first, or the admin server would wait for them.
        for case let feed as LiveFeed in recorder.sinks { feed.closeAll() }
        await adminServices.triggerGracefulShutdown()
        _ = await adminTask.result
        await provider.close()
        await channelManagement.close()
        // The connections paused by a full sink are closed with the loops below; the sinks release them only once
        // they have finished, after the loops have stopped.
        recorder.backPressure.stopResumingWaiters()
        try? await group.shutdownGracefully()
        // Every push is accepted by now: the devices' last state is final.
        await deviceSaver?.finish()
        let statistics = store.statistics()
        var metadata: Logger.Metadata = ["memory": "\(statistics.received)"]
        for sink in await recorder.finishSinks(timeout: Self.sinkFlushBound) {
            metadata[sink.name] = "\(sink.written)"
            if sink.queued > 0 || sink.lastError != nil {
                logger.error(
                    "a sink did not write every recording",
                    metadata: ["sink": "\(sink.name)", "not-written": "\(sink.queued)", "error": "\(sink.lastError ?? "flush bound reached")"]
                )
            }
        }
        // After the sinks: the recording sink's last batches were written on connections of its own.
        await cluster?.stop()
        logger.info("apns-mock stopped: recordings written by each sink", metadata: metadata)
    }
}

/// Why the server could not start.
package enum StartupError: Error, CustomStringConvertible {
    case certificates(certificate: String, key: String, underlying: String)
    /// A port could not be listened on; `flag` is the setting that names it.
    case bind(what: String, flag: String, host: String, port: Int, underlying: String)
    case recordFile(String)
    case store(String)
    case scenario(String)

    /// A socket error as the system words it ("Address already in use"), anything else as it describes itself.
    static func reason(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }

    package var description: String {
        switch self {
        case .certificates(let certificate, let key, let underlying):
            return "cannot load the server certificate '\(certificate)' and key '\(key)': \(underlying). "
                + "Run from the project folder (the default is Certs/), set --certs-dir, "
                + "or make a new set with 'apns-mock certs generate --out DIR'."
        case .bind(let what, let flag, let host, let port, let underlying):
            return "cannot listen for the \(what) port on \(host):\(port) (\(flag)): \(underlying)"
        case .recordFile(let message), .store(let message):
            return message
        case .scenario(let problems):
            return "the scenario file is not valid:\n" + problems
        }
    }
}

/// `sqlite:PATH`, `postgres://USER@HOST:PORT/DB` (no password) for logs.
private func path(of store: RecordingStoreSetting) -> String {
    switch store {
    case .memory: "memory"
    case .sqlite(let path): "sqlite:" + path
    case .postgres(let address): address.description
    }
}
