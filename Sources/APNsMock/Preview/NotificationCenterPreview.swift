/// What a device would show for the pushes it was sent: Notification Center as iOS builds it (Apple's talks on
/// grouped notifications; `../shared/notification-display.md`), as a plain value computed from recordings, so the
/// rules are tested without a browser and the inspector only draws it.
public struct NotificationCenterPreview: Sendable, Equatable {
    /// How the user set grouping for the apps (a device setting, not part of the push).
    public enum Grouping: String, Sendable, CaseIterable {
        /// By `thread-id` within each app (the default).
        case automatic
        /// One group per app, thread identifiers ignored.
        case app
        /// No grouping: every notification on its own.
        case off
    }

    /// One notification as shown (or, with hidden previews, as not shown).
    public struct Card: Sendable, Equatable {
        public var sequence: UInt64
        public var receivedAt: Int64
        public var token: String?
        public var title: String?
        public var subtitle: String?
        /// The body, or the placeholder `Notification` when previews are hidden.
        public var body: String?
        public var threadID: String?
        public var category: String?
        /// `passive`, `active`, `time-sensitive` or `critical` (a critical sound makes it critical too).
        public var interruptionLevel: String
        /// Plays a sound (`sound` given).
        public var sound: Bool
        /// `apns-collapse-id`: a later push with the same id replaced earlier ones (counted in `replaced`).
        public var collapseID: String?
        public var replaced: Int
        /// `mutable-content: 1` with an alert: the app's Notification Service Extension ran on it first.
        public var serviceExtension: Bool
        /// How many items it stands for in a summary (`summary-arg-count`, default 1), and its `summary-arg`.
        public var summaryCount: Int
        public var summaryArg: String?
    }

    /// A stack: the leading (newest) notification on top, a summary of the rest under it.
    public struct Stack: Sendable, Equatable {
        /// `nil` for the app's default group.
        public var threadID: String?
        /// Newest first.
        public var cards: [Card]
        /// "2 more notifications" (the system's wording; an app's own format is a device setting), `nil` for one.
        public var summary: String?
        /// What iOS 12–14 showed from `summary-arg`/`summary-arg-count` ("3 more notifications from Ann and Bob");
        /// iOS 15 and later ignore both keys.
        public var legacySummary: String?
        /// With hidden previews, the stack as one line: "3 Notifications".
        public var hiddenText: String?
    }

    /// One app (its bundle ID: the topic without a push-type suffix).
    public struct App: Sendable, Equatable {
        public var bundleID: String
        /// The latest `badge` sent (0 clears it), `nil` when none was.
        public var badge: Int?
        public var stacks: [Stack]
    }

    /// A Live Activity: one card per activity (its push token, or its broadcast channel), at its latest push.
    public struct LiveActivity: Sendable, Equatable {
        /// `token:<hex>` or `channel:<id>`.
        public var key: String
        public var bundleID: String?
        public var event: String?
        /// `active`, `ended`, `dismissed` (ended with a past `dismissal-date`) or `stale` (past its `stale-date`).
        public var state: String
        public var contentState: String?
        public var updates: Int
        public var lastSequence: UInt64
    }

    /// A push that did not reach the screen, with why.
    public struct Other: Sendable, Equatable {
        public var sequence: UInt64
        public var token: String?
        public var topic: String?
        public var why: String
    }

    public var apps: [App]
    public var liveActivities: [LiveActivity]
    /// Background pushes: delivered to the app, not shown.
    public var silent: [Other]
    /// Rejected (4xx, 410) or unanswered: never delivered.
    public var notDelivered: [Other]
}
