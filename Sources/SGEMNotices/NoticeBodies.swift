import SGEMHTTP
import SGEMSupport

// The notices API's request bodies, one type each, read once from the request with the
// contract's checks: an invalid body is a 422 `validation_failed` naming every bad field.

/// `POST /admin/notices`: `{title, body, pinned?}`.
struct NewNoticeBody: RequestBody {
    let title: String
    let body: String
    let pinned: Bool

    init(reading body: inout JSONBody) {
        let title = body.noticeText("title", required: true, NoticeRules.title)
        let text = body.noticeText("body", required: true, NoticeRules.body)
        pinned = body.bool("pinned") ?? false
        (self.title, self.body) = (title ?? "", text ?? "")
    }
}

/// `PATCH /admin/notices/{id}`: `{title?, body?, pinned?}`; what is left out keeps its value.
struct NoticeChangeBody: RequestBody {
    let title: String?
    let body: String?
    let pinned: Bool?

    init(reading body: inout JSONBody) {
        title = body.noticeText("title", required: false, NoticeRules.title)
        self.body = body.noticeText("body", required: false, NoticeRules.body)
        pinned = body.bool("pinned")
    }
}

extension JSONBody {
    /// The string field `key` checked by `rule` (trimmed title, body as sent), or nil with the
    /// problem recorded. Optional fields may be left out, never null.
    mutating func noticeText(_ key: String, required: Bool, _ rule: (String) -> Result<String, NoticeProblem>) -> String? {
        if !required, fields[key] == .null { problem(key, "must be a string"); return nil }
        guard let raw = string(key, required: required) else { return nil }
        switch rule(raw) {
        case let .success(text): return text
        case let .failure(problem): self.problem(key, problem.message); return nil
        }
    }
}
