@testable import SGEMHTTP
import SGEMSupport
import Testing

/// `RequestBody`: a typed body read once, refused as a whole with the contract's codes.
@Suite struct RequestBodyTests {
    /// `{name, count?}`.
    struct Sample: RequestBody {
        let name: String
        let count: Bool?

        init(reading body: inout JSONBody) {
            name = body.string("name", required: true) ?? ""
            count = body.bool("count")
        }
    }

    static func request(_ body: String, type: String? = "application/json") -> Request {
        Request(method: .POST, target: "/x", headers: HTTPHeaders(type.map { [("Content-Type", $0)] } ?? []), body: Array(body.utf8))
    }

    @Test("415 unless JSON, 400 unless an object, 422 naming every bad field")
    func refusals() {
        let cases: [(Request, Int, String)] = [
            (RequestBodyTests.request(#"{"name":"a"}"#, type: "text/plain"), 415, "unsupported_media_type"),
            (RequestBodyTests.request("{"), 400, "invalid_json"),
            (RequestBodyTests.request("[1]"), 400, "invalid_json"),
            (RequestBodyTests.request(#"{"count":1}"#), 422, "validation_failed"),
        ]
        for (request, status, code) in cases {
            do {
                _ = try Sample(request)
                Issue.record("accepted \(code)")
            } catch let error as APIError {
                #expect(error.status == status && error.code == code, "\(error)")
            } catch { Issue.record("unexpected \(error)") }
        }
        do { _ = try Sample(RequestBodyTests.request(#"{"count":1}"#)) } catch let error as APIError {
            #expect(error.details == ["fields": ["count": "must be true or false", "name": "is required"]])
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test("a good body gives its fields; unknown fields are ignored")
    func reads() throws {
        let body = try Sample(RequestBodyTests.request(#"{"name":"a","count":true,"extra":3}"#))
        #expect(body.name == "a" && body.count == true)
    }
}
