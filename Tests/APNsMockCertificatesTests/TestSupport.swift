import Foundation
import Testing
// The SPI is the supported way to validate at a fixed instant; the tests date certificates at `fixedNow`.
@_spi(FixedExpiryValidationTime) import X509

@testable import APNsMockCertificates

/// A fixed instant with a fractional part, to exercise whole-second truncation.
let fixedNow = Date(timeIntervalSince1970: 1_750_000_000.75)

/// One set shared by the read-only tests: P-256 generation is cheap, but there is no reason to repeat it.
let sharedSet: DevelopmentCertificateSet = {
    do {
        return try DevelopmentCertificateSet.generate(now: fixedNow)
    } catch {
        fatalError("could not generate the shared certificate set: \(error)")
    }
}()

/// A fresh directory under the system temp dir; the caller removes it.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("apns-mock-certificates-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Validates `leaf` against `root` with RFC 5280 rules plus a server-identity check.
func validate(
    _ leaf: Certificate,
    root: Certificate,
    hostname: String?,
    ip: String?,
    at time: Date
) async -> CertificateValidationResult {
    var verifier = Verifier(rootCertificates: CertificateStore([root])) {
        RFC5280Policy(fixedExpiryValidationTime: time)
        ServerIdentityPolicy(serverHostname: hostname, serverIP: ip)
    }
    return await verifier.validate(leaf: leaf, intermediates: CertificateStore())
}

extension CertificateValidationResult {
    var isValid: Bool {
        if case .validCertificate = self { return true }
        return false
    }
}
