#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// How many cores this process may run on, and so how many event loops it starts by default.
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

    /// Event loops when `--threads` is not given: one core is left to the provider under test.
    ///
    /// The mock nearly always shares its machine with what sends to it (a CI job, a compose file, a developer's
    /// laptop). With a loop on every core, the loops and the client take turns on the same cores: on 2 cores, two
    /// loops beside `h2load` switched context 2,500 times per 400,000 pushes (one loop: 75) and spent 1.00–1.3×
    /// one loop's CPU per push for no more throughput. One loop answers over 200,000 pushes a second, far more
    /// than a provider's test sends, so leaving a core costs nothing a user would notice.
    static var defaultEventLoops: Int {
        max(1, count - 1)
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
