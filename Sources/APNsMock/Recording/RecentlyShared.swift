/// What a writer of many recordings (the record file, a store's batch) made from the objects recordings share (a
/// request shape's `RecordStorage`, a `RecordExtras`), for the few it saw last: load tests send one payload with the
/// same headers over and over, so most recordings share these with the one before.
///
/// An object is found by identity, and held while it is here, so its address cannot be reused by another. `nil`
/// (a recording without extras) is an entry like any other.
struct RecentlyShared<Object: AnyObject, Value> {
    /// Enough for the connections of a load test, whose recordings arrive interleaved a read at a time.
    static var capacity: Int { 16 }

    private var entries: [(object: Object?, detail: UInt32, value: Value)] = []
    /// The entry the next new one replaces once the cache is full (the oldest).
    private var next = 0

    /// The value made for `object` (and `detail`, anything else it depends on), made by `make` the first time.
    mutating func value(for object: Object?, detail: UInt32 = 0, make: () -> Value) -> Value {
        if let entry = entries.first(where: { $0.object === object && $0.detail == detail }) { return entry.value }
        let value = make()
        if entries.count < Self.capacity {
            entries.append((object, detail, value))
        } else {
            entries[next] = (object, detail, value)
            next = (next + 1) % Self.capacity
        }
        return value
    }
}
