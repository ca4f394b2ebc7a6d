import APNsMock
import APNsMockServer
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One replica's part in a cluster sharing a PostgreSQL store (`--store postgres://…`).
///
/// It follows the database and passes what the other replicas did into this replica's in-memory state: their
/// recordings into the store (so lists, filters and `wait` see pushes any replica answered), and devices, channels
/// and the scenario into the registries. It publishes the changes made here. Every replica keeps serving from
/// memory, so the provider path never waits for the database; the others see a change once its NOTIFY arrives
/// (milliseconds on one network), and a poll every `pollInterval` catches anything a lost connection missed.
///
/// What stays per replica, as per APNs server: connections, token refresh limits, stream gating, and the counters
/// of a scenario's rules (`times`, `every`, sequences).
final class PostgresCluster: Sendable {
    let replica: String
    let connector: PostgresConnector
    let capacity: Int
    /// Queries: the follower's reads and the publisher's writes, one at a time each.
    private let queries: PostgresConnection
    private let publishing: PostgresConnection
    private let logger: Logger
    private let state = Mutex(State())
    /// Set when a `recordings` notice arrives and cleared when the follower reads: notices that arrive while it
    /// reads cost one more read, not one each.
    private let recordingsPending = Atomic<Bool>(false)
    private let notices: AsyncStream<ClusterNotice>
    private let noticeInput: AsyncStream<ClusterNotice>.Continuation
    private let changes: AsyncStream<SharedStateChange>
    private let changeInput: AsyncStream<SharedStateChange>.Continuation
    static let pollInterval: Duration = .seconds(1)
    static let readBatch = 5_000

    private struct State {
        /// The newest recording id read (or written here and skipped).
        var cursor: Int64 = 0
        var tasks: [Task<Void, Never>] = []
        /// Recordings read from the other replicas, for `/admin/stats`.
        var received: UInt64 = 0
    }

    /// What the replicas share, wired in by `attach`.
    typealias Shared = ClusterShared

    private init(replica: String, connector: PostgresConnector, capacity: Int, queries: PostgresConnection, publishing: PostgresConnection, logger: Logger) {
        self.replica = replica
        self.connector = connector
        self.capacity = capacity
        self.queries = queries
        self.publishing = publishing
        self.logger = logger
        (notices, noticeInput) = AsyncStream.makeStream(of: ClusterNotice.self)
        (changes, changeInput) = AsyncStream.makeStream(of: SharedStateChange.self)
    }

    /// Connects (waiting for the database at start), brings the schema up to date.
    static func connect(address: PostgresStoreAddress, replica: String, capacity: Int, logger: Logger) async throws(PostgresConnector.ConnectError)
        -> PostgresCluster
    {
        let connector = PostgresConnector(address: address, logger: logger)
        let queries = try await connector.connectAtStartup()
        let publishing = try await connector.connect(id: 1)
        return PostgresCluster(replica: replica, connector: connector, capacity: capacity, queries: queries, publishing: publishing, logger: logger)
    }

    /// The sink that writes this replica's recordings, on a connection of its own.
    func makeRecordSink(backPressure: RecordingBackPressure) async throws(PostgresConnector.ConnectError) -> WriterThreadSink {
        let connection = try await connector.connect(id: 2)
        do {
            // As the SQLite store's synchronous=NORMAL: a commit does not wait for its WAL flush, so a crash of the
            // database server (not of the mock) may lose its last fraction of a second; never the table's integrity.
            try await connection.query("SET synchronous_commit TO off", logger: logger)
        } catch {
            throw PostgresConnector.ConnectError(address: connector.address, reason: PostgresConnector.describe(error), isFinal: true)
        }
        let retention = try await connector.connect(id: 2)
        let writer = PostgresRecordStore(connection: connection, retention: retention, replica: replica, capacity: capacity, logger: logger)
        return WriterThreadSink(name: "postgres", writer: writer, backPressure: backPressure)
    }

