import Foundation
import SwiftASN1
import X509

/// Reading certificates out of PEM text that may hold several blocks (chains, bundles, key + cert).
enum PEMCertificates {
    static func all(in pem: String) throws(APNsMockCertificateError) -> [Certificate] {
        let documents = try APNsMockCertificateError.converting(APNsMockCertificateError.invalidCertificatePEM) {
            try PEMDocument.parseMultiple(pemString: pem)
        }
        return try APNsMockCertificateError.converting(APNsMockCertificateError.invalidCertificatePEM) {
            try documents
                .filter { $0.discriminator == Certificate.defaultPEMDiscriminator }
                .map { try Certificate(pemDocument: $0) }
        }
    }

    /// The first certificate in `pem`; for a chain file that is the leaf.
    static func first(in pem: String) throws(APNsMockCertificateError) -> Certificate {
        guard let certificate = try all(in: pem).first else {
            throw .invalidCertificatePEM(reason: "no -----BEGIN CERTIFICATE----- block found")
        }
        return certificate
    }
}

/// File I/O for the PEM (and `.p12` / `.p8`) files apns-mock writes.
enum PEMFiles {
    /// Every file apns-mock writes is world-readable: the server and CI jobs often run as a user
    /// other than the one that generated the files, and these are throw-away development keys.
    static let permissions = 0o644

    static func read(_ path: String) throws(APNsMockCertificateError) -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .fileReadFailed(path: path, reason: error.localizedDescription)
        }
    }

    static func createDirectory(_ path: String) throws(APNsMockCertificateError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .directoryCreationFailed(path: path, reason: error.localizedDescription)
        }
    }

    /// Writes text, ending it with a newline if it has none: PEM files are concatenated (`cat cert.pem key.pem >
    /// bundle.pem`), and without it the two armour lines run together and neither can be read.
    static func write(_ contents: String, to path: String) throws(APNsMockCertificateError) {
        try write(bytes: Array(contents.utf8) + (contents.hasSuffix("\n") ? [] : [0x0A]), to: path)
    }

    /// Writes binary contents (a `.p12`) with the same atomicity and permissions as PEM text.
    static func write(bytes contents: [UInt8], to path: String) throws(APNsMockCertificateError) {
        do {
            // Atomic so a server starting concurrently never reads a half-written file.
            try Data(contents).write(to: URL(fileURLWithPath: path), options: .atomic)
            // The atomic write's temporary file decides the mode, so set it explicitly afterwards.
            try FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: path)
        } catch {
            throw .fileWriteFailed(path: path, reason: error.localizedDescription)
        }
    }
}

extension PEMFiles {
    /// `directory/name`.
    static func path(_ name: String, in directory: String) -> String {
        URL(fileURLWithPath: directory).appendingPathComponent(name).path
    }
}
