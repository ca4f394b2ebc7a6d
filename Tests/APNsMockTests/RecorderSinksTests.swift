import Synchronization
import Testing

@testable import APNsMock

/// How the recorder hands recordings to its sinks: every listening sink gets every recording, in order, whether it
/// got a copy or (the last one) the recordings themselves.
@Suite("Recorder sinks")
struct RecorderSinksTests {
    final class CollectingSink: RecordingSink {
        let name: String
        let listening: Bool
        let sequences = Mutex<[UInt64]>([])
        let moved = Mutex(0)

        init(name: String, listening: Bool = true) {
            self.name = name
            self.listening = listening
        }

        var isListening: Bool { listening }
        func enqueue(_ recording: RecordedNotification) { sequences.withLock { $0.append(recording.sequence) } }
        func enqueue(contentsOf recordings: [RecordedNotification]) { sequences.withLock { $0 += recordings.map(\.sequence) } }
        func enqueue(moving recordings: inout [RecordedNotification]) {
            moved.withLock { $0 += 1 }
            enqueue(contentsOf: recordings)
            recordings.removeAll()
        }
        func statistics() -> RecordingSinkStatistics { RecordingSinkStatistics(name: name, policy: .backPressure, capacity: 2) }
        func finish(timeout: Duration) async -> RecordingSinkStatistics { statistics() }
    }

    @Test func everyListeningSinkGetsEveryRecordingInOrderAndTheLastTakesThem() {
        let first = CollectingSink(name: "first")
        let asleep = CollectingSink(name: "asleep", listening: false)
        let last = CollectingSink(name: "last")
        let idle = CollectingSink(name: "idle", listening: false)
        let recorder = Recorder(sinks: [first, asleep, last, idle])
        let request = APNsRequest(method: "POST", path: "/3/device/" + String(repeating: "ab", count: 32), headers: [], payload: [])
        let connection = ConnectionInfo(id: 1)
        var context = RecordingContext()
        var batch: [RecordedNotification] = []
        for round in 0..<3 {
            for stream in 0..<4 {
                recorder.record(
                    request, streamID: Int32(2 * stream + 1), connection: connection,
                    outcome: .abandoned(at: 0, because: "test \(round)"), into: &batch, context: &context
                )
            }
            recorder.commit(&batch)
        }
        recorder.record(request, streamID: 99, connection: connection, outcome: .abandoned(at: 0, because: "one"), context: &context)
        #expect(first.sequences.withLock { $0 } == Array(1...13))
        #expect(last.sequences.withLock { $0 } == Array(1...13))
        #expect(asleep.sequences.withLock { $0 }.isEmpty && idle.sequences.withLock { $0 }.isEmpty)
        #expect(first.moved.withLock { $0 } == 0 && last.moved.withLock { $0 } == 4)
        #expect(recorder.store.list().notifications.map(\.sequence) == Array(1...13))
    }
}
