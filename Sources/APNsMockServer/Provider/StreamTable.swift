/// The open streams of one connection, by stream ID: an open-addressing hash table with linear probing.
///
/// A `Dictionary` hashes every key with SipHash; looking streams up, adding and removing them (a few times per
/// request) showed in profiles. Client stream IDs are increasing odd numbers, so a
/// multiplicative hash spreads them evenly at a fraction of the cost. The table holds at most as many streams
/// as the connection allows at once (SETTINGS_MAX_CONCURRENT_STREAMS), which bounds every probe sequence even
/// for IDs chosen to collide.
struct StreamTable<Value: AnyObject> {
    /// 0 marks a free slot: stream 0 is the connection, never a request's stream.
    private var keys: [Int32]
    private var values: [Value?]
    private(set) var count = 0
    private var mask: Int
    /// 32 minus the number of index bits: the hash takes the product's top bits.
    private var shift: UInt32

    init(capacity: Int = 8) {
        var slots = 16
        var bits: UInt32 = 4
        while slots < capacity * 2 {
            slots *= 2
            bits += 1
        }
        keys = Array(repeating: 0, count: slots)
        values = Array(repeating: nil, count: slots)
        mask = slots - 1
        shift = 32 - bits
    }

    var isEmpty: Bool { count == 0 }

    subscript(id: Int32) -> Value? {
        slot(of: id).flatMap { values[$0] }
    }

    /// The value for `id` without a retain: valid while the table holds it, for a caller that neither removes it
    /// nor keeps it past that (a retain and a release per lookup showed in reference counts).
    func unretained(_ id: Int32) -> Unmanaged<Value>? {
        slot(of: id).flatMap { values[$0].map { Unmanaged.passUnretained($0) } }
    }

    /// Where `id`'s entry is, if the table has one.
    private func slot(of id: Int32) -> Int? {
        guard id != 0 else { return nil }
        var slot = home(id)
        while true {
            let key = keys[slot]
            if key == id { return slot }
            if key == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    /// Adds `value` for `id`, replacing the one there was. Taken owned: a caller done with its reference hands it
    /// over instead of the table retaining another.
    mutating func insert(_ value: consuming Value, for id: Int32) {
        precondition(id != 0, "stream 0 is the connection")
        if (count + 1) * 2 > keys.count { grow() }
        var slot = home(id)
        while keys[slot] != 0, keys[slot] != id { slot = (slot + 1) & mask }
        if keys[slot] == 0 { count += 1 }
        keys[slot] = id
        values[slot] = value
    }

    /// Removes and returns the value for `id`, if there is one.
    @discardableResult
    mutating func remove(_ id: Int32) -> Value? {
        guard let slot = slot(of: id) else { return nil }
        // Moved out, and entries below moved by swapping: copying a reference in and clearing the old slot cost a
        // retain and a release each.
        let removed = values[slot].take()
        count -= 1
        // Backward-shift deletion: move later entries of the probe run into the hole, so that lookups never
        // need tombstones. The hole's value is always nil.
        var hole = slot
        var next = (hole + 1) & mask
        while keys[next] != 0 {
            let wanted = home(keys[next])
            // The entry at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !staysPut {
                keys[hole] = keys[next]
                values.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        keys[hole] = 0
        return removed
    }

    mutating func removeAll() {
        self = StreamTable()
    }

    /// The values, in no particular order.
    var allValues: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        for slot in 0..<keys.count where keys[slot] != 0 { result.append(values[slot]!) }
        return result
    }

    private func home(_ id: Int32) -> Int {
        // Fibonacci hashing: the top bits of the product are the best mixed.
        Int(truncatingIfNeeded: (UInt32(bitPattern: id) &* 0x9E37_79B1) >> shift)
    }

    private mutating func grow() {
        var bigger = StreamTable(capacity: keys.count)
        for slot in 0..<keys.count where keys[slot] != 0 { bigger.insert(values[slot]!, for: keys[slot]) }
        self = bigger
    }
}
