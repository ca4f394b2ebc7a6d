#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// How many cores this process may run on, and so how many event loops it starts by default.
///
/// A loop on every usable core, as nginx's `worker_processes auto`: a mock alone in its container would leave a
/// core idle with fewer. One fewer (a core left to a client on the same machine) was the default for a day: on
/// 2 cores beside `h2load` it made plain pushes slightly cheaper, but with `--record-file` the writer thread kept
/// preempting the one loop while the other core sat partly idle, and the file's throughput fell well below
/// plain's (docs/benchmark-history.md, "Threads and cores").
///
/// SwiftNIO's `System.coreCount` reads the cgroup's quota and cpuset (what `docker --cpus` and `--cpuset-cpus`
/// set) but not the process's affinity mask, so under `taskset -c 0` it still says 2 on a 2-core machine and
/// two loops took turns on one core. The affinity mask (`sched_getaffinity`) is counted as well; the smaller
/// figure wins.
enum UsableCores {
    /// The cores the process may use: the cgroup's limit and the affinity mask, whichever is smaller; at least 1.
    static var count: Int {
        max(1, min(System.coreCount, affinityCount ?? Int.max))
    }

    /// Bits set in the affinity mask, or `nil` where it cannot be read.
    ///
    /// `sched_getaffinity` is a GNU extension that Swift's Glibc module does not import: it is looked up at run
    /// time, as `MemoryRelease` does with `mallopt`.
    private static var affinityCount: Int? {
        #if canImport(Glibc)
        typealias GetAffinity = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_getaffinity") else { return nil }
        let getAffinity = unsafeBitCast(symbol, to: GetAffinity.self)
        var set = cpu_set_t()
        let bits = withUnsafeMutableBytes(of: &set) { bytes -> Int? in
            guard getAffinity(0, bytes.count, bytes.baseAddress!) == 0 else { return nil }
            return bytes.reduce(0) { $0 + $1.nonzeroBitCount }
        }
        return bits.flatMap { $0 > 0 ? $0 : nil }
        #else
        return nil
        #endif
    }
}
