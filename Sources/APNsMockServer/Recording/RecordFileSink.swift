import APNsMock
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// `--record-file`: every recording as one line of JSON (NDJSON), in sequence order, written by a thread of its
/// own so that neither encoding nor a slow disk ever runs on an event loop.
///
/// Its queue is bounded (`capacity`); when it is full the provider port stops reading until the queue has drained
/// to half (back-pressure, counted in `backPressurePauses`): the file loses nothing, and memory stays bounded.
/// `finish` writes what is queued and closes the file.
public final class RecordFileSink: RecordingSink {
    public let name = "file"
    public let path: String
    private let descriptor: Int32
    private let backPressure: RecordingBackPressure
    private let queue: Mutex<SinkQueue<RecordedNotification>>
    /// Wakes the writer thread; guarded by its own lock.
    private let wake = NSCondition()
    private let control = Mutex(Control())
    private let writerExited = NSCondition()

    private struct Control {
        var finishing = false
        var exited = false
    }

    public struct OpenError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "--record-file: cannot write '\(path)': \(reason)" }
    }

    /// Creates (or truncates) the file and starts the writer thread.
    /// - Parameter capacity: recordings queued before the provider port is paused.
    public init(path: String, capacity: Int = 65_536, backPressure: RecordingBackPressure) throws(OpenError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OpenError(path: path, reason: String(cString: strerror(errno)) + " (does its folder exist and is it writable?)")
        }
        self.path = path
        self.descriptor = descriptor
        self.backPressure = backPressure
        self.queue = Mutex(SinkQueue(name: "file", capacity: capacity, policy: .backPressure))
        let thread = Thread { [self] in runWriter() }
        thread.name = "apns-mock record file"
        thread.start()
    }

    public func enqueue(_ recording: RecordedNotification) {
        let action = queue.withLock { $0.push(recording) }
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

    public func enqueue(contentsOf recordings: [RecordedNotification]) {
        let action = queue.withLock { $0.push(contentsOf: recordings) }
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

    public func statistics() -> RecordingSinkStatistics {
        queue.withLock { $0.statistics }
    }

    public func finish(timeout: Duration) async -> RecordingSinkStatistics {
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

    /// The writer thread: takes everything queued, encodes it in one buffer and writes it with as few `write`
    /// calls as the kernel allows, until `finish` is called and the queue is empty.
    private func runWriter() {
        var json = JSONWriter(reservingCapacity: 1 << 20)
        while true {
            var release = false
            let batch = queue.withLock { queue -> [RecordedNotification] in
                let taken = queue.takeAll()
                release = taken.action == .releaseBackPressure
                return taken.elements
            }
            if release { backPressure.release() }
            if batch.isEmpty {
                if control.withLock({ $0.finishing }) { break }
                wake.lock()
                // Checked again under the condition's lock, so a push between the take and the wait is not missed.
                if queue.withLock({ $0.count == 0 }), !control.withLock({ $0.finishing }) {
                    _ = wake.wait(until: Date().addingTimeInterval(0.5))
                }
                wake.unlock()
                continue
            }
            json.removeAll()
            for recording in batch {
                recording.writeJSON(into: &json)
                json.newline()
            }
            let error = writeAll(json.bytes)
            queue.withLock { queue in
                queue.finished(batch.count)
                if let error { queue.failed(error) }
            }
        }
        // Anything left engaged must not hold the provider port once the file is done.
        if queue.withLock({ $0.isPushingBack }) { backPressure.release() }
        fsync(descriptor)
        close(descriptor)
        writerExited.lock()
        control.withLock { $0.exited = true }
        writerExited.broadcast()
        writerExited.unlock()
    }

    private func writeAll(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                offset += written
            }
            return nil
        }
    }
}
