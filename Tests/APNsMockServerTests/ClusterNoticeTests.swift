import APNsMock
import Foundation
import Testing

@testable import APNsMockServer
@testable import APNsMockStores

/// The NOTIFY payloads replicas exchange, and the engine's registries reporting (and not re-reporting) changes.
@Suite("Cluster notices and shared state changes")
struct ClusterNoticeTests {
    @Test(arguments: [
        ClusterNotice.recordings(replica: "a"),
        .cleared(upTo: 42, replica: "replica-2"),
        .device(token: "00fc13ad", replica: "a"),
        .devicesCleared(replica: "a"),
        .channel(id: "dHN0LXNyY2gtY2hubA==", replica: "b"),
        .channelsCleared(replica: "b"),
        .scenario(version: 7, replica: "host-123"),
    ])
    func payloadsRoundTrip(notice: ClusterNotice) {
        #expect(ClusterNotice(payload: notice.payload) == notice)
    }

    @Test func malformedPayloadsAreIgnored() {
        for payload in ["", "x", "c:a:not-a-number", "s:a", "d", "r"] {
            #expect(ClusterNotice(payload: payload) == nil, "\(payload)")
        }
    }

    @Test func registriesReportTheirOwnChangesButNotAppliedOnes() throws {
        let registry = DeviceRegistry()
        let seen = Recorded()
        registry.changes.observe { seen.append($0) }
        let device = Device(token: "aa", topic: "com.example.app", environment: .development)
        registry.add(device)
        registry.unregister(token: "AA", at: 5)
        registry.remove(token: "aa")
        registry.apply(.devicePut(device))
        registry.apply(.deviceRemoved(token: "aa"))
        var unregistered = device
        unregistered.unregisteredAt = 5
        unregistered.state = .appRemoved
        #expect(seen.changes == [.devicePut(device), .devicePut(unregistered), .deviceRemoved(token: "aa")])
        #expect(registry.count == 0)

        let scenario = ActiveScenario()
        scenario.changes.observe { seen.append($0) }
        scenario.replace(with: .empty)
        scenario.apply(.empty, version: 9)
        #expect(scenario.version == 9)
        scenario.adopt(version: 4)
        #expect(scenario.version == 9, "a version never goes back")
        #expect(seen.changes.last == .scenario(source: "", version: 1))
    }
}

private final class Recorded: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [SharedStateChange] = []
    func append(_ change: SharedStateChange) { lock.withLock { list.append(change) } }
    var changes: [SharedStateChange] { lock.withLock { list } }
}
