import Crypto
import Foundation
import SwiftASN1
import X509
import _CryptoExtras

extension CertifiedKey {
    /// The certificate and key as a PKCS#12 (`.p12`) file, as Keychain Access exports push certificates
    /// and as Pushy, node-apn, APNSwift and friends load them.
    ///
    /// The layout is what `openssl pkcs12 -export` (OpenSSL 3) writes by default, so every current reader
    /// accepts it:
    /// - the certificate bag(s) in PKCS#7 `encryptedData`, and the key in a `pkcs8ShroudedKeyBag`, both
    ///   encrypted with PBES2: PBKDF2-HMAC-SHA256 (2048 iterations, random 16-byte salt) and AES-256-CBC;
    /// - `friendlyName` and `localKeyID` (SHA-1 of the certificate) on the leaf certificate and the key;
    /// - an HMAC-SHA256 integrity MAC keyed by the RFC 7292 appendix B KDF (2048 iterations).
    ///
    /// Readers without PBES2 support (macOS before 10.15's Security framework, OpenSSL 1.0, Java 8
    /// before 8u301) cannot open it; convert with `openssl pkcs12 -legacy` if one of those must.
    ///
    /// - Parameters:
    ///   - password: Protects both the key and the MAC. Any Unicode text; the empty string is allowed.
    ///   - friendlyName: The name Keychain Access shows; the certificate's common name by default.
    ///   - chain: Extra certificates (e.g. the issuing CA) to include after the leaf.
    package func pkcs12(
        password: String,
        friendlyName: String? = nil,
        chain: [Certificate] = []
    ) throws(APNsMockCertificateError) -> [UInt8] {
        let name = friendlyName ?? certificate.subject.commonNames.first
        let keyInfo = try PKCS8.derBytes(of: privateKey)
        return try APNsMockCertificateError.converting(APNsMockCertificateError.pkcs12EncodingFailed) {
            try PKCS12.encode(
                privateKeyInfo: keyInfo,
                leaf: certificate.derBytes(),
                chain: chain.map { try $0.derBytes() },
                friendlyName: name,
                password: password
            )
        }
    }
}

extension Certificate {
    /// The certificate's DER encoding.
    func derBytes() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}

/// A minimal RFC 7292 PKCS#12 writer: one key, its certificate, optional extra certificates.
enum PKCS12 {
    /// OpenSSL's default (`PKCS12_DEFAULT_ITER`) for both the encryption and the MAC.
    static let defaultIterations = 2048

