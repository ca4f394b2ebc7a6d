#if canImport(Glibc)
import Glibc
#endif

/// Keeps the recorder's memory returnable to the system once it is cleared.
///
/// glibc keeps freed chunks for reuse, so without `malloc_trim` a cleared mock that held a million recordings
/// kept its peak RSS (measured: 720 MB of 757 MB still resident); a long-running staging mock should shrink.
/// `malloc_trim` and `mallopt` are glibc's, in `<malloc.h>`, which Swift's Glibc module does not import: they
/// are looked up at run time, and skipped on a C library without them (musl).
public enum MemoryRelease {
    /// Hands memory freed by a clear back to the system (called after `DELETE /admin/notifications`).
    static func returnFreedMemoryToTheSystem() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Fixes glibc's mmap threshold at its default (128 KiB) for the whole process; call once at start.
    ///
    /// glibc raises the threshold each time a large mmapped block is freed, so as the recorder's index grew
    /// (doubling, freeing the old copy) its later copies came from the event loop's heap, between recordings;
    /// after a clear that heap could not be trimmed (measured with 1,000,000 recordings: 8.2 MB of heap left
    /// against 3.1 MB idle, RSS 1.14x idle; with the threshold fixed, 3.8 MB and 1.03x). Setting it explicitly
    /// turns the adjustment off, so large buffers always get their own mapping, which `free` returns at once.
    public static func keepLargeAllocationsOutOfTheHeap() {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 128 * 1024)
        #endif
    }
}
