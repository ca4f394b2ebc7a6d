import APNsMock

/// What one replica tells the others on the `apns_mock` NOTIFY channel: which table changed, and who changed it
/// (a replica skips its own). The payload names the change; the others read the current state from the table, so
/// notices that arrive together or twice converge on the same state.
enum ClusterNotice: Equatable {
    /// New recordings from this replica (`nil`: the follower's own poll): read the table past the last id seen.
    /// A replica ignores its own, which it has in memory already.
    case recordings(replica: String?)
    /// Every recording up to this id was deleted (`DELETE /admin/notifications`).
    case cleared(upTo: Int64, replica: String)
    /// One tenant's recordings up to this id were deleted (its `DELETE /admin/notifications`).
    case tenantCleared(tenant: String, upTo: Int64, replica: String)
    /// The device with this normalised token was put or removed in a tenant (`nil`: `unidentified`, or no
    /// tenants): read its row.
    case device(token: String, tenant: String?, replica: String)
    case devicesCleared(tenant: String?, replica: String)
    /// The channel with this id was made or deleted in a tenant: read its row.
    case channel(id: String, tenant: String?, replica: String)
    case channelsCleared(tenant: String?, replica: String)
    /// A scenario was put in force with this version: read the row.
    case scenario(version: Int64, replica: String)
    /// A scenario was put in force for one tenant with this version: read the tenant's row.
    case tenantScenario(tenant: String, version: Int64, replica: String)

    /// `kind:replica:argument` (replica names have no `:`). A device's or channel's tenant, which may hold any
    /// character, goes in hex before the token or id (`kind:replica:hex:argument`, `kind:replica:hex`), under a
    /// kind letter of its own.
    var payload: String {
        switch self {
        case .recordings(let replica): replica.map { "r:\($0)" } ?? "r"
        case .cleared(let id, let replica): "c:\(replica):\(id)"
        case .tenantCleared(let tenant, let id, let replica): "t:\(replica):\(id)/\(tenant)"
        case .device(let token, nil, let replica): "d:\(replica):\(token)"
        case .device(let token, let tenant?, let replica): "e:\(replica):\(Self.hex(tenant)):\(token)"
        case .devicesCleared(nil, let replica): "D:\(replica)"
        case .devicesCleared(let tenant?, let replica): "E:\(replica):\(Self.hex(tenant))"
        case .channel(let id, nil, let replica): "h:\(replica):\(id)"
        case .channel(let id, let tenant?, let replica): "g:\(replica):\(Self.hex(tenant)):\(id)"
        case .channelsCleared(nil, let replica): "H:\(replica)"
        case .channelsCleared(let tenant?, let replica): "G:\(replica):\(Self.hex(tenant))"
        case .scenario(let version, let replica): "s:\(replica):\(version)"
        case .tenantScenario(let tenant, let version, let replica): "S:\(replica):\(version)/\(tenant)"
        }
    }

    init?(payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch (parts.first, parts.count) {
        case ("r", 2): self = .recordings(replica: parts[1])
        case ("c", 3):
            guard let id = Int64(parts[2]) else { return nil }
            self = .cleared(upTo: id, replica: parts[1])
        case ("t", 3):
            let argument = parts[2].split(separator: "/", maxSplits: 1).map(String.init)
            guard argument.count == 2, let id = Int64(argument[0]) else { return nil }
            self = .tenantCleared(tenant: argument[1], upTo: id, replica: parts[1])
        case ("d", 3): self = .device(token: parts[2], tenant: nil, replica: parts[1])
        case ("e", 3):
            guard let (tenant, token) = Self.tenantAndArgument(parts[2]) else { return nil }
            self = .device(token: token, tenant: tenant, replica: parts[1])
        case ("D", 2): self = .devicesCleared(tenant: nil, replica: parts[1])
        case ("E", 3):
            guard let tenant = Self.unhex(parts[2]) else { return nil }
            self = .devicesCleared(tenant: tenant, replica: parts[1])
        case ("h", 3): self = .channel(id: parts[2], tenant: nil, replica: parts[1])
        case ("g", 3):
            guard let (tenant, id) = Self.tenantAndArgument(parts[2]) else { return nil }
            self = .channel(id: id, tenant: tenant, replica: parts[1])
        case ("H", 2): self = .channelsCleared(tenant: nil, replica: parts[1])
        case ("G", 3):
            guard let tenant = Self.unhex(parts[2]) else { return nil }
            self = .channelsCleared(tenant: tenant, replica: parts[1])
        case ("s", 3):
            guard let version = Int64(parts[2]) else { return nil }
            self = .scenario(version: version, replica: parts[1])
        case ("S", 3):
            let argument = parts[2].split(separator: "/", maxSplits: 1).map(String.init)
            guard argument.count == 2, let version = Int64(argument[0]) else { return nil }
            self = .tenantScenario(tenant: argument[1], version: version, replica: parts[1])
        default: return nil
        }
    }

    /// The replica that made the change (`nil` for the follower's poll).
    var replica: String? {
        switch self {
        case .recordings(let replica): replica
        case .cleared(_, let replica), .tenantCleared(_, _, let replica), .device(_, _, let replica), .devicesCleared(_, let replica),
            .channel(_, _, let replica), .channelsCleared(_, let replica), .scenario(_, let replica), .tenantScenario(_, _, let replica):
            replica
        }
    }

    private static func hex(_ text: String) -> String { Hex.encode(text.utf8) }

    private static func unhex(_ hex: some StringProtocol) -> String? {
        Hex.decode(hex).flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// `hex:argument`, the tenant in hex (which has no `:`) and the argument as it was.
    private static func tenantAndArgument(_ text: String) -> (String, String)? {
        let split = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard split.count == 2, let tenant = unhex(split[0]) else { return nil }
        return (tenant, String(split[1]))
    }
}