    /// The newest `capacity` recordings of the whole cluster, oldest first, and which of them this replica made
    /// (numbered as it numbered them); following starts after them.
    func loadRecordings() async throws -> (recordings: [RecordedNotification], fromThisReplica: [Bool]) {
        var loaded: [(Int64, RecordedNotification, Bool)] = []
        let rows = try await queries.query(
            "SELECT \(unescaped: Self.selectColumns) FROM apns_mock_recordings ORDER BY id DESC LIMIT \(Int64(capacity))", logger: logger
        )
        for try await row in rows {
            let (id, origin, recording) = try Self.recording(from: row)
            loaded.append((id, recording, origin == replica))
        }
        let newest = loaded.first?.0 ?? 0
        // With no recordings yet, follow from the table's current end (ids are not reused after a clear).
        var cursor = newest
        if newest == 0 {
            for try await id in try await queries.query("SELECT coalesce(max(id), 0) FROM apns_mock_recordings", logger: logger).decode(Int64.self) {
                cursor = id
            }
        }
        state.withLock { $0.cursor = cursor }
        return (loaded.reversed().map(\.1), loaded.reversed().map(\.2))
    }

    /// This replica's simulated devices, kept across its restarts.
    var deviceStates: PostgresDeviceStates { PostgresDeviceStates(connection: publishing, replica: replica, logger: logger) }

    /// Loads the shared devices, channels and scenario into this replica, publishes its changes from now on, and
    /// starts following the others. `publishScenario`: this replica was started with `--scenario`, which then
    /// becomes the cluster's; otherwise it takes the cluster's scenario, if any.
    func attach(_ shared: Shared, publishScenario: Bool) async throws {
        var sharedTokens: [String: Set<String>] = [:]
        for try await (tenant, token, body) in try await queries.query("SELECT tenant, token, body FROM apns_mock_devices", logger: logger)
            .decode((String, String, String).self)
        {
            sharedTokens[tenant, default: []].insert(token)
            if let device = try? Device(json: Array(body.utf8)) { Self.apply(.devicePut(device), tenant: tenant, shared) }
        }
        // A device this replica saved (its snapshot, loaded before) that is no longer shared was removed meanwhile.
        let registries = shared.tenants.map { $0.all.map { ($0.name == TenantResolver.unidentified ? "" : $0.name, $0.scenario.devices) } }
            ?? [("", shared.devices)]
        for (tenant, registry) in registries {
            for token in registry.tokens(origin: .admin) where !(sharedTokens[tenant]?.contains(token) ?? false) {
                registry.apply(.deviceRemoved(token: token))
            }
        }
        for try await row in try await queries.query(
            "SELECT \(unescaped: Self.channelColumns) FROM apns_mock_channels ORDER BY created_at", logger: logger
        ) {
            if let (channel, tenant) = try? Self.channel(from: row) { Self.apply(.channelPut(channel), tenant: tenant, shared) }
        }
        if publishScenario {
            changeInput.yield(.scenario(source: shared.scenario.current.scenario.sourceText ?? "", version: shared.scenario.version))
        } else {
            try await adoptScenario(shared, newerThan: 0)
        }
        if let tenants = shared.tenants { try await adoptTenantScenarios(tenants, tenant: nil) }
        let input = changeInput
        shared.devices.changes.observe { input.yield($0) }
        shared.channels.changes.observe { input.yield($0) }
        shared.scenario.changes.observe { input.yield($0) }
        shared.tenants?.changes.observe { input.yield($0) }
        let tasks = [
            Task { await self.publish(shared) },
            Task { await self.listen() },
            Task { await self.poll() },
            Task { await self.follow(shared) },
        ]
        state.withLock { $0.tasks = tasks }
    }

    /// Recordings read from the other replicas so far.
    var receivedFromReplicas: UInt64 { state.withLock { $0.received } }

    /// Stops following and publishing (after the recording sink has flushed) and closes the connections.
    func stop() async {
        noticeInput.finish()
        changeInput.finish()
        let tasks = state.withLock { $0.tasks }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        try? await queries.close()
        try? await publishing.close()
    }

    // MARK: Following

