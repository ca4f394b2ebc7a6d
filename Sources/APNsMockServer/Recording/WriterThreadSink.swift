import APNsMock
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// What a lossless sink does on its own thread with each batch it takes: the NDJSON file, the SQLite store.
/// Called from that thread only.
package protocol RecordBatchWriter: AnyObject {
    /// Writes a batch (in sequence order: the arrays event loops handed over, each in order, none empty); returns
    /// the error, if any, as text.
    func write(_ batch: [[RecordedNotification]]) -> String?
    /// Whether `DELETE /admin/notifications` concerns it: a store forgets, a log (the NDJSON file) keeps.
    var forgetsClearedRecordings: Bool { get }
    /// Forgets every recording up to `sequence` (`DELETE /admin/notifications`); returns the error, if any.
    func clear(upTo sequence: UInt64) -> String?
    /// Forgets one tenant's recordings up to `sequence` (a tenant's `DELETE /admin/notifications`).
    func clear(tenant: String, upTo sequence: UInt64) -> String?
    /// Writes out what `write` held back: called when the queue is empty, so the writer is idle only with
    /// everything written.
    func flush() -> String?
    /// Whether it writes the simulated devices' delivery events (the record file does; a store keeps the devices'
    /// logs in their snapshot instead).
    var writesDeliveries: Bool { get }
    /// Writes data points of delivery logs, in order; called after the recordings of their pushes were written.
    func write(deliveries: [DeliveryRecord]) -> String?
    /// Makes what was written durable and lets go of the file; returns the error, if any (a writer that overlaps a
    /// batch with the next reports the last one's here).
    func close() -> String?
}

extension [[RecordedNotification]] {
    /// The recordings in a writer's batch (see `RecordBatchWriter.write`).
    package var recordingCount: Int { reduce(0) { $0 + $1.count } }
}

extension RecordBatchWriter {
    package func flush() -> String? { nil }
    package var writesDeliveries: Bool { false }
    package func write(deliveries: [DeliveryRecord]) -> String? { nil }
}

