import SGEMSupport
import Testing

/// `OrderedJSONEncoder`: keys in the order written, whole numbers exact, strings escaped as
/// `JSONValue` escapes them, nil written as null or left out as the type says.
@Suite struct OrderedJSONEncoderTests {
    enum Level: String, Encodable { case all, none }

    struct Inner: Encodable {
        let z: Int64
        let a: [UInt8]
        let level: Level
        let left: String?
    }

    struct Outer: Encodable {
        let zeta: Int
        let alpha: String
        let nothing: String?
        let inner: Inner
        let fraction: Double
        let list: [Inner?]

        enum CodingKeys: String, CodingKey { case zeta, alpha, nothing, inner, fraction, list }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(zeta, forKey: .zeta)
            try c.encode(alpha, forKey: .alpha)
            try c.encode(nothing, forKey: .nothing)
            try c.encode(inner, forKey: .inner)
            try c.encode(fraction, forKey: .fraction)
            var list = c.nestedUnkeyedContainer(forKey: .list)
            for item in self.list { try list.encode(item) }
        }
    }

    static let sample = Outer(zeta: -3, alpha: "a/b \"q\" \\ \n\u{2028} ünï 👋", nothing: nil,
                              inner: Inner(z: .max, a: [0, 255], level: .none, left: nil), fraction: 1.5,
                              list: [nil, Inner(z: 1, a: [], level: .all, left: "x")])

    @Test("keys in the order written, null written explicitly or left out, integers exact, escapes as JSONValue's")
    func encodes() throws {
        let text = String(decoding: try OrderedJSONEncoder.encode(Self.sample), as: UTF8.self)
        var escaped: [UInt8] = []
        JSONValue.writeString(Self.sample.alpha, into: &escaped)
        let expected = #"{"zeta":-3,"alpha":"# + String(decoding: escaped, as: UTF8.self)
            + #","nothing":null,"inner":{"z":9223372036854775807,"a":[0,255],"level":"none"},"fraction":1.5,"#
            + #""list":[null,{"z":1,"a":[],"level":"all","left":"x"}]}"#
        #expect(text == expected)
    }

    @Test("the same value as a JSONValue, in the same order")
    func asValue() throws {
        let value = try OrderedJSONEncoder.jsonValue(Self.sample)
        #expect(value.objectValue?.map(\.0) == ["zeta", "alpha", "nothing", "inner", "fraction", "list"])
        #expect(value["inner"]?["level"] == "none" && value["nothing"] == .null && value["list"]?.arrayValue?.first == .null)
        let small = try OrderedJSONEncoder.jsonValue(Inner(z: 42, a: [1], level: .all, left: nil))
        #expect(small.serializedBytes() == (try OrderedJSONEncoder.encode(Inner(z: 42, a: [1], level: .all, left: nil))))
    }

    @Test("a parsed value sorted by key at every depth serialises to the same bytes whatever order parsing gave")
    func sortingKeysIsStable() throws {
        let text = Array(#"{"z":1,"a":{"y":[{"q":1,"b":2}],"c":null},"m":"x"}"#.utf8)
        let forms = try (0..<20).map { _ in try JSONValue.parse(text).sortingKeys().serialized() }
        #expect(Set(forms) == [#"{"a":{"c":null,"y":[{"b":2,"q":1}]},"m":"x","z":1}"#])
    }
}

/// `ExplicitNull`: a nil it wraps is written as null, a plain nil optional is left out.
@Suite struct ExplicitNullTests {
    struct View: Encodable {
        @ExplicitNull var always: String?
        var sometimes: Int?
        @ExplicitNull var set: Int64?
    }

    @Test("nil is null under ExplicitNull, absent otherwise; values are written as they are")
    func nulls() throws {
        let text = String(decoding: try OrderedJSONEncoder.encode(View(always: nil, sometimes: nil, set: 9_007_199_254_740_993)), as: UTF8.self)
        #expect(text == #"{"always":null,"set":9007199254740993}"#)
        let full = String(decoding: try OrderedJSONEncoder.encode(View(always: "x", sometimes: 2, set: nil)), as: UTF8.self)
        #expect(full == #"{"always":"x","sometimes":2,"set":null}"#)
    }
}
