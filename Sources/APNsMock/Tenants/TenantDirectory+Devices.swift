import Foundation

/// What a durable store keeps of the simulated devices, and how it knows when to save them again: one device
/// registry's snapshot, or, with tenants, every tenant's.
package protocol DeviceSnapshotSource: Sendable {
    /// Goes up with every change there is to save.
    var revision: UInt64 { get }
    /// The devices as JSON.
    func snapshot() -> [UInt8]
    /// Puts back what `snapshot()` made (or what the other kind of source made: one registry's snapshot is the
    /// `unidentified` tenant's, and with one registry only that tenant's comes back). Returns the devices restored.
    func restore(_ bytes: [UInt8], recordings: SavedRecordings) throws(DeviceSnapshotUnreadable) -> Int
}

extension DeviceRegistry: DeviceSnapshotSource {}

/// `{"tenants": {"<name>": <a registry's snapshot>, …}}`: the form a directory saves.
enum TenantDeviceSnapshot {
    /// Each tenant's snapshot, or `nil` when `bytes` is one registry's.
    static func split(_ bytes: [UInt8]) throws(DeviceSnapshotUnreadable) -> [String: [UInt8]]? {
        guard bytes.starts(with: Array(#"{"tenants""#.utf8)) else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let tenants = object["tenants"] as? [String: Any]
        else { throw DeviceSnapshotUnreadable(reason: "a tenants snapshot that is not {\"tenants\": {name: snapshot}}") }
        var split: [String: [UInt8]] = [:]
        for (name, value) in tenants {
            guard let data = try? JSONSerialization.data(withJSONObject: value) else {
                throw DeviceSnapshotUnreadable(reason: "tenant \(name)'s snapshot is not a JSON object")
            }
            split[name] = Array(data)
        }
        return split
    }
}

extension DeviceRegistry {
    /// A saved snapshot of either kind: with tenants saved, the `unidentified` tenant's devices.
    package func restoreEither(_ bytes: [UInt8], recordings: SavedRecordings) throws(DeviceSnapshotUnreadable) -> Int {
        guard let split = try TenantDeviceSnapshot.split(bytes) else { return try restore(bytes, recordings: recordings) }
        guard let own = split[TenantResolver.unidentified] else { return 0 }
        return try restore(own, recordings: recordings)
    }
}

extension TenantDirectory: DeviceSnapshotSource {
    /// The tenants' registries' revisions and their number: a new tenant changes it too.
    package var revision: UInt64 {
        let tenants = all
        return tenants.reduce(UInt64(tenants.count)) { $0 &+ $1.scenario.devices.revision }
    }

    package func snapshot() -> [UInt8] {
        var json = JSONWriter(reservingCapacity: 1024)
        json.beginObject()
        json.key("tenants")
        json.beginObject()
        for tenant in all {
            json.key(tenant.name)
            json.raw(tenant.scenario.devices.snapshot())
        }
        json.endObject()
        json.endObject()
        return json.bytes
    }

    /// Each tenant saved gets its devices back, the tenant made again if need be; one registry's snapshot (saved
    /// without tenants) is the `unidentified` tenant's.
    package func restore(_ bytes: [UInt8], recordings: SavedRecordings) throws(DeviceSnapshotUnreadable) -> Int {
        guard let split = try TenantDeviceSnapshot.split(bytes) else {
            return try scenario(for: TenantResolver.unidentified).devices.restore(bytes, recordings: recordings)
        }
        var count = 0
        for (name, snapshot) in split.sorted(by: { $0.key < $1.key }) {
            count += try scenario(for: name).devices.restore(snapshot, recordings: recordings)
        }
        return count
    }
}
