/// Strict JSON syntax (RFC 8259), checked without building anything: for copying a payload into a recording's JSON
/// as it was sent, instead of parsing it into values and writing them again.
enum JSONSyntax {
    /// Deeper nesting is treated as not clean, as in `JSONScanner`.
    static let maximumDepth = 64

    /// Whether `bytes` are exactly one JSON object (whitespace around it allowed) whose strings hold only valid
    /// UTF-8 and no raw control characters: such bytes can be copied into JSON text as they are.
    static func isCleanObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{"), reader.value(depth: 0) else { return false }
        reader.skipWhitespace()
        return reader.position == bytes.count
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        mutating func value(depth: Int) -> Bool {
            skipWhitespace()
            guard let first = peek else { return false }
            switch first {
            case UInt8(ascii: "{"):
                guard depth < JSONSyntax.maximumDepth else { return false }
                position += 1
                skipWhitespace()
                if consume(UInt8(ascii: "}")) { return true }
                while true {
                    skipWhitespace()
                    guard string() else { return false }
                    skipWhitespace()
                    guard consume(UInt8(ascii: ":")), value(depth: depth + 1) else { return false }
                    skipWhitespace()
                    if consume(UInt8(ascii: ",")) { continue }
                    return consume(UInt8(ascii: "}"))
                }
            case UInt8(ascii: "["):
                guard depth < JSONSyntax.maximumDepth else { return false }
                position += 1
                skipWhitespace()
                if consume(UInt8(ascii: "]")) { return true }
                while true {
                    guard value(depth: depth + 1) else { return false }
                    skipWhitespace()
                    if consume(UInt8(ascii: ",")) { continue }
                    return consume(UInt8(ascii: "]"))
                }
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "t"):
                return literal("true")
            case UInt8(ascii: "f"):
                return literal("false")
            case UInt8(ascii: "n"):
                return literal("null")
            default:
                return number()
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
            position += count
            return true
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        mutating func number() -> Bool {
            _ = consume(UInt8(ascii: "-"))
            guard let first = peek, ASCII.isDigit(first) else { return false }
            position += 1
            if first != UInt8(ascii: "0") { digits() }
            if consume(UInt8(ascii: ".")) {
                guard let next = peek, ASCII.isDigit(next) else { return false }
                digits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                position += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
                guard let next = peek, ASCII.isDigit(next) else { return false }
                digits()
            }
            return true
        }

        mutating func digits() {
            while let byte = peek, ASCII.isDigit(byte) { position += 1 }
        }

        /// A string with valid escapes, valid UTF-8 and no raw control characters.
        mutating func string() -> Bool {
            guard consume(UInt8(ascii: "\"")) else { return false }
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return true
                case UInt8(ascii: "\\"):
                    guard position + 1 < bytes.count else { return false }
                    switch bytes[position + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        position += 2
                    case UInt8(ascii: "u"):
                        guard position + 6 <= bytes.count else { return false }
                        for index in position + 2..<position + 6 where !ASCII.isHexDigit(bytes[index]) { return false }
                        position += 6
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                case 0x80...:
                    let length = UTF8Check.sequenceLength(bytes, at: position)
                    guard length > 0 else { return false }
                    position += length
                default:
                    position += 1
                }
            }
            return false
        }
    }
}

/// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
enum UTF8Check {
    /// The length of the well-formed sequence starting at `index`, or 0.
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
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
}
