import Crypto
import Foundation
import Testing

@testable import APNsMock

private let verifierKeyID = "ABC123DEFG"
private let verifierTeamID = "TEAM000001"
private let issuedAt: Int64 = 1_700_000_000

/// base64url without padding, written here so the tests do not lean on the code under test.
private func b64url(_ bytes: some Sequence<UInt8>) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private func b64url(_ text: String) -> String { b64url(Array(text.utf8)) }

/// base64url keeping the `=` padding, as a sloppy client might send it.
private func b64urlPadded(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
}

private struct VerifierFixture {
    let privateKey = P256.Signing.PrivateKey()

    var key: ProviderKey { ProviderKey(keyID: verifierKeyID, teamID: verifierTeamID, publicKey: privateKey.publicKey) }
    var verifier: ProviderTokenVerifier { ProviderTokenVerifier(keys: [key]) }
    var signer: ProviderTokenSigner { ProviderTokenSigner(keyID: verifierKeyID, teamID: verifierTeamID, privateKey: privateKey) }

    /// A token with exactly these (already encoded) header and claims parts, signed with this fixture's key.
    func sign(encodedHeader: String, encodedClaims: String, der: Bool = false, with other: P256.Signing.PrivateKey? = nil) throws -> String {
        let input = encodedHeader + "." + encodedClaims
        let signature = try (other ?? privateKey).signature(for: Array(input.utf8))
        let bytes = der ? Array(signature.derRepresentation) : Array(signature.rawRepresentation)
        return input + "." + b64url(bytes)
    }

    /// A token with this header and claims JSON, byte for byte, signed with this fixture's key.
    func sign(header: String, claims: String, der: Bool = false) throws -> String {
        try sign(encodedHeader: b64url(header), encodedClaims: b64url(claims), der: der)
    }

    func standardHeader(alg: String = "ES256", kid: String = verifierKeyID) -> String {
        #"{"alg":"\#(alg)","kid":"\#(kid)"}"#
    }

    func standardClaims(iss: String = verifierTeamID, iat: Int64 = issuedAt) -> String {
        #"{"iss":"\#(iss)","iat":\#(iat)}"#
    }
}

private func invalidDetail(_ result: Result<VerifiedProviderToken, ProviderTokenVerifier.Failure>) -> String? {
    switch result {
    case .success: return nil
    case .failure(.invalid(let detail)): return detail
    }
}

@Suite("ProviderTokenVerifier")
struct ProviderTokenVerifierTests {
    // MARK: Valid tokens

    @Test func rawSignatureTokenVerifies() throws {
        let fixture = VerifierFixture()
        let token = try fixture.signer.token(issuedAt: issuedAt, signature: .raw)
        let signature = try #require(token.split(separator: ".").last)
        #expect(Base64URL.decode(signature)?.count == 64)

        let verified = try fixture.verifier.verify(token).get()
        #expect(verified.keyID == verifierKeyID)
        #expect(verified.teamID == verifierTeamID)
        #expect(verified.signatureVerified)
        #expect(verified.key?.keyID == verifierKeyID)
        #expect(verified.token.issuedAt == issuedAt)
        #expect(verified.token.algorithm == "ES256")
    }

    @Test func derSignatureTokenVerifies() throws {
        let fixture = VerifierFixture()
        let token = try fixture.signer.token(issuedAt: issuedAt, signature: .der)
        let encoded = try #require(token.split(separator: ".").last)
        let signature = try #require(Base64URL.decode(encoded))
        #expect(signature.first == 0x30, "a DER ECDSA signature is a SEQUENCE")
        #expect((68...72).contains(signature.count), "\(signature.count)")

        let verified = try fixture.verifier.verify(token).get()
        #expect(verified.signatureVerified)
        #expect(verified.teamID == verifierTeamID)
    }

    @Test func signerOutputMatchesApplesDocumentedShape() throws {
        let fixture = VerifierFixture()
        let token = try fixture.signer.token(issuedAt: issuedAt)
        #expect(!token.contains("="), "JWS compact form is unpadded")
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try #require(Base64URL.decode(parts[0]))
        let claims = try #require(Base64URL.decode(parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"\#(verifierKeyID)"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iss":"\#(verifierTeamID)","iat":\#(issuedAt)}"#)
    }

