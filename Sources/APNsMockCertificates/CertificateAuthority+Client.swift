import Crypto
import Foundation
import X509
import _CryptoExtras

extension CertificateAuthority {
    /// Generates a key and an APNs client certificate for it, described by `profile`
    /// (subject, EKU clientAuth, Apple's environment and topics extensions; see ``ClientCertificateProfile``).
    ///
    /// The validity window starts an hour before `now` (``CertificateValidity/clockSkewAllowance``)
    /// and lasts `profile.validityDays` (825 by default).
    package func issueClientCertificate(
        _ profile: ClientCertificateProfile,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> CertifiedKey {
        try profile.validate()
        let key: Certificate.PrivateKey = try APNsMockCertificateError.converting(
            APNsMockCertificateError.certificateCreationFailed
        ) {
            switch profile.keyAlgorithm {
            case .p256: Certificate.PrivateKey(P256.Signing.PrivateKey())
            case .rsa2048: Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
            }
        }
        let certificate = try issue(
            subject: profile.subject(),
            publicKey: key.publicKey,
            validity: .days(profile.validityDays, from: now),
            extensions: profile.extensions()
        )
        return try CertifiedKey(certificate: certificate, privateKey: key)
    }

    /// Issues a client certificate for `profile` and writes it into `directory` (created if needed) as
    /// `<name>.pem` (certificate), `<name>-key.pem` (PKCS#8 key) and `<name>.p12` (both, protected by
    /// `pkcs12Password`), replacing existing files.
    ///
    /// - Parameter name: The file stem; by default `client-<bundle ID>-<development|production|universal>`.
    /// - Returns: The written paths, in the order above.
    @discardableResult
    package func writeClientCertificate(
        _ profile: ClientCertificateProfile,
        to directory: String,
        name: String? = nil,
        pkcs12Password: String = DevelopmentCredentials.pkcs12Password,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> [String] {
        let client = try issueClientCertificate(profile, now: now)
        let stem = name ?? "client-\(profile.bundleID)-\(APNsCertificateEnvironment.fileLabel(for: profile.environments))"
        return try client.write(to: directory, name: stem, pkcs12Password: pkcs12Password)
    }

    /// Issues and writes a client certificate for `topics` (the first is the bundle ID) and `environment`;
    /// what `apns-mock certs client --topic … --environment … --out DIR` needs. See
    /// ``writeClientCertificate(_:to:name:pkcs12Password:now:)`` for the files.
    @discardableResult
    package func writeClientCertificate(
        topics: [String],
        environment: Set<APNsCertificateEnvironment>,
        to directory: String,
        name: String? = nil,
        teamID: String = ClientCertificateProfile.defaultTeamID,
        pkcs12Password: String = DevelopmentCredentials.pkcs12Password,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> [String] {
        try writeClientCertificate(
            ClientCertificateProfile(topics: topics, environments: environment, teamID: teamID),
            to: directory,
            name: name,
            pkcs12Password: pkcs12Password,
            now: now
        )
    }
}

extension CertifiedKey {
    /// Writes `<name>.pem`, `<name>-key.pem`, `<name>.p12` and `<name>-bundle.pem` (the certificate and its key in
    /// one PEM file, as clients such as aioapns load them) into `directory` (created if needed).
    ///
    /// - Returns: The written paths, in that order.
    @discardableResult
    package func write(
        to directory: String,
        name: String,
        pkcs12Password: String
    ) throws(APNsMockCertificateError) -> [String] {
        try PEMFiles.createDirectory(directory)
        let certificatePath = PEMFiles.path(name + ".pem", in: directory)
        let keyPath = PEMFiles.path(name + "-key.pem", in: directory)
        let pkcs12Path = PEMFiles.path(name + ".p12", in: directory)
        let bundlePath = PEMFiles.path(name + "-bundle.pem", in: directory)
        try PEMFiles.write(certificatePEM, to: certificatePath)
        try PEMFiles.write(privateKeyPEM, to: keyPath)
        try PEMFiles.write(bytes: pkcs12(password: pkcs12Password), to: pkcs12Path)
        let certificateLines = certificatePEM.hasSuffix("\n") ? certificatePEM : certificatePEM + "\n"
        try PEMFiles.write(certificateLines + privateKeyPEM, to: bundlePath)
        return [certificatePath, keyPath, pkcs12Path, bundlePath]
    }
}
