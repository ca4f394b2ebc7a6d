import Foundation
import Synchronization
import Testing

@testable import APNsMock
@testable import APNsMockServer

/// The writer thread of the file and SQLite sinks, with a writer that only counts: every recording written once, in
/// order, and the recordings it has finished with let go of, by an event loop (`releaseWritten`) or, once the load
/// stops, by the writer itself.
@Suite("Writer thread sink")
struct WriterThreadSinkTests {
    /// Keeps the sequence numbers it is given, on the writer thread.
    final class CountingWriter: RecordBatchWriter, Sendable {
        let sequences = Mutex<[UInt64]>([])
        let closed = Mutex(false)
        var forgetsClearedRecordings: Bool { false }

        func write(_ batch: [[RecordedNotification]]) -> String? {
            sequences.withLock { $0 += batch.joined().map(\.sequence) }
            return nil
        }

        func clear(upTo sequence: UInt64) -> String? { nil }
        func clear(tenant: String, upTo sequence: UInt64) -> String? { nil }

        func close() -> String? {
            closed.withLock { $0 = true }
            return nil
        }
    }

    static func recordings(_ sequences: ClosedRange<UInt64>) -> [RecordedNotification] {
        sequences.map { sequence in
            RecordedNotification(
                sequence: sequence, receivedAt: 1_764_000_000_000, connectionID: 1, streamID: Int32(2 * sequence + 1),
                request: APNsRequest(method: "POST", path: "/3/device/" + String(repeating: "ab", count: 32), headers: [], payload: Array(#"{"aps":{}}"#.utf8)),
                response: APNsResponse(status: 200, apnsID: "9D3B5C8E-0000-4000-8000-000000000001")
            )
        }
    }

    /// Batches handed over by moving, as the recorder does, from two threads in turn with `releaseWritten` after
    /// each, as event loops do: every recording written once and in order, and every one let go of once the load
    /// stops (a weak reference to each one's storage ends), so the sink keeps nothing the store has evicted.
    @Test func everyRecordingIsWrittenInOrderAndLetGoOf() async throws {
        let writer = CountingWriter()
        let sink = WriterThreadSink(name: "test", writer: writer, capacity: 1_000, backPressure: RecordingBackPressure())
        let weakStorages = Mutex<[WeakStorage]>([])
        let batches = 200
        let perBatch: UInt64 = 50
        for index in 0..<UInt64(batches) {
            var batch = Self.recordings((index * perBatch + 1)...((index + 1) * perBatch))
            weakStorages.withLock { $0 += batch.map { WeakStorage($0.storage) } }
            // Alternating threads, as two event loops would.
            await Task.detached { [batch] in
                var moved = batch
                sink.enqueue(moving: &moved)
                sink.releaseWritten()
            }.value
            batch.removeAll()
        }
        let total = batches * Int(perBatch)
        _ = try await poll("\(total) recordings written") {
            sink.statistics().written == UInt64(total) ? true : nil
        }
        #expect(writer.sequences.withLock { $0 } == Array(1...UInt64(total)))
        _ = try await poll("every written recording let go of") {
            weakStorages.withLock { $0.allSatisfy { $0.storage == nil } } ? true : nil
        }
        let final = await sink.finish(timeout: .seconds(5))
        #expect(final.written == UInt64(total))
        #expect(final.queued == 0)
        #expect(writer.closed.withLock { $0 })
    }

    struct WeakStorage: @unchecked Sendable {
        weak var storage: RecordStorage?
        init(_ storage: RecordStorage) { self.storage = storage }
    }
}
