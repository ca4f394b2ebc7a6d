import Foundation
import Testing
import X509

@testable import APNsMockCertificates

@Suite("DevelopmentCredentials")
struct DevelopmentCredentialsTests {
    static let credentials: DevelopmentCredentials = {
        do {
            return try DevelopmentCredentials.generate(certificates: sharedSet, now: fixedNow)
        } catch {
            fatalError("could not generate credentials: \(error)")
        }
    }()

    @Test func clientCertificatesPerEnvironment() {
        let credentials = Self.credentials
        for environment in APNsCertificateEnvironment.allCases {
            let identity = ClientCertificateIdentity(certificate: credentials.client(for: environment).certificate)
            #expect(identity.environments == [environment.rawValue])
            #expect(identity.uid == "com.example.app")
            #expect(identity.topics == ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
        }
        #expect(credentials.signingKey.keyID == "APNSMOCK01")
        #expect(DevelopmentCredentials.pkcs12Password == "apns-mock")
    }

    @Test func writesTheWholeFolder() async throws {
        let base = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        let directory = base.appendingPathComponent("Certs").path
        let credentials = Self.credentials

        let paths = try credentials.write(to: directory)
        #expect(paths.map { URL(fileURLWithPath: $0).lastPathComponent } == [
            "ca.pem", "ca-key.pem", "server.pem", "server-key.pem",
            "client-development.pem", "client-development-key.pem", "client-development.p12", "client-development-bundle.pem",
            "client-production.pem", "client-production-key.pem", "client-production.p12", "client-production-bundle.pem",
            "AuthKey_APNSMOCK01.p8",
        ])
        for path in paths {
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o644, "\(path)")
        }

        // Everything loads back.
        let authority = try CertificateAuthority(
            certificateFile: paths[0],
            privateKeyFile: paths[1]
        )
        #expect(authority.certificate == sharedSet.authority.certificate)
        let development = try CertifiedKey(certificateFile: paths[4], privateKeyFile: paths[5])
        #expect(development.certificate == credentials.developmentClient.certificate)
        let production = try CertifiedKey(certificateFile: paths[8], privateKeyFile: paths[9])
        #expect(ClientCertificateIdentity(certificate: production.certificate).environments == ["production"])
        let key = try SigningKeyFile.load(path: paths[12])
        #expect(key.privateKey.rawRepresentation == credentials.signingKey.privateKey.rawRepresentation)
        #expect(try SigningKeyFile.loadAll(in: directory).map(\.keyID) == ["APNSMOCK01"])

        // The .p12 opens with the documented password.
        if Tools.hasOpenSSL {
            for p12 in [paths[6], paths[10]] {
                let result = try await Tools.runOpenSSL("pkcs12", "-in", p12, "-passin", "pass:apns-mock", "-nodes")
                #expect(result.status == 0, "\(result.output)")
            }
        }
    }

    @Test func reusesAGivenSigningKey() throws {
        let key = try SigningKeyFile.generate(keyID: "KEEPME0001")
        let credentials = try DevelopmentCredentials.generate(
            certificates: sharedSet,
            bundleID: "com.other.app",
            signingKey: key,
            now: fixedNow
        )
        #expect(credentials.signingKey.keyID == "KEEPME0001")
        #expect(credentials.signingKey.privateKey.rawRepresentation == key.privateKey.rawRepresentation)
        #expect(ClientCertificateIdentity(certificate: credentials.developmentClient.certificate).topics.first == "com.other.app")
    }

    @Test func generateFromScratch() throws {
        let credentials = try DevelopmentCredentials.generate(now: fixedNow)
        #expect(credentials.signingKey.keyID == DevelopmentCredentials.defaultSigningKeyID)
        #expect(credentials.developmentClient.certificate.issuer == credentials.certificates.authority.certificate.subject)
    }
}
