import Foundation

extension NotificationCenterPreview {
    /// `GET /admin/preview`'s answer.
    package func jsonObject() -> [String: Any] {
        [
            "apps": apps.map { app -> [String: Any] in
                ["bundleId": app.bundleID, "badge": app.badge as Any? ?? NSNull(), "stacks": app.stacks.map(Self.json)]
            },
            "liveActivities": liveActivities.map { activity -> [String: Any] in
                [
                    "key": activity.key, "bundleId": activity.bundleID as Any? ?? NSNull(), "event": activity.event as Any? ?? NSNull(),
                    "state": activity.state, "contentState": activity.contentState as Any? ?? NSNull(), "updates": activity.updates,
                    "lastSequence": Int64(clamping: activity.lastSequence),
                ]
            },
            "silent": silent.map(Self.json),
            "notDelivered": notDelivered.map(Self.json),
        ]
    }

    static func json(_ stack: Stack) -> [String: Any] {
        [
            "threadId": stack.threadID as Any? ?? NSNull(),
            "summary": stack.summary as Any? ?? NSNull(),
            "legacySummary": stack.legacySummary as Any? ?? NSNull(),
            "hiddenText": stack.hiddenText as Any? ?? NSNull(),
            "cards": stack.cards.map { card -> [String: Any] in
                [
                    "sequence": Int64(clamping: card.sequence), "receivedAt": ISO8601Time.format(milliseconds: card.receivedAt),
                    "token": card.token as Any? ?? NSNull(), "title": card.title as Any? ?? NSNull(),
                    "subtitle": card.subtitle as Any? ?? NSNull(), "body": card.body as Any? ?? NSNull(),
                    "threadId": card.threadID as Any? ?? NSNull(), "category": card.category as Any? ?? NSNull(),
                    "interruptionLevel": card.interruptionLevel, "sound": card.sound,
                    "collapseId": card.collapseID as Any? ?? NSNull(), "replaced": card.replaced,
                    "serviceExtension": card.serviceExtension,
                ]
            },
        ]
    }

    static func json(_ other: Other) -> [String: Any] {
        [
            "sequence": Int64(clamping: other.sequence), "token": other.token as Any? ?? NSNull(),
            "topic": other.topic as Any? ?? NSNull(), "why": other.why,
        ]
    }
}
