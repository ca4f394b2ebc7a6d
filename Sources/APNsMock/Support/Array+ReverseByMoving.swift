extension Array {
    /// Reverses the array in place, moving its elements.
    ///
    /// `reverse()` swaps through `MutableCollection`'s default `swapAt`, which copies an element holding references
    /// (a retain) and destroys the copy (a release); the buffer pointer's `swapAt` moves. The request path reverses
    /// a read's events and recordings to take them out from the back, and a profile showed those copies.
    @inlinable
    package mutating func reverseByMoving() {
        withUnsafeMutableBufferPointer { $0.reverse() }
    }
}
