extension NotificationCenterPreview {
    /// The preview of `recordings` (any order): what was delivered, grouped as iOS groups it; what was silent;
    /// what never arrived.
    /// - Parameters:
    ///   - hidePreviews: the device hides previews: placeholders, coalesced by thread.
    ///   - now: for Live Activities' stale and dismissal dates (milliseconds since the epoch).
    package init(recordings: [RecordedNotification], grouping: Grouping = .automatic, hidePreviews: Bool = false, now: Int64 = WallClock.milliseconds()) {
        var cardsByApp: [String: [Card]] = [:]
        var badges: [String: Int] = [:]
        var activities: [String: LiveActivity] = [:]
        var silent: [Other] = []
        var notDelivered: [Other] = []
        for recording in recordings.sorted(by: { $0.sequence < $1.sequence }) {
            let topic = recording.topic
            let bundle = recording.broadcast?.bundleID ?? topic.map(Self.bundleID(of:))
            guard recording.status == 200 else {
                let why: String
                if let status = recording.status {
                    why = "\(status)" + (recording.reason.map { " \($0.rawValue)" } ?? "") + ": not delivered"
                } else {
                    why = recording.abandonedBecause ?? "no answer"
                }
                notDelivered.append(Other(sequence: recording.sequence, token: recording.deviceToken, topic: topic, why: why))
                continue
            }
            guard recording.kind == "push" || recording.kind == "broadcast" else { continue }
            let aps: [String: JSONValue]
            if case .object(let members)? = JSONScanner.parse(recording.request.payload), case .object(let inner)? = members["aps"] {
                aps = inner
            } else {
                aps = [:]
            }
            if recording.kind == "broadcast" || recording.pushType?.lowercased() == "liveactivity" {
                let key = recording.broadcast.map { "channel:\($0.channelID ?? "")" } ?? "token:\(recording.deviceToken ?? "")"
                var activity = activities[key] ?? LiveActivity(key: key, bundleID: bundle, event: nil, state: "active", contentState: nil, updates: 0, lastSequence: 0)
                activity.updates += 1
                activity.lastSequence = recording.sequence
                if case .string(let event)? = aps["event"] { activity.event = event }
                if let state = aps["content-state"] {
                    var json = JSONWriter()
                    json.value(state)
                    activity.contentState = String(decoding: json.bytes, as: UTF8.self)
                }
                activity.state = Self.activityState(event: activity.event, aps: aps, now: now)
                activities[key] = activity
                continue
            }
            let bundleID = bundle ?? "(no topic)"
            if case .number(let badge)? = aps["badge"] { badges[bundleID] = Int(badge) }
            let alert = aps["alert"]
            let hasAlert = alert != nil && alert != .null
            if !hasAlert {
                if aps["content-available"] == .number(1), aps["sound"] == nil, aps["badge"] == nil {
                    silent.append(Other(sequence: recording.sequence, token: recording.deviceToken, topic: topic, why: "background push: delivered to the app, not shown"))
                }
                continue
            }
            var card = Self.card(recording, aps: aps, alert: alert, hidePreviews: hidePreviews)
            // Changed in place: an app's cards copied out of the dictionary and stored back were copied whole for
            // every card, quadratic in the recordings.
            if let collapseID = card.collapseID, let earlier = cardsByApp[bundleID]?.firstIndex(where: { $0.collapseID == collapseID }) {
                card.replaced = cardsByApp[bundleID]![earlier].replaced + 1
                cardsByApp[bundleID]!.remove(at: earlier)
            }
            cardsByApp[bundleID, default: []].append(card)
        }
        var apps: [App] = []
        for bundleID in Set(cardsByApp.keys).union(badges.keys) {
            let cards = (cardsByApp[bundleID] ?? []).sorted { $0.sequence > $1.sequence }
            var groups: [(key: String?, cards: [Card])] = []
            for card in cards {
                let key: String?
                switch grouping {
                case .automatic: key = card.threadID
                case .app: key = nil
                case .off: key = "#\(card.sequence)"
                }
                if grouping != .off, let index = groups.firstIndex(where: { $0.key == key }) {
                    groups[index].cards.append(card)
                } else {
                    groups.append((key, [card]))
                }
            }
            let stacks = groups.map { group in
                Self.stack(threadID: grouping == .automatic ? group.key : nil, cards: group.cards, hidePreviews: hidePreviews)
            }
            apps.append(App(bundleID: bundleID, badge: badges[bundleID], stacks: stacks))
        }
        apps.sort { ($0.stacks.first?.cards.first?.sequence ?? 0) > ($1.stacks.first?.cards.first?.sequence ?? 0) }
        self.init(
            apps: apps,
            liveActivities: activities.values.sorted { $0.lastSequence > $1.lastSequence },
            silent: silent.reversed(),
            notDelivered: notDelivered.reversed()
        )
    }

