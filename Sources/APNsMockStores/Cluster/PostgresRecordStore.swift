import APNsMock
import APNsMockServer
import Logging
import NIOCore
import PostgresNIO

/// `--store postgres://…`: every recording this replica answered, written to the shared `apns_mock_recordings`
/// table by `WriterThreadSink`'s thread, one transaction per batch, never on an event loop.
///
/// A batch is one `COPY … FROM STDIN` (the fastest way PostgreSQL takes rows), under the advisory lock that makes
/// ids follow commit order, and a `NOTIFY` tells the other replicas to read what is new. The NOTIFY is part of the
/// transaction: it is delivered only if the rows are there. The oldest rows past `--max-recorded` go in a DELETE
/// of its own, on a connection of its own, beside the next batches (see `trimIfIdle`).
final class PostgresRecordStore: RecordBatchWriter {
    let replica: String
    let capacity: Int
    private let connection: PostgresConnection
    /// Retention's own connection: its DELETE runs in a backend of its own, beside the next batch's COPY.
    private let retention: PostgresConnection
    private let logger: Logger

    init(connection: PostgresConnection, retention: PostgresConnection, replica: String, capacity: Int, logger: Logger) {
        self.connection = connection
        self.retention = retention
        self.replica = replica
        self.capacity = capacity
        self.logger = logger
    }

    static let columns = [
        "replica", "replica_sequence", "received_at", "connection", "stream", "kind", "token", "topic", "push_type", "priority",
        "status", "reason", "apns_id", "unique_id", "timestamp", "auth", "rule", "warnings", "method", "path", "authority", "headers",
        "payload", "payload_size", "extras",
    ]

    var forgetsClearedRecordings: Bool { true }

    static let rowsPerChunk = 2_000

    /// Row columns of recent request shapes and extras. Writer thread only.
    nonisolated(unsafe) private var rowCache = RecordingRowCache()
    /// The previous batch's transaction, still running: the writer encodes the next batch meanwhile. Writer thread
    /// only.
    nonisolated(unsafe) private var inFlight: BlockingWork<Void>?

    /// Encodes the batch, waits for the previous batch's transaction, then starts this one's and returns without
    /// waiting for it: PostgreSQL takes one batch while the next is encoded (one after the other, its backend sat
    /// idle while the writer encoded). Returns the previous batch's error, if any; `close` the last one's.
    func write(_ batch: [[RecordedNotification]]) -> String? {
        let total = batch.recordingCount
        guard total > 0 else { return nil }
        // Encoded here, on the writer thread (the event loop only sends the bytes), in chunks of rows: one COPY
        // streams them all, and a large batch is never one buffer of tens of megabytes.
        var chunks: [ByteBuffer] = []
        var rows = CopyTextEncoder(capacity: min(Self.rowsPerChunk, total) * 512)
        for (index, recording) in batch.joined().enumerated() {
            if index > 0, index % Self.rowsPerChunk == 0 {
                chunks.append(rows.buffer)
                rows = CopyTextEncoder(capacity: min(Self.rowsPerChunk, total - index) * 512)
            }
            rows.append(RecordingRow(recording, cache: &rowCache), replica: replica)
        }
        chunks.append(rows.buffer)
        let previous = finishInFlight()
        let data = chunks
        let (connection, logger, replica) = (self.connection, self.logger, self.replica)
        inFlight = BlockingWork {
            try await Self.transaction(connection, logger: logger) {
                try await connection.copyFrom(table: "apns_mock_recordings", columns: Self.columns, logger: logger) { writer in
                    for chunk in data { try await writer.write(chunk) }
                }
                let payload = ClusterNotice.recordings(replica: replica).payload
                try await connection.query("SELECT pg_notify(\(PostgresSchema.channel), \(payload))", logger: logger)
            }
        }
        trimIfIdle()
        return previous
    }

    /// The retention DELETE running, if any. Writer thread only.
    nonisolated(unsafe) private var trimming: BlockingWork<Void>?

    /// Starts the retention DELETE (the oldest rows past `--max-recorded` go) unless the previous one is still
    /// running: one DELETE covers every batch committed before it, so a skipped turn is caught up by the next.
    /// Run in the batch's transaction it held the advisory lock, and the next batch, through its whole cost, which
    /// is large once the table is full and each batch deletes as many rows as it inserts.
    private func trimIfIdle() {
        if let trimming {
            guard trimming.isFinished else { return }
            if case .failure(let error) = trimming.wait() {
                logger.warning("apns-mock: PostgreSQL retention failed", metadata: ["error": "\(PostgresConnector.describe(error))"])
            }
        }
        let (retention, logger, capacity) = (self.retention, self.logger, self.capacity)
        trimming = BlockingWork {
            try await retention.query(
                """
                DELETE FROM apns_mock_recordings
                WHERE id <= (SELECT max(id) FROM apns_mock_recordings) - \(Int64(capacity))
                """,
                logger: logger
            )
        }
    }

    /// Waits for the batch in flight, if any; returns its error.
    private func finishInFlight() -> String? {
        guard let work = inFlight else { return nil }
        inFlight = nil
        guard case .failure(let error) = work.wait() else { return nil }
        return PostgresConnector.describe(error)
    }

