import APNsMockServer
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// Log records kept in memory, so a test can look at what the server logged.
final class LogCapture: Sendable {
    private let records = Mutex<[(level: Logger.Level, message: String)]>([])

    func append(_ level: Logger.Level, _ message: String) {
        records.withLock { $0.append((level, message)) }
    }

    var all: [(level: Logger.Level, message: String)] { records.withLock { $0 } }

    func logger(label: String = "apns-mock-test") -> Logger {
        Logger(label: label) { _ in CapturingLogHandler(capture: self) }
    }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        capture.append(event.level, "\(event.message)")
    }
}

/// Starting and stopping: both ports listen at once after `start`, and are gone after `shutdown`.
@Suite("MockServer lifecycle")
struct MockServerLifecycleTests {
    /// Whether a TCP connection to `port` on loopback is accepted.
    static func accepts(port: Int) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(2))
                .connect(host: "127.0.0.1", port: port)
                .get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }

    @Test func bothPortsServeAtOnceAndCloseOnShutdown() async throws {
        let server = try await MockServer.start(configuration: testServerConfiguration(), logger: LogCapture().logger())
        let testServer = TestServer(server: server, admin: AdminClient(port: server.adminPort))
        #expect(server.providerPort != 0 && server.adminPort != 0 && server.providerPort != server.adminPort)
        let health = try await testServer.admin.request(.get, "/healthz")
        #expect(health.status == 200)
        #expect(health.json == .object(["status": .string("ok")]))
        #expect(try await expectServerStillAnswers(testServer).status == 200)

        await server.shutdown()
        #expect(await Self.accepts(port: server.providerPort) == false, "the provider port still accepts connections")
        #expect(await Self.accepts(port: server.adminPort) == false, "the admin port still accepts connections")
        // A second shutdown is harmless, and the recordings stay readable.
        await server.shutdown()
        #expect(server.store.statistics().received == 1)
    }

    /// Stopping is not an error: with an admin keep-alive connection and a provider connection open, no
    /// error-level line is logged. (`shutdown()` once cancelled the Hummingbird task, and every stop logged
    /// `error … [HummingbirdCore] Waiting on child channel: CancellationError()`.)
    @Test func shutdownLogsNoErrors() async throws {
        let logs = LogCapture()
        let server = try await MockServer.start(configuration: testServerConfiguration(), logger: logs.logger())
        let testServer = TestServer(server: server, admin: AdminClient(port: server.adminPort))
        // AsyncHTTPClient's shared client keeps this admin connection open after the answer.
        #expect(try await testServer.admin.request(.get, "/healthz").status == 200)
        let (connection, _) = try await RawConnection.http2(port: server.providerPort)
        await server.shutdown()
        await connection.close()
        let errors = logs.all.filter { $0.level >= .error }
        #expect(errors.isEmpty, "\(errors.map { "\($0.level): \($0.message)" })")
    }
}
