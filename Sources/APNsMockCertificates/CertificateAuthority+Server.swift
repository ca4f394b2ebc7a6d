import Foundation

extension CertificateAuthority {
    /// Issues a TLS server certificate for `profile` and writes `server.pem` and `server-key.pem` into `directory`
    /// (created if needed, existing files replaced): what `apns-mock certs server --dns … --out DIR` needs.
    ///
    /// - Returns: The written paths, in that order.
    @discardableResult
    package func writeServerCertificate(
        _ profile: ServerCertificateProfile = .apnsMock,
        to directory: String,
        now: Date = Date()
    ) throws(APNsMockCertificateError) -> [String] {
        let server = try issueServerCertificate(profile, now: now)
        try PEMFiles.createDirectory(directory)
        let certificatePath = PEMFiles.path(DevelopmentCertificateSet.FileName.serverCertificate, in: directory)
        let keyPath = PEMFiles.path(DevelopmentCertificateSet.FileName.serverPrivateKey, in: directory)
        try PEMFiles.write(server.certificatePEM, to: certificatePath)
        try PEMFiles.write(server.privateKeyPEM, to: keyPath)
        return [certificatePath, keyPath]
    }
}