    /// `DELETE /admin/notifications`: every row committed so far goes, on every replica (they clear their memory on
    /// the notification). `sequence` is this replica's; the table is the cluster's, so all of it goes.
    func clear(upTo sequence: UInt64) -> String? {
        deleteCommittedRows(tenant: nil)
    }

    /// A tenant's `DELETE /admin/notifications`: its rows go, on every replica (each clears that tenant in memory
    /// on the notification); the other tenants' stay.
    func clear(tenant: String, upTo sequence: UInt64) -> String? {
        deleteCommittedRows(tenant: tenant)
    }

    /// Deletes every row committed so far (`tenant`'s only, when given) and tells the other replicas, in one
    /// transaction, after the batch in flight, so that the rows it commits go too.
    private func deleteCommittedRows(tenant: String?) -> String? {
        let previous = finishInFlight()
        let (connection, logger, replica) = (self.connection, self.logger, self.replica)
        do {
            try runBlocking {
                try await Self.transaction(connection, logger: logger) {
                    var last: Int64 = 0
                    for try await id in try await connection.query("SELECT coalesce(max(id), 0) FROM apns_mock_recordings", logger: logger)
                        .decode(Int64.self)
                    {
                        last = id
                    }
                    let notice: ClusterNotice
                    if let tenant {
                        try await connection.query(
                            "DELETE FROM apns_mock_recordings WHERE id <= \(last) AND (extras::json ->> 'tenant') = \(tenant)", logger: logger
                        )
                        notice = .tenantCleared(tenant: tenant, upTo: last, replica: replica)
                    } else {
                        try await connection.query("DELETE FROM apns_mock_recordings WHERE id <= \(last)", logger: logger)
                        notice = .cleared(upTo: last, replica: replica)
                    }
                    try await connection.query("SELECT pg_notify(\(PostgresSchema.channel), \(notice.payload))", logger: logger)
                }
            }
            return previous
        } catch {
            return previous ?? PostgresConnector.describe(error)
        }
    }

    func close() -> String? {
        let last = finishInFlight()
        // The table ends bounded: the last batch's rows may pass `--max-recorded` until one more DELETE.
        _ = trimming?.wait()
        trimming = nil
        trimIfIdle()
        _ = trimming?.wait()
        let (connection, retention) = (self.connection, self.retention)
        _ = try? runBlocking {
            try await connection.close()
            try await retention.close()
        }
        return last
    }

    /// Runs `body` in a transaction holding the recordings' advisory lock; rolls back on error.
    static func transaction(_ connection: PostgresConnection, logger: Logger, _ body: () async throws -> Void) async throws {
        try await connection.query("BEGIN", logger: logger)
        do {
            try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.lockKey))", logger: logger)
            try await body()
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}

/// Rows in `COPY … FROM STDIN`'s text format: tab-separated, `\N` for null, backslash escapes, bytea as hex.
struct CopyTextEncoder {
    private(set) var buffer: ByteBuffer
    private var atRowStart = true

    init(capacity: Int) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    mutating func append(_ row: RecordingRow, replica: String) {
        text(replica)
        integer(Int64(row.sequence))
        integer(row.receivedAt)
        integer(Int64(row.connectionID))
        integer(Int64(row.streamID))
        text(row.kind)
        text(row.deviceToken)
        text(row.topic)
        text(row.pushType)
        integer(row.priority.map(Int64.init))
        integer(row.status.map(Int64.init))
        text(row.reason)
        text(row.apnsID)
        text(row.uniqueID)
        integer(row.timestamp)
        text(row.authMethod)
        text(row.scenarioRule)
        text(row.warningCodes)
        text(row.method)
        text(row.path)
        text(row.authority)
        text(row.headersJSON)
        bytea(row.payload)
        integer(Int64(row.payloadSize))
        text(row.extrasJSON)
        buffer.writeInteger(UInt8(ascii: "\n"))
        atRowStart = true
    }

    private mutating func separate() {
        if !atRowStart { buffer.writeInteger(UInt8(ascii: "\t")) }
        atRowStart = false
    }

    private mutating func null() {
        buffer.writeStaticString("\\N")
    }

    mutating func integer(_ value: Int64?) {
        separate()
        guard let value else { return null() }
        buffer.writeString(String(value))
    }

    /// Runs of plain bytes are copied whole: the writer encodes every recording, and byte-at-a-time writes were
    /// most of its time.
    mutating func text(_ value: String?) {
        separate()
        guard var value else { return null() }
        value.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let escaped: StaticString
                switch bytes[index] {
                case UInt8(ascii: "\\"): escaped = "\\\\"
                case UInt8(ascii: "\n"): escaped = "\\n"
                case UInt8(ascii: "\r"): escaped = "\\r"
                case UInt8(ascii: "\t"): escaped = "\\t"
                // PostgreSQL text cannot hold NUL; HTTP/2 header values cannot either, so none is lost in practice.
                case 0: escaped = ""
                default: continue
                }
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                buffer.writeStaticString(escaped)
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start...])))
        }
    }

    /// `\\x` then hex digits: the backslash of bytea's hex form, itself escaped for COPY.
    mutating func bytea(_ bytes: [UInt8]) {
        separate()
        buffer.writeStaticString("\\\\x")
        let count = bytes.count * 2
        guard count > 0 else { return }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { output in
            bytes.withUnsafeBytes { input in
                HexDigits.write(input, uppercase: false, to: output.baseAddress!)
            }
            return count
        }
    }
}
