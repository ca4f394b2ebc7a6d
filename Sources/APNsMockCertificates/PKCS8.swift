import SwiftASN1
import X509

/// PKCS#8 `PrivateKeyInfo` encoding of any key swift-certificates can serialise.
///
/// swift-crypto writes EC and Ed25519 keys as PKCS#8 already but RSA keys as PKCS#1
/// (`RSA PRIVATE KEY`); this wraps the latter so every key file and PKCS#12 key bag is PKCS#8.
enum PKCS8 {
    static let pemDiscriminator = "PRIVATE KEY"
    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]

    static func derBytes(of key: Certificate.PrivateKey) throws(APNsMockCertificateError) -> [UInt8] {
        let document = try APNsMockCertificateError.converting(APNsMockCertificateError.pemEncodingFailed) {
            try key.serializeAsPEM()
        }
        switch document.discriminator {
        case pemDiscriminator:
            return document.derBytes
        case "RSA PRIVATE KEY":
            return try APNsMockCertificateError.converting(APNsMockCertificateError.pemEncodingFailed) {
                var serializer = DER.Serializer()
                try serializer.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(0)
                    try coder.appendConstructedNode(identifier: .sequence) { algorithm in
                        try algorithm.serialize(rsaEncryption)
                        try algorithm.serialize(ASN1Null())
                    }
                    try coder.serialize(ASN1OctetString(contentBytes: document.derBytes[...]))
                }
                return serializer.serializedBytes
            }
        case let other:
            throw .pemEncodingFailed(reason: "cannot convert a \"\(other)\" key to PKCS#8")
        }
    }

    /// The key's PEM: PKCS#8 for RSA (instead of PKCS#1), otherwise what swift-certificates writes
    /// (PKCS#8 for EC and Ed25519 keys).
    static func normalizedPEM(of key: Certificate.PrivateKey) throws(APNsMockCertificateError) -> String {
        let document = try APNsMockCertificateError.converting(APNsMockCertificateError.pemEncodingFailed) {
            try key.serializeAsPEM()
        }
        guard document.discriminator == "RSA PRIVATE KEY" else { return document.pemString }
        return PEMDocument(type: pemDiscriminator, derBytes: try derBytes(of: key)).pemString
    }
}
