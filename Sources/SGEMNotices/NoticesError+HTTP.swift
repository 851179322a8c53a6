import SGEMHTTP
import SGEMSupport

/// The route edge's reading of `NoticesError`: each case's status and stable code.
extension NoticesError: HTTPResponseError {
    var status: Int {
        switch self {
        case .noticeNotFound: 404
        }
    }

    var code: String {
        switch self {
        case .noticeNotFound: "not_found"
        }
    }
}
