import SGEMHTTP
import SGEMSupport

/// The route edge's reading of `CompanyError`: each case's status and stable code.
extension CompanyError: HTTPResponseError {
    var status: Int {
        switch self {
        case .invalid: 422
        }
    }

    var code: String {
        switch self {
        case .invalid: "validation_failed"
        }
    }

    var details: JSONValue? {
        switch self {
        // The same `{"fields": …}` as every other 422.
        case let .invalid(fields): APIError.validationFailed(fields).details
        }
    }
}
