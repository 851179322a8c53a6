/// Why the notice board refused something, in its own words: what `NoticeBoard` throws to the
/// controllers and the admin verbs alike. The route edge gives it its status and code
/// (`NoticesError+HTTP.swift`); the command line says it in words of its own.
enum NoticesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No notice with that id, or one the reader may not see (someone else's holiday notice), or
    /// a holiday notice where only company notices may be changed.
    case noticeNotFound

    /// One line for a person, the same on the API and the command line.
    var message: String {
        switch self {
        case .noticeNotFound: "no such notice"
        }
    }

    var description: String { message }
}
