import APNsMock
import Logging
import Synchronization

/// Where a durable store keeps the simulated devices (their states, what is stored for them, their delivery logs
/// and the clock's offset): read once at start, written by ``DeviceStateSaver``. The SQLite file keeps one
/// snapshot; a PostgreSQL database one per replica.
package protocol DeviceStatePersistence: Sendable {
    /// The last snapshot saved, or `nil` when there is none.
    func loadDevices() async throws -> [UInt8]?
    func saveDevices(_ snapshot: [UInt8]) async throws
}

/// Saves the devices' snapshot (one registry's, or every tenant's) when it has changed, at most once per `interval`, and once more when it
/// finishes (after the last connection closed), so a restart finds the devices as they were; a crash loses at most
/// the last `interval`.
package final class DeviceStateSaver: Sendable {
    private let registry: any DeviceSnapshotSource
    private let persistence: any DeviceStatePersistence
    private let interval: Duration
    private let logger: Logger
    private let saved = Mutex<UInt64?>(nil)
    private let loop = Mutex<Task<Void, Never>?>(nil)

    package init(registry: any DeviceSnapshotSource, persistence: any DeviceStatePersistence, interval: Duration = .seconds(1), logger: Logger) {
        self.registry = registry
        self.persistence = persistence
        self.interval = interval
        self.logger = logger
        saved.withLock { $0 = registry.revision }
    }

    package func start() {
        let task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                await saveIfChanged()
            }
        }
        loop.withLock { $0 = task }
    }

    /// Stops the loop and saves what changed since the last save.
    package func finish() async {
        let task = loop.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        await saveIfChanged()
    }

    private func saveIfChanged() async {
        let revision = registry.revision
        guard saved.withLock({ $0 != revision }) else { return }
        do {
            try await persistence.saveDevices(registry.snapshot())
            saved.withLock { $0 = revision }
        } catch {
            logger.error("the simulated devices could not be saved", metadata: ["error": "\(error)"])
        }
    }
}
