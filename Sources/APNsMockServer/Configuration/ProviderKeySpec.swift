import APNsMock
import Crypto
import Foundation

/// A provider token key as configured, before its file is read:
/// `key-id=ABC123DEFG,team-id=TEAM000001,file=AuthKey_ABC123DEFG.p8[,environment=production][,topics=com.a|com.b]`.
/// The file is the `.p8` private key Apple hands out, or just the public key (PEM).
package struct ProviderKeySpec: Sendable, Equatable {
    package var keyID: String
    package var teamID: String
    package var file: String
    package var environment: APNsEnvironment?
    package var topics: [String]?

    package init(keyID: String, teamID: String, file: String, environment: APNsEnvironment? = nil, topics: [String]? = nil) {
        self.keyID = keyID
        self.teamID = teamID
        self.file = file
        self.environment = environment
        self.topics = topics
    }

    /// Parses one `field=value,…` entry; errors name the field.
    package init(parsing text: String) throws(ConfigurationError.Detail) {
        var fields: [String: String] = [:]
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[1].isEmpty else {
                throw .init("'\(part)' is not field=value (fields: key-id, team-id, file, environment, topics)")
            }
            guard ["key-id", "team-id", "file", "environment", "topics"].contains(pair[0]) else {
                throw .init("unknown field '\(pair[0])' (fields: key-id, team-id, file, environment, topics)")
            }
            fields[pair[0]] = pair[1]
        }
        guard let keyID = fields["key-id"] else { throw .init("field key-id is missing") }
        guard let teamID = fields["team-id"] else { throw .init("field team-id is missing") }
        guard let file = fields["file"] else { throw .init("field file is missing") }
        var environment: APNsEnvironment?
        if let value = fields["environment"] {
            guard let parsed = APNsEnvironment(rawValue: value) else {
                throw .init("field environment: '\(value)' is not development or production")
            }
            environment = parsed
        }
        self.init(
            keyID: keyID,
            teamID: teamID,
            file: file,
            environment: environment,
            topics: fields["topics"].map { $0.split(separator: "|").map(String.init) }
        )
    }

    /// Reads the key file: a PKCS#8 private key (`.p8`) or a public key, PEM.
    package func load() throws(ConfigurationError) -> ProviderKey {
        let source = "provider key '\(keyID)'"
        let pem: String
        do {
            pem = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ConfigurationError(source: source, message: "cannot read '\(file)': \(error.localizedDescription)")
        }
        let publicKey: P256.Signing.PublicKey
        if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            publicKey = privateKey.publicKey
        } else if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) {
            publicKey = key
        } else {
            throw ConfigurationError(
                source: source,
                message: "'\(file)' is neither a P-256 private key (.p8, PKCS#8 PEM) nor a P-256 public key (PEM)"
            )
        }
        return ProviderKey(keyID: keyID, teamID: teamID, publicKey: publicKey, environment: environment, topics: topics)
    }

    /// Every `AuthKey_<KEYID>.p8` in a folder, trusted for one team: how the development key in `Certs/` is found.
    package static func developmentKeys(in directory: String, teamID: String) -> [ProviderKeySpec] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
            let keyID = String(name.dropFirst("AuthKey_".count).dropLast(".p8".count))
            guard !keyID.isEmpty else { return nil }
            return ProviderKeySpec(keyID: keyID, teamID: teamID, file: directory + "/" + name)
        }
    }
}
