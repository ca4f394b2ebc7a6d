/// The APNs headers of a request: the first value of each, read where the request noted it (`RequestHead`).
package struct APNsHeaders: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    package var authorization: Optional<String>
    package var apnsID: Optional<String>
    package var pushType: Optional<String>
    package var priority: Optional<String>
    package var expiration: Optional<String>
    package var topic: Optional<String>
    package var collapseID: Optional<String>
    /// Some header name appears more than once.
    package var hasDuplicates: Bool

    /// From a list of fields (tests and callers without a request): read as a request's header block would be.
    package init(_ headers: [HeaderField]) {
        self.init(APNsRequest(method: "", path: "", headers: headers))
    }

    /// Read from the request's header block, where names are one-byte codes (`HeaderBlock`). Borrowed: an
    /// initializer otherwise takes its argument owned, a copy of the request per call.
    /// - Parameter knownAuthorization: the connection's current `authorization` value (see
    ///   `ConnectionAuthState.currentAuthorization`), taken instead of a new string when the request's is the same:
    ///   a token-authenticated provider sends the same 200 bytes with every request.
    /// Inlined into the decision: called out of line, it retained and released more of its strings per push.
    @inline(__always)
    package init(_ request: borrowing APNsRequest, knownAuthorization: String? = nil) {
        // Each read from where the request's head noted it while the header block was built: no walk over the
        // block in a closure that captured and copied these fields. Read through `request.head` each time: a local
        // copy of the head retained its buffer.
        if let known = knownAuthorization, request.head.apnsValue(HeaderBlock.Code.authorization, equals: known) {
            authorization = known
        } else {
            authorization = request.head.apnsValue(HeaderBlock.Code.authorization)
        }
        apnsID = request.head.apnsValue(HeaderBlock.Code.apnsID)
        pushType = request.head.apnsValue(HeaderBlock.Code.pushType)
        priority = request.head.apnsValue(HeaderBlock.Code.priority)
        expiration = request.head.apnsValue(HeaderBlock.Code.expiration)
        topic = request.head.apnsValue(HeaderBlock.Code.topic)
        collapseID = request.head.apnsValue(HeaderBlock.Code.collapseID)
        hasDuplicates = request.head.repeatsKnownName || request.head.repeatsLiteralName()
    }
}
