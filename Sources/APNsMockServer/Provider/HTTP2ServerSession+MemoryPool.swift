import CNGHTTP2
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

extension HTTP2ServerSession {
    /// libnghttp2's memory for one session, recycled.
    ///
    /// libnghttp2 allocates about five blocks per request (its stream, buffers for header fields, the answer's
    /// queued frame and its copy of the answer's headers) and frees them in bursts, once a batch of answers has
    /// been written. glibc's per-thread cache keeps only 7 blocks of a size, so most of them went through its bins
    /// (`_int_malloc`, `_int_free`), a cost paid on every push. Here a freed block
    /// of up to `largestPooledBlock` bytes goes onto a free list of its size class, as long as the lists hold less
    /// than `limit` bytes; anything else goes back to `malloc`.
    ///
    /// Each block starts with a 16-byte header (its class, and the size asked for a larger block), which keeps
    /// the caller's bytes as aligned as `malloc`'s. libnghttp2 calls this only from the session's own calls, all
    /// on the connection's event loop, so it needs no lock.
    final class MemoryPool {
        /// The free lists' heads by size class, how many bytes they hold, and their limit. Kept outside the
        /// object: libnghttp2 gets a plain pointer to it, and the callbacks touch no reference count.
        struct State {
            /// `classCount` list heads.
            let heads: UnsafeMutablePointer<UnsafeMutableRawPointer?>
            var pooledBytes = 0
            let limit: Int
        }

        static let headerBytes = 16
        static let classBytes = 64
        static let classCount = 8
        /// Blocks up to this size (header included) are pooled: every per-request allocation libnghttp2 makes,
        /// and a token's `authorization` field.
        static var largestPooledBlock: Int { classBytes * classCount }
        /// The class of a block too large to pool.
        private static let unpooled = -1

        private let state: UnsafeMutablePointer<State>

        /// 64 KiB: a connection's hundred streams in flight (what h2load's `-m 100` and busy providers keep open)
        /// allocate about that much at once. Zero in a process built with AddressSanitizer, so that every block
        /// goes back to `malloc` and the sanitizer still sees libnghttp2's use of it.
        static let defaultLimit = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil ? 64 * 1024 : 0

        /// - Parameter limit: the most bytes the free lists keep; past it, freed blocks go back to `malloc`.
        init(limit: Int = defaultLimit) {
            let heads = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: Self.classCount)
            heads.initialize(repeating: nil, count: Self.classCount)
            state = .allocate(capacity: 1)
            state.initialize(to: State(heads: heads, limit: limit))
        }

        deinit {
            trim(keepingBytes: 0)
            state.pointee.heads.deallocate()
            state.deinitialize(count: 1)
            state.deallocate()
        }

        /// Bytes waiting on the free lists.
        var pooledBytes: Int { state.pointee.pooledBytes }

        /// Gives blocks back to `malloc` until the lists hold at most `keepingBytes` (none once the session is
        /// closed). Not done while the connection lives: a client that waits for each batch of answers leaves no
        /// stream open between batches, and trimming then (tried) sent most blocks back through `malloc` again.
        func trim(keepingBytes: Int) {
            Self.trim(state, keepingBytes: keepingBytes)
        }

        /// The allocator to hand libnghttp2: valid as long as this object lives, which must be longer than the
        /// session that uses it.
        var allocator: nghttp2_mem {
            nghttp2_mem(
                mem_user_data: UnsafeMutableRawPointer(state),
                malloc: { size, userData in
                    HTTP2ServerSession.MemoryPool.allocate(size, in: userData!.assumingMemoryBound(to: State.self))
                },
                free: { pointer, userData in
                    HTTP2ServerSession.MemoryPool.release(pointer, in: userData!.assumingMemoryBound(to: State.self))
                },
                calloc: { count, size, userData in
                    let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
                    guard !overflow,
                        let pointer = HTTP2ServerSession.MemoryPool.allocate(bytes, in: userData!.assumingMemoryBound(to: State.self))
                    else { return nil }
                    memset(pointer, 0, bytes)
                    return pointer
                },
                realloc: { pointer, size, userData in
                    HTTP2ServerSession.MemoryPool.reallocate(pointer, to: size, in: userData!.assumingMemoryBound(to: State.self))
                }
            )
        }

