/// The APNs headers of a request, found in one pass over its header list.
public struct APNsHeaders: Sendable, Equatable {
    public var authorization: String?
    public var apnsID: String?
    public var pushType: String?
    public var priority: String?
    public var expiration: String?
    public var topic: String?
    public var collapseID: String?
    /// Some header name appears more than once.
    public var hasDuplicates: Bool

    /// From a list of fields (tests and callers without a request): read as a request's header block would be.
    public init(_ headers: [HeaderField]) {
        self.init(APNsRequest(method: "", path: "", headers: headers))
    }

    /// Read from the request's header block, where names are one-byte codes (`HeaderBlock`). Borrowed: an
    /// initializer otherwise takes its argument owned, a copy of the request per call.
    /// - Parameter knownAuthorization: the connection's current `authorization` value (see
    ///   `ConnectionAuthState.currentAuthorization`), taken instead of a new string when the request's is the same:
    ///   a token-authenticated provider sends the same 200 bytes with every request.
    public init(_ request: borrowing APNsRequest, knownAuthorization: String? = nil) {
        authorization = nil
        apnsID = nil
        pushType = nil
        priority = nil
        expiration = nil
        topic = nil
        collapseID = nil
        hasDuplicates = false
        var seenCodes: UInt32 = 0
        var literalNames: [UnsafeBufferPointer<UInt8>] = []
        var duplicates = false
        // The pointers into the block live only inside this call, so the literal names are compared in it.
        request.head.forEachHeader { code, name, value in
            if code == HeaderBlock.literalName {
                if literalNames.contains(where: { $0.elementsEqual(name) }) { duplicates = true }
                literalNames.append(name)
                return true
            }
            let bit: UInt32 = 1 << UInt32(code)
            if seenCodes & bit != 0 {
                duplicates = true
                return true
            }
            seenCodes |= bit
            func text() -> String { String(decoding: value, as: UTF8.self) }
            switch code {
            case HeaderBlock.Code.authorization:
                if var known = knownAuthorization, known.withUTF8({ ASCII.equal($0, value) }) {
                    authorization = known
                } else {
                    authorization = text()
                }
            case HeaderBlock.Code.apnsID: apnsID = text()
            case HeaderBlock.Code.pushType: pushType = text()
            case HeaderBlock.Code.priority: priority = text()
            case HeaderBlock.Code.expiration: expiration = text()
            case HeaderBlock.Code.topic: topic = text()
            case HeaderBlock.Code.collapseID: collapseID = text()
            default: break
            }
            return true
        }
        hasDuplicates = duplicates
    }
}
