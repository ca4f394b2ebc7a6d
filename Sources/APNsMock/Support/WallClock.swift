import Foundation

/// The wall clock as the mock counts time everywhere (recordings, scenarios, tokens, the admin API):
/// whole milliseconds since the epoch.
package enum WallClock {
    package static let milliseconds: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
