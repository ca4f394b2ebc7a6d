import Logging
import PostgresNIO

/// The tables replicas share in PostgreSQL, version by version.
///
/// Every table is prefixed `apns_mock_`, so the mock can share a database with other things. Migrations run in one
/// transaction under an advisory lock, so replicas starting together do not race; `apns_mock_schema` records which
/// ran.
enum PostgresSchema {
    /// The advisory lock that serialises migrations and recording inserts (ids then follow commit order, which is
    /// what lets a replica follow the table with `id > last seen`).
    static let lockKey: Int64 = 0x4150_4E73_4D6F_636B  // "APNsMock"

    /// The `NOTIFY` channel every change is announced on.
    static let channel = "apns_mock"

    static let migrations: [(version: Int, sql: [String])] = [
        (
            1,
            [
                // The admin API's filters as columns, and what rebuilds a recording exactly. `id` is the cluster's
                // order: inserts hold the advisory lock, so ids are handed out in commit order. Indexed: the device
                // token, the lookup an operator's SQL makes ("what did this device get?"). The admin API filters in
                // memory, and indexes on topic, status and apns-id as well, each updated on every insert, cost much
                // of the store's throughput for queries the store does not serve, so those are left to a sequential
                // scan.
                """
                CREATE TABLE apns_mock_recordings (
                    id BIGSERIAL PRIMARY KEY,
                    replica TEXT NOT NULL,
                    replica_sequence BIGINT NOT NULL,
                    received_at BIGINT NOT NULL,
                    connection BIGINT NOT NULL,
                    stream INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    token TEXT,
                    topic TEXT,
                    push_type TEXT,
                    priority INTEGER,
                    status INTEGER,
                    reason TEXT,
                    apns_id TEXT,
                    unique_id TEXT,
                    timestamp BIGINT,
                    auth TEXT,
                    rule TEXT,
                    warnings TEXT NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    authority TEXT,
                    headers TEXT NOT NULL,
                    payload BYTEA NOT NULL,
                    payload_size INTEGER NOT NULL,
                    extras TEXT NOT NULL
                )
                """,
                "CREATE INDEX apns_mock_recordings_token ON apns_mock_recordings (token)",
                // Devices added, unregistered or removed at run time (a scenario's come from the scenario), by
                // normalised token, as the device JSON the admin API takes.
                "CREATE TABLE apns_mock_devices (token TEXT PRIMARY KEY, body TEXT NOT NULL, replica TEXT NOT NULL)",
                """
                CREATE TABLE apns_mock_channels (
                    id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, environment TEXT NOT NULL, storage_policy INTEGER NOT NULL,
                    created_at BIGINT NOT NULL, replica TEXT NOT NULL
                )
                """,
                // The scenario in force: one row, its text and version.
                """
                CREATE TABLE apns_mock_scenario (
                    id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL, source TEXT NOT NULL, replica TEXT NOT NULL
                )
                """,
            ]
        ),
        (
            2,
            [
                // Each tenant's scenario (`--tenants`), its text and version in that tenant; the `unidentified`
                // tenant's is `apns_mock_scenario`.
                """
                CREATE TABLE apns_mock_tenant_scenarios (
                    tenant TEXT PRIMARY KEY, version BIGINT NOT NULL, source TEXT NOT NULL, replica TEXT NOT NULL
                )
                """
            ]
        ),
        (
            3,
            [
                // Each tenant's devices and channels made at run time, beside the `unidentified` tenant's (and, without
                // tenants, every one), which keep the tenant ''.
                "ALTER TABLE apns_mock_devices ADD COLUMN tenant TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE apns_mock_devices DROP CONSTRAINT apns_mock_devices_pkey",
                "ALTER TABLE apns_mock_devices ADD PRIMARY KEY (tenant, token)",
                "ALTER TABLE apns_mock_channels ADD COLUMN tenant TEXT NOT NULL DEFAULT ''",
                "ALTER TABLE apns_mock_channels DROP CONSTRAINT apns_mock_channels_pkey",
                "ALTER TABLE apns_mock_channels ADD PRIMARY KEY (tenant, id)",
            ]
        ),
        (
            4,
            [
                // Each replica's simulated devices as it last saved them (what is stored for them, their delivery
                // logs, the clock's offset: what the replicas do not share), the snapshot the SQLite file keeps.
                "CREATE TABLE apns_mock_device_snapshots (replica TEXT PRIMARY KEY, saved_at BIGINT NOT NULL, snapshot BYTEA NOT NULL)"
            ]
        ),
    ]

    /// Brings the database's schema to the newest version.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS apns_mock_schema (version INTEGER PRIMARY KEY)", logger: logger)
            var applied = 0
            for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM apns_mock_schema", logger: logger)
                .decode(Int.self)
            {
                applied = version
            }
            for migration in migrations where migration.version > applied {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO apns_mock_schema (version) VALUES (\(migration.version))", logger: logger)
                logger.info("PostgreSQL schema migrated", metadata: ["version": "\(migration.version)"])
            }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