        /// The size class of a block holding `size` bytes after its header, or `nil` when it is too large to pool.
        static func sizeClass(of size: Int) -> Int? {
            guard size <= largestPooledBlock - headerBytes else { return nil }
            return (size + headerBytes - 1) / classBytes
        }

        private static func allocate(_ size: Int, in state: UnsafeMutablePointer<State>) -> UnsafeMutableRawPointer? {
            guard let sizeClass = sizeClass(of: size) else {
                guard size <= Int.max - headerBytes, let block = malloc(size + headerBytes) else { return nil }
                block.storeBytes(of: unpooled, as: Int.self)
                block.storeBytes(of: size, toByteOffset: MemoryLayout<Int>.size, as: Int.self)
                return block + headerBytes
            }
            let heads = state.pointee.heads
            if let block = heads[sizeClass] {
                // A block on a list keeps the next one's address where the caller's bytes go.
                heads[sizeClass] = (block + headerBytes).load(as: UnsafeMutableRawPointer?.self)
                state.pointee.pooledBytes -= (sizeClass + 1) * classBytes
                return block + headerBytes
            }
            guard let block = malloc((sizeClass + 1) * classBytes) else { return nil }
            block.storeBytes(of: sizeClass, as: Int.self)
            return block + headerBytes
        }

        private static func release(_ pointer: UnsafeMutableRawPointer?, in state: UnsafeMutablePointer<State>) {
            guard let pointer else { return }
            let block = pointer - headerBytes
            let sizeClass = block.load(as: Int.self)
            let blockBytes = (sizeClass + 1) * classBytes
            guard sizeClass != unpooled, state.pointee.pooledBytes + blockBytes <= state.pointee.limit else {
                free(block)
                return
            }
            let heads = state.pointee.heads
            pointer.storeBytes(of: heads[sizeClass], as: UnsafeMutableRawPointer?.self)
            heads[sizeClass] = block
            state.pointee.pooledBytes += blockBytes
        }

        private static func reallocate(_ pointer: UnsafeMutableRawPointer?, to size: Int, in state: UnsafeMutablePointer<State>) -> UnsafeMutableRawPointer? {
            guard let pointer else { return allocate(size, in: state) }
            let block = pointer - headerBytes
            let sizeClass = block.load(as: Int.self)
            if sizeClass == unpooled, self.sizeClass(of: size) == nil {
                // Large before and after: `realloc` may grow it where it is.
                guard size <= Int.max - headerBytes, let grown = realloc(block, size + headerBytes) else { return nil }
                grown.storeBytes(of: size, toByteOffset: MemoryLayout<Int>.size, as: Int.self)
                return grown + headerBytes
            }
            let capacity = sizeClass == unpooled
                ? block.load(fromByteOffset: MemoryLayout<Int>.size, as: Int.self)
                : (sizeClass + 1) * classBytes - headerBytes
            if sizeClass != unpooled, size <= capacity { return pointer }
            guard let moved = allocate(size, in: state) else { return nil }
            moved.copyMemory(from: pointer, byteCount: min(capacity, size))
            release(pointer, in: state)
            return moved
        }

        private static func trim(_ state: UnsafeMutablePointer<State>, keepingBytes: Int) {
            let heads = state.pointee.heads
            for sizeClass in (0..<classCount).reversed() {
                while state.pointee.pooledBytes > keepingBytes, let block = heads[sizeClass] {
                    heads[sizeClass] = (block + headerBytes).load(as: UnsafeMutableRawPointer?.self)
                    state.pointee.pooledBytes -= (sizeClass + 1) * classBytes
                    free(block)
                }
            }
        }
    }
}
