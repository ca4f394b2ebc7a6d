import APNsMock

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// `--record-file`: every recording as one line of JSON (NDJSON, the admin API's form), in sequence order. A log:
/// `DELETE /admin/notifications` does not shorten it.
final class NDJSONFileWriter: RecordBatchWriter {
    let path: String
    private let descriptor: Int32
    private var json = JSONWriter(reservingCapacity: 1 << 20)

    struct OpenError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "--record-file: cannot write '\(path)': \(reason)" }
    }

    /// Creates (or truncates) the file.
    init(path: String) throws(OpenError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OpenError(path: path, reason: String(cString: strerror(errno)) + " (does its folder exist and is it writable?)")
        }
        self.path = path
        self.descriptor = descriptor
    }

    var forgetsClearedRecordings: Bool { false }

    /// Encodes the batch into one buffer and writes it with as few `write` calls as the kernel allows.
    func write(_ batch: [RecordedNotification]) -> String? {
        json.removeAll()
        for recording in batch {
            recording.writeJSON(into: &json)
            json.newline()
        }
        return writeAll(json.bytes)
    }

    func clear(upTo sequence: UInt64) -> String? { nil }

    func close() {
        fsync(descriptor)
        closeDescriptor(descriptor)
    }

    private func writeAll(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = writeDescriptor(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
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

// The C library's, outside the class whose methods share their names.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
