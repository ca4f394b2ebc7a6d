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

    public init(_ headers: [HeaderField]) {
        authorization = nil
        apnsID = nil
        pushType = nil
        priority = nil
        expiration = nil
        topic = nil
        collapseID = nil
        hasDuplicates = false
        for field in headers {
            // The length first: most names are then compared with one candidate, or none.
            let name = field.name
            switch name.utf8.count {
            case 13:
                if name == "authorization" { Self.keepFirst(&authorization, field.value) }
                else if name == "apns-priority" { Self.keepFirst(&priority, field.value) }
            case 7 where name == "apns-id": Self.keepFirst(&apnsID, field.value)
            case 14 where name == "apns-push-type": Self.keepFirst(&pushType, field.value)
            case 15 where name == "apns-expiration": Self.keepFirst(&expiration, field.value)
            case 10 where name == "apns-topic": Self.keepFirst(&topic, field.value)
            case 16 where name == "apns-collapse-id": Self.keepFirst(&collapseID, field.value)
            default: break
            }
        }
        hasDuplicates = Self.containsDuplicateNames(headers)
    }

    /// The same, read from the request's header block: names are compared as one-byte codes.
    public init(_ request: APNsRequest) {
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
            case HeaderBlock.Code.authorization: authorization = text()
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

    private static func keepFirst(_ slot: inout String?, _ value: String) {
        if slot == nil { slot = value }
    }

    private static func containsDuplicateNames(_ headers: [HeaderField]) -> Bool {
        // Requests carry about ten headers: comparing pairs beats hashing at that size.
        if headers.count <= 16 {
            for i in headers.indices {
                let count = headers[i].name.utf8.count
                for j in headers.index(after: i)..<headers.endIndex
                where headers[j].name.utf8.count == count && headers[i].name == headers[j].name {
                    return true
                }
            }
            return false
        }
        var seen = Set<String>(minimumCapacity: headers.count)
        for field in headers where !seen.insert(field.name).inserted {
            return true
        }
        return false
    }
}
