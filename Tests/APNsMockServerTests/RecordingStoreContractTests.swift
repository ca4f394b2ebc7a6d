import APNsMock
import APNsMockServer
import Foundation
import Testing

/// The same contract for every `--store`: what the admin API promises about recordings (listed in order, filtered,
/// awaited, cleared, bounded by `--max-recorded`) holds whichever store keeps them, and a persistent store gives
/// them back after a restart, JSON for JSON.
@Suite("Recording store contract: memory, SQLite, PostgreSQL", .serialized)
struct RecordingStoreContractTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
        var isPersistent: Bool { self != .memory }
    }

    /// Runs `body` with a fresh store of `kind`, as a `--store` value (a SQLite file in a temporary folder; a new
    /// database on a PostgreSQL server of the test's own).
    static func withStore(_ kind: Kind, _ body: (RecordingStoreSetting) async throws -> Void) async throws {
        switch kind {
        case .memory:
            try await body(.memory)
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-contract-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            try await body(.sqlite(path: folder.appendingPathComponent("recordings.sqlite").path))
        case .postgres:
            try await withPostgres { server in
                let address = try await server.createDatabase()
                try await body(try #require(RecordingStoreSetting(address)))
            }
        }
    }

    static func serve(_ store: RecordingStoreSetting, maxRecorded: Int = 100_000, _ body: (TestServer) async throws -> Void) async throws {
        try await withTestServer(configure: {
            $0.store = store
            $0.maxRecorded = maxRecorded
        }, body)
    }

    /// The recording's JSON without what a store may number anew (the PostgreSQL store numbers the cluster's
    /// recordings in the order this replica read them).
    static func comparable(_ recordings: [Recording]) -> [JSON] {
        recordings.map { recording in
            guard case .object(var fields) = recording.json else { return recording.json }
            fields["sequence"] = nil
            return .object(fields)
        }
    }

    @Test(arguments: Kind.allCases)
    func listsFiltersAndWaitsInOrder(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            try await Self.serve(store) { (server: TestServer) async throws -> Void in
                let token = TestData.deviceToken()
                try await withProviderClient(server) { (provider: ProviderClient) async throws -> Void in
                    #expect(try await provider.send(token: token).status == 200)
                    #expect(try await provider.send(token: "not-hex").status == 400)
                    #expect(try await provider.send(token: token).status == 200)
                }
                let all = try await server.admin.notifications()
                #expect(all.map(\.status) == [200, 400, 200])
                #expect(all.compactMap { $0.json["sequence"]?.int } == [1, 2, 3])
                #expect(try await server.admin.notifications([("token", token)]).count == 2)
                #expect(try await server.admin.notifications([("status", "400")]).first?.reason == "BadDeviceToken")
                let waited = try await server.admin.waitForNotifications(count: 2, timeout: "5s", [("token", token)])
                #expect(waited.count == 2)
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func aRestartGivesBackWhatAPersistentStoreKept(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            var before: [JSON] = []
            try await Self.serve(store) { (server: TestServer) async throws -> Void in
                try await withProviderClient(server) { (provider: ProviderClient) async throws -> Void in
                    for _ in 0..<5 { #expect(try await provider.send().status == 200) }
                }
                before = Self.comparable(try await server.admin.notifications())
            }
            // `withTestServer` shut the first server down: its sinks wrote what they had queued.
            try await Self.serve(store) { (server: TestServer) async throws -> Void in
                let after = Self.comparable(try await server.admin.notifications())
                #expect(after == (kind.isPersistent ? before : []))
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func maxRecordedKeepsTheNewestInTheStoreToo(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            var tokens: [String] = []
            try await Self.serve(store, maxRecorded: 3) { (server: TestServer) async throws -> Void in
                try await withProviderClient(server) { (provider: ProviderClient) async throws -> Void in
                    for _ in 0..<5 {
                        let token = TestData.deviceToken()
                        tokens.append(token)
                        #expect(try await provider.send(token: token).status == 200)
                    }
                }
                #expect(try await server.admin.notifications().compactMap(\.deviceToken) == Array(tokens.suffix(3)))
                let stats = try await server.admin.stats()
                #expect(stats["recorder"]?["evicted"]?.int == 2)
            }
            try await Self.serve(store, maxRecorded: 3) { (server: TestServer) async throws -> Void in
                let kept = try await server.admin.notifications().compactMap(\.deviceToken)
                #expect(kept == (kind.isPersistent ? Array(tokens.suffix(3)) : []))
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func aClearForgetsEverywhere(kind: Kind) async throws {
        try await Self.withStore(kind) { store in
            try await Self.serve(store) { (server: TestServer) async throws -> Void in
                try await withProviderClient(server) { (provider: ProviderClient) async throws -> Void in
                    for _ in 0..<3 { #expect(try await provider.send().status == 200) }
                }
                try await server.admin.clear()
                #expect(try await server.admin.notifications().isEmpty)
                try await withProviderClient(server) { (provider: ProviderClient) async throws -> Void in
                    #expect(try await provider.send().status == 200)
                }
                #expect(try await server.admin.notifications().count == 1)
            }
            try await Self.serve(store) { (server: TestServer) async throws -> Void in
                #expect(try await server.admin.notifications().count == (kind.isPersistent ? 1 : 0))
            }
        }
    }
}
