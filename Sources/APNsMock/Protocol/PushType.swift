/// The eleven values of `apns-push-type`, with the topic suffix Apple requires for each.
package enum PushType: String, Sendable, CaseIterable, Codable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets,
        controls

    /// The push type `rawValue` names, or `nil`: the one candidate its length and first byte leave, confirmed with
    /// one `==` (every value is a small string, so a match compares two words). The synthesized initializer searched
    /// an array of all eleven (`_findStringSwitchCase`) for every request.
    package init?(rawValue: String) {
        let first = rawValue.utf8.first
        let candidate: PushType
        switch rawValue.utf8.count {
        case 3: candidate = .mdm
        case 4: candidate = .voip
        case 5: candidate = .alert
        case 7: candidate = .widgets
        case 8: candidate = first == UInt8(ascii: "l") ? .location : .controls
        case 10: candidate = first == UInt8(ascii: "b") ? .background : .pushtotalk
        case 12: candidate = first == UInt8(ascii: "c") ? .complication : first == UInt8(ascii: "f") ? .fileprovider : .liveactivity
        default: return nil
        }
        guard candidate.rawValue == rawValue else { return nil }
        self = candidate
    }

    /// The suffix the `apns-topic` must end with for this push type, or `nil` when the topic is the bare
    /// bundle ID (`alert`, `background`) or not a bundle ID at all (`mdm`: the certificate's UID).
    package var requiredTopicSuffix: String? {
        topicSuffix.map { "\($0)" }
    }

    /// `requiredTopicSuffix` as static bytes, for the check every push gets.
    var topicSuffix: StaticString? {
        switch self {
        case .alert, .background, .mdm: return nil
        case .location: return ".location-query"
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        }
    }

    /// Every topic suffix that marks a non-bare topic; a bare push type (`alert`, `background`) sent to a
    /// topic carrying one of these is a mismatch.
    static let allTopicSuffixes: [StaticString] = allCases.compactMap(\.topicSuffix)

    /// Whether `topic` ends with one of `allTopicSuffixes`. Every alert and background push asks: looked up by the
    /// topic's last byte, a bundle ID is compared with at most two suffixes instead of all eight.
    static func hasAnyTopicSuffix(_ topic: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let last = topic.last else { return false }
        return suffixesByLastByte[Int(last)].contains { ASCII.hasSuffix(topic, $0) }
    }

    static func hasAnyTopicSuffix(_ topic: String) -> Bool {
        ASCII.withUTF8(of: topic) { hasAnyTopicSuffix($0) }
    }

    /// `allTopicSuffixes` by their last byte.
    private static let suffixesByLastByte: [[StaticString]] = {
        var table = Array(repeating: [StaticString](), count: 256)
        for suffix in allTopicSuffixes {
            table[Int(suffix.utf8Start[suffix.utf8CodeUnitCount - 1])].append(suffix)
        }
        return table
    }()
}
