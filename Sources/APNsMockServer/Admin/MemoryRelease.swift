#if canImport(Glibc)
import Glibc
#endif

/// After the recorder is cleared, hands the freed memory back to the system.
///
/// glibc keeps freed chunks for reuse, so without this a cleared mock that held a million recordings kept
/// its peak RSS (measured: 720 MB of 757 MB still resident); a long-running staging mock should shrink.
/// `malloc_trim` is glibc's, in `<malloc.h>`, which Swift's Glibc module does not import: it is looked up at run
/// time, and skipped on a C library without it (musl).
enum MemoryRelease {
    static func returnFreedMemoryToTheSystem() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        #endif
    }
}
