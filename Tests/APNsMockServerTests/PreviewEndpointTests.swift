import Foundation
import Testing

/// `GET /admin/preview`: what the device would show, over HTTP, for one token or all.
@Suite("Preview endpoint")
struct PreviewEndpointTests {
    @Test func thePreviewGroupsWhatWasSentToAToken() async throws {
        try await withTestServer { server in
            let client = try await RawPusher.open(server)
            let token = TestData.deviceToken()
            _ = try await client.push(token: token, body: #"{"aps":{"alert":{"title":"Ann","body":"Hi"},"thread-id":"ann"}}"#)
            _ = try await client.push(token: token, body: #"{"aps":{"alert":{"title":"Ann","body":"Again"},"thread-id":"ann"}}"#)
            _ = try await client.push(token: "abc", body: #"{"aps":{"alert":"x"}}"#)
            await client.close()
            let url = "http://127.0.0.1:\(server.adminPort)/admin/preview?token=\(token)&hide-previews=true"
            let answer = try await OperationsTests.get(url)
            let json = try JSON(parsing: Array(answer.body.utf8))
            let stack = json["apps"]?[0]?["stacks"]?[0]
            #expect(stack?["threadId"]?.string == "ann" && stack?["hiddenText"]?.string == "2 Notifications", "\(answer.body)")
            #expect(stack?["cards"]?[0]?["body"]?.string == "Notification", "\(answer.body)")
            #expect(json["notDelivered"]?.array?.isEmpty == true, "the rejected push went to another token: \(answer.body)")
            let all = try JSON(parsing: Array(try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/admin/preview").body.utf8))
            #expect(all["notDelivered"]?.array?.count == 1, "\(all)")
            let bad = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/admin/preview?grouping=thread")
            #expect(bad.status == 400 && bad.body.contains("grouping"), "\(bad)")
        }
    }
}