/// A lossless sink whose writer runs on a thread of its own, so that neither encoding nor a slow disk or
/// database ever runs on an event loop.
///
/// Its queue is bounded (`capacity`); when it is full the provider port stops reading until the queue has drained
/// to half (back-pressure, counted in `backPressurePauses`): nothing is lost, and memory stays bounded.
/// `finish` writes what is queued and closes the writer.
package final class WriterThreadSink: RecordingSink {
    package let name: String
    /// Used by the writer thread only, after `init`.
    nonisolated(unsafe) private let writer: any RecordBatchWriter
    private let forgetsClearedRecordings: Bool
    package let wantsDeliveries: Bool
    private let backPressure: RecordingBackPressure
    private let queue: Mutex<SinkQueue<RecordedNotification>>
    /// The writer gave a written batch back (`SinkQueue.giveBack`): read without the lock by every commit, written
    /// with it held.
    private let hasWrittenBatch = Atomic(false)
    /// Wakes the writer thread; guarded by its own lock.
    private let wake = NSCondition()
    private let control = Mutex(Control())
    private let writerExited = NSCondition()

    private struct Control {
        var finishing = false
        var exited = false
        /// The clears the writer has not carried out yet, in order (`nil` tenant: every recording).
        var pendingClears: [(tenant: String?, upTo: UInt64)] = []
        /// Recordings up to this sequence were cleared: queued ones are not written.
        var clearedUpTo: UInt64 = 0
        /// As `clearedUpTo`, for one tenant's recordings.
        var tenantClearedUpTo: [String: UInt64] = [:]
        /// Delivery data points waiting for the writer, in order. Not bounded by a capacity of their own: each
        /// comes from a push the bounded recordings queue let through (a few each) or from a stored push.
        var deliveries: [DeliveryRecord] = []

        /// Whether a recording queued before a clear was cleared since.
        func wasCleared(_ recording: RecordedNotification) -> Bool {
            if recording.sequence <= clearedUpTo { return true }
            guard !tenantClearedUpTo.isEmpty, let tenant = recording.tenant, let upTo = tenantClearedUpTo[tenant] else { return false }
            return recording.sequence <= upTo
        }
    }

    /// How long the writer waits for more after a batch before it sleeps until woken: under load, a batch every
    /// few milliseconds instead of one (and a wake-up) per read (see `SinkQueue.linger()`). A line reaches the file
    /// at most this much later than it would have.
    static let linger: TimeInterval = 0.005

    /// Starts the writer thread.
    /// - Parameter capacity: recordings queued before the provider port is paused.
    package init(name: String, writer: any RecordBatchWriter, capacity: Int = 65_536, backPressure: RecordingBackPressure) {
        self.name = name
        self.writer = writer
        self.forgetsClearedRecordings = writer.forgetsClearedRecordings
        self.wantsDeliveries = writer.writesDeliveries
        self.backPressure = backPressure
        self.queue = Mutex(SinkQueue(name: name, capacity: capacity, policy: .backPressure))
        let thread = Thread { [self] in runWriter() }
        thread.name = "apns-mock \(name) writer"
        thread.start()
    }

    package func cleared(upTo sequence: UInt64) {
        guard forgetsClearedRecordings else { return }
        control.withLock { control in
            control.pendingClears.append((tenant: nil, upTo: sequence))
            control.clearedUpTo = max(control.clearedUpTo, sequence)
        }
        wakeWriter()
    }

    package func cleared(tenant: String, upTo sequence: UInt64) {
        guard forgetsClearedRecordings else { return }
        control.withLock { control in
            control.pendingClears.append((tenant: tenant, upTo: sequence))
            control.tenantClearedUpTo[tenant] = max(control.tenantClearedUpTo[tenant] ?? 0, sequence)
        }
        wakeWriter()
    }

    package func enqueue(deliveries: [DeliveryRecord]) {
        guard wantsDeliveries else { return }
        // As for recordings: woken by the first data point it has not taken yet, and not while it lingers (it looks
        // again within moments), so a load brings no wake-up per read.
        let first = control.withLock { control in
            defer { control.deliveries += deliveries }
            return control.deliveries.isEmpty
        }
        if first, !queue.withLock({ $0.consumerLingers }) { wakeWriter() }
    }

    package func enqueue(_ recording: RecordedNotification) {
        enqueue(contentsOf: [recording])
    }

    package func enqueue(contentsOf recordings: [RecordedNotification]) {
        carryOut(queue.withLock { $0.pushRecordings(contentsOf: recordings) })
    }

    package func enqueue(moving recordings: inout [RecordedNotification]) {
        carryOut(queue.withLock { $0.pushRecordings(moving: &recordings) })
    }

    package func releaseWritten() {
        guard hasWrittenBatch.load(ordering: .relaxed) else { return }
        letGoOfWrittenBatch()
    }

    /// Empties the batch the writer gave back on this thread, outside the queue's lock, and gives the queue its
    /// capacity back (see `SinkQueue.giveBack`).
    private func letGoOfWrittenBatch() {
        guard var spent = queue.withLock({ queue -> [[RecordedNotification]]? in
            hasWrittenBatch.store(false, ordering: .relaxed)
            return queue.takeWritten()
        }) else { return }
        recycle(&spent)
    }

    /// Empties each array here, outside the lock, keeping its capacity, and gives them to the queue to fill again.
    private func recycle(_ chunks: inout [[RecordedNotification]]) {
        for index in chunks.indices { chunks[index].removeAll(keepingCapacity: true) }
        queue.withLock { $0.recycle(&chunks) }
    }

    private func carryOut(_ action: SinkQueue<RecordedNotification>.PushAction) {
        switch action {
        case .none:
            break
        case .wakeConsumer:
            wakeWriter()
        case .engageBackPressure:
            backPressure.engage()
            wakeWriter()
        }
    }

    package func statistics() -> RecordingSinkStatistics {
        queue.withLock { $0.statistics }
    }

    package func finish(timeout: Duration) async -> RecordingSinkStatistics {
        control.withLock { $0.finishing = true }
        wakeWriter()
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18)
        // Waited for on a thread of its own: the writer may need seconds, and the cooperative pool must not block.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                self.writerExited.lock()
                while !self.control.withLock({ $0.exited }) {
                    if !self.writerExited.wait(until: deadline) { break }
                }
                self.writerExited.unlock()
                continuation.resume()
            }.start()
        }
        return statistics()
    }

    private func wakeWriter() {
        wake.lock()
        wake.signal()
        wake.unlock()
    }

    /// The writer thread: takes everything queued and hands it to the writer as one batch, until `finish` is
    /// called and the queue is empty.
    private func runWriter() {
        #if os(Linux)
        // The name `top -H` and `perf` show (Foundation's is its own; Swift sees no `pthread_setname_np`). Linux
        // keeps 15 bytes: "postgres writer" is the longest.
        try? "\(name) writer".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        #endif
        // Whether the last wait was a linger that found nothing: the next wait sleeps until woken.
        var lingered = false
        while true {
            let clears = control.withLock { control in
                defer { control.pendingClears.removeAll() }
                return control.pendingClears
            }
            for clear in clears {
                let error = clear.tenant.map { writer.clear(tenant: $0, upTo: clear.upTo) } ?? writer.clear(upTo: clear.upTo)
                if let error { queue.withLock { $0.failed(error) } }
            }
            // Taken before the recordings: a data point is queued after its push's recording, which is then in this
            // batch or an earlier one, and so written first.
            let deliveries = control.withLock { control in
                defer { control.deliveries.removeAll() }
                return control.deliveries
            }
            var release = false
            var batch = queue.withLock { queue -> [[RecordedNotification]] in
                let taken = queue.takeChunks()
                release = taken.action == .releaseBackPressure
                return taken.chunks
            }
            if release { backPressure.release() }
            if batch.isEmpty, !deliveries.isEmpty {
                var error = writer.write(deliveries: deliveries)
                if error == nil, queue.withLock({ $0.count == 0 }) { error = writer.flush() }
                if let error { queue.withLock { $0.failed(error) } }
                continue
            }
            if batch.isEmpty {
                // Nothing came while it lingered: the load has stopped, and no event loop will come for the batch
                // given back, whose recordings would stay in memory after the store let them go.
                if lingered { letGoOfWrittenBatch() }
                if control.withLock({ $0.finishing }) { break }
                wake.lock()
                // Decided under the condition's lock, so a push between the take and the wait is not missed: it
                // either finds the writer lingering (and the writer looks again after `linger`) or signals it.
                if !control.withLock({ $0.finishing || !$0.pendingClears.isEmpty || !$0.deliveries.isEmpty }) {
                    switch queue.withLock({ $0.idle(lingeredAlready: lingered) }) {
                    case .takeAgain:
                        break
                    case .linger:
                        lingered = true
                        _ = wake.wait(until: Date().addingTimeInterval(Self.linger))
                    case .sleep:
                        _ = wake.wait(until: Date().addingTimeInterval(0.5))
                    }
                }
                wake.unlock()
                continue
            }
            lingered = false
            // Recordings a clear has removed from the store since they were queued are not written.
            // The queue is in sequence order: a tenant's clear older than this batch concerns nothing queued any more.
            let first = batch[0][0].sequence
            let (clearedUpTo, anyTenantCleared) = control.withLock { control in
                if !control.tenantClearedUpTo.isEmpty { control.tenantClearedUpTo = control.tenantClearedUpTo.filter { $0.value >= first } }
                return (control.clearedUpTo, !control.tenantClearedUpTo.isEmpty)
            }
            var error: String?
            if first > clearedUpTo, !anyTenantCleared {
                error = writer.write(batch)
            } else {
                let cleared = control.withLock { $0 }
                let kept = batch.compactMap { chunk -> [RecordedNotification]? in
                    let kept = chunk.filter { !cleared.wasCleared($0) }
                    return kept.isEmpty ? nil : kept
                }
                if !kept.isEmpty { error = writer.write(kept) }
            }
            if error == nil, !deliveries.isEmpty { error = writer.write(deliveries: deliveries) }
            // Nothing more queued: what the writer held back goes out before the batch counts as written.
            if error == nil, queue.withLock({ $0.count == 0 }) { error = writer.flush() }
            let count = batch.recordingCount
            // Given back for an event loop to let go of (see `SinkQueue.giveBack`), unless the last one still waits.
            let givenBack = queue.withLock { queue in
                queue.finished(count)
                if let error { queue.failed(error) }
                queue.linger()
                guard queue.giveBack(&batch) else { return false }
                hasWrittenBatch.store(true, ordering: .relaxed)
                return true
            }
            if !givenBack { recycle(&batch) }
        }
        // Anything left engaged must not hold the provider port once the file is done.
        if queue.withLock({ $0.isPushingBack }) { backPressure.release() }
        if let error = writer.close() { queue.withLock { $0.failed(error) } }
        writerExited.lock()
        control.withLock { $0.exited = true }
        writerExited.broadcast()
        writerExited.unlock()
    }
}
