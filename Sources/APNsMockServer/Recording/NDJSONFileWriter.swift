import APNsMock
import DequeModule

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
    private var json = JSONWriter(reservingCapacity: NDJSONFileWriter.chunkSize + 64 << 10)
    /// Bytes encoded before they are written. Small enough that the buffer stays in the CPU's cache between
    /// encoding and the kernel's copy, and never grows with the backlog: a whole batch in one buffer (tens of MB
    /// under load) made every line cost a page fault and a cold copy, 40% of the writer's time.
    static let chunkSize = 128 << 10
    private var shapes = RecordShapeJSONCache()
    /// Bytes written so far, and how many of them were synced and dropped from the page cache.
    private var offset = 0
    private var releasedUpTo = 0
    /// How much written text the page cache may hold before it is synced and let go (see `releasePageCache`).
    static let pageCacheBound = 32 << 20

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

    /// Encodes the batch a chunk at a time, writing each chunk as it fills.
    func write(_ batch: Deque<RecordedNotification>) -> String? {
        json.removeAll()
        for recording in batch {
            recording.writeJSON(into: &json, shapes: &shapes)
            json.newline()
            if json.bytes.count >= Self.chunkSize {
                if let error = writeAll(json.bytes) { return error }
                json.removeAll()
            }
        }
        if !json.bytes.isEmpty, let error = writeAll(json.bytes) { return error }
        if offset - releasedUpTo >= Self.pageCacheBound { releasePageCache() }
        return nil
    }

    /// Syncs what was written and drops it from the page cache. Without this a long run under load left gigabytes
    /// of the file in the page cache: memory a container's limit counts, and, once the kernel's dirty threshold
    /// was reached, writes that cost twice as much (measured: 218k → 147k pushes/s over six rounds of 400,000 as
    /// the file grew past 2 GB; steady with this). Page cache that is reused stays warm in the CPU's caches too.
    private func releasePageCache() {
        fdatasync(descriptor)
        #if canImport(Glibc)
        _ = posix_fadvise(descriptor, off_t(releasedUpTo), off_t(offset - releasedUpTo), Int32(POSIX_FADV_DONTNEED))
        #endif
        releasedUpTo = offset
    }

    func clear(upTo sequence: UInt64) -> String? { nil }

    func close() -> String? {
        fsync(descriptor)
        closeDescriptor(descriptor)
        return nil
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
            self.offset += buffer.count
            return nil
        }
    }
}

// The C library's, outside the class whose methods share their names.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
