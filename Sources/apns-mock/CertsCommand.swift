import APNsMockCertificates
import ArgumentParser
import Foundation

/// `apns-mock certs …`: development certificates and keys made with swift-certificates (no openssl needed).
struct CertsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "certs",
        abstract: "Make development certificates and signing keys.",
        subcommands: [Generate.self, Client.self, Server.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a whole new set: CA, server certificate, development and production client certificates "
                + "(PEM and PKCS#12, password 'apns-mock'), and a token signing key AuthKey_APNSMOCK01.p8."
        )

        @Option(help: "Folder to write into (created if missing).") var out: String = "Certs"
        @Option(name: .customLong("bundle-id"), help: "Bundle id of the client certificates.") var bundleID: String =
            DevelopmentCredentials.defaultBundleID

        func run() throws {
            do {
                let credentials = try DevelopmentCredentials.generate(bundleID: bundleID)
                for path in try credentials.write(to: out) { print(path) }
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    struct Client: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue an APNs client certificate (Apple's topic and environment extensions), signed by the "
                + "development CA, as <name>.pem, <name>-key.pem and <name>.p12 (password 'apns-mock')."
        )

        @Option(name: .customLong("topic"), help: "A topic; the first is the bundle id (the subject UID). Repeatable.")
        var topics: [String] = []
        @Option(help: "development, production, or both.") var environment: String = "development"
        @Option(help: "Folder to write into (created if missing).") var out: String = "."
        @Option(help: "File name stem. Default client-<bundle id>-<environment>.") var name: String?
        @Option(name: .customLong("team-id"), help: "The team (the subject's OU), which --tenants by-team reads. Default TEAM000001.")
        var teamID: String = ClientCertificateProfile.defaultTeamID
        @Option(name: .customLong("certs-dir"), help: "Where the CA (ca.pem, ca-key.pem) is. Default $APNS_MOCK_CERTS_DIR, else Certs.")
        var certsDir: String = ProcessInfo.processInfo.environment["APNS_MOCK_CERTS_DIR"] ?? "Certs"

        func validate() throws {
            if topics.isEmpty { throw ValidationError("give at least one --topic (the bundle id first)") }
        }

        func run() throws {
            let environments: Set<APNsCertificateEnvironment>
            switch environment {
            case "development": environments = [.development]
            case "production": environments = [.production]
            case "both": environments = [.development, .production]
            default: throw ValidationError("--environment '\(environment)' is not development, production or both")
            }
            do {
                let authority = try CertificateAuthority(
                    certificateFile: certsDir + "/" + DevelopmentCertificateSet.FileName.caCertificate,
                    privateKeyFile: certsDir + "/" + DevelopmentCertificateSet.FileName.caPrivateKey
                )
                for path in try authority.writeClientCertificate(topics: topics, environment: environments, to: out, name: name, teamID: teamID) {
                    print(path)
                }
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    /// A server certificate from the development CA, for host names of one's own (a staging domain for
    /// `--tenants by-host`), so clients that trust `ca.pem` keep trusting the mock.
    struct Server: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a TLS server certificate, signed by the development CA, for apns-mock's names and any given with "
                + "--dns (e.g. '*.apns.example.com'), as server.pem and server-key.pem."
        )

        @Option(name: .customLong("dns"), help: "A host name to add (a wildcard covers one label). Repeatable.")
        var dnsNames: [String] = []
        @Option(help: "Folder to write into (created if missing).") var out: String = "."
        @Option(name: .customLong("certs-dir"), help: "Where the CA (ca.pem, ca-key.pem) is. Default $APNS_MOCK_CERTS_DIR, else Certs.")
        var certsDir: String = ProcessInfo.processInfo.environment["APNS_MOCK_CERTS_DIR"] ?? "Certs"

        func run() throws {
            do {
                let authority = try CertificateAuthority(
                    certificateFile: certsDir + "/" + DevelopmentCertificateSet.FileName.caCertificate,
                    privateKeyFile: certsDir + "/" + DevelopmentCertificateSet.FileName.caPrivateKey
                )
                var profile = ServerCertificateProfile.apnsMock
                profile.dnsNames += dnsNames.filter { !profile.dnsNames.contains($0) }
                for path in try authority.writeServerCertificate(profile, to: out) { print(path) }
            } catch {
                throw ValidationError("\(error)")
            }
        }
    }
}