    /// LISTENs on a connection of its own, reconnecting after a loss (the poll covers the gap).
    private func listen() async {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                let connection = try await connector.connect(id: 3 + attempt)
                defer { Task { try? await connection.close() } }
                try await withTaskCancellationHandler {
                    try await connection.listen(on: PostgresSchema.channel) { notifications in
                        for try await notification in notifications {
                            guard let notice = ClusterNotice(payload: notification.payload), notice.replica != replica else { continue }
                            if case .recordings = notice {
                                // One read covers every notice that arrived before it starts.
                                if recordingsPending.exchange(true, ordering: .acquiringAndReleasing) { continue }
                            }
                            noticeInput.yield(notice)
                        }
                    }
                } onCancel: {
                    connection.close().whenComplete { _ in }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("PostgreSQL LISTEN lost; reconnecting", metadata: ["error": "\(PostgresConnector.describe(error))"])
                try? await Task.sleep(for: Self.pollInterval)
            }
        }
    }

    /// The safety net: a read every `pollInterval`, whatever was heard.
    private func poll() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: Self.pollInterval) } catch { return }
            if !recordingsPending.exchange(true, ordering: .acquiringAndReleasing) { noticeInput.yield(.recordings(replica: nil)) }
        }
    }

    /// Carries out the notices in order, on the query connection.
    private func follow(_ shared: Shared) async {
        for await notice in notices {
            do {
                switch notice {
                case .recordings:
                    recordingsPending.store(false, ordering: .releasing)
                    try await readRecordings(into: shared.store)
                case .cleared(let upTo, _):
                    // Rows committed here after the clear are read again from the cursor on.
                    try await readRecordings(into: shared.store)
                    shared.store.clear()
                    state.withLock { $0.cursor = max($0.cursor, upTo) }
                case .tenantCleared(let tenant, _, _):
                    try await readRecordings(into: shared.store)
                    shared.store.clear(tenant: tenant)
                case .device(let token, let tenant, _):
                    var found: Device?
                    for try await body in try await queries.query(
                        "SELECT body FROM apns_mock_devices WHERE tenant = \(tenant ?? "") AND token = \(token)", logger: logger
                    ).decode(String.self) {
                        found = try? Device(json: Array(body.utf8))
                    }
                    Self.apply(found.map { .devicePut($0) } ?? .deviceRemoved(token: token), tenant: tenant, shared)
                case .devicesCleared(let tenant, _):
                    Self.apply(.devicesCleared, tenant: tenant, shared)
                case .channel(let id, let tenant, _):
                    var found: BroadcastChannel?
                    for try await row in try await queries.query(
                        "SELECT \(unescaped: Self.channelColumns) FROM apns_mock_channels WHERE tenant = \(tenant ?? "") AND id = \(id)",
                        logger: logger
                    ) {
                        found = try? Self.channel(from: row).0
                    }
                    Self.apply(found.map { .channelPut($0) } ?? .channelRemoved(id: id), tenant: tenant, shared)
                case .channelsCleared(let tenant, _):
                    Self.apply(.channelsCleared, tenant: tenant, shared)
                case .scenario(let version, _):
                    try await adoptScenario(shared, newerThan: UInt64(max(0, version - 1)))
                case .tenantScenario(let tenant, _, _):
                    if let tenants = shared.tenants { try await adoptTenantScenarios(tenants, tenant: tenant) }
                }
            } catch where Task.isCancelled {
                // The process is stopping (the query was cancelled with it): nothing to warn about.
                return
            } catch {
                logger.warning(
                    "could not read a change from PostgreSQL",
                    metadata: ["notice": "\(notice.payload)", "error": "\(PostgresConnector.describe(error))"]
                )
            }
        }
    }

    /// Applies a device or channel change another replica made: to the `unidentified` tenant's registries (tenant
    /// `nil` or ''), or to the named tenant's, made for it if need be. A replica without `--tenants` keeps only the
    /// `unidentified` tenant's.
    private static func apply(_ change: SharedStateChange, tenant: String?, _ shared: Shared) {
        if let tenant, !tenant.isEmpty {
            shared.tenants?.apply(change, inTenant: tenant)
        } else {
            shared.devices.apply(change)
            shared.channels.apply(change)
        }
    }

    /// Reads the other replicas' recordings past the cursor, in id order, into the store.
    ///
    /// The newest id is read first: every id up to it is committed (inserts hold the advisory lock), so the cursor
    /// can move to it even when the rows in between are this replica's own, which are skipped by the database
    /// rather than sent here and decoded.
    private func readRecordings(into store: NotificationStore) async throws {
        var newest: Int64 = 0
        for try await id in try await queries.query("SELECT coalesce(max(id), 0) FROM apns_mock_recordings", logger: logger).decode(Int64.self) {
            newest = id
        }
        while true {
            let cursor = state.withLock { $0.cursor }
            guard cursor < newest else { return }
            let rows = try await queries.query(
                """
                SELECT \(unescaped: Self.selectColumns) FROM apns_mock_recordings
                WHERE id > \(cursor) AND id <= \(newest) AND replica <> \(replica) ORDER BY id LIMIT \(Int64(Self.readBatch))
                """,
                logger: logger
            )
            var theirs: [RecordedNotification] = []
            var last = newest
            for try await row in rows {
                let (id, _, recording) = try Self.recording(from: row)
                theirs.append(recording)
                if theirs.count == Self.readBatch { last = id }
            }
            store.ingest(theirs)
            state.withLock { state in
                state.cursor = max(state.cursor, last)
                state.received += UInt64(theirs.count)
            }
        }
    }

    /// Takes the cluster's scenario when its version is newer than `version` and than this replica's.
    private func adoptScenario(_ shared: Shared, newerThan version: UInt64) async throws {
        for try await (stored, source, origin) in try await queries.query(
            "SELECT version, source, replica FROM apns_mock_scenario WHERE id = 1", logger: logger
        ).decode((Int64, String, String).self) {
            let stored = UInt64(max(0, stored))
            guard stored > version, stored > shared.scenario.version else { return }
            do throws(ScenarioLoadError) {
                var scenario = Scenario.empty
                if !source.isEmpty { scenario = try ScenarioLoader.load(text: source, source: "replica \(origin)") }
                shared.scenario.apply(scenario, version: stored)
                logger.info("scenario taken from the cluster", metadata: ["version": "\(stored)", "replica": "\(origin)"])
            } catch {
                logger.error("the cluster's scenario does not load here", metadata: ["version": "\(stored)", "error": "\(error.description)"])
            }
        }
    }

    /// Takes the tenants' scenarios from the table (one tenant's, or every one's) that are newer than this
    /// replica's: a tenant met here changes at once, one not met yet starts with it.
    private func adoptTenantScenarios(_ tenants: TenantDirectory, tenant: String?) async throws {
        let rows = try await queries.query(
            tenant.map { "SELECT tenant, version, source, replica FROM apns_mock_tenant_scenarios WHERE tenant = \($0)" }
                ?? "SELECT tenant, version, source, replica FROM apns_mock_tenant_scenarios",
            logger: logger
        )
        for try await (name, stored, source, origin) in rows.decode((String, Int64, String, String).self) {
            let stored = UInt64(max(0, stored))
            guard stored > tenants.scenarioVersion(ofTenant: name) else { continue }
            do throws(ScenarioLoadError) {
                var scenario = Scenario.empty
                if !source.isEmpty { scenario = try ScenarioLoader.load(text: source, source: "replica \(origin), tenant \(name)") }
                tenants.adopt(scenario, version: stored, forTenant: name)
            } catch {
                logger.error(
                    "a tenant's scenario from the cluster does not load here",
                    metadata: ["tenant": "\(name)", "version": "\(stored)", "error": "\(error.description)"]
                )
            }
        }
    }

    // MARK: Publishing

    /// Writes the changes made here, in order, and announces each.
    private func publish(_ shared: Shared) async {
        for await change in changes {
            do {
                try await write(change, shared)
            } catch {
                logger.warning("could not share a change through PostgreSQL", metadata: ["error": "\(PostgresConnector.describe(error))"])
            }
        }
    }

    /// Writes one change and announces it; `tenant`: the tenant a device or channel change was made in (`nil`:
    /// `unidentified`, or no tenants), kept as '' in the tables.
    private func write(_ change: SharedStateChange, _ shared: Shared, tenant: String? = nil) async throws {
        let key = tenant ?? ""
        let notice: ClusterNotice
        switch change {
        case .devicePut(let device):
            let token = device.token.lowercased()
            let body = String(decoding: try JSONSerialization.data(withJSONObject: device.jsonObject(), options: [.sortedKeys]), as: UTF8.self)
            try await publishing.query(
                """
                INSERT INTO apns_mock_devices (tenant, token, body, replica) VALUES (\(key), \(token), \(body), \(replica))
                ON CONFLICT (tenant, token) DO UPDATE SET body = EXCLUDED.body, replica = EXCLUDED.replica
                """,
                logger: logger
            )
            notice = .device(token: token, tenant: tenant, replica: replica)
        case .deviceRemoved(let token):
            let token = token.lowercased()
            try await publishing.query("DELETE FROM apns_mock_devices WHERE tenant = \(key) AND token = \(token)", logger: logger)
            notice = .device(token: token, tenant: tenant, replica: replica)
        case .devicesCleared:
            try await publishing.query("DELETE FROM apns_mock_devices WHERE tenant = \(key)", logger: logger)
            notice = .devicesCleared(tenant: tenant, replica: replica)
        case .channelPut(let channel):
            try await publishing.query(
                """
                INSERT INTO apns_mock_channels (tenant, id, bundle_id, environment, storage_policy, created_at, replica)
                VALUES (\(key), \(channel.id), \(channel.bundleID), \(channel.environment.rawValue), \(channel.storagePolicy.rawValue), \(channel.createdAt), \(replica))
                ON CONFLICT (tenant, id) DO UPDATE SET bundle_id = EXCLUDED.bundle_id, environment = EXCLUDED.environment,
                    storage_policy = EXCLUDED.storage_policy, created_at = EXCLUDED.created_at, replica = EXCLUDED.replica
                """,
                logger: logger
            )
            notice = .channel(id: channel.id, tenant: tenant, replica: replica)
        case .channelRemoved(let id):
            try await publishing.query("DELETE FROM apns_mock_channels WHERE tenant = \(key) AND id = \(id)", logger: logger)
            notice = .channel(id: id, tenant: tenant, replica: replica)
        case .channelsCleared:
            try await publishing.query("DELETE FROM apns_mock_channels WHERE tenant = \(key)", logger: logger)
            notice = .channelsCleared(tenant: tenant, replica: replica)
        case .inTenant(let name, let change):
            // One level only: a tenant's registries report bare changes, which the directory wraps once.
            guard tenant == nil else { return }
            try await write(change, shared, tenant: name)
            return
        case .scenario(let source, let version):
            var stored = Int64(clamping: version)
            for try await assigned in try await publishing.query(
                """
                INSERT INTO apns_mock_scenario (id, version, source, replica) VALUES (1, \(stored), \(source), \(replica))
                ON CONFLICT (id) DO UPDATE SET version = GREATEST(apns_mock_scenario.version + 1, EXCLUDED.version),
                    source = EXCLUDED.source, replica = EXCLUDED.replica
                RETURNING version
                """,
                logger: logger
            ).decode(Int64.self) {
                stored = assigned
            }
            shared.scenario.adopt(version: UInt64(max(0, stored)))
            notice = .scenario(version: stored, replica: replica)
        case .tenantScenario(let tenant, let source, let version):
            var stored = Int64(clamping: version)
            for try await assigned in try await publishing.query(
                """
                INSERT INTO apns_mock_tenant_scenarios (tenant, version, source, replica) VALUES (\(tenant), \(stored), \(source), \(replica))
                ON CONFLICT (tenant) DO UPDATE SET version = GREATEST(apns_mock_tenant_scenarios.version + 1, EXCLUDED.version),
                    source = EXCLUDED.source, replica = EXCLUDED.replica
                RETURNING version
                """,
                logger: logger
            ).decode(Int64.self) {
                stored = assigned
            }
            shared.tenants?.existing(tenant)?.adopt(version: UInt64(max(0, stored)))
            notice = .tenantScenario(tenant: tenant, version: stored, replica: replica)
        }
        try await publishing.query("SELECT pg_notify(\(PostgresSchema.channel), \(notice.payload))", logger: logger)
    }

    // MARK: Rows

    static let selectColumns = "id, " + PostgresRecordStore.columns.joined(separator: ", ")

    /// The columns `channel(from:)` reads, in its order.
    static let channelColumns = "id, bundle_id, environment, storage_policy, created_at, tenant"

    /// A row of `selectColumns` as (id, replica, recording).
    static func recording(from row: PostgresRow) throws -> (Int64, String, RecordedNotification) {
        let cells = row.makeRandomAccess()
        func value<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T { try cells[index].decode(T.self) }
        let id = try value(0, Int64.self)
        let origin = try value(1, String.self)
        let payload = try value(23, ByteBuffer.self)
        let recordingRow = RecordingRow(
            sequence: UInt64(max(0, try value(2, Int64.self))),
            receivedAt: try value(3, Int64.self),
            connectionID: UInt64(max(0, try value(4, Int64.self))),
            streamID: try value(5, Int32.self),
            kind: try value(6, String.self),
            deviceToken: try value(7, String?.self),
            topic: try value(8, String?.self),
            pushType: try value(9, String?.self),
            priority: try value(10, Int32?.self).map(Int.init),
            status: try value(11, Int32?.self).map(Int.init),
            reason: try value(12, String?.self),
            apnsID: try value(13, String?.self),
            uniqueID: try value(14, String?.self),
            timestamp: try value(15, Int64?.self),
            authMethod: try value(16, String?.self),
            scenarioRule: try value(17, String?.self),
            warningCodes: try value(18, String.self),
            method: try value(19, String.self),
            path: try value(20, String.self),
            authority: try value(21, String?.self),
            headersJSON: try value(22, String.self),
            payload: Array(payload.readableBytesView),
            payloadSize: Int(try value(24, Int32.self)),
            extrasJSON: try value(25, String.self)
        )
        return (id, origin, try RecordedNotification(row: recordingRow))
    }

    struct ChannelRowError: Error {}

    /// A row of `channelColumns` as (channel, tenant).
    static func channel(from row: PostgresRow) throws -> (BroadcastChannel, String) {
        let (id, bundleID, environment, policy, createdAt, tenant) = try row.decode((String, String, String, Int32, Int64, String).self)
        guard let environment = APNsEnvironment(rawValue: environment), let policy = BroadcastChannel.StoragePolicy(rawValue: Int(policy)) else {
            throw ChannelRowError()
        }
        return (BroadcastChannel(id: id, bundleID: bundleID, environment: environment, storagePolicy: policy, createdAt: createdAt), tenant)
    }
}

/// One replica's simulated devices in PostgreSQL: its snapshot (as the SQLite file keeps one), by replica name, so
/// a replica restarted with the same `--replica` finds its devices' storage and delivery logs again. Written on the
/// publishing connection, whose queries PostgresNIO queues.
struct PostgresDeviceStates: DeviceStatePersistence {
    let connection: PostgresConnection
    let replica: String
    let logger: Logger

    func loadDevices() async throws -> [UInt8]? {
        var found: [UInt8]?
        for try await bytes in try await connection.query(
            "SELECT snapshot FROM apns_mock_device_snapshots WHERE replica = \(replica)", logger: logger
        ).decode(ByteBuffer.self) {
            found = Array(bytes.readableBytesView)
        }
        return found
    }

    func saveDevices(_ snapshot: [UInt8]) async throws {
        try await connection.query(
            """
            INSERT INTO apns_mock_device_snapshots (replica, saved_at, snapshot)
            VALUES (\(replica), \(WallClock.milliseconds()), \(ByteBuffer(bytes: snapshot)))
            ON CONFLICT (replica) DO UPDATE SET saved_at = EXCLUDED.saved_at, snapshot = EXCLUDED.snapshot
            """,
            logger: logger
        )
    }
}
