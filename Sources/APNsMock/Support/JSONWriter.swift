import Foundation

/// Writes JSON text straight into bytes: the one encoder for recordings (the admin API, the NDJSON record
/// file), the admin API's other answers and the JSON logs.
///
/// No intermediate objects and no key sorting per value: `JSONSerialization` (sorted keys, `NSString`
/// comparisons, boxed numbers) was far slower than the provider port, so a record file fell behind under load.
/// Members come out in the order they are written; `write(any:)` sorts dictionary keys so that answers built
/// from dictionaries are stable.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]
    /// Whether the next member or element needs a comma before it. One flag is enough: opening a container
    /// clears it, and finishing any value (a container included) sets it.
    private var needsComma = false

    public init(reservingCapacity capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the output, keeping its capacity (a writer reused for many lines).
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// Ends a line of NDJSON: the next value starts a new document.
    public mutating func newline() {
        bytes.append(0x0A)
        needsComma = false
    }

    // MARK: Containers

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A member's name; its value is the next thing written.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    /// A member's name that is not a literal (dictionary keys).
    public mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// A string from UTF-8 bytes. Invalid UTF-8 is written as U+FFFD, so the output is always valid JSON.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        var index = 0
        while index < value.count {
            let byte = value[index]
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte < 0x80 {
                index += 1
                continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: value[start..<index]))
            if byte >= 0x80 {
                let length = Self.validUTF8SequenceLength(value, at: index)
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

    public mutating func int(_ value: Int64) {
        separate()
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            appendDigits(value.magnitude)
        } else {
            appendDigits(UInt64(value))
        }
        needsComma = true
    }

    public mutating func int(_ value: Int) { int(Int64(value)) }

    public mutating func uint(_ value: UInt64) {
        separate()
        appendDigits(value)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        needsComma = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: Self.nullBytes)
        needsComma = true
    }

    /// A number: integral values exactly, others in Swift's shortest round-trip form; not-finite ones as `null`.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { return null() }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            int(Int64(value))
        } else {
            separate()
            bytes.append(contentsOf: value.description.utf8)
            needsComma = true
        }
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Bytes that are already one JSON value (checked by the caller).
    package mutating func raw(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
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
    public mutating func write(any value: Any?) {
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
        case is NSNull: null()
        case let number as NSNumber: self.number(number)
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
    public static func encode(any value: Any?) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(any: value)
        return writer.bytes
    }

    // MARK: Bytes

    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [
                UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
            ])
        }
    }

    private mutating func appendDigits(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var remaining = value
            var index = 20
            while remaining > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index..<20]))
        }
    }

    /// The length of the well-formed UTF-8 sequence at `index` (RFC 3629: no overlongs, no surrogates), or 0.
    private static func validUTF8SequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        let second = bytes[index + 1]
        guard second >= lower, second <= upper else { return 0 }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return 0 }
        return length
    }

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
    private static let nullBytes: [UInt8] = Array("null".utf8)
}

/// Lets `write(any:)` see through an `Optional` stored as `Any`.
private protocol OptionalProtocol {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalProtocol {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}
