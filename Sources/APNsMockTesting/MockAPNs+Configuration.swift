import APNsMockServer

extension MockAPNs {
    /// How a mock in a test process is set up: the command line's settings, by the names of the README's
    /// configuration table, over the testing module's defaults.
    ///
    /// The defaults are loopback, free ports, one event-loop thread, warnings and errors logged only, a 2 s grace
    /// period at stop; everything else is the command line's default (token or certificate authentication,
    /// the development environment, validation and payload warnings on). A setting is written as in a
    /// `--config` file, its flag's name without the dashes, and takes the same values:
    ///
    /// ```swift
    /// let mock = try await MockAPNs.start(.init(["auth": "none", "max-payload": "2048"]))
    /// ```
    ///
    /// Recordings are kept in memory: `store` takes only `memory` (the SQLite and PostgreSQL stores are the
    /// `apns-mock` binary's, so the testing module builds without the database drivers). The certificate settings (`certs-dir`, `server-cert`, `server-key`, `client-ca`) are ignored: the mock's
    /// credentials come from ``MockAPNs/Credentials``.
    public struct Configuration: Sendable, Hashable {
        /// Settings by name (`"auth": "none"`), applied over the testing defaults.
        public var settings: [String: String]

        /// A configuration with these settings over the testing defaults.
        public init(_ settings: [String: String] = [:]) {
            self.settings = settings
        }

        /// The server configuration these settings make, or a ``MockConfigurationRejected`` naming the setting.
        func serverConfiguration() throws(MockConfigurationRejected) -> ServerConfiguration {
            var configuration = ServerConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.channelsPort = 0
            configuration.adminHost = "127.0.0.1"
            configuration.adminPort = 0
            configuration.threads = 1
            configuration.logLevel = .warning
            configuration.shutdownGracePeriod = .seconds(2)
            for (name, value) in settings.sorted(by: { $0.key < $1.key }) {
                let key: ConfigurationKey
                do {
                    key = try ConfigurationKey.named(name)
                } catch {
                    throw MockConfigurationRejected(setting: name, message: error.message)
                }
                do {
                    try key.apply(value, to: &configuration, source: name)
                } catch {
                    throw MockConfigurationRejected(setting: name, message: error.message)
                }
            }
            if configuration.store != .memory {
                throw MockConfigurationRejected(
                    setting: ConfigurationKey.store.rawValue,
                    message: "the testing module keeps recordings in memory; the SQLite and PostgreSQL stores are the apns-mock binary's"
                )
            }
            do {
                try configuration.check()
            } catch {
                throw MockConfigurationRejected(setting: error.source, message: error.message)
            }
            return configuration
        }
    }
}

/// A ``MockAPNs/Configuration`` setting that is unknown or has a bad value; nothing was started.
public struct MockConfigurationRejected: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting's name, as given.
    public var setting: String
    /// What is wrong with it, in the command line's words (`'abc' is not a port number (0...65535)`).
    public var message: String

    public var description: String { "\(setting): \(message)" }
}