    enum OID {
        static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
        static let encryptedData: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 6]
        static let pkcs8ShroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
        static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
        static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 22, 1]
        static let friendlyName: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 20]
        static let localKeyID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 21]
        static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 13]
        static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 12]
        static let hmacWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 9]
        static let aes256CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 42]
        static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    }

    private static let explicit0 = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)

    static func encode(
        privateKeyInfo: [UInt8],
        leaf: [UInt8],
        chain: [[UInt8]],
        friendlyName: String?,
        password: String,
        iterations: Int = defaultIterations
    ) throws -> [UInt8] {
        let attributes = try bagAttributes(
            friendlyName: friendlyName,
            localKeyID: Array(Insecure.SHA1.hash(data: leaf))
        )

        // Certificates: SafeContents { certBag(leaf, attributes), certBag(chain)... }, encrypted.
        let certificateBags = try sequence { coder in
            try certificateBag(leaf, attributes: attributes, into: &coder)
            for certificate in chain {
                try certificateBag(certificate, attributes: nil, into: &coder)
            }
        }
        let encryptedCertificates = try PBES2.encrypt(certificateBags, password: password, iterations: iterations)
        let certificatesInfo = try sequence { coder in
            try coder.serialize(OID.encryptedData)
            try coder.appendConstructedNode(identifier: explicit0) { content in
                try content.appendConstructedNode(identifier: .sequence) { encryptedData in
                    try encryptedData.serialize(0)
                    try encryptedData.appendConstructedNode(identifier: .sequence) { info in
                        try info.serialize(OID.data)
                        info.serializeRawBytes(encryptedCertificates.algorithmIdentifier)
                        // encryptedContent [0] IMPLICIT OCTET STRING
                        info.appendPrimitiveNode(identifier: explicit0) { $0.append(contentsOf: encryptedCertificates.ciphertext) }
                    }
                }
            }
        }

        // Key: SafeContents { pkcs8ShroudedKeyBag(EncryptedPrivateKeyInfo, attributes) } as plain data.
        let encryptedKey = try PBES2.encrypt(privateKeyInfo, password: password, iterations: iterations)
        let keyBags = try sequence { coder in
            try coder.appendConstructedNode(identifier: .sequence) { bag in
                try bag.serialize(OID.pkcs8ShroudedKeyBag)
                try bag.appendConstructedNode(identifier: explicit0) { value in
                    try value.appendConstructedNode(identifier: .sequence) { info in
                        info.serializeRawBytes(encryptedKey.algorithmIdentifier)
                        try info.serialize(ASN1OctetString(contentBytes: encryptedKey.ciphertext[...]))
                    }
                }
                bag.serializeRawBytes(attributes)
            }
        }
        let keyInfo = try dataContentInfo(keyBags)

        let authenticatedSafe = try sequence { coder in
            coder.serializeRawBytes(certificatesInfo)
            coder.serializeRawBytes(keyInfo)
        }

        let macSalt = randomBytes(16)
        let macKey = deriveKey(
            id: 3,
            password: bmpPassword(password),
            salt: macSalt,
            iterations: iterations,
            length: SHA256.byteCount
        )
        let mac = HMAC<SHA256>.authenticationCode(for: authenticatedSafe, using: SymmetricKey(data: macKey))

        return try sequence { pfx in
            try pfx.serialize(3)
            pfx.serializeRawBytes(try dataContentInfo(authenticatedSafe))
            try pfx.appendConstructedNode(identifier: .sequence) { macData in
                try macData.appendConstructedNode(identifier: .sequence) { digestInfo in
                    try digestInfo.appendConstructedNode(identifier: .sequence) { algorithm in
                        try algorithm.serialize(OID.sha256)
                        try algorithm.serialize(ASN1Null())
                    }
                    try digestInfo.serialize(ASN1OctetString(contentBytes: Array(mac)[...]))
                }
                try macData.serialize(ASN1OctetString(contentBytes: macSalt[...]))
                try macData.serialize(iterations)
            }
        }
    }

    /// `SET OF Attribute` with `friendlyName` (BMPString) and `localKeyID`, sorted as DER requires.
    private static func bagAttributes(friendlyName: String?, localKeyID: [UInt8]) throws -> [UInt8] {
        var encoded: [[UInt8]] = []
        if let friendlyName {
            encoded.append(try attribute(OID.friendlyName) { coder in
                try coder.serialize(ASN1BMPString(contentBytes: bigEndianUTF16(friendlyName)[...]))
            })
        }
        encoded.append(try attribute(OID.localKeyID) { coder in
            try coder.serialize(ASN1OctetString(contentBytes: localKeyID[...]))
        })
        encoded.sort { $0.lexicographicallyPrecedes($1) }
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .set) { set in
            for attribute in encoded { set.serializeRawBytes(attribute) }
        }
        return serializer.serializedBytes
    }

    private static func attribute(
        _ type: ASN1ObjectIdentifier,
        value: (inout DER.Serializer) throws -> Void
    ) throws -> [UInt8] {
        try sequence { coder in
            try coder.serialize(type)
            try coder.appendConstructedNode(identifier: .set, value)
        }
    }

    private static func certificateBag(_ der: [UInt8], attributes: [UInt8]?, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { bag in
            try bag.serialize(OID.certBag)
            try bag.appendConstructedNode(identifier: explicit0) { value in
                try value.appendConstructedNode(identifier: .sequence) { certBag in
                    try certBag.serialize(OID.x509Certificate)
                    try certBag.appendConstructedNode(identifier: explicit0) { certValue in
                        try certValue.serialize(ASN1OctetString(contentBytes: der[...]))
                    }
                }
            }
            if let attributes { bag.serializeRawBytes(attributes) }
        }
    }

    /// `ContentInfo { data, [0] EXPLICIT OCTET STRING content }`.
    private static func dataContentInfo(_ content: [UInt8]) throws -> [UInt8] {
        try sequence { coder in
            try coder.serialize(OID.data)
            try coder.appendConstructedNode(identifier: explicit0) { explicit in
                try explicit.serialize(ASN1OctetString(contentBytes: content[...]))
            }
        }
    }

    private static func sequence(_ body: (inout DER.Serializer) throws -> Void) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence, body)
        return serializer.serializedBytes
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func bigEndianUTF16(_ text: String) -> [UInt8] {
        text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }

    /// RFC 7292 B.1: the password as a BMPString with a two-byte NUL terminator.
    static func bmpPassword(_ password: String) -> [UInt8] {
        bigEndianUTF16(password) + [0, 0]
    }

    /// RFC 7292 appendix B.2 key derivation with SHA-256 (u = 32, v = 64).
    /// `id` is 1 for encryption keys, 2 for IVs, 3 for MAC keys.
    static func deriveKey(id: UInt8, password: [UInt8], salt: [UInt8], iterations: Int, length: Int) -> [UInt8] {
        let v = 64
        let diversifier = [UInt8](repeating: id, count: v)
        func fill(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let count = v * ((bytes.count + v - 1) / v)
            return (0..<count).map { bytes[$0 % bytes.count] }
        }
        var input = fill(salt) + fill(password)
        var output: [UInt8] = []
        while true {
            var block = Array(SHA256.hash(data: diversifier + input))
            for _ in 1..<max(iterations, 1) {
                block = Array(SHA256.hash(data: block))
            }
            output += block
            if output.count >= length { break }
            // I_j = (I_j + B + 1) mod 2^(8v) for every v-byte block of I, B being A repeated to v bytes.
            let b = fill(block)
            for start in stride(from: 0, to: input.count, by: v) {
                var carry: UInt16 = 1
                for index in (0..<v).reversed() {
                    let sum = UInt16(input[start + index]) + UInt16(b[index]) + carry
                    input[start + index] = UInt8(truncatingIfNeeded: sum)
                    carry = sum >> 8
                }
            }
        }
        return Array(output.prefix(length))
    }
}

