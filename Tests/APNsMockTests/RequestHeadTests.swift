import Testing

@testable import APNsMock

/// A request's text is kept as bytes (`RequestHead`); what it reads back, and what the validator and the
/// recorder see, must be what arrived.
@Suite("Request bytes")
struct RequestHeadTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Builds a head field by field, as the HTTP/2 layer does.
    static func head(_ fields: [(String, String)]) -> RequestHead {
        var head = RequestHead()
        for (name, value) in fields {
            let nameBytes = bytes(name)
            let valueBytes = bytes(value)
            nameBytes.withUnsafeBufferPointer { name in
                valueBytes.withUnsafeBufferPointer { value in
                    switch String(decoding: name, as: UTF8.self) {
                    case ":method": head.setPseudo(.method, value)
                    case ":path": head.setPseudo(.path, value)
                    case ":scheme": head.setPseudo(.scheme, value)
                    case ":authority": head.setPseudo(.authority, value)
                    default: head.appendHeader(name: name, value: value)
                    }
                }
            }
        }
        return head
    }

    static func request(_ fields: [(String, String)]) -> APNsRequest {
        APNsRequest(head: head(fields), payload: [1, 2], payloadSize: 2, headerListTooLarge: false)
    }

    /// Every known name gets its own code, and names that only look alike (same length, one byte off, a prefix)
    /// are literal (the lookup compares a name only with the known names of its length).
    @Test func eachKnownNameHasItsCodeAndNoOtherNameDoes() {
        for (index, known) in HeaderBlock.knownNames.enumerated() {
            let name = known.description
            #expect(HeaderBlock.code(of: name) == UInt8(index), "\(name)")
            var altered = Array(name.utf8)
            altered[altered.count - 1] ^= 0x01
            #expect(HeaderBlock.code(of: String(decoding: altered, as: UTF8.self)) == nil, "\(name) altered")
            #expect(HeaderBlock.code(of: String(name.dropLast())) == nil, "\(name) cut")
            #expect(HeaderBlock.code(of: name + "x") == nil, "\(name) extended")
        }
        for other in ["", "x", "apns-topix", "Apns-topic", "authorizatio", "content-lengths", "x-apns-id", ":path"] {
            #expect(HeaderBlock.code(of: other) == nil, "\(other)")
        }
    }

    @Test func fieldsReadBackAsTheyArrived() {
        let request = Self.request([
            (":method", "POST"), (":scheme", "https"), (":path", "/3/device/abcd"), (":authority", "api.push.apple.com"),
            ("apns-topic", "com.example.app"), ("x-trace", "é"), ("apns-topic", "second"), ("", ""),
        ])
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/abcd")
        #expect(request.scheme == "https")
        #expect(request.authority == "api.push.apple.com")
        #expect(request.headers == [
            HeaderField(name: "apns-topic", value: "com.example.app"), HeaderField(name: "x-trace", value: "é"),
            HeaderField(name: "apns-topic", value: "second"), HeaderField(name: "", value: ""),
        ])
        #expect(request.header("apns-topic") == "com.example.app")
        #expect(request.header("x-trace") == "é")
        #expect(request.header("") == "")
        #expect(request.header("apns-id") == nil)
        #expect(request.deviceToken == "abcd")
        #expect(request.methodIs("POST"))
        #expect(!request.methodIs("POS"))
        #expect(request == APNsRequest(
            method: "POST", path: "/3/device/abcd", scheme: "https", authority: "api.push.apple.com",
            headers: request.headers, payload: [1, 2]
        ))
    }

    @Test func hostStandsInForAMissingAuthority() {
        #expect(Self.request([(":method", "POST"), (":path", "/"), ("host", "localhost:2197")]).authority == "localhost:2197")
        #expect(Self.request([(":method", "POST"), (":path", "/"), (":authority", "a"), ("host", "b")]).authority == "a")
        #expect(Self.request([(":method", "POST"), (":path", "/")]).authority == nil)
        #expect(Self.request([(":method", "POST"), (":path", "/")]).scheme == nil)
    }

    @Test func theFirstPseudoHeaderWinsAndNoneIsTakenAfterRegularFields() {
        let request = Self.request([(":method", "POST"), (":method", "GET"), (":path", "/a"), ("apns-topic", "t"), (":path", "/b")])
        #expect(request.method == "POST")
        #expect(request.path == "/a")
        #expect(request.headers == [HeaderField(name: "apns-topic", value: "t")])
    }

    @Test func settersRebuildTheBytes() {
        var request = Self.request([(":method", "POST"), (":path", "/3/device/ab"), ("host", "h"), ("apns-topic", "t")])
        request.method = "GET"
        request.headers.append(HeaderField(name: "apns-id", value: "x"))
        request.path = "/other"
        #expect(request.method == "GET")
        #expect(request.path == "/other")
        #expect(request.authority == "h")
        #expect(request.header("apns-id") == "x")
        #expect(request.headers.count == 3)
    }

    /// The validator reads headers from the bytes: the first value of each APNs header, and whether any name
    /// (known or not) repeats.
    @Test func apnsHeadersAreReadFromTheBytes() {
        func headers(_ fields: [(String, String)]) -> APNsHeaders {
            APNsHeaders(Self.request([(":method", "POST"), (":path", "/")] + fields))
        }
        let all = headers([
            ("apns-topic", "a"), ("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-id", "i"),
            ("authorization", "bearer t"), ("apns-expiration", "0"), ("apns-collapse-id", "c"), ("x-one", "1"),
        ])
        #expect(all.topic == "a")
        #expect(all.pushType == "alert")
        #expect(all.priority == "10")
        #expect(all.apnsID == "i")
        #expect(all.authorization == "bearer t")
        #expect(all.expiration == "0")
        #expect(all.collapseID == "c")
        #expect(!all.hasDuplicates)

        let repeatedKnown = headers([("apns-topic", "a"), ("apns-topic", "b")])
        #expect(repeatedKnown.topic == "a")
        #expect(repeatedKnown.hasDuplicates)
        #expect(headers([("x-one", "1"), ("x-two", "2"), ("x-one", "3")]).hasDuplicates)
        #expect(headers([("", ""), ("", "")]).hasDuplicates)
        #expect(!headers([("x-one", "1"), ("x-two", "2")]).hasDuplicates)
        // Names are compared as sent: HTTP/2 names are lower case, so an upper-case one is another header.
        let upper = headers([("APNS-TOPIC", "upper"), ("apns-topic", "lower")])
        #expect(upper.topic == "lower")
        #expect(!upper.hasDuplicates)
        #expect(headers([]).topic == nil)

        // The broadcast API's names have codes too: read by code, absent without a walk, repeated is a duplicate.
        let broadcast = Self.request([
            (":method", "POST"), (":path", "/4/broadcasts/apps/a"), ("x-one", "1"), ("apns-channel-id", "first"),
            ("apns-channel-id", "second"),
        ])
        #expect(broadcast.header("apns-channel-id") == "first")
        #expect(broadcast.header("apns-request-id") == nil)
        #expect(APNsHeaders(broadcast).hasDuplicates)
        let requestID = Self.request([(":method", "POST"), (":path", "/"), ("apns-request-id", "r"), ("apns-channel-id", "c")])
        #expect(requestID.header("apns-request-id") == "r" && requestID.header("apns-channel-id") == "c")
        #expect(!APNsHeaders(requestID).hasDuplicates)
        #expect(HeaderBlock.knownNames.count <= 32, "RequestHead keeps the codes seen in 32 bits")
    }

    /// The connection's current `authorization` value is taken (the same string, not a new one) when the request
    /// sends the same bytes, and only then.
    @Test func aKnownAuthorizationValueIsReusedOnlyWhenTheBytesAreTheSame() {
        let known = "bearer " + String(repeating: "k", count: 180)
        func authorization(_ value: String) -> String? {
            APNsHeaders(Self.request([(":method", "POST"), (":path", "/"), ("authorization", value)]), knownAuthorization: known).authorization
        }
        func storage(_ text: String) -> UInt {
            var text = text
            return text.withUTF8 { UInt(bitPattern: $0.baseAddress) }
        }
        let same = authorization(known)
        #expect(same == known)
        #expect(same.map(storage) == storage(known))
        let other = "bearer " + String(repeating: "k", count: 179) + "K"
        #expect(authorization(other) == other)
        #expect(authorization(String(known.dropLast())) == String(known.dropLast()))
        #expect(authorization("") == "")
    }
}
