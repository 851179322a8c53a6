import SGEMCore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMSystem
import Testing

/// Each answer of the system and benchmark API, encoded, against the OpenAPI schema documented
/// beside its route, and the exact bytes clients have always read.
@Suite("System: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static func json(_ value: some Encodable) -> JSONValue {
        (try? OrderedJSONEncoder.jsonValue(value)) ?? .null
    }

    @Test("status and stored ids fit their schemas")
    func matches() {
        #expect(viewMismatches(ViewSchemaTests.json(StatusView(status: "ok")), against: SystemAPI.statusSchema) == [])
        #expect(viewMismatches(ViewSchemaTests.json(StoredIDView(id: 9_007_199_254_740_993)), against: SystemAPI.storedIDSchema) == [])
    }

    @Test("the checker sees keys out of the documented order, nested ones too")
    func checkerSeesOrder() {
        let schema = APISchema.object(["a": APISchema.integer, "b": APISchema.array(APISchema.object(["x": APISchema.integer, "y": APISchema.integer]))])
        #expect(viewMismatches(["a": 1, "b": [["x": 1, "y": 2]]], against: schema) == [])
        #expect(viewMismatches(["b": [], "a": 1], against: schema) == ["(root): keys out of the documented order"])
        #expect(viewMismatches(["a": 1, "b": [["y": 2, "x": 1]]], against: schema) == ["b[0]: keys out of the documented order"])
    }

    @Test("liveness and readiness answer the same bytes, never cached")
    func statusBytes() throws {
        #expect(SystemController.alive.body == Array(#"{"status":"ok"}"#.utf8))
        #expect(SystemController.status("ready").body == Array(#"{"status":"ready"}"#.utf8))
        #expect(SystemController.alive.headers["Cache-Control"] == "no-store")
        #expect(try OrderedJSONEncoder.encode(StoredIDView(id: 9_007_199_254_740_993)) == Array(#"{"id":9007199254740993}"#.utf8))
    }
}
