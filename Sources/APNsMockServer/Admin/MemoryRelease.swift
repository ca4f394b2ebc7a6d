#if canImport(Glibc)
import Glibc
#endif

/// Keeps the recorder's memory returnable to the system once it is cleared.
///
/// glibc keeps freed chunks for reuse, so without `malloc_trim` a cleared mock that held a million recordings
/// kept nearly all of its peak RSS; a long-running staging mock should shrink.
/// `malloc_trim` and `mallopt` are glibc's, in `<malloc.h>`, which Swift's Glibc module does not import: they
/// are looked up at run time, and skipped on a C library without them (musl).
package enum MemoryRelease {
    /// Hands memory freed by a clear back to the system (called after `DELETE /admin/notifications`).
    static func returnFreedMemoryToTheSystem() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }

    /// Sets glibc's allocator up for the mock; call once, first thing in the process, before other threads allocate.
    ///
    /// - **Two arenas per core and one more** (`M_ARENA_MAX`): enough for each default event loop and each of
    ///   Swift's concurrency threads to get one of its own. Threads that share an arena take turns at its lock:
    ///   with one arena for everything (this function's choice until it was measured with two event loops), two
    ///   loops under load made nearly all of their `futex` calls at the arena lock in `malloc`. One arena had been
    ///   chosen because other arenas grow a page at a time with an `mprotect` each, which was frequent when
    ///   recordings copied every request's bytes; recordings now share repeated bytes and the recorder's index is
    ///   reserved up front, so the arenas rarely grow. glibc fixes the limit at the first allocation by a second
    ///   thread, so it is set here, first thing; `MALLOC_ARENA_MAX` in the environment, when set, wins.
    /// - **A fixed mmap threshold** (128 KiB, its default). glibc raises the threshold each time a large mmapped
    ///   block is freed, so as the recorder's index grew (doubling, freeing the old copy) its later copies came
    ///   from the heap, between recordings, and after a clear that heap could not be trimmed: RSS stayed above
    ///   idle. Setting it explicitly turns the adjustment off, so large buffers always get their own mapping,
    ///   which `free` returns at once.
    package static func configureAllocator() {
        #if canImport(Glibc)
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        // The option numbers of <malloc.h>.
        let mmapThreshold: Int32 = -3
        let arenaMax: Int32 = -8
        _ = mallopt(mmapThreshold, 128 * 1024)
        if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(arenaMax, Int32(clamping: 2 * UsableCores.count + 1)) }
        #endif
    }
}
