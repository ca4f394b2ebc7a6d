import Foundation

/// Whether bytes are a JSON object: the shape Apple requires of a payload.
package enum JSONObjectCheck {
    package static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        parseObject(bytes) != nil
    }

    package static func parseObject(_ bytes: [UInt8]) -> [String: Any]? {
        guard let first = bytes.first(where: { !isJSONWhitespace($0) }), first == UInt8(ascii: "{") else {
            return nil
        }
        return (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any]
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
