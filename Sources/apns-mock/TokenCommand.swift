import APNsMock
import APNsMockCertificates
import ArgumentParser
import Foundation

/// `apns-mock token`: prints a provider token (JWT, ES256) so a newcomer can push with curl:
/// `curl … -H "authorization: bearer $(apns-mock token)"`.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a provider token signed with the development key (or the key you name)."
    )

    @Option(help: "Signing key (.p8). Default: the AuthKey_<KEYID>.p8 in --certs-dir.") var key: String?
    @Option(name: .customLong("key-id"), help: "Key id (kid). Default: from the AuthKey_<KEYID>.p8 file name.") var keyID: String?
    @Option(name: .customLong("team-id"), help: "Team id (iss). Default TEAM000001.") var teamID: String = "TEAM000001"
    @Option(
        name: .customLong("issued-at"),
        parsing: .unconditional,
        help: "iat: seconds since the epoch, or an offset from now such as -30m, -2h, +5m. Default now."
    )
    var issuedAt: String?
    @Option(name: .customLong("certs-dir"), help: "Where to look for the development key. Default $APNS_MOCK_CERTS_DIR, else Certs.")
    var certsDir: String = ProcessInfo.processInfo.environment["APNS_MOCK_CERTS_DIR"] ?? "Certs"
    @Flag(help: "Sign with a DER signature (as openssl dgst makes) instead of JOSE's raw r||s.") var der = false

    func run() throws {
        let signingKey: SigningKeyFile
        do {
            if let key {
                signingKey = try SigningKeyFile.load(path: key, keyID: keyID)
            } else {
                guard let found = try SigningKeyFile.loadAll(in: certsDir).first else {
                    throw ValidationError("no AuthKey_<KEYID>.p8 in '\(certsDir)': pass --key FILE --key-id ID, or run 'apns-mock certs generate'")
                }
                signingKey = found
            }
        } catch let error as APNsMockCertificateError {
            throw ValidationError("\(error)")
        }
        let now = Int64(Date().timeIntervalSince1970)
        guard let iat = Self.issuedAt(issuedAt, now: now) else {
            throw ValidationError("--issued-at '\(issuedAt ?? "")' is neither seconds since the epoch nor an offset such as -30m")
        }
        let signer = ProviderTokenSigner(keyID: keyID ?? signingKey.keyID, teamID: teamID, privateKey: signingKey.privateKey)
        print(try signer.token(issuedAt: iat, signature: der ? .der : .raw))
    }

    static func issuedAt(_ text: String?, now: Int64) -> Int64? {
        guard let text, text != "now" else { return now }
        if let first = text.first, first == "-" || first == "+" {
            let sign: Int64 = first == "-" ? -1 : 1
            let body = text.dropFirst()
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
            guard let unit = body.last, let scale = units[unit], let amount = Int64(body.dropLast()) else { return nil }
            return now + sign * amount * scale
        }
        return Int64(text)
    }
}
