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

    /// A preview is a page: the newest `limit` matching recordings, `total` and `next` for the older page, each
    /// recording on exactly one page.
    @Test func thePreviewIsPagedFromTheNewest() async throws {
        try await withTestServer { server in
            let client = try await RawPusher.open(server)
            let token = TestData.deviceToken()
            for index in 1...5 {
                _ = try await client.push(token: token, body: #"{"aps":{"alert":{"title":"T","body":"\#(index)"},"thread-id":"n\#(index)"}}"#)
            }
            await client.close()
            func page(_ query: String) async throws -> JSON {
                let answer = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/admin/preview?token=\(token)&\(query)")
                #expect(answer.status == 200, "\(answer)")
                return try JSON(parsing: Array(answer.body.utf8))
            }
            func bodies(_ json: JSON) -> [String] {
                (json["apps"]?[0]?["stacks"]?.array ?? []).compactMap { $0["cards"]?[0]?["body"]?.string }
            }
            let first = try await page("limit=2")
            #expect(bodies(first) == ["5", "4"] && first["total"]?.int == 5, "\(first)")
            let before = try #require(first["next"]?["before"]?.int, "\(first)")
            let second = try await page("limit=2&before=\(before)")
            #expect(bodies(second) == ["3", "2"], "\(second)")
            let last = try await page("limit=2&before=\(try #require(second["next"]?["before"]?.int))")
            #expect(bodies(last) == ["1"] && last["next"] == .null, "\(last)")
            #expect(bodies(try await page("")) == ["5", "4", "3", "2", "1"])
            let after = try await OperationsTests.get("http://127.0.0.1:\(server.adminPort)/admin/preview?after=1")
            #expect(after.status == 400 && after.body.contains("use before"), "\(after)")
        }
    }
}
