import APNsMock
import APNsMockCertificates
import NIOSSL

/// Reads what the provider port needs from a client certificate: its topics and environments.
enum CertificateIdentityReader {
    static func identity(of certificate: NIOSSLCertificate) -> CertificateIdentity? {
        guard let bytes = try? certificate.toDERBytes(),
            let identity = try? ClientCertificateIdentity(derBytes: bytes)
        else { return nil }
        return CertificateIdentity(
            subject: identity.subject,
            topics: identity.topics,
            environments: Set(identity.environments.compactMap(APNsEnvironment.init(rawValue:)))
        )
    }
}