    @Test(arguments: [Int64(0), issuedAt - 86_400 * 365, issuedAt + 86_400 * 365])
    func ageIsNotTheVerifiersJob(iat: Int64) throws {
        let fixture = VerifierFixture()
        let verified = try fixture.verifier.verify(try fixture.signer.token(issuedAt: iat)).get()
        #expect(verified.token.issuedAt == iat)
        #expect(verified.signatureVerified)
    }

    // MARK: Keys and teams

    @Test func unknownKeyIDIsInvalidAndNamed() throws {
        let fixture = VerifierFixture()
        let stranger = ProviderTokenSigner(keyID: "ZZZZ999999", teamID: verifierTeamID, privateKey: P256.Signing.PrivateKey())
        let detail = try #require(invalidDetail(fixture.verifier.verify(try stranger.token(issuedAt: issuedAt))))
        #expect(detail.contains("ZZZZ999999"), "\(detail)")
    }

    @Test func noConfiguredKeysRejectsEverything() throws {
        let fixture = VerifierFixture()
        let verifier = ProviderTokenVerifier()
        #expect(invalidDetail(verifier.verify(try fixture.signer.token(issuedAt: issuedAt))) != nil)
    }

    @Test func acceptUnknownKeysLetsAnUnknownKeyThroughUnverified() throws {
        let fixture = VerifierFixture()
        var verifier = fixture.verifier
        verifier.acceptUnknownKeys = true
        let stranger = ProviderTokenSigner(keyID: "ZZZZ999999", teamID: "OTHERTEAM1", privateKey: P256.Signing.PrivateKey())

        let verified = try verifier.verify(try stranger.token(issuedAt: issuedAt)).get()
        #expect(verified.signatureVerified == false)
        #expect(verified.key == nil)
        #expect(verified.keyID == "ZZZZ999999")
        #expect(verified.teamID == "OTHERTEAM1")
        #expect(verified.token.issuedAt == issuedAt)
    }

    @Test func acceptUnknownKeysStillVerifiesKnownKeys() throws {
        let fixture = VerifierFixture()
        let verifier = ProviderTokenVerifier(keys: [fixture.key], acceptUnknownKeys: true)
        let good = try verifier.verify(try fixture.signer.token(issuedAt: issuedAt)).get()
        #expect(good.signatureVerified)

        // A known kid signed with another private key is not waved through as "unknown".
        let forged = try fixture.sign(
            encodedHeader: b64url(fixture.standardHeader()),
            encodedClaims: b64url(fixture.standardClaims()),
            with: P256.Signing.PrivateKey()
        )
        #expect(invalidDetail(verifier.verify(forged)) != nil)
    }

