import APNsMockCertificates
import ArgumentParser

/// `apns-mock certs …`: development certificates made with swift-certificates (no openssl needed).
struct CertsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certs",
        abstract: "Make development certificates.",
        subcommands: [Generate.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new CA and server certificate set (ca.pem, ca-key.pem, server.pem, server-key.pem)."
        )

        @Option(help: "Folder to write into (created if missing).") var out: String = "Certs"

        func run() throws {
            let set = try DevelopmentCertificateSet.generate()
            for path in try set.write(to: out) { print(path) }
        }
    }
}