    static func card(_ recording: RecordedNotification, aps: [String: JSONValue], alert: JSONValue?, hidePreviews: Bool) -> Card {
        var title: String?
        var subtitle: String?
        var body: String?
        var summaryArg: String?
        var summaryCount = 1
        switch alert {
        case .string(let text)?:
            body = text
        case .object(let members)?:
            title = Self.text(members["title"]) ?? Self.text(members["title-loc-key"]).map { "[\($0)]" }
            subtitle = Self.text(members["subtitle"]) ?? Self.text(members["subtitle-loc-key"]).map { "[\($0)]" }
            body = Self.text(members["body"]) ?? Self.text(members["loc-key"]).map { "[\($0)]" }
            summaryArg = Self.text(members["summary-arg"])
            if case .number(let count)? = members["summary-arg-count"], count >= 1 { summaryCount = Int(count) }
        default:
            break
        }
        if summaryArg == nil { summaryArg = Self.text(aps["summary-arg"]) }
        if case .number(let count)? = aps["summary-arg-count"], count >= 1 { summaryCount = Int(count) }
        var level = Self.text(aps["interruption-level"]) ?? "active"
        if case .object(let sound)? = aps["sound"], sound["critical"] == .number(1) { level = "critical" }
        if hidePreviews {
            title = nil
            subtitle = nil
            body = "Notification"
        }
        return Card(
            sequence: recording.sequence,
            receivedAt: recording.receivedAt,
            token: recording.deviceToken,
            title: title,
            subtitle: subtitle,
            body: body,
            threadID: Self.text(aps["thread-id"]),
            category: Self.text(aps["category"]),
            interruptionLevel: level,
            sound: aps["sound"] != nil,
            collapseID: recording.request.header("apns-collapse-id"),
            replaced: 0,
            serviceExtension: aps["mutable-content"] == .number(1),
            summaryCount: summaryCount,
            summaryArg: summaryArg
        )
    }

    static func stack(threadID: String?, cards: [Card], hidePreviews: Bool) -> Stack {
        let others = cards.dropFirst()
        var stack = Stack(threadID: threadID, cards: cards, summary: nil, legacySummary: nil, hiddenText: nil)
        if !others.isEmpty {
            stack.summary = "\(others.count) more notification\(others.count == 1 ? "" : "s")"
            let names = others.compactMap(\.summaryArg).reduce(into: [String]()) { names, name in if !names.contains(name) { names.append(name) } }
            if !names.isEmpty || others.contains(where: { $0.summaryCount != 1 }) {
                let count = others.reduce(0) { $0 + $1.summaryCount }
                stack.legacySummary = "\(count) more notification\(count == 1 ? "" : "s")" + (names.isEmpty ? "" : " from " + Self.list(names))
            }
        }
        if hidePreviews { stack.hiddenText = "\(cards.count) Notification\(cards.count == 1 ? "" : "s")" }
        return stack
    }

    static func activityState(event: String?, aps: [String: JSONValue], now: Int64) -> String {
        let seconds = Double(now) / 1000
        if event == "end" {
            if case .number(let dismissal)? = aps["dismissal-date"], dismissal <= seconds { return "dismissed" }
            return "ended"
        }
        if case .number(let stale)? = aps["stale-date"], stale <= seconds { return "stale" }
        return "active"
    }

    /// The app of a topic: without the push-type suffix (`.voip`, `.push-type.liveactivity`, …).
    static func bundleID(of topic: String) -> String {
        for suffix in PushType.allTopicSuffixes where ASCII.hasSuffix(topic, suffix) {
            return String(topic.utf8.dropLast(suffix.utf8CodeUnitCount))!
        }
        return topic
    }

    static func text(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    /// "Ann", "Ann and Bob", "Ann, Bob and Cy".
    static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }
}
