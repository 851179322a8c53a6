import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the messaging controllers share: the body cap, path ids, paging, and the checks of the
/// body fields they have in common.
enum MessagingAPI {
    /// A 4,000-character body written as JSON escapes (up to 12 bytes a character outside the
    /// BMP) still fits, as do 1,000 member ids; anything larger is 413 before it is read.
    static let maxBody = 64 * 1024

    /// The middleware of every messaging route: a signed-in user, and domain refusals said in HTTP.
    /// The controllers register their routes on a group that has it.
    static func middleware(_ services: ServiceRegistry) -> [any Middleware] {
        [RequireUser(services: services), MessagingErrorMapping()]
    }

    /// A path id; 404 when it is not an id at all.
    static func pathID(_ request: Request, _ key: String = "id", _ message: String = "no such chat") throws -> Int64 {
        guard let id = Int64(request.parameters[key] ?? ""), id > 0 else { throw APIError.notFound(message) }
        return id
    }

    struct Paging {
        let after: Int64?
        let before: Int64?
        let limit: Int
    }

    /// `after`, `before` and `limit` (default 50, at most 200); 422 naming each bad one.
    static func paging(_ request: Request, allowAfter: Bool) throws -> Paging {
        var problems: [String: String] = [:]
        let paging = paging(request, allowAfter: allowAfter, problems: &problems)
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return paging
    }

    /// The same, adding each problem to `problems`.
    static func paging(_ request: Request, allowAfter: Bool, problems: inout [String: String]) -> Paging {
        func cursor(_ key: String) -> Int64? {
            guard let raw = request.query[key], !raw.isEmpty else { return nil }
            if let n = Int64(raw), n >= 0 { return n }
            problems[key] = "must be an id"
            return nil
        }
        let after = allowAfter ? cursor("after") : nil
        let before = cursor("before")
        var limit = 50
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        return Paging(after: after, before: before, limit: limit)
    }
}

/// The checks of body fields the messaging bodies share.
enum BodyField {
    /// The string field `key` checked by `rule`, or nil with the problem recorded. Optional
    /// fields may be left out, never null.
    static func checked(_ key: String, _ body: inout JSONBody, required: Bool,
                        _ rule: (String) -> Result<String, RuleProblem>) -> String? {
        guard required || notNull(key, &body), let raw = body.string(key, required: required) else { return nil }
        switch rule(raw) {
        case let .success(text): return text
        case let .failure(problem): body.problem(key, problem.message); return nil
        }
    }

    /// False (with a problem) when the optional field `key` is an explicit null.
    static func notNull(_ key: String, _ body: inout JSONBody) -> Bool {
        if body.fields[key] == .null { body.problem(key, "must not be null"); return false }
        return true
    }

    static func tags(_ body: inout JSONBody) -> [String]? {
        guard let value = body.fields["tags"] else { return nil }
        guard let list = value.arrayValue, list.count <= ChatRules.maxTags * 4 else {
            body.problem("tags", "must be a list of at most \(ChatRules.maxTags) strings"); return nil
        }
        let strings = list.compactMap(\.stringValue)
        guard strings.count == list.count else { body.problem("tags", "must hold only strings"); return nil }
        switch ChatRules.tags(strings) {
        case let .success(tags): return tags
        case let .failure(problem): body.problem("tags", problem.message); return nil
        }
    }

    /// A positive whole-number id field.
    static func id(_ key: String, _ body: inout JSONBody, required: Bool) -> Int64? {
        switch body.fields[key] {
        case nil, .null?:
            if required { body.problem(key, "is required") }
            return nil
        case let .number(n)? where n >= 1 && n <= 9_007_199_254_740_991 && n.rounded() == n:
            return Int64(n)
        default:
            body.problem(key, "must be an id (a positive whole number)")
            return nil
        }
    }

    /// A list of ids, at most one more than a group may hold.
    static func ids(_ key: String, _ body: inout JSONBody) -> [Int64]? {
        guard let value = body.fields[key], value != .null else { return nil }
        guard let list = value.arrayValue else { body.problem(key, "must be a list of user ids"); return nil }
        guard list.count <= ChatRules.maxMembers else {
            body.problem(key, "a group holds at most \(ChatRules.maxMembers) members"); return nil
        }
        var out: [Int64] = []
        for item in list {
            guard let n = item.numberValue, n >= 1, n <= 9_007_199_254_740_991, n.rounded() == n else {
                body.problem(key, "must be a list of user ids"); return nil
            }
            out.append(Int64(n))
        }
        return out
    }
}
