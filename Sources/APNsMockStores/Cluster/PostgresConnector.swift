import APNsMockServer
import Dispatch
import Logging
import NIOPosix
import PostgresNIO
import Synchronization

/// Opens connections to the `--store postgres://…` database.
///
/// The first connection is retried for `startupWait`: in a compose file the database and the replicas start
/// together, and a replica that gave up at once would need a restart policy to come up at all.
struct PostgresConnector: Sendable {
    let address: PostgresStoreAddress
    let logger: Logger
    /// How long the first connection is retried before start fails.
    var startupWait: Duration = .seconds(30)

    /// Why the store could not be reached, with the address (never the password).
    struct ConnectError: Error, CustomStringConvertible {
        var address: PostgresStoreAddress
        var reason: String
        /// The server answered (a wrong password, a missing database): waiting longer will not help.
        var isFinal = false
        var description: String { "--store \(address): \(reason)" }
    }

    private var configuration: PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password, database: address.database, tls: .disable
        )
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// One connection, on NIO's shared event loop group (not the provider port's loops).
    func connect(id: Int) async throws(ConnectError) -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger
            )
        } catch {
            throw ConnectError(address: address, reason: Self.describe(error), isFinal: (error as? PSQLError)?.serverInfo != nil)
        }
    }

    /// The first connection: retried until `startupWait` passes, then the schema brought up to date.
    func connectAtStartup() async throws(ConnectError) -> PostgresConnection {
        let deadline = ContinuousClock.now + startupWait
        var attempt = 0
        while true {
            attempt += 1
            do throws(ConnectError) {
                let connection = try await connect(id: 0)
                do {
                    try await PostgresSchema.migrate(connection, logger: logger)
                } catch {
                    try? await connection.close()
                    throw ConnectError(address: address, reason: "the schema could not be brought up to date: \(Self.describe(error))", isFinal: true)
                }
                return connection
            } catch {
                if error.isFinal || ContinuousClock.now >= deadline { throw error }
                if attempt == 1 { logger.info("waiting for PostgreSQL", metadata: ["store": "\(address)", "error": "\(error.reason)"]) }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// PostgreSQL's own message when there is one (`PSQLError` hides it from `description`).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// Async work started from a thread of the mock's own (a sink's writer thread) and waited for later by that
/// thread, so the thread can do something else meanwhile (see `runBlocking`).
final class BlockingWork<Value: Sendable>: Sendable {
    /// `nil` until the work is done.
    private let outcome = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () async throws -> Value) {
        Task { [self] in
            let result: Result<Value, any Error>
            do {
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    /// Whether the work is done (`wait` would not block).
    var isFinished: Bool { outcome.withLock { $0 != nil } }

    /// Blocks the calling thread (never an event loop or the cooperative pool) until the work is done; returns
    /// how it ended. Called once.
    func wait() -> Result<Value, any Error> {
        done.wait()
        return outcome.withLock { $0! }
    }
}

/// Runs async work from a thread of the mock's own (a sink's writer thread), blocking that thread, never an event
/// loop or the cooperative pool, until the work is done.
func runBlocking<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) throws -> Value {
    try BlockingWork(work).wait().get()
}
