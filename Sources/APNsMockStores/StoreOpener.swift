import APNsMock
import APNsMockServer
import Logging

/// The SQLite store and the PostgreSQL cluster, for ``MockServer``: what `--store` names beyond memory.
package struct StoreOpener: DurableStoreOpener {
    package init() {}

    package func open(
        configuration: ServerConfiguration,
        backPressure: RecordingBackPressure,
        started: inout StartedParts,
        logger: Logger
    ) async throws -> OpenedStore {
        switch configuration.store {
        case .memory:
            throw StartupError.store("--store memory needs no database")
        case .sqlite(let path):
            do {
                let database = try SQLiteRecordStore(path: path, capacity: configuration.maxRecorded)
                let restored = try database.load()
                let sink = WriterThreadSink(name: "sqlite", writer: database, backPressure: backPressure)
                started.started { _ = await sink.finish(timeout: MockServer.sinkFlushBound) }
                return OpenedStore(sink: sink, restored: restored, devices: database.deviceStates)
            } catch {
                throw StartupError.store("\(error)")
            }
        case .postgres(let address):
            do throws(any Error) {
                let cluster = try await PostgresCluster.connect(
                    address: address, replica: configuration.replicaName, capacity: configuration.maxRecorded, logger: logger
                )
                started.started { await cluster.stop() }
                let sink = try await cluster.makeRecordSink(backPressure: backPressure)
                // Its last batches are written on the cluster's connections: stopped before the cluster is.
                started.started { _ = await sink.finish(timeout: MockServer.sinkFlushBound) }
                let shared = try await cluster.loadRecordings()
                return OpenedStore(
                    sink: sink, shared: shared.recordings, sharedFromThisReplica: shared.fromThisReplica, cluster: cluster,
                    devices: cluster.deviceStates
                )
            } catch {
                throw StartupError.store("\(error)")
            }
        }
    }
}

extension PostgresCluster: ClusterMember {
    package func describe(_ error: any Error) -> String {
        PostgresConnector.describe(error)
    }
}
