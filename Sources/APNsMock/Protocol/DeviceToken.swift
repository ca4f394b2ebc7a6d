/// Rules for the device token in `/3/device/<token>`.
///
/// Apple says not to assume a size; real tokens of 64, 108 and 160 hex digits have been seen, in upper or
/// lower case. The mock accepts an even number of hex digits between the configured bounds.
package struct DeviceTokenRules: Sendable, Equatable {
    package var minimumHexDigits: Int
    package var maximumHexDigits: Int

    package init(minimumHexDigits: Int = 64, maximumHexDigits: Int = 200) {
        self.minimumHexDigits = minimumHexDigits
        self.maximumHexDigits = maximumHexDigits
    }

    package func isValid<Bytes: Collection>(_ token: Bytes) -> Bool where Bytes.Element == UInt8 {
        guard isValid(count: token.count, allHex: true) else { return false }
        return token.withContiguousStorageIfAvailable { ASCII.hexDigits($0).allHex } ?? token.allSatisfy(ASCII.isHexDigit)
    }

    /// For a token whose digits were read already (`RequestHead.deviceTokenDigits`).
    func isValid(count: Int, allHex: Bool) -> Bool {
        allHex && count >= minimumHexDigits && count <= maximumHexDigits && count % 2 == 0
    }
}