    @Test func acceptUnknownKeysStillEnforcesAlgAndStructure() throws {
        let fixture = VerifierFixture()
        let verifier = ProviderTokenVerifier(keys: [], acceptUnknownKeys: true)
        let none = try fixture.sign(header: #"{"alg":"none","kid":"ZZZZ999999"}"#, claims: fixture.standardClaims())
        #expect(invalidDetail(verifier.verify(none)) != nil)
        #expect(invalidDetail(verifier.verify("not.a-jwt")) != nil)
        let noIss = try fixture.sign(header: #"{"alg":"ES256","kid":"ZZZZ999999"}"#, claims: #"{"iat":1700000000}"#)
        #expect(invalidDetail(verifier.verify(noIss)) != nil)
    }

    @Test func issuerThatIsNotTheKeysTeamIsInvalid() throws {
        let fixture = VerifierFixture()
        let wrongTeam = ProviderTokenSigner(keyID: verifierKeyID, teamID: "OTHERTEAM1", privateKey: fixture.privateKey)
        let detail = try #require(invalidDetail(fixture.verifier.verify(try wrongTeam.token(issuedAt: issuedAt))))
        #expect(detail.contains("OTHERTEAM1"), "\(detail)")
        #expect(detail.contains(verifierTeamID), "\(detail)")
    }

    @Test func swappedKidAndIssIsInvalid() throws {
        let fixture = VerifierFixture()
        let swapped = try fixture.sign(
            header: fixture.standardHeader(kid: verifierTeamID),
            claims: fixture.standardClaims(iss: verifierKeyID)
        )
        #expect(invalidDetail(fixture.verifier.verify(swapped)) != nil)
    }

    @Test func signatureFromAnotherKeyIsInvalid() throws {
        let fixture = VerifierFixture()
        let impostor = ProviderTokenSigner(keyID: verifierKeyID, teamID: verifierTeamID, privateKey: P256.Signing.PrivateKey())
        for encoding in [ProviderTokenSigner.SignatureEncoding.raw, .der] {
            let detail = try #require(invalidDetail(fixture.verifier.verify(try impostor.token(issuedAt: issuedAt, signature: encoding))))
            #expect(detail.contains("signature"), "\(detail)")
        }
    }

    // MARK: Tampering

    @Test func tamperedClaimsKeepingTheSignatureAreInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.signer.token(issuedAt: issuedAt)
        let parts = token.split(separator: ".").map(String.init)
        let newerClaims = b64url(fixture.standardClaims(iat: issuedAt + 3000))
        let tampered = [parts[0], newerClaims, parts[2]].joined(separator: ".")
        #expect(invalidDetail(fixture.verifier.verify(tampered)) != nil)

        // The same with a DER signature.
        let derParts = try fixture.signer.token(issuedAt: issuedAt, signature: .der).split(separator: ".").map(String.init)
        #expect(invalidDetail(fixture.verifier.verify([derParts[0], newerClaims, derParts[2]].joined(separator: "."))) != nil)
    }

    @Test func tamperedHeaderKeepingTheSignatureIsInvalid() throws {
        let fixture = VerifierFixture()
        let parts = try fixture.signer.token(issuedAt: issuedAt).split(separator: ".").map(String.init)
        // Same meaning, different bytes: the signature covers the bytes.
        let respaced = b64url(#"{"alg": "ES256", "kid": "\#(verifierKeyID)"}"#)
        #expect(invalidDetail(fixture.verifier.verify([respaced, parts[1], parts[2]].joined(separator: "."))) != nil)
    }

    @Test func corruptedSignatureIsInvalid() throws {
        let fixture = VerifierFixture()
        let parts = try fixture.signer.token(issuedAt: issuedAt).split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[10] ^= 0x01
        #expect(invalidDetail(fixture.verifier.verify([parts[0], parts[1], b64url(signature)].joined(separator: "."))) != nil)
        // Truncated: neither 64 raw bytes nor valid DER.
        #expect(invalidDetail(fixture.verifier.verify([parts[0], parts[1], b64url(signature.prefix(63))].joined(separator: "."))) != nil)
        // Garbage of the right length for DER.
        #expect(invalidDetail(fixture.verifier.verify([parts[0], parts[1], b64url([UInt8](repeating: 0x30, count: 71))].joined(separator: "."))) != nil)
    }

    @Test func trailingDotIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.signer.token(issuedAt: issuedAt)
        #expect(invalidDetail(fixture.verifier.verify(token + ".")) != nil)
    }

    // MARK: Algorithms

    @Test func algNoneUnsignedIsInvalid() throws {
        let fixture = VerifierFixture()
        let unsigned = b64url(#"{"alg":"none","kid":"\#(verifierKeyID)"}"#) + "." + b64url(fixture.standardClaims()) + "."
        #expect(invalidDetail(fixture.verifier.verify(unsigned)) != nil)
    }

    @Test func algNoneWithAValidES256SignatureIsStillInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(alg: "none"), claims: fixture.standardClaims())
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("none"), "\(detail)")
        #expect(detail.contains("ES256"), "\(detail)")
    }

    @Test func hs256IsInvalid() throws {
        let fixture = VerifierFixture()
        let input = b64url(fixture.standardHeader(alg: "HS256")) + "." + b64url(fixture.standardClaims())
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(size: .bits256))
        let token = input + "." + b64url(Array(mac))
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("HS256"), "\(detail)")
    }

    @Test(arguments: ["ES384", "RS256", "es256", "ES256 "])
    func otherAlgorithmsAreInvalid(alg: String) throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(alg: alg), claims: fixture.standardClaims())
        #expect(invalidDetail(fixture.verifier.verify(token)) != nil)
    }

    @Test func missingAlgIsInvalid() throws {
        // Apple's own sample token has no alg; it is illustrative, not a valid token.
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: #"{"kid":"\#(verifierKeyID)"}"#, claims: fixture.standardClaims())
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("missing"), "\(detail)")
    }

    @Test func nonStringAlgIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: #"{"alg":256,"kid":"\#(verifierKeyID)"}"#, claims: fixture.standardClaims())
        #expect(invalidDetail(fixture.verifier.verify(token)) != nil)
    }

    // MARK: Malformed tokens

    @Test func twoPartsIsInvalidWithAHelpfulDetail() throws {
        let fixture = VerifierFixture()
        let parts = try fixture.signer.token(issuedAt: issuedAt).split(separator: ".").map(String.init)
        let detail = try #require(invalidDetail(fixture.verifier.verify(parts[0] + "." + parts[1])))
        #expect(detail.contains("three"), "\(detail)")
        #expect(detail.contains("2"), "\(detail)")
    }

    @Test(arguments: ["", "abc", "a.b.c.d", "...."])
    func wrongPartCountsAreInvalid(text: String) {
        let fixture = VerifierFixture()
        #expect(invalidDetail(fixture.verifier.verify(text)) != nil)
    }

    @Test func badBase64HeaderIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = "!!!not*base64." + b64url(fixture.standardClaims()) + "." + b64url([UInt8](repeating: 1, count: 64))
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("header"), "\(detail)")
    }

    @Test func badBase64ClaimsAreInvalid() throws {
        let fixture = VerifierFixture()
        let token = b64url(fixture.standardHeader()) + ".@@@@." + b64url([UInt8](repeating: 1, count: 64))
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("claims"), "\(detail)")
    }

    @Test func badBase64SignatureIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = b64url(fixture.standardHeader()) + "." + b64url(fixture.standardClaims()) + ".#$%^"
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("signature"), "\(detail)")
    }

    @Test func nonJSONHeaderIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: "ES256 please", claims: fixture.standardClaims())
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("header"), "\(detail)")
        #expect(detail.contains("JSON"), "\(detail)")
    }

    @Test func nonJSONClaimsAreInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: "iss=TEAM000001")
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("claims"), "\(detail)")
    }

    @Test func jsonArrayHeaderIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: #"["ES256","\#(verifierKeyID)"]"#, claims: fixture.standardClaims())
        #expect(invalidDetail(fixture.verifier.verify(token)) != nil)
    }

    @Test func missingKidIsInvalidWithAHelpfulDetail() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: #"{"alg":"ES256"}"#, claims: fixture.standardClaims())
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("kid"), "\(detail)")
    }

    @Test func emptyKidIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(kid: ""), claims: fixture.standardClaims())
        #expect(invalidDetail(fixture.verifier.verify(token))?.contains("kid") == true)
    }

    @Test func missingIssIsInvalidWithAHelpfulDetail() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: #"{"iat":\#(issuedAt)}"#)
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("iss"), "\(detail)")
    }

    @Test func missingIatIsInvalidWithAHelpfulDetail() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: #"{"iss":"\#(verifierTeamID)"}"#)
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("iat"), "\(detail)")
    }

    @Test(arguments: [#""yesterday""#, #""""#, "null", #"{"s":1}"#, "[1700000000]"])
    func nonNumericIatIsInvalid(iat: String) throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: #"{"iss":"\#(verifierTeamID)","iat":\#(iat)}"#)
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("iat"), "\(detail)")
    }

    /// BUG (minor): `ProviderToken.seconds` takes any `NSNumber`, and JSONSerialization gives JSON booleans
    /// as `NSNumber`, so `"iat": true` is read as 1 (1970): a valid token that the connection then answers
    /// `ExpiredProviderToken` (poisoning it) instead of `InvalidProviderToken`. The doc comment says
    /// "a number or a string of digits".
    @Test func booleanIatIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: #"{"iss":"\#(verifierTeamID)","iat":true}"#)
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("iat"), "\(detail)")
    }

    @Test func missingSignatureIsInvalid() throws {
        let fixture = VerifierFixture()
        let token = b64url(fixture.standardHeader()) + "." + b64url(fixture.standardClaims()) + "."
        let detail = try #require(invalidDetail(fixture.verifier.verify(token)))
        #expect(detail.contains("signature"), "\(detail)")
    }

    // MARK: Lenient parsing, as APNs

    @Test func prettyPrintedHeaderAndClaimsVerify() throws {
        let fixture = VerifierFixture()
        let header = "{\n  \"alg\" : \"ES256\",\n  \"kid\" : \"\(verifierKeyID)\"\n}"
        let claims = "{\n  \"iss\" : \"\(verifierTeamID)\",\n  \"iat\" : \(issuedAt)\n}\n"
        for der in [false, true] {
            let verified = try fixture.verifier.verify(try fixture.sign(header: header, claims: claims, der: der)).get()
            #expect(verified.signatureVerified)
            #expect(verified.token.issuedAt == issuedAt)
        }
    }

    @Test func iatAsAStringVerifies() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(header: fixture.standardHeader(), claims: #"{"iss":"\#(verifierTeamID)","iat":"\#(issuedAt)"}"#)
        let verified = try fixture.verifier.verify(token).get()
        #expect(verified.token.issuedAt == issuedAt)
    }

    @Test func apnswiftStyleTokenVerifies() throws {
        // APNSwift: pretty-printed JSON (JSONEncoder .prettyPrinted), iat as a string, an extra kid claim.
        let fixture = VerifierFixture()
        let header = "{\n  \"alg\" : \"ES256\",\n  \"kid\" : \"\(verifierKeyID)\",\n  \"typ\" : \"JWT\"\n}"
        let claims = "{\n  \"iat\" : \"\(issuedAt)\",\n  \"iss\" : \"\(verifierTeamID)\",\n  \"kid\" : \"\(verifierKeyID)\"\n}"
        let verified = try fixture.verifier.verify(try fixture.sign(header: header, claims: claims)).get()
        #expect(verified.signatureVerified)
        #expect(verified.keyID == verifierKeyID)
        #expect(verified.teamID == verifierTeamID)
        #expect(verified.token.issuedAt == issuedAt)
    }

    @Test func extraHeaderAndClaimMembersAreIgnored() throws {
        let fixture = VerifierFixture()
        let token = try fixture.sign(
            header: #"{"typ":"JWT","alg":"ES256","kid":"\#(verifierKeyID)","x5u":null}"#,
            claims: #"{"iss":"\#(verifierTeamID)","iat":\#(issuedAt),"exp":\#(issuedAt + 3600),"aud":"apns"}"#
        )
        #expect(try fixture.verifier.verify(token).get().signatureVerified)
    }

    @Test func paddedBase64URLIsTolerated() throws {
        let fixture = VerifierFixture()
        // Header and claims lengths chosen so that padding is actually present.
        let header = fixture.standardHeader()
        let claims = fixture.standardClaims()
        let encodedHeader = b64urlPadded(header)
        let encodedClaims = b64urlPadded(claims)
        #expect(encodedHeader.hasSuffix("=") || encodedClaims.hasSuffix("="), "the fixture must exercise padding")

        // The client signs what it sends: the padded parts.
        let input = encodedHeader + "." + encodedClaims
        let signature = try fixture.privateKey.signature(for: Array(input.utf8)).rawRepresentation
        let paddedSignature = Data(signature).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(paddedSignature.hasSuffix("="))
        let verified = try fixture.verifier.verify(input + "." + paddedSignature).get()
        #expect(verified.signatureVerified)
        #expect(verified.token.issuedAt == issuedAt)
    }

    @Test func base64URLDecoderHandlesPaddingAndURLAlphabet() {
        #expect(Base64URL.decode("YQ") == [0x61])
        #expect(Base64URL.decode("YQ==") == [0x61])
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("*") == nil)
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }
}