/// PBES2 (RFC 8018) with PBKDF2-HMAC-SHA256 and AES-256-CBC.
enum PBES2 {
    struct Encrypted {
        /// The DER `AlgorithmIdentifier` naming PBES2 and its parameters.
        var algorithmIdentifier: [UInt8]
        var ciphertext: [UInt8]
    }

    static func encrypt(_ plaintext: [UInt8], password: String, iterations: Int) throws -> Encrypted {
        let salt = PKCS12.randomBytes(16)
        let iv = PKCS12.randomBytes(16)
        // The password's UTF-8 bytes, as OpenSSL uses them for PBES2 inside PKCS#12.
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8),
            salt: salt,
            using: .sha256,
            outputByteCount: 32,
            unsafeUncheckedRounds: iterations
        )
        let ciphertext = try AES._CBC.encrypt(plaintext, using: key, iv: AES._CBC.IV(ivBytes: iv))

        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { algorithm in
            try algorithm.serialize(PKCS12.OID.pbes2)
            try algorithm.appendConstructedNode(identifier: .sequence) { parameters in
                try parameters.appendConstructedNode(identifier: .sequence) { kdf in
                    try kdf.serialize(PKCS12.OID.pbkdf2)
                    try kdf.appendConstructedNode(identifier: .sequence) { pbkdf2 in
                        try pbkdf2.serialize(ASN1OctetString(contentBytes: salt[...]))
                        try pbkdf2.serialize(iterations)
                        try pbkdf2.appendConstructedNode(identifier: .sequence) { prf in
                            try prf.serialize(PKCS12.OID.hmacWithSHA256)
                            try prf.serialize(ASN1Null())
                        }
                    }
                }
                try parameters.appendConstructedNode(identifier: .sequence) { cipher in
                    try cipher.serialize(PKCS12.OID.aes256CBC)
                    try cipher.serialize(ASN1OctetString(contentBytes: iv[...]))
                }
            }
        }
        return Encrypted(algorithmIdentifier: serializer.serializedBytes, ciphertext: Array(ciphertext))
    }
}

extension DistinguishedName {
    /// The string values of every `CN` attribute, in encoding order.
    var commonNames: [String] {
        flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }.compactMap { String($0.value) }
    }
}
