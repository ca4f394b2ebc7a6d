import APNsMock
import CFileSpace

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
    /// under load) made every line cost a page fault and a cold copy, the writer's largest cost.
    static let chunkSize = 128 << 10
    private var shapes = RecordShapeJSONCache()
    /// Bytes written so far, and how many of them were synced and dropped from the page cache.
    private var offset = 0
    private var releasedUpTo = 0
    /// How much written text the page cache may hold before it is synced and let go (see `releasePageCache`).
    static let pageCacheBound = 32 << 20
    /// The end of the space reserved for the file so far (see `reserveSpace`), and whether the file system can.
    private var reservedUpTo = 0
    private var reservesSpace = true
    static let reservationStep = 32 << 20

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

    /// Encodes the batch, writing whole chunks as they fill; the last lines wait in the buffer for the next batch
    /// or `flush`.
    ///
    /// Each write ends on a multiple of `chunkSize` in the file: the kernel's work for whole, aligned pages is less
    /// than for writes that start and end mid-page (measured with a C program writing the way this does; the
    /// figures are in docs/benchmark-history.md).
    func write(_ batch: [[RecordedNotification]]) -> String? {
        // Read in place: copying each recording out retained its shared storage, whose count the event loops change
        // on other cores as they record (the writer's largest symbol in a profile).
        for index in batch.indices {
            if let error = batch[index].withUnsafeBufferPointer({ encode($0) }) { return error }
        }
        return nil
    }

    private func encode(_ recordings: UnsafeBufferPointer<RecordedNotification>) -> String? {
        for index in recordings.indices {
            recordings[index].writeJSON(into: &json, shapes: &shapes)
            json.newline()
            if let error = writeFullChunk() { return error }
        }
        return nil
    }

    var writesDeliveries: Bool { true }

    /// Each data point as a line of its own, `{"delivery": <the log as GET /admin/delivery shows it then>}`: a
    /// recording's line never has a `delivery` member, so a reader tells them apart by it.
    func write(deliveries: [DeliveryRecord]) -> String? {
        for record in deliveries {
            json.write(any: ["delivery": record.jsonObject()])
            json.newline()
            if let error = writeFullChunk() { return error }
        }
        return nil
    }

    /// Writes a whole chunk once the buffer holds one, ending it on a multiple of `chunkSize` in the file.
    private func writeFullChunk() -> String? {
        guard json.bytes.count >= Self.chunkSize else { return nil }
        let length = Self.chunkSize - offset % Self.chunkSize
        if let error = writeAll(json.bytes[..<length]) {
            json.removeAll()
            return error
        }
        json.removeFirst(length)
        return nil
    }

    /// Writes the lines held back; called when nothing more is queued, so the file is whole whenever the writer
    /// is idle.
    func flush() -> String? {
        guard !json.bytes.isEmpty else { return nil }
        let error = writeAll(json.bytes[...])
        json.removeAll()
        return error
    }

    /// Syncs what was written and drops it from the page cache. Without this a long run under load left gigabytes
    /// of the file in the page cache: memory a container's limit counts, and, once the kernel's dirty threshold
    /// was reached, writes that cost more, so throughput fell as the file grew (steady with this). Page cache that
    /// is reused stays warm in the CPU's caches too.
    private func releasePageCache() {
        fdatasync(descriptor)
        #if canImport(Glibc)
        _ = posix_fadvise(descriptor, off_t(releasedUpTo), off_t(offset - releasedUpTo), Int32(POSIX_FADV_DONTNEED))
        #endif
        releasedUpTo = offset
    }

    func clear(upTo sequence: UInt64) -> String? { nil }
    func clear(tenant: String, upTo sequence: UInt64) -> String? { nil }

    func close() -> String? {
        let error = flush()
        if reservedUpTo > offset { _ = ftruncate(descriptor, off_t(offset)) }  // the reserved blocks past the end
        fsync(descriptor)
        closeDescriptor(descriptor)
        return error
    }

    /// Reserves the file's blocks ahead of the writes, 32 MiB at a time, keeping its size (Linux `fallocate`):
    /// ext4's delayed allocation otherwise reserves each 4 KiB block as a write first reaches it, a large part of
    /// the kernel's cost of writing. `close` gives back what was not used.
    private func reserveSpace(through end: Int) {
        guard reservesSpace, end > reservedUpTo else { return }
        if apns_mock_reserve_file_space(descriptor, Int64(reservedUpTo), Int64(Self.reservationStep)) == 0 {
            reservedUpTo += Self.reservationStep
        } else {
            // Not supported here, or the disk is full: writes go on without (and report a full disk themselves).
            reservesSpace = false
        }
    }

    private func writeAll(_ bytes: ArraySlice<UInt8>) -> String? {
        reserveSpace(through: offset + bytes.count)
        return bytes.withUnsafeBytes { buffer in
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
            if self.offset - releasedUpTo >= Self.pageCacheBound { releasePageCache() }
            return nil
        }
    }
}

// The C library's, outside the class whose methods share their names.
private func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }
private func writeDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, bytes, count) }
