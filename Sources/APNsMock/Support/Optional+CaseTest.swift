extension Optional {
    /// Whether this holds a value, read from its case alone.
    ///
    /// `value != nil` on an optional of an `Equatable` type resolves to `Optional`'s own `!=` (the literal taken as a
    /// `nil` of the same type), which copies both sides into a tuple to compare them: an outlined copy and destroy
    /// of the payload, with its reference counts, on every test. Tests of an answer's, an authentication record's
    /// and a broadcast record's presence cost about 2% of a push that way. For optionals of `Equatable` types that
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
