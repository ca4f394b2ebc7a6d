import APNsMock
import Foundation
import Synchronization

/// Writes every recording to a file as NDJSON (one JSON object per line) as it happens, so a CI job can
/// collect what the mock received after the container stops (`--record-file`).
///
/// The event loops only append the recording to a buffer; a background task encodes and writes it, so a
/// slow disk never slows the provider port. `close()` writes what is left.
public final class RecordFileWriter: Sendable {
    private let pending = Mutex<[RecordedNotification]>([])
    private let handle: FileHandle
    private let path: String
    private let flusher: Mutex<Task<Void, Never>?> = Mutex(nil)

    public struct OpenError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "--record-file: cannot write '\(path)': \(reason)" }
    }

    /// Creates (or truncates) the file.
    public init(path: String) throws(OpenError) {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else {
            throw OpenError(path: path, reason: "the file cannot be created (does its folder exist and is it writable?)")
        }
        self.handle = handle
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
                self?.writePending()
            }
        }
        flusher.withLock { $0 = task }
    }

    public func append(_ notification: RecordedNotification) {
        pending.withLock { $0.append(notification) }
    }

    /// Stops the background task and writes everything still buffered.
    public func close() async {
        let task = flusher.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        writePending()
        try? handle.synchronize()
        try? handle.close()
    }

    private func writePending() {
        let batch = pending.withLock { pending -> [RecordedNotification] in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !batch.isEmpty else { return }
        var data = Data()
        for notification in batch {
            if let line = try? JSONSerialization.data(withJSONObject: notification.jsonObject(), options: [.sortedKeys, .withoutEscapingSlashes]) {
                data.append(line)
                data.append(0x0A)
            }
        }
        try? handle.write(contentsOf: data)
    }
}
