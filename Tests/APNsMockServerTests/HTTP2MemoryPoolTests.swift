@testable import APNsMockServer
import CNGHTTP2
import Testing

/// The allocator libnghttp2 gets, called through its function pointers as libnghttp2 calls it.
@Suite("HTTP2ServerSession.MemoryPool")
struct HTTP2MemoryPoolTests {
    typealias Pool = HTTP2ServerSession.MemoryPool

    /// The four entry points of one pool's `nghttp2_mem`.
    struct Allocator {
        let mem: nghttp2_mem

        init(_ pool: Pool) { mem = pool.allocator }

        func malloc(_ size: Int) -> UnsafeMutableRawPointer? { mem.malloc(size, mem.mem_user_data) }
        func free(_ pointer: UnsafeMutableRawPointer?) { mem.free(pointer, mem.mem_user_data) }
        func calloc(_ count: Int, _ size: Int) -> UnsafeMutableRawPointer? { mem.calloc(count, size, mem.mem_user_data) }
        func realloc(_ pointer: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
            mem.realloc(pointer, size, mem.mem_user_data)
        }
    }

    static func fill(_ pointer: UnsafeMutableRawPointer, _ count: Int, seed: UInt8) {
        for index in 0..<count { pointer.storeBytes(of: seed &+ UInt8(truncatingIfNeeded: index), toByteOffset: index, as: UInt8.self) }
    }

    static func holds(_ pointer: UnsafeMutableRawPointer, _ count: Int, seed: UInt8) -> Bool {
        (0..<count).allSatisfy { pointer.load(fromByteOffset: $0, as: UInt8.self) == seed &+ UInt8(truncatingIfNeeded: $0) }
    }

    @Test func sizeClassesCoverEveryPooledSizeAndNoLarger() {
        #expect(Pool.sizeClass(of: 0) == 0)
        #expect(Pool.sizeClass(of: Pool.classBytes - Pool.headerBytes) == 0)
        #expect(Pool.sizeClass(of: Pool.classBytes - Pool.headerBytes + 1) == 1)
        #expect(Pool.sizeClass(of: Pool.largestPooledBlock - Pool.headerBytes) == Pool.classCount - 1)
        #expect(Pool.sizeClass(of: Pool.largestPooledBlock - Pool.headerBytes + 1) == nil)
    }

    @Test func blocksOfEverySizeAreWritableAlignedAndKeepTheirBytes() {
        let pool = Pool(limit: 64 * 1024)
        let allocator = Allocator(pool)
        let sizes = Array(0...600) + [4096, 65_536]
        var blocks: [(UnsafeMutableRawPointer, Int)] = []
        for (index, size) in sizes.enumerated() {
            guard let block = allocator.malloc(size) else {
                Issue.record("malloc(\(size)) failed")
                continue
            }
            #expect(Int(bitPattern: block) % 16 == 0, "malloc(\(size)) is not 16-byte aligned")
            Self.fill(block, size, seed: UInt8(truncatingIfNeeded: index))
            blocks.append((block, size))
        }
        // Written all before any is read: blocks that overlapped would have overwritten each other.
        for (index, (block, size)) in blocks.enumerated() {
            #expect(Self.holds(block, size, seed: UInt8(truncatingIfNeeded: index)), "malloc(\(size))")
            allocator.free(block)
        }
        #expect(pool.pooledBytes > 0)
        #expect(pool.pooledBytes <= 64 * 1024)
    }

    @Test func aFreedBlockIsTheNextOneOfItsClass() {
        let pool = Pool(limit: 64 * 1024)
        let allocator = Allocator(pool)
        let first = allocator.malloc(200)
        allocator.free(first)
        #expect(pool.pooledBytes == 256)
        // 180 bytes fall in the same 256-byte class as 200.
        let second = allocator.malloc(180)
        #expect(second == first)
        #expect(pool.pooledBytes == 0)
        // Another class does not take it.
        allocator.free(second)
        let other = allocator.malloc(40)
        #expect(other != first)
        allocator.free(other)
    }

    @Test func theListsStopAtTheirLimitAndTrimGivesBlocksBack() {
        let pool = Pool(limit: 1024)
        let allocator = Allocator(pool)
        let blocks = (0..<40).map { _ in allocator.malloc(100)! }
        for block in blocks { allocator.free(block) }
        // 128-byte blocks: eight fit in 1,024 bytes, the rest went back to malloc.
        #expect(pool.pooledBytes == 1024)
        pool.trim(keepingBytes: 300)
        #expect(pool.pooledBytes == 256)
        pool.trim(keepingBytes: 0)
        #expect(pool.pooledBytes == 0)
        // Still usable after a trim.
        let again = allocator.malloc(100)
        #expect(again != nil)
        allocator.free(again)
        allocator.free(nil)
    }

    @Test func callocZeroesARecycledBlockAndRefusesAnOverflowingSize() {
        let pool = Pool(limit: 64 * 1024)
        let allocator = Allocator(pool)
        let dirty = allocator.malloc(150)!
        Self.fill(dirty, 150, seed: 0xA5)
        allocator.free(dirty)
        let zeroed = allocator.calloc(3, 50)!
        #expect(zeroed == dirty)
        #expect((0..<150).allSatisfy { zeroed.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        allocator.free(zeroed)
        #expect(allocator.calloc(Int.max / 2, 3) == nil)
    }

    @Test func reallocKeepsTheBytesAcrossEveryKindOfMove() {
        let pool = Pool(limit: 64 * 1024)
        let allocator = Allocator(pool)
        // nil → pooled → same class → larger class → unpooled → larger unpooled → back to pooled.
        var block = allocator.realloc(nil, 20)!
        Self.fill(block, 20, seed: 7)
        let steps = [40, 100, 480, 2000, 70_000, 300]
        var kept = 20
        for size in steps {
            block = allocator.realloc(block, size)!
            #expect(Self.holds(block, min(kept, size), seed: 7), "realloc to \(size)")
            Self.fill(block, size, seed: 7)
            kept = size
        }
        let sameClass = allocator.realloc(block, 290)
        #expect(sameClass == block)
        allocator.free(sameClass)
    }

    /// The pool is the session's allocator: what libnghttp2 frees (here its SETTINGS frame, once written) lands on
    /// the lists, and closing the session gives it all back.
    @Test func aSessionFreesIntoItsPoolAndClosingEmptiesIt() throws {
        let session = HTTP2ServerSession(settings: HTTP2Settings(), limits: HTTP2RequestLimits(), memoryPoolLimit: 64 * 1024)
        #expect(session.pooledMemoryBytes == 0)
        session.submitInitialSettings()
        var written = 0
        _ = try session.drainOutput(maxBytes: 1 << 20) { written += $0.count }
        #expect(written > 0)
        #expect(session.pooledMemoryBytes > 0)
        _ = session.close(because: "the test is over")
        #expect(session.pooledMemoryBytes == 0)
    }
}
