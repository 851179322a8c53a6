import SGEMHTTP
import SGEMSupport

/// The route edge's reading of `HolidaysError`: each case's status and stable code.
extension HolidaysError: HTTPResponseError {
    var status: Int {
        switch self {
        case .invalid: 422
        case .requestNotFound, .leaveTypeNotFound, .publicHolidayNotFound, .userNotFound: 404
        case .forbidden: 403
        case .overlap, .allowanceExceeded, .invalidTransition, .publicHolidayExists, .leaveTypeExists, .defaultLeaveType, .leaveTypeInUse: 409
        }
    }

    var code: String {
        switch self {
        case .invalid: "validation_failed"
        case .requestNotFound, .leaveTypeNotFound, .publicHolidayNotFound, .userNotFound: "not_found"
        case .forbidden: "forbidden"
        case .overlap: "holiday_overlap"
        case .allowanceExceeded: "allowance_exceeded"
        case .invalidTransition: "invalid_transition"
        case .publicHolidayExists: "public_holiday_exists"
        case .leaveTypeExists: "leave_type_exists"
        case .defaultLeaveType, .leaveTypeInUse: "leave_type_in_use"
        }
    }

    var details: JSONValue? {
        switch self {
        // The same `{"fields": …}` as every other 422.
        case let .invalid(fields): APIError.validationFailed(fields).details
        case let .allowanceExceeded(year, requested, remaining):
            ["year": .number(Double(year)), "requestedDays": .number(requested), "remainingDays": .number(remaining)]
        default: nil
        }
    }
}
