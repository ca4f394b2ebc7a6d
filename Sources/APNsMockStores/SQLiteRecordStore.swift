import APNsMock
import APNsMockServer
import Foundation
import GRDB
import GRDBSQLite

/// `--store sqlite:PATH`: every recording also kept in a SQLite database (through GRDB), so a staging mock's
/// recordings survive a restart or a redeploy.
///
/// The in-memory store stays what the admin API reads (queries, waits, the live feed); this is its durable copy,
/// written by `WriterThreadSink`'s thread in one transaction per batch, never on an event loop. At start the newest
/// `--max-recorded` rows are loaded back into memory with their sequence numbers. `--max-recorded` bounds the
/// table too (oldest first), and `DELETE /admin/notifications` empties it.
final class SQLiteRecordStore: RecordBatchWriter {
    let path: String
    /// The most rows kept (`--max-recorded`).
    let capacity: Int
    private let database: DatabaseQueue
    /// The simulated devices, kept in the same file.
    var deviceStates: SQLiteDeviceStates { SQLiteDeviceStates(database: database) }
    /// Row columns of recent request shapes and extras. Writer thread only.
    private var rowCache = RecordingRowCache()

    /// Why the store could not be opened, with the file it is about.
    struct OpenError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "--store sqlite:\(path): \(reason)" }
    }

    /// Opens (or creates) the database and brings its schema to the current version.
    init(path: String, capacity: Int) throws(OpenError) {
        self.path = path
        self.capacity = capacity
        var configuration = Configuration()
        configuration.label = "apns-mock recordings"
        // WAL: the writer's commits do not wait for readers (an operator's sqlite3 shell), and a commit is one
        // sequential append; NORMAL sync loses at most the last commits on a power cut, never the file's integrity.
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            _ = try database.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
            try Self.migrator.migrate(database)
        } catch {
            throw OpenError(path: path, reason: "\(error)")
        }
    }

    /// The schema, version by version: GRDB records which migrations ran in the file itself.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: recordings") { db in
            // The admin API's filters as columns, and what rebuilds a recording exactly: method, path, headers, the
            // kept payload bytes, the answer, the extras. No index but the sequence: the admin API queries the
            // in-memory store, this table is read back by sequence at start, and five indexes (one on a random
            // apns-id) made each insert several B-tree updates.
            try db.execute(sql: """
                CREATE TABLE recordings (
                    sequence INTEGER PRIMARY KEY,
                    received_at INTEGER NOT NULL,
                    replica TEXT,
                    connection INTEGER NOT NULL,
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
                    timestamp INTEGER,
                    auth TEXT,
                    rule TEXT,
                    warnings TEXT NOT NULL,
                    method TEXT NOT NULL,
                    path TEXT NOT NULL,
                    authority TEXT,
                    headers TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    payload_size INTEGER NOT NULL,
                    extras TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2: device states") { db in
            // One row: the device registry's snapshot (JSON), replaced whenever it is saved.
            try db.execute(sql: """
                CREATE TABLE device_states (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    saved_at INTEGER NOT NULL,
                    snapshot BLOB NOT NULL
                );
                """)
        }
        return migrator
    }

    /// The newest `capacity` recordings, oldest first, as they were recorded.
    func load() throws -> [RecordedNotification] {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM recordings ORDER BY sequence DESC LIMIT ?", arguments: [capacity])
        }
        var recordings: [RecordedNotification] = []
        recordings.reserveCapacity(rows.count)
        for row in rows.reversed() {
            let sequence: Int64 = row["sequence"]
            let recordingRow = RecordingRow(
                sequence: UInt64(sequence),
                receivedAt: row["received_at"],
                connectionID: UInt64(row["connection"] as Int64),
                streamID: Int32(truncatingIfNeeded: row["stream"] as Int64),
                kind: row["kind"],
                deviceToken: row["token"],
                topic: row["topic"],
                pushType: row["push_type"],
                priority: row["priority"],
                status: row["status"],
                reason: row["reason"],
                apnsID: row["apns_id"],
                uniqueID: row["unique_id"],
                timestamp: row["timestamp"],
                authMethod: row["auth"],
                scenarioRule: row["rule"],
                warningCodes: row["warnings"],
                method: row["method"],
                path: row["path"],
                authority: row["authority"],
                headersJSON: row["headers"],
                payload: [UInt8](row["payload"] as Data),
                payloadSize: row["payload_size"],
                extrasJSON: row["extras"]
            )
            recordings.append(try RecordedNotification(row: recordingRow))
        }
        return recordings
    }

    var forgetsClearedRecordings: Bool { true }

    /// One transaction for the batch, then the oldest rows past `capacity` go.
    func write(_ batch: [[RecordedNotification]]) -> String? {
        guard let last = batch.last?.last?.sequence else { return nil }
        do {
            try database.write { db in
                let insert = try db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO recordings (sequence, received_at, replica, connection, stream, kind, token, topic,
                        push_type, priority, status, reason, apns_id, unique_id, timestamp, auth, rule, warnings, method, path,
                        authority, headers, payload, payload_size, extras)
                    VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                // Bound with SQLite's own calls: GRDB's `StatementArguments` box each of the 24 values in an
                // existential, which was most of the writer's time.
                let statement = insert.sqliteStatement
                for recording in batch.joined() {
                    let row = RecordingRow(recording, cache: &rowCache)
                    var binder = Binder(statement: statement)
                    binder.bind(Int64(row.sequence))
                    binder.bind(row.receivedAt)
                    binder.bind(Int64(row.connectionID))
                    binder.bind(Int64(row.streamID))
                    binder.bind(row.kind)
                    binder.bind(row.deviceToken)
                    binder.bind(row.topic)
                    binder.bind(row.pushType)
                    binder.bind(row.priority.map(Int64.init))
                    binder.bind(row.status.map(Int64.init))
                    binder.bind(row.reason)
                    binder.bind(row.apnsID)
                    binder.bind(row.uniqueID)
                    binder.bind(row.timestamp)
                    binder.bind(row.authMethod)
                    binder.bind(row.scenarioRule)
                    binder.bind(row.warningCodes)
                    binder.bind(row.method)
                    binder.bind(row.path)
                    binder.bind(row.authority)
                    binder.bind(row.headersJSON)
                    binder.bind(blob: row.payload)
                    binder.bind(Int64(row.payloadSize))
                    binder.bind(row.extrasJSON)
                    let code = sqlite3_step(statement)
                    sqlite3_reset(statement)
                    guard code == SQLITE_DONE else {
                        throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                    }
                }
                // Sequences have no gaps within a run, so this keeps the newest `capacity` (one indexed range delete).
                if last > UInt64(capacity) {
                    try db.execute(sql: "DELETE FROM recordings WHERE sequence <= ?", arguments: [Int64(last) - Int64(capacity)])
                }
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    func clear(upTo sequence: UInt64) -> String? {
        do {
            try database.write { db in
                try db.execute(sql: "DELETE FROM recordings WHERE sequence <= ?", arguments: [Int64(clamping: sequence)])
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    func clear(tenant: String, upTo sequence: UInt64) -> String? {
        do {
            try database.write { db in
                try db.execute(
                    sql: "DELETE FROM recordings WHERE sequence <= ? AND json_extract(extras, '$.tenant') = ?",
                    arguments: [Int64(clamping: sequence), tenant]
                )
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    func close() -> String? {
        do {
            try database.close()
            return nil
        } catch {
            return "\(error)"
        }
    }
}

/// Binds an insert's values in order, copying each (SQLite's `SQLITE_TRANSIENT`).
private struct Binder {
    let statement: OpaquePointer
    private var index: Int32 = 0
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(statement: OpaquePointer) {
        self.statement = statement
    }

    mutating func bind(_ value: Int64?) {
        index += 1
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }

    mutating func bind(_ text: String?) {
        index += 1
        guard var text else {
            sqlite3_bind_null(statement, index)
            return
        }
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters in
                if let base = characters.baseAddress {
                    _ = sqlite3_bind_text(statement, index, base, Int32(characters.count), Self.transient)
                } else {
                    // An empty string's buffer may have no address.
                    _ = sqlite3_bind_text(statement, index, "", 0, Self.transient)
                }
            }
        }
    }

    mutating func bind(blob bytes: [UInt8]) {
        index += 1
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress {
                _ = sqlite3_bind_blob(statement, index, base, Int32(buffer.count), Self.transient)
            } else {
                _ = sqlite3_bind_zeroblob(statement, index, 0)
            }
        }
    }
}

/// The simulated devices in the SQLite file: one snapshot, written by the saver's task, read at start. GRDB's
/// queue serializes it with the recordings' writer thread.
struct SQLiteDeviceStates: DeviceStatePersistence {
    let database: DatabaseQueue

    func loadDevices() throws -> [UInt8]? {
        try database.read { db in
            try Data.fetchOne(db, sql: "SELECT snapshot FROM device_states WHERE id = 1").map { Array($0) }
        }
    }

    func saveDevices(_ snapshot: [UInt8]) throws {
        let savedAt = WallClock.milliseconds()
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO device_states (id, saved_at, snapshot) VALUES (1, ?, ?)",
                arguments: [savedAt, Data(snapshot)]
            )
        }
    }
}
