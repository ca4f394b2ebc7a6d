/// A consumer of recordings besides the in-memory store: the NDJSON file, a live feed, a database.
///
/// `enqueue` is called with every recording in sequence order, while the recorder's lock is held: it must only
/// queue (never block, never call back into the recorder). The sink does its work on its own thread or task.
package protocol RecordingSink: AnyObject, Sendable {
    /// A short name for logs, `/admin/stats` and `/metrics` (`file`).
    var name: String { get }
    func enqueue(_ recording: RecordedNotification)
    /// Several recordings, in sequence order (a read batch's): one acquisition of the sink's own lock, not one each.
    func enqueue(contentsOf recordings: [RecordedNotification])
    /// As `enqueue(contentsOf:)`, for the last sink given a batch: it may move the recordings out of the array
    /// (leaving it empty) instead of copying them, a retain and a release fewer of every object each one holds.
    func enqueue(moving recordings: inout [RecordedNotification])
    /// Called by the recorder on an event loop after each batch it stored, with no lock held: a sink whose
    /// consumer runs on another thread lets go here of the recordings it has finished with, so that their shared
    /// storage is released on the thread that retains it (see `SinkQueue.giveBack`). Cheap when there are none.
    func releaseWritten()
    /// False while the sink would drop whatever it is given (a live feed with no reader): the recorder then skips
    /// making its copies.
    var isListening: Bool { get }
    /// True for a view of everything the service received (a live feed): it is also given the recordings other
    /// replicas answered, read from a shared store. False for a sink that keeps this replica's own (a file, a store).
    var receivesOtherReplicas: Bool { get }
    /// True while the sink writes the simulated devices' delivery events (the record file, a live feed with a
    /// reader); the devices then hand it each data point with `enqueue(deliveries:)`.
    var wantsDeliveries: Bool { get }
    /// Data points of delivery logs, in the order they happened: each log as it was then, its last event the new
    /// one. Called with a device registry's lock held: it must only queue. A data point is given after the
    /// recording of its push.
    func enqueue(deliveries: [DeliveryRecord])
    /// Its queue and what it has done so far.
    func statistics() -> RecordingSinkStatistics
    /// `DELETE /admin/notifications`: every recording up to this sequence number is gone from the store; a sink
    /// that keeps recordings forgets them too, those still queued included.
    func cleared(upTo sequence: UInt64)
    /// A tenant's `DELETE /admin/notifications`: that tenant's recordings up to this sequence number are gone.
    func cleared(tenant: String, upTo sequence: UInt64)
    /// Writes everything queued, then stops taking recordings; returns when done or when `timeout` passes.
    func finish(timeout: Duration) async -> RecordingSinkStatistics
}

extension RecordingSink {
    package var isListening: Bool { true }

    package var receivesOtherReplicas: Bool { false }

    package var wantsDeliveries: Bool { false }

    package func enqueue(deliveries: [DeliveryRecord]) {}

    package func cleared(upTo sequence: UInt64) {}

    package func cleared(tenant: String, upTo sequence: UInt64) {}

    package func releaseWritten() {}

    package func enqueue(contentsOf recordings: [RecordedNotification]) {
        for recording in recordings { enqueue(recording) }
    }

    package func enqueue(moving recordings: inout [RecordedNotification]) {
        enqueue(contentsOf: recordings)
    }
}

/// A sink's counts, as `/admin/stats` and `/metrics` show them.
package struct RecordingSinkStatistics: Sendable, Equatable {
    package var name: String
    /// `back-pressure` or `skip-ahead`: what happens when its queue is full.
    package var policy: SinkQueuePolicy
    package var capacity: Int
    /// Recordings waiting now: the sink's lag.
    package var queued: Int
    /// The most ever waiting at once.
    package var peakQueued: Int
    /// Recordings the sink has finished with (written to the file, sent to the reader).
    package var written: UInt64
    /// Recordings a skip-ahead sink let go because it fell behind (always 0 with back-pressure).
    package var skipped: UInt64
    /// Times the queue reached its capacity and the provider port paused reading until it drained.
    package var backPressurePauses: UInt64
    /// The last write error, if any (the sink keeps counting what it could not write as not written).
    package var lastError: String?

    package init(name: String, policy: SinkQueuePolicy, capacity: Int) {
        self.name = name
        self.policy = policy
        self.capacity = capacity
        self.queued = 0
        self.peakQueued = 0
        self.written = 0
        self.skipped = 0
        self.backPressurePauses = 0
        self.lastError = nil
    }
}
