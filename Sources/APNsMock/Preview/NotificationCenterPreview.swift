/// What a device would show for the pushes it was sent: Notification Center as iOS builds it (Apple's talks on
/// grouped notifications; `../shared/notification-display.md`), as a plain value computed from recordings, so the
/// rules are tested without a browser and the inspector only draws it.
package struct NotificationCenterPreview: Sendable, Equatable {
    /// How the user set grouping for the apps (a device setting, not part of the push).
    package enum Grouping: String, Sendable, CaseIterable {
        /// By `thread-id` within each app (the default).
        case automatic
        /// One group per app, thread identifiers ignored.
        case app
        /// No grouping: every notification on its own.
        case off
    }

    /// One notification as shown (or, with hidden previews, as not shown).
    package struct Card: Sendable, Equatable {
        package var sequence: UInt64
        package var receivedAt: Int64
        package var token: String?
        package var title: String?
        package var subtitle: String?
        /// The body, or the placeholder `Notification` when previews are hidden.
        package var body: String?
        package var threadID: String?
        package var category: String?
        /// `passive`, `active`, `time-sensitive` or `critical` (a critical sound makes it critical too).
        package var interruptionLevel: String
        /// Plays a sound (`sound` given).
        package var sound: Bool
        /// `apns-collapse-id`: a later push with the same id replaced earlier ones (counted in `replaced`).
        package var collapseID: String?
        package var replaced: Int
        /// `mutable-content: 1` with an alert: the app's Notification Service Extension ran on it first.
        package var serviceExtension: Bool
        /// How many items it stands for in a summary (`summary-arg-count`, default 1), and its `summary-arg`.
        package var summaryCount: Int
        package var summaryArg: String?
    }

    /// A stack: the leading (newest) notification on top, a summary of the rest under it.
    package struct Stack: Sendable, Equatable {
        /// `nil` for the app's default group.
        package var threadID: String?
        /// Newest first.
        package var cards: [Card]
        /// "2 more notifications" (the system's wording; an app's own format is a device setting), `nil` for one.
        package var summary: String?
        /// What iOS 12–14 showed from `summary-arg`/`summary-arg-count` ("3 more notifications from Ann and Bob");
        /// iOS 15 and later ignore both keys.
        package var legacySummary: String?
        /// With hidden previews, the stack as one line: "3 Notifications".
        package var hiddenText: String?
    }

    /// One app (its bundle ID: the topic without a push-type suffix).
    package struct App: Sendable, Equatable {
        package var bundleID: String
        /// The latest `badge` sent (0 clears it), `nil` when none was.
        package var badge: Int?
        package var stacks: [Stack]
    }

    /// A Live Activity: one card per activity (its push token, or its broadcast channel), at its latest push.
    package struct LiveActivity: Sendable, Equatable {
        /// `token:<hex>` or `channel:<id>`.
        package var key: String
        package var bundleID: String?
        package var event: String?
        /// `active`, `ended`, `dismissed` (ended with a past `dismissal-date`) or `stale` (past its `stale-date`).
        package var state: String
        package var contentState: String?
        package var updates: Int
        package var lastSequence: UInt64
    }

    /// A push that did not reach the screen, with why.
    package struct Other: Sendable, Equatable {
        package var sequence: UInt64
        package var token: String?
        package var topic: String?
        package var why: String
    }

    package var apps: [App]
    package var liveActivities: [LiveActivity]
    /// Background pushes: delivered to the app, not shown.
    package var silent: [Other]
    /// Rejected (4xx, 410) or unanswered: never delivered.
    package var notDelivered: [Other]
}
