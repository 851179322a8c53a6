import SGEMHTTP
import SGEMSupport

/// The route edge's reading of `PushError`: each case's status and stable code.
extension PushError: HTTPResponseError {
    var status: Int {
        switch self {
        case .tooManySubscriptions: 409
        case .subscriptionNotFound: 404
        }
    }

    var code: String {
        switch self {
        case .tooManySubscriptions: "too_many_subscriptions"
        case .subscriptionNotFound: "not_found"
        }
    }
}
