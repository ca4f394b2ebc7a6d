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
        .device(token: "00fc13ad", tenant: nil, replica: "a"),
        .devicesCleared(tenant: nil, replica: "a"),
        .channel(id: "dHN0LXNyY2gtY2hubA==", tenant: nil, replica: "b"),
        .channelsCleared(tenant: nil, replica: "b"),
        .device(token: "00fc13ad", tenant: "TEAM000001", replica: "a"),
        .devicesCleared(tenant: "team-a:odd/name", replica: "a"),
        .channel(id: "a/b+c:d==", tenant: "team-a:odd/näme", replica: "b"),
        .channelsCleared(tenant: "com.example.app", replica: "b"),
        .scenario(version: 7, replica: "host-123"),
        .tenantCleared(tenant: "TEAM000001", upTo: 9, replica: "a"),
        .tenantScenario(tenant: "com.example.app", version: 3, replica: "b"),
        .tenantScenario(tenant: "team-a:odd/name", version: 12, replica: "b"),
    ])
    func payloadsRoundTrip(notice: ClusterNotice) {
        #expect(ClusterNotice(payload: notice.payload) == notice)
    }

    @Test func malformedPayloadsAreIgnored() {
        for payload in ["", "x", "c:a:not-a-number", "s:a", "d", "r", "S:a:7", "S:a:x/com.example.app", "e:a:00fc", "e:a:zz:00fc", "E:a:abc", "g:a", "G:a"] {
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

    /// A tenant's scenario changes are reported as that tenant's; its start, and what another replica put in force
    /// for it (at once, or waiting for a tenant not met yet), are not reported again.
    @Test func tenantsReportTheirScenarioChangesButNotTheirStartNorAdoptedOnes() throws {
        let start = try ScenarioLoader.load(text: "name: start\n", source: "start")
        let tenants = TenantDirectory(mode: .byTopic, primary: ActiveScenario(), startScenario: start, makeScenario: { ActiveScenario() })
        let seen = Recorded()
        tenants.changes.observe { seen.append($0) }
        let a = tenants.scenario(for: "com.a.app")
        #expect(seen.changes.isEmpty, "a tenant's start is not a change")
        a.replace(with: .empty)
        #expect(seen.changes == [.tenantScenario(tenant: "com.a.app", source: "", version: 2)])
        tenants.adopt(try ScenarioLoader.load(text: "name: other\n", source: "replica b"), version: 5, forTenant: "com.a.app")
        #expect(a.version == 5 && a.current.scenario.name == "other")
        tenants.adopt(.empty, version: 4, forTenant: "com.a.app")
        #expect(a.current.scenario.name == "other", "an older version changes nothing")
        tenants.adopt(try ScenarioLoader.load(text: "name: waiting\n", source: "replica b"), version: 3, forTenant: "com.c.app")
        #expect(tenants.scenarioVersion(ofTenant: "com.c.app") == 3)
        let c = tenants.scenario(for: "com.c.app")
        #expect(c.current.scenario.name == "waiting" && c.version == 3)
        #expect(seen.changes.count == 1)
    }
}

extension ClusterNoticeTests {
    /// A tenant's device and channel changes are reported wrapped in that tenant; the `unidentified` tenant's stay
    /// its registries' own; a change applied from another replica is not reported again, and makes the tenant.
    @Test func tenantsReportTheirDeviceAndChannelChangesAsTheirs() throws {
        let primary = ActiveScenario()
        let tenants = TenantDirectory(mode: .byTopic, primary: primary, makeScenario: { ActiveScenario() })
        let seen = Recorded()
        tenants.changes.observe { seen.append($0) }
        let device = Device(token: "aa", topic: "com.a.app", environment: .development)
        tenants.scenario(for: "com.a.app").devices.add(device)
        let channel = try tenants.scenario(for: "com.a.app").channels.create(bundleID: "com.a.app", environment: .development, storagePolicy: .noMessageStored)
        tenants.scenario(for: "com.a.app").channels.removeAll()
        primary.devices.add(device)
        #expect(
            seen.changes == [
                .inTenant("com.a.app", .devicePut(device)), .inTenant("com.a.app", .channelPut(channel)),
                .inTenant("com.a.app", .channelsCleared),
            ]
        )
        tenants.apply(.devicePut(Device(token: "bb", topic: "com.b.app", environment: .development)), inTenant: "com.b.app")
        tenants.apply(.deviceRemoved(token: "aa"), inTenant: "com.a.app")
        #expect(seen.changes.count == 3)
        #expect(tenants.existing("com.b.app")?.devices.device(token: "bb") != nil)
        #expect(tenants.existing("com.a.app")?.devices.isEmpty == true)
        #expect(primary.devices.device(token: "aa") != nil)
    }
}

private final class Recorded: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [SharedStateChange] = []
    func append(_ change: SharedStateChange) { lock.withLock { list.append(change) } }
    var changes: [SharedStateChange] { lock.withLock { list } }
}
