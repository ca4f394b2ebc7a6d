import Testing

@testable import APNsMock

/// The payload conditions' JSON path and scanner.
@Suite("Scenario payload paths")
struct ScenarioPayloadTests {
    private func value(_ path: String, _ json: String) throws -> JSONValue? {
        JSONScanner.value(at: try JSONPath(parsing: path), in: Array(json.utf8))
    }

    @Test func parsesPathForms() throws {
        #expect(try JSONPath(parsing: "$.aps.alert.title").components == [.key("aps"), .key("alert"), .key("title")])
        #expect(try JSONPath(parsing: "aps.badge").components == [.key("aps"), .key("badge")])
        #expect(try JSONPath(parsing: "$.items[2].id").components == [.key("items"), .index(2), .key("id")])
        #expect(try JSONPath(parsing: #"$["a.b"]['c']"#).components == [.key("a.b"), .key("c")])
        #expect(try JSONPath(parsing: "$[0]").components == [.index(0)])
        #expect(try JSONPath(parsing: "$").components == [])
    }

    @Test(arguments: ["", "$.", "$..a", "$a", "$.a[", "$.a[1", "$.a[-1]", #"$["a"#])
    func rejectsBadPaths(path: String) {
        #expect(throws: JSONPathError.self) { try JSONPath(parsing: path) }
    }

    @Test func findsValuesSkippingEverythingElse() throws {
        let json = #"""
            {"skip": {"x": [1, {"y": "]}\"{["}], "z": null}, "n": -12.5e1, "aps": {"alert": {"title": "Hi \"you\" \u00e9\ud83d\ude00"},
             "list": [true, false, [0], {"k": "v"}]}}
            """#
        #expect(try value("$.aps.alert.title", json) == .string("Hi \"you\" é😀"))
        #expect(try value("$.n", json) == .number(-125))
        #expect(try value("$.aps.list[0]", json) == .bool(true))
        #expect(try value("$.aps.list[2]", json) == .array([.number(0)]))
        #expect(try value("$.aps.list[3]", json) == .object(["k": .string("v")]))
        #expect(try value("$.skip.z", json) == .null)
        #expect(try value("$.skip.x[1].y", json) == .string(#"]}"{["#))
        #expect(try value("$.aps.list[4]", json) == nil)
        #expect(try value("$.aps.missing", json) == nil)
        #expect(try value("$.n.deeper", json) == nil)
    }

    @Test func keysWithEscapesAreCompared() throws {
        #expect(try value(#"$["a.b"]"#, #"{"a\u002eb": 1}"#) == .number(1))
        #expect(try value("$.ab", #"{"a\u0062": 2}"#) == .number(2))
    }

    @Test func malformedPayloadsLeadNowhere() throws {
        #expect(try value("$.a", "not json") == nil)
        #expect(try value("$.a", #"{"a": }"#) == nil)
        #expect(try value("$.a", #"{"a": "unterminated"#) == nil)
        #expect(try value("$.b", #"{"a": [1, 2"#) == nil)
        #expect(try value("$.a", "") == nil)
    }

    @Test func parseReadsAWholeDocument() {
        #expect(
            JSONScanner.parse(Array(#" {"a": [1, "x", null, true]} "#.utf8))
                == .object(["a": .array([.number(1), .string("x"), .null, .bool(true)])])
        )
        #expect(JSONScanner.parse(Array(#"{"a": 1} trailing"#.utf8)) == nil)
        #expect(JSONScanner.parse(Array(String(repeating: "[", count: 100).utf8)) == nil)
    }

    @Test func integersAndDecimalsCompareAsNumbers() throws {
        #expect(try value("$.a", #"{"a": 3}"#) == .number(3))
        #expect(try value("$.a", #"{"a": 3.0}"#) == .number(3))
        #expect(try value("$.a", #"{"a": 1700000000123}"#) == .number(1_700_000_000_123))
        #expect(try value("$.a", #"{"a": 1e3}"#) == .number(1000))
        #expect(try value("$.a", #"{"a": 12abc}"#) == nil)
    }
}
