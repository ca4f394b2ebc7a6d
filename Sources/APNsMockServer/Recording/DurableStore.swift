import APNsMock
import Logging

/// Opens a store beyond memory (`--store sqlite:PATH`, `--store postgres://…`). The database drivers live in
/// the `APNsMockStores` target, which the executable links and hands to ``MockServer/start(configuration:stores:logger:)``,
/// so the server, and the testing module with it, builds without them.
package protocol DurableStoreOpener: Sendable {
    /// Opens the store `configuration.store` names. What it starts (writer threads, database connections) it
    /// notes in `started`, so that a later failure of the start stops it again.
    func open(
        configuration: ServerConfiguration,
        backPressure: RecordingBackPressure,
        started: inout StartedParts,
        logger: Logger
    ) async throws -> OpenedStore
}

/// A store, opened: the sink that writes to it and what it had.
package struct OpenedStore: Sendable {
    /// Writes every recording to the store after the in-memory one has it.
    package var sink: any RecordingSink
    /// Recordings loaded back with their sequence numbers (a SQLite file from an earlier run).
    package var restored: [RecordedNotification]
    /// Recordings of every replica sharing the store, to put in memory as the others' (PostgreSQL).
    package var shared: [RecordedNotification]
    /// For each of `shared`, whether this replica made it (its sequence is then this replica's numbering, which
    /// its saved devices' logs name).
    package var sharedFromThisReplica: [Bool]
    /// This replica's part in a cluster sharing the store, if it is one.
    package var cluster: (any ClusterMember)?
    /// Where the simulated devices are kept across restarts (the SQLite file, a replica's row), if the store keeps
    /// them.
    package var devices: (any DeviceStatePersistence)?

    package init(
        sink: any RecordingSink,
        restored: [RecordedNotification] = [],
        shared: [RecordedNotification] = [],
        sharedFromThisReplica: [Bool] = [],
        cluster: (any ClusterMember)? = nil,
        devices: (any DeviceStatePersistence)? = nil
    ) {
        self.sink = sink
        self.restored = restored
        self.shared = shared
        self.sharedFromThisReplica = sharedFromThisReplica
        self.cluster = cluster
        self.devices = devices
    }
}

/// One replica's part in a cluster sharing a store: it follows what the others do and publishes what this one does.
package protocol ClusterMember: Sendable {
    /// This replica's name in the shared recordings (`--replica`).
    var replica: String { get }
    /// Recordings read from the other replicas so far (`/admin/stats`).
    var receivedFromReplicas: UInt64 { get }
    /// Loads the shared devices, channels and scenario into this replica and starts following and publishing.
    /// `publishScenario`: this replica was started with `--scenario`, which then becomes the cluster's.
    func attach(_ shared: ClusterShared, publishScenario: Bool) async throws
    /// Stops following and publishing, after the recording sink has flushed.
    func stop() async
    /// An error of `attach`, worded for the start-up line.
    func describe(_ error: any Error) -> String
}

/// What the replicas of a cluster share: the recordings' store, the scenario (with its devices) and the channels.
package struct ClusterShared: Sendable {
    package var store: NotificationStore
    package var scenario: ActiveScenario
    package var channels: ChannelRegistry
    package var devices: DeviceRegistry { scenario.current.devices }
    /// With `--tenants`: each tenant's scenario is shared too.
    package var tenants: TenantDirectory?

    package init(store: NotificationStore, scenario: ActiveScenario, channels: ChannelRegistry, tenants: TenantDirectory? = nil) {
        self.store = store
        self.scenario = scenario
        self.channels = channels
        self.tenants = tenants
    }
}
