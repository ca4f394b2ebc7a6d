import Testing

@testable import APNsMock

/// Notification Center as iOS would build it from what was sent, without a browser.
@Suite("Notification-center preview")
struct NotificationCenterPreviewTests {
    static let token = String(repeating: "ab", count: 32)
    let processor = NotificationProcessor(now: { 1_800_000_000_000 })
    let recorder = Recorder()

    func push(_ payload: String, token: String = token, topic: String = "com.example.app", pushType: String = "alert", collapseID: String? = nil) {
        var headers = [HeaderField(name: "apns-topic", value: topic), HeaderField(name: "apns-push-type", value: pushType)]
        if let collapseID { headers.append(HeaderField(name: "apns-collapse-id", value: collapseID)) }
        let request = APNsRequest(method: "POST", path: "/3/device/" + token, headers: headers, payload: Array(payload.utf8))
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        let decision = processor.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &state, ids: &ids)
        var context = RecordingContext()
        recorder.record(request, streamID: 1, connection: ConnectionInfo(id: 1), outcome: decision.outcome, context: &context)
    }

    func preview(grouping: NotificationCenterPreview.Grouping = .automatic, hidePreviews: Bool = false) -> NotificationCenterPreview {
        NotificationCenterPreview(recordings: recorder.store.list().notifications, grouping: grouping, hidePreviews: hidePreviews, now: 1_800_000_000_000)
    }

    func sendMessages() {
        push(#"{"aps":{"alert":{"title":"Ann","body":"Hi"},"thread-id":"ann","summary-arg":"Ann"}}"#)
        push(#"{"aps":{"alert":{"title":"Bob","body":"Yo"},"thread-id":"bob"}}"#)
        push(#"{"aps":{"alert":{"title":"Ann","body":"Lunch?"},"thread-id":"ann","summary-arg":"Ann","summary-arg-count":3}}"#)
        push(#"{"aps":{"alert":"No thread"}}"#)
    }

    @Test func stacksByThreadNewestFirstWithSummaries() throws {
        sendMessages()
        let app = try #require(preview().apps.first)
        #expect(app.bundleID == "com.example.app")
        #expect(app.stacks.map(\.threadID) == [nil, "ann", "bob"])
        let ann = app.stacks[1]
        #expect(ann.cards.map(\.body) == ["Lunch?", "Hi"] && ann.summary == "1 more notification")
        #expect(ann.legacySummary == "1 more notification from Ann")
        #expect(app.stacks[2].summary == nil)
    }

    @Test func groupingByAppOrOff() {
        sendMessages()
        #expect(preview(grouping: .app).apps.first?.stacks.count == 1)
        #expect(preview(grouping: .app).apps.first?.stacks.first?.summary == "3 more notifications")
        #expect(preview(grouping: .off).apps.first?.stacks.count == 4)
    }

    @Test func summaryArgCountsAddUp() {
        push(#"{"aps":{"alert":"a","thread-id":"t"}}"#)
        push(#"{"aps":{"alert":"b","thread-id":"t","summary-arg":"Ann","summary-arg-count":3}}"#)
        push(#"{"aps":{"alert":"c","thread-id":"t","summary-arg":"Bob"}}"#)
        push(#"{"aps":{"alert":"d","thread-id":"t"}}"#)
        let stack = preview().apps.first?.stacks.first
        #expect(stack?.summary == "3 more notifications")
        #expect(stack?.legacySummary == "5 more notifications from Bob and Ann")
    }

    @Test func hiddenPreviewsShowThePlaceholderCoalescedByThread() {
        sendMessages()
        let app = preview(hidePreviews: true).apps.first
        #expect(app?.stacks[1].hiddenText == "2 Notifications")
        #expect(app?.stacks.flatMap(\.cards).allSatisfy { $0.body == "Notification" && $0.title == nil } == true)
    }

    @Test func collapseIDReplacesTheEarlierNotification() {
        push(#"{"aps":{"alert":"Score 1-0"}}"#, collapseID: "match")
        push(#"{"aps":{"alert":"Other"}}"#)
        push(#"{"aps":{"alert":"Score 2-0"}}"#, collapseID: "match")
        let cards = preview().apps.first?.stacks.first?.cards
        #expect(cards?.map(\.body) == ["Score 2-0", "Other"] && cards?.first?.replaced == 1)
    }

    @Test func criticalSilentRejectedBadgeAndSuffixes() throws {
        push(#"{"aps":{"alert":"Glucose low","sound":{"critical":1,"name":"alarm.caf","volume":1}}}"#)
        push(#"{"aps":{"content-available":1}}"#, pushType: "background")
        push(#"{"aps":{"alert":"never"}}"#, token: "dead")
        push(#"{"aps":{"badge":4}}"#)
        push(#"{"aps":{"alert":"Call"}}"#, topic: "com.example.app.voip", pushType: "voip")
        let result = preview()
        let app = try #require(result.apps.first)
        #expect(result.apps.count == 1 && app.badge == 4)
        #expect(app.stacks.first?.cards.map(\.body) == ["Call", "Glucose low"])
        #expect(app.stacks.first?.cards.last?.interruptionLevel == "critical")
        #expect(result.silent.count == 1 && result.silent.first?.why.contains("not shown") == true)
        #expect(result.notDelivered.first?.why == "400 BadDeviceToken: not delivered")
    }

    @Test func liveActivitiesAreOneCardAtTheirLatestPush() {
        let la = "com.example.app.push-type.liveactivity"
        push(#"{"aps":{"event":"start","timestamp":1,"content-state":{"score":0},"attributes-type":"A","attributes":{},"alert":{"title":"t","body":"b"}}}"#, topic: la, pushType: "liveactivity")
        push(#"{"aps":{"event":"update","timestamp":2,"content-state":{"score":1}}}"#, topic: la, pushType: "liveactivity")
        push(#"{"aps":{"event":"end","timestamp":3,"content-state":{"score":2},"dismissal-date":1700000000}}"#, topic: la, pushType: "liveactivity")
        push(#"{"aps":{"event":"update","timestamp":2,"content-state":{"score":1},"stale-date":1700000000}}"#, token: String(repeating: "cd", count: 32), topic: la, pushType: "liveactivity")
        let activities = preview().liveActivities
        #expect(activities.count == 2)
        #expect(activities.last?.state == "dismissed" && activities.last?.updates == 3 && activities.last?.contentState == #"{"score":2}"#)
        #expect(activities.first?.state == "stale")
        #expect(preview().apps.isEmpty, "a Live Activity is not a Notification Center card")
    }
}
