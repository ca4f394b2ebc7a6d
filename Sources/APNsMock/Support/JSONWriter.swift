import Foundation

/// Writes JSON text straight into bytes: the one encoder for recordings (the admin API, the NDJSON record
/// file), the admin API's other answers and the JSON logs.
///
/// No intermediate objects and no key sorting per value: `JSONSerialization` (sorted keys, `NSString`
/// comparisons, boxed numbers) was far slower than the provider port, so a record file fell behind under load.
/// Members come out in the order they are written; `write(any:)` sorts dictionary keys so that answers built
/// from dictionaries are stable.
package struct JSONWriter: Sendable {
    package private(set) var bytes: [UInt8]
    /// Whether the next member or element needs a comma before it. One flag is enough: opening a container
    /// clears it, and finishing any value (a container included) sets it.
    private var needsComma = false

    package init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the output, keeping its capacity (a writer reused for many lines).
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// Removes the first `count` bytes (written out), keeping the rest and the capacity.
    package mutating func removeFirst(_ count: Int) {
        bytes.removeFirst(count)
    }

    /// Ends a line of NDJSON: the next value starts a new document.
    package mutating func newline() {
        bytes.append(0x0A)
        needsComma = false
    }

    // MARK: Containers

    package mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    package mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    package mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    package mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A member's name; its value is the next thing written.
    package mutating func key(_ name: StaticString) {
        bounded(atMost: name.utf8CodeUnitCount + 4) { $0.key(name) }
    }

    /// A member's name that is not a literal (dictionary keys).
    ///
    /// Disfavoured: a literal is a `String` by default, so without it every `key("name")` escaped its name through
    /// `string(_:)`, for every member of every line of the record file.
    @_disfavoredOverload
    package mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    package mutating func string(_ value: String) {
        ASCII.withUTF8(of: value) { string(utf8: $0) }
    }

    /// A literal that needs no escaping (checked by the caller).
    package mutating func string(static value: StaticString) {
        bounded(atMost: value.utf8CodeUnitCount + 3) { $0.string(static: value) }
    }

    /// A string from UTF-8 bytes. Invalid UTF-8 is written as U+FFFD, so the output is always valid JSON.
    package mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        var index = 0
        while index < value.count {
            // Eight bytes at a time while none needs attention (the usual case: long ASCII runs in payloads).
            if index + 8 <= value.count, !Self.needsAttention(UnsafeRawPointer(value.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = value[index]
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte < 0x80 {
                index += 1
                continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value[start..<index]))
            if byte >= 0x80 {
                let length = UTF8Check.sequenceLength(value, at: index)
                if length > 0 {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value[index..<index + length]))
                    index += length
                } else {
                    bytes.append(contentsOf: [0xEF, 0xBF, 0xBD])
                    index += 1
                }
            } else {
                appendEscape(byte)
                index += 1
            }
            start = index
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value[start..<index]))
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    package mutating func int(_ value: Int64) {
        bounded(atMost: 21) { $0.int(value) }
    }

    package mutating func int(_ value: Int) { int(Int64(value)) }

    package mutating func uint(_ value: UInt64) {
        bounded(atMost: 21) { $0.uint(value) }
    }

    package mutating func bool(_ value: Bool) {
        bounded(atMost: 6) { $0.bool(value) }
    }

    package mutating func null() {
        bounded(atMost: 5) { $0.null() }
    }

    /// A number: integral values exactly, others in Swift's shortest round-trip form; not-finite ones as `null`.
    package mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            int(Int64(value))
        } else {
            separate()
            bytes.append(contentsOf: value.description.utf8)
            needsComma = true
        }
    }

    package mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Bytes that are already one JSON value (checked by the caller).
    package mutating func raw(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Bytes that are one JSON value whose strings hold no raw control characters (checked by the caller), on one
    /// line: whitespace around it is left out, and line breaks between its tokens become spaces.
    package mutating func rawOnOneLine(_ json: UnsafeBufferPointer<UInt8>) {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var start = 0
        var end = json.count
        while start < end, isWhitespace(json[start]) { start += 1 }
        while end > start, isWhitespace(json[end - 1]) { end -= 1 }
        separate()
        let first = bytes.count
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: json[start..<end]))
        if json[start..<end].contains(where: { $0 == 0x0A || $0 == 0x0D }) {
            for index in first..<bytes.count where bytes[index] == 0x0A || bytes[index] == 0x0D { bytes[index] = 0x20 }
        }
        needsComma = true
    }

    /// Starts a fragment of members for `members(_:)`: what follows is written as if a member came before it, so
    /// that the fragment starts with a comma.
    package mutating func continueObject() {
        needsComma = true
    }

    /// Members written earlier by a writer that began with `continueObject()`, after at least one member of the
    /// object being written.
    package mutating func members(_ fragment: some Sequence<UInt8>) {
        bytes.append(contentsOf: fragment)
        needsComma = true
    }

    /// A JSON value of the scanner's model, object members in key order.
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                self.value(members[name]!)
            }
            endObject()
        }
    }

    /// A tree of dictionaries, arrays, strings, numbers, booleans and `nil`s (the admin API's answers built as
    /// dictionaries), recordings in their own form: keys sorted, so answers are stable. Anything else is written
    /// as its description.
    package mutating func write(any value: Any?) {
        switch value {
        case nil: null()
        case let text as String: string(text)
        case let flag as Bool: bool(flag)
        case let number as Int: int(number)
        case let number as Int64: int(number)
        case let number as Int32: int(Int64(number))
        case let number as UInt64: uint(number)
        case let number as UInt32: uint(UInt64(number))
        case let number as UInt8: uint(UInt64(number))
        case let number as Double: double(number)
        case let json as JSONValue: self.value(json)
        case let recording as RecordedNotification: recording.writeJSON(into: &self)
        // The containers before the Foundation classes: asking a Swift dictionary or array whether it is an
        // `NSNumber` bridges it, and all it holds, to Foundation first, at every level of the tree.
        case let object as [String: Any]:
            beginObject()
            for name in object.keys.sorted() {
                key(name)
                write(any: Self.unwrap(object[name]!))
            }
            endObject()
        case let object as [String: Any?]:
            write(any: object.mapValues { $0 as Any })
        case let elements as [Any]:
            beginArray()
            for element in elements { write(any: Self.unwrap(element)) }
            endArray()
        case is NSNull: null()
        case let number as NSNumber: self.number(number)
        default:
            string(String(describing: value!))
        }
    }

    /// A number parsed by `JSONSerialization`: booleans are `NSNumber`s too, told apart by their type code.
    private mutating func number(_ number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B": bool(number.boolValue)
        case "d", "f": double(number.doubleValue)
        case "Q": uint(number.uint64Value)
        default: int(number.int64Value)
        }
    }

    /// `Any` holding an `Optional` (a `nil` stored in a dictionary) as the optional itself.
    private static func unwrap(_ value: Any) -> Any? {
        if let optional = value as? any OptionalProtocol { return optional.wrappedAny }
        return value
    }

    /// The encoded bytes of a tree (see `write(any:)`).
    package static func encode(any value: Any?) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(any: value)
        return writer.bytes
    }

    /// A time as an ISO 8601 string (`"2026-11-22T03:01:09.612Z"`, see `ISO8601Time`).
    package mutating func iso8601(milliseconds: Int64) {
        bounded(atMost: ISO8601Time.maximumLength + 3) { $0.iso8601(milliseconds: milliseconds) }
    }

    /// As `iso8601(milliseconds:)`, the second's text taken from `memo` when it is the same (see
    /// `ISO8601Time.SecondMemo`).
    package mutating func iso8601(milliseconds: Int64, memo: inout ISO8601Time.SecondMemo) {
        bounded(atMost: ISO8601Time.maximumLength + 3) { $0.iso8601(milliseconds: milliseconds, memo: &memo) }
    }

    /// A generated ID as its UUID text.
    package mutating func uuid(high: UInt64, low: UInt64, uppercase: Bool) {
        bounded(atMost: APNsIDGenerator.textLength + 3) { $0.uuid(high: high, low: low, uppercase: uppercase) }
    }

    /// A string of `prefix` then `bytes` in hexadecimal (a device token, its path).
    package mutating func hexString(prefix: StaticString, bytes hex: UnsafeRawBufferPointer, uppercase: Bool) {
        bounded(atMost: prefix.utf8CodeUnitCount + 2 * hex.count + 3) { $0.hexString(prefix: prefix, bytes: hex, uppercase: uppercase) }
    }

    /// Tokens of bounded length written by `body` through a `BoundedJSONWriter` into `capacity` bytes of scratch
    /// space on the stack, then appended at once (see `BoundedJSONWriter` for why). Keep `capacity` small (a
    /// line's head, an answer's object): larger scratch space is taken from the heap.
    @inline(__always)
    package mutating func bounded<Result>(atMost capacity: Int, _ body: (inout BoundedJSONWriter) -> Result) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { scratch in
            var tokens = BoundedJSONWriter(scratch, needsComma: needsComma)
            let result = body(&tokens)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[..<tokens.count]))
            needsComma = tokens.needsComma
            return result
        }
    }

    // MARK: Bytes

    /// Whether any of eight bytes is a control character, `"`, `\\` or not ASCII (SWAR: a byte's high bit is set
    /// in the result where it is below 0x20 or equal to one of the two).
    @inline(__always)
    private static func needsAttention(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZero(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
        let below = (word &- ones &* 0x20) & ~word & highs
        return (below | hasZero(word ^ (ones &* 0x22)) | hasZero(word ^ (ones &* 0x5C)) | (word & highs)) != 0
    }

    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// A byte's escape, a byte at a time (an array literal per escape was an allocation per quote of a payload).
    private mutating func appendEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let gap = HexDigits.letterGap(uppercase: false)
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(HexDigits.digit(UInt64(byte >> 4), gap: gap))
            bytes.append(HexDigits.digit(UInt64(byte & 0x0F), gap: gap))
        }
    }
}

/// Lets `write(any:)` see through an `Optional` stored as `Any`.
private protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}
