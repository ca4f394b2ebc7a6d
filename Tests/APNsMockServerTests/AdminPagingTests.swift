import Foundation
import Testing

/// The admin API as a test suite pages through it: a default page, a cursor, both orders, every recording once.
@Suite("Admin API paging and filters")
struct AdminPagingTests {
    @Test(.timeLimit(.minutes(2)))
    func pagingThrough2500RecordingsGivesEachExactlyOnceInEitherOrder() async throws {
        try await withTestServer { server in
            let result = try await ExternalTool.withTemporaryFile(Data(TestData.alertPayload.utf8)) { payload in
                try await ExternalTool.run("h2load", [
                    "-n", "2500", "-c", "2", "-m", "50", "-d", payload, "-H", "apns-topic: \(TestData.topic)",
                    server.deviceURL(TestData.deviceToken()),
                ], timeout: .seconds(60))
            }
            #expect(result.stdout.contains("2500 succeeded"), "\(result)")

            // No limit: one page of 100, the oldest first, and where the next page starts.
            let first = try await server.admin.request(.get, "/admin/notifications")
            #expect(first.json["notifications"]?.array?.count == 100)
            #expect(first.json["total"]?.int == 2500)
            #expect(first.json["next"]?["after"]?.int == first.json["notifications"]?.array?.last?["sequence"]?.int)

            for (order, cursor) in [("oldest", "after"), ("newest", "before")] {
                var sequences: [Int] = []
                var query = [("order", order), ("limit", "300")]
                while true {
                    let page = try await server.admin.request(.get, "/admin/notifications", query: query)
                    #expect(page.status == 200 && page.json["total"]?.int == 2500, "\(page.json["error"] ?? .null)")
                    sequences += page.json["notifications"]?.array?.compactMap { $0["sequence"]?.int } ?? []
                    guard let next = page.json["next"]?[cursor]?.int else { break }
                    query = [("order", order), ("limit", "300"), (cursor, String(next))]
                }
                #expect(sequences.count == 2500 && Set(sequences).count == 2500, "\(order): each recording exactly once")
                #expect(sequences == (order == "oldest" ? sequences.sorted() : sequences.sorted(by: >)), "\(order)")
            }
        }
    }

    @Test func topicIsCaseInsensitiveAndNewFiltersWork() async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { client in
                _ = try await client.send(headers: [("apns-topic", TestData.topic), ("apns-priority", "5")])
                _ = try await client.send(headers: [("apns-topic", TestData.topic)])
                let upper = try await server.admin.notifications([("topic", TestData.topic.uppercased())])
                #expect(upper.count == 2)
                let priority5 = try await server.admin.notifications([("header", "apns-priority:5")])
                #expect(priority5.count == 1)
                #expect(try await server.admin.notifications([("abandoned", "true")]).isEmpty)
                let connection = try #require(upper.first?.json["connectionId"]?.int)
                #expect(try await server.admin.notifications([("connection", String(connection)), ("abandoned", "false")]).count == 2)
                _ = try await client.send(body: #"{"aps":{"badge":3,"alert":{"title":"Hello: you"}}}"#)
                #expect(try await server.admin.notifications([("payload", "$.aps.badge:3")]).count == 1)
                #expect(try await server.admin.notifications([("payload", "$.aps.badge:3"), ("payload", "$.aps.alert.title:Hello: you")]).count == 1)
                #expect(try await server.admin.notifications([("payload", "$.aps.badge:\"3\"")]).isEmpty, "a JSON string is not the number")
                #expect(try await server.admin.notifications([("payload", "$.aps.sound:null")]).count == 3, "null matches an absent key")
                let badPath = try await server.admin.request(.get, "/admin/notifications", query: [("payload", "aps.badge")])
                #expect(badPath.status == 400 && badPath.json["parameter"]?.string == "payload", "\(badPath.json)")
                let twice = try await server.admin.request(.get, "/admin/notifications", query: [("status", "200"), ("status", "400")])
                #expect(twice.status == 400 && twice.json["parameter"]?.string == "status", "\(twice.json)")
            }
        }
    }

    @Test func waitReturnsExactlyTheFirstCountMatchesAndSinceNowSeesOnlyWhatFollows() async throws {
        try await withTestServer { server in
            try await withProviderClient(server) { client in
                for _ in 0..<3 { _ = try await client.send() }
                let two = try await server.admin.waitForNotifications(count: 2)
                #expect(two.count == 2)
                // since=now: what came before the wait does not count, so this one times out with nothing.
                let onlyNew = try await server.admin.request(
                    .get, "/admin/notifications/wait", query: [("since", "now"), ("timeout", "300ms")]
                )
                #expect(onlyNew.status == 408 && onlyNew.json["notifications"]?.array?.isEmpty == true, "\(onlyNew.json)")
                // A time relative to now reaches back.
                #expect(try await server.admin.waitForNotifications(count: 3, [("since", "-1m")]).count == 3)
            }
        }
    }
}
