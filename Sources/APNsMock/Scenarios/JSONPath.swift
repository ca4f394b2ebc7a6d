import Foundation

/// A JSON value, with a case per kind so `true` and `1` stay different (unlike with `JSONSerialization`).
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value as `JSONSerialization` writes it.
    var jsonObject: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let value): return value
        case .number(let value):
            if value.rounded() == value, abs(value) < 9.0e15 { return Int64(value) }
            return value
        case .string(let value): return value
        case .array(let values): return values.map(\.jsonObject)
        case .object(let members): return members.mapValues(\.jsonObject)
        }
    }
}

/// A small JSON path: `$.aps.alert.title`, `$.items[0].id`, `$["key.with.dots"]`; the leading `$` is optional.
package struct JSONPath: Sendable, Equatable, CustomStringConvertible {
    package enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    package var components: [Component]
    /// As written.
    package var description: String

    /// Parses a path; the error says what is wrong, for the loader's message.
    package init(parsing text: String) throws(JSONPathError) {
        description = text
        components = []
        let characters = Array(text)
        var position = 0
        if characters.first == "$" { position = 1 }
        if position == characters.count {
            if position == 0 { throw JSONPathError("is empty") }
            return  // "$": the whole payload
        }
        var first = true
        while position < characters.count {
            let character = characters[position]
            if character == "[" {
                position += 1
                guard position < characters.count else { throw JSONPathError("ends after '['") }
                if characters[position] == "\"" || characters[position] == "'" {
                    let quote = characters[position]
                    position += 1
                    var key = ""
                    while position < characters.count, characters[position] != quote {
                        key.append(characters[position])
                        position += 1
                    }
                    guard position + 1 < characters.count, characters[position + 1] == "]" else {
                        throw JSONPathError("has an unterminated quoted key")
                    }
                    components.append(.key(key))
                    position += 2
                } else {
                    var digits = ""
                    while position < characters.count, characters[position] != "]" {
                        digits.append(characters[position])
                        position += 1
                    }
                    guard position < characters.count else { throw JSONPathError("has '[' without ']'") }
                    guard let index = Int(digits), index >= 0 else {
                        throw JSONPathError("has index '\(digits)'; write a number ≥ 0 or a quoted key")
                    }
                    components.append(.index(index))
                    position += 1
                }
            } else {
                if character == "." {
                    position += 1
                } else if !(first && description.first != "$") {
                    throw JSONPathError("expects '.' or '[' at '\(String(characters[position...]))'")
                }
                var key = ""
                while position < characters.count, characters[position] != ".", characters[position] != "[" {
                    key.append(characters[position])
                    position += 1
                }
                guard !key.isEmpty else { throw JSONPathError("has an empty key") }
                components.append(.key(key))
            }
            first = false
        }
    }
}

package struct JSONPathError: Error {
    package var message: String
    init(_ message: String) { self.message = message }
}
