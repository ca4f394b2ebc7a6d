// Two spellings of optionals cost time on the request path, where the compiler's choices show in profiles:
//
// - `value != nil` (see `isSome` below).
// - A stored `var x: T?` of a struct whose `init` sets it. `T?` gives the property an implicit `= nil`, so the
//   init's assignment replaces a value instead of initializing one, and swiftc -O then built the whole struct in
//   two places, copied one out and destroyed the other: every string and object in it retained and released once
//   more (the outlined "init with copy" and "destroy" of `APNsHeaders`, `RecordingOutcome` and `ProviderDecision` in
//   the decision). Spelled `Optional<T>`, the property has no implicit value and the init initializes it: one
//   build, moved out. Request-path structs with an explicit `init` spell such properties `Optional<T>`; a
//   synthesized memberwise init does not need it.

extension Optional {
    /// Whether this holds a value, read from its case alone.
    ///
    /// `value != nil` on an optional of an `Equatable` type resolves to `Optional`'s own `!=` (the literal taken as a
    /// `nil` of the same type), which copies both sides into a tuple to compare them: an outlined copy and destroy
    /// of the payload, with its reference counts, on every test; the decision tests an answer's, an authentication
    /// record's and a broadcast record's presence on every request. For optionals of `Equatable` types that
    /// hold references (strings, arrays, objects), on the request path, test the case with this or ``isNone``.
    @inlinable
    package var isSome: Bool {
        if case .some = self { return true }
        return false
    }

    /// Whether this is `nil`, read from its case alone (see ``isSome`` for why not `== nil`).
    @inlinable
    package var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}
