/// Finds the value at a ``JSONPath`` in a payload without decoding the rest: members and elements off the path are
/// skipped byte by byte, so a payload condition costs a scan, not a parse into dictionaries.
///
/// It checks the syntax of what it reads, not of the whole document: a payload that is broken only after the
/// value a path leads to still yields that value.
package struct JSONScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0
    /// Deeper nesting is treated as malformed, so a hostile payload cannot exhaust the stack.
    private static let maximumDepth = 64

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// The value at `path` in `payload`, or `nil` when the path leads nowhere or the payload is not JSON there.
    package static func value(at path: JSONPath, in payload: [UInt8]) -> JSONValue? {
        payload.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            return scanner.value(at: path.components[...])
        }
    }

    /// The whole payload as a ``JSONValue`` (`nil` when it is not JSON).
    package static func parse(_ payload: [UInt8]) -> JSONValue? {
        payload.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer)
            guard let value = scanner.parseValue() else { return nil }
            scanner.skipWhitespace()
            return scanner.position == buffer.count ? value : nil
        }
    }

    // MARK: Navigation

    private mutating func value(at components: ArraySlice<JSONPath.Component>) -> JSONValue? {
        skipWhitespace()
        guard let component = components.first else { return parseValue() }
        let rest = components.dropFirst()
        switch component {
        case .key(let key):
            guard consume(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return nil }
            while true {
                skipWhitespace()
                guard let matches = readKey(equalTo: key) else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")) else { return nil }
                if matches { return value(at: rest) }
                guard skipValue() else { return nil }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return nil  // "}" (not found) or malformed
            }
        case .index(let index):
            guard consume(UInt8(ascii: "[")) else { return nil }
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return nil }
            var current = 0
            while true {
                if current == index { return value(at: rest) }
                guard skipValue() else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ",")) else { return nil }
                current += 1
            }
        }
    }

    /// Reads an object key and says whether it is `key`; `nil` when malformed.
    private mutating func readKey(equalTo key: String) -> Bool? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var end = start
        var escaped = false
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            if bytes[end] == UInt8(ascii: "\\") {
                escaped = true
                end += 1
            }
            end += 1
        }
        guard end < bytes.count else { return nil }
        if escaped {
            guard let text = parseString() else { return nil }
            return text == key
        }
        position = end + 1
        return key.utf8.elementsEqual(UnsafeBufferPointer(rebasing: bytes[start..<end]))
    }

    // MARK: Skipping

    private mutating func skipValue() -> Bool {
        skipWhitespace()
        guard position < bytes.count else { return false }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            // Brackets only need counting: strings (which may hold brackets) are skipped whole.
            var nesting = 0
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    nesting += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    nesting -= 1
                    if nesting == 0 {
                        position += 1
                        return true
                    }
                default:
                    break
                }
                position += 1
            }
            return false
        default:
            let start = position
            while position < bytes.count, !Self.endsScalar(bytes[position]) { position += 1 }
            return position > start
        }
    }

    private mutating func skipString() -> Bool {
        position += 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\\"): position += 2
            case UInt8(ascii: "\""):
                position += 1
                return true
            default: position += 1
            }
        }
        return false
    }

    // MARK: Parsing

    private mutating func parseValue() -> JSONValue? {
        skipWhitespace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return parseString().map(JSONValue.string)
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { return nil }
            depth += 1
            defer { depth -= 1 }
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if consume(UInt8(ascii: "}")) { return .object(members) }
            while true {
                skipWhitespace()
                guard let key = parseString() else { return nil }
                skipWhitespace()
                guard consume(UInt8(ascii: ":")), let value = parseValue() else { return nil }
                if members[key] == nil { members[key] = value }
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "}")) ? .object(members) : nil
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { return nil }
            depth += 1
            defer { depth -= 1 }
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if consume(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                guard let value = parseValue() else { return nil }
                elements.append(value)
                skipWhitespace()
                if consume(UInt8(ascii: ",")) { continue }
                return consume(UInt8(ascii: "]")) ? .array(elements) : nil
            }
        default:
            let start = position
            while position < bytes.count, !Self.endsScalar(bytes[position]) { position += 1 }
            let word = UnsafeBufferPointer(rebasing: bytes[start..<position])
            if word.elementsEqual("true".utf8) { return .bool(true) }
            if word.elementsEqual("false".utf8) { return .bool(false) }
            if word.elementsEqual("null".utf8) { return .null }
            return Self.number(word).map(JSONValue.number)
        }
    }

    private mutating func parseString() -> String? {
        guard consume(UInt8(ascii: "\"")) else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
            position += 1
        }
        guard position < bytes.count else { return nil }
        if bytes[position] == UInt8(ascii: "\"") {
            defer { position += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        }
        // Escapes: decode into a buffer.
        var decoded = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { return nil }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = readHex4() else { return nil }
                    if (0xD800...0xDBFF).contains(scalar), position + 1 < bytes.count,
                        bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        guard let low = readHex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    decoded.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                default:
                    return nil
                }
            default:
                decoded.append(byte)
            }
        }
        return nil
    }

    private mutating func readHex4() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private static func number(_ word: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !word.isEmpty else { return nil }
        // Integers, the usual case, without going through a String.
        var index = 0
        var negative = false
        if word[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        if index < word.count, word.count - index <= 15, word[index...].allSatisfy(ASCII.isDigit) {
            var value: Int64 = 0
            for byte in word[index...] { value = value * 10 + Int64(byte - UInt8(ascii: "0")) }
            return Double(negative ? -value : value)
        }
        let allowed = word.allSatisfy {
            ASCII.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: ".")
                || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
        }
        guard allowed else { return nil }
        return Double(String(decoding: word, as: UTF8.self))
    }

    // MARK: Bytes

    private mutating func skipWhitespace() {
        while position < bytes.count,
            bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D || bytes[position] == 0x09
        {
            position += 1
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
            || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
