import SGEMContracts
import SGEMCore
import SGEMSupport

/// A chat as stored: a direct chat between two people, or a group with its settings.
struct Chat: Sendable, Equatable {
    enum Kind: String, Sendable, Encodable {
        case direct, group
    }

    struct Member: Sendable, Equatable {
        let userID: Int64
        let admin: Bool
    }

    let id: Int64
    let kind: Kind
    /// Nil for a direct chat.
    let name: String?
    let description: String
    let tags: [String]
    let isPublic: Bool
    let creatorID: Int64
    let createdAt: Timestamp
    /// In the order they joined: the longest-standing first.
    let members: [Member]

    var memberIDs: [Int64] { members.map(\.userID) }
    func isAdmin(_ userID: Int64) -> Bool { members.contains { $0.userID == userID && $0.admin } }
    func isMember(_ userID: Int64) -> Bool { members.contains { $0.userID == userID } }

    /// What the chat's realtime events carry (`chat.created`, `chat.updated`).
    var eventData: JSONValue {
        ["chat": .object(coreFields)]
    }

    private var coreFields: [(String, JSONValue)] {
        [
            ("id", .number(Double(id))),
            ("kind", .string(kind.rawValue)),
            ("name", name.map(JSONValue.string) ?? .null),
            ("description", .string(description)),
            ("tags", .array(tags.map(JSONValue.string))),
            ("public", .bool(isPublic)),
            ("members", .array(members.map { .object([("userId", .number(Double($0.userID))), ("admin", .bool($0.admin))]) })),
        ]
    }

    /// What depends on who reads a chat.
    struct ReaderView: Sendable, Equatable {
        var lastMessage: Message?
        var unreadCount = 0
        var mentionCount = 0
        /// Only in the public groups' list: whether the reader is already in.
        var member: Bool?
        /// The reader's own notification level; nil: the default for the chat's kind.
        var notifications: NotificationLevel?
    }

    /// The notification level of a member who chose none: every message of a direct chat,
    /// mentions in a group.
    static func defaultLevel(_ kind: Kind) -> NotificationLevel { kind == .group ? .mentions : .all }
}

/// One message as stored. A deleted one keeps its id and loses its body. A system line (who
/// came and went) has no body: its `system` says what happened, and its sender is the actor.
struct Message: Sendable, Equatable {
    enum Kind: String, Sendable, Encodable {
        case text, system
    }

    let id: Int64
    let chatID: Int64
    let senderID: Int64
    /// Nil once deleted.
    let body: String?
    let mentions: [Int64]
    let clientID: String?
    let createdAt: Timestamp
    let editedAt: Timestamp?
    let deleted: Bool
    var kind: Kind = .text
    /// What a system line says; nil for a text message.
    var system: SystemLine? = nil

    var isSystem: Bool { kind == .system }

    /// The contract's message as a value (see `MessageView`), for events and the translation module.
    var json: JSONValue { (try? OrderedJSONEncoder.jsonValue(MessageView(self))) ?? .null }

    var eventData: JSONValue { ["message": json] }

    /// The message as the translation module reads it.
    var readable: ReadableMessage {
        ReadableMessage(id: id, chatID: chatID, senderID: senderID, body: deleted ? nil : body, json: json)
    }

    /// Appends the same JSON as `json` straight to `out`, without building the value first: a
    /// page of history is fifty of these, and the tree cost more than the text.
    func write(into out: inout [UInt8], times: inout TimeText, translation: MessageTranslation? = nil) {
        func key(_ k: StaticString) { out.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount)) }
        func number(_ n: Int64) { out.append(contentsOf: String(n).utf8) }
        key(#"{"id":"#); number(id)
        key(#","chatId":"#); number(chatID)
        key(#","senderId":"#); number(senderID)
        key(#","body":"#)
        if !deleted, let body { JSONValue.writeString(body, into: &out) } else { key("null") }
        key(#","mentions":["#)
        if !deleted {
            for (i, m) in mentions.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                number(m)
            }
        }
        key(#"],"createdAt":"#); JSONValue.writeString(times.rfc3339(createdAt), into: &out)
        key(#","editedAt":"#)
        if let editedAt { JSONValue.writeString(times.rfc3339(editedAt), into: &out) } else { key("null") }
        key(#","deleted":"#); key(deleted ? "true" : "false")
        key(#","kind":"#); JSONValue.writeString(kind.rawValue, into: &out)
        key(#","system":"#)
        if let system { system.write(into: &out) } else { key("null") }
        if let translation, !deleted {
            key(#","translation":{"text":"#); JSONValue.writeString(translation.text, into: &out)
            key(#","source":"#); JSONValue.writeString(translation.source, into: &out)
            key(#","target":"#); JSONValue.writeString(translation.target, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
    }

    /// `{"items": [...]}` of `messages`, as bytes.
    /// `{"items": [...]}` of `messages`, each with its `translation` for this reader when there is one.
    static func page(_ messages: [Message], translations: [Int64: MessageTranslation] = [:]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + messages.count * 256)
        var times = TimeText()
        out.append(contentsOf: #"{"items":["#.utf8)
        for (i, message) in messages.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            message.write(into: &out, times: &times, translation: translations.isEmpty ? nil : translations[message.id])
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}

/// What a system line records: the change, who made it and whom it concerns (for a rename,
/// the new name too).
struct SystemLine: Encodable, Sendable, Equatable {
    enum Event: String, Sendable, CaseIterable {
        case chatCreated = "chat.created"
        case memberAdded = "member.added"
        case memberRemoved = "member.removed"
        case memberLeft = "member.left"
        case adminGranted = "admin.granted"
        case adminRevoked = "admin.revoked"
        case chatRenamed = "chat.renamed"
    }

    let event: Event
    let actorID: Int64
    let userIDs: [Int64]
    /// The group's new name, for `chat.renamed` only.
    var name: String? = nil

    enum CodingKeys: String, CodingKey {
        case event, actorID = "actorId", userIDs = "userIds", name
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event.rawValue, forKey: .event)
        try c.encode(actorID, forKey: .actorID)
        try c.encode(userIDs, forKey: .userIDs)
        try c.encodeIfPresent(name, forKey: .name)
    }

    /// The line's JSON as a value.
    var json: JSONValue { (try? OrderedJSONEncoder.jsonValue(self)) ?? .null }

    /// The same JSON, appended to `out`.
    func write(into out: inout [UInt8]) {
        out.append(contentsOf: (try? OrderedJSONEncoder.encode(self)) ?? Array("null".utf8))
    }

    /// The line as stored in `messaging_messages.system` (the same JSON); nil when it is not one.
    static func parse(_ text: String) -> SystemLine? {
        guard let value = try? JSONValue.parse(Array(text.utf8)), let event = value["event"]?.stringValue.flatMap(Event.init(rawValue:)),
              let actor = value["actorId"]?.numberValue else { return nil }
        return SystemLine(event: event, actorID: Int64(actor),
                          userIDs: (value["userIds"]?.arrayValue ?? []).compactMap { $0.numberValue.map { Int64($0) } },
                          name: value["name"]?.stringValue)
    }
}

/// RFC 3339 text of whole-second times, remembering the last one: the messages of a page are
/// mostly written seconds apart, and formatting dominated serving a page.
struct TimeText {
    private var seconds: Int64 = .min
    private var text = ""

    mutating func rfc3339(_ time: Timestamp) -> String {
        if time.seconds != seconds {
            seconds = time.seconds
            text = time.rfc3339()
        }
        return text
    }
}

/// The limits and checks on what chats and messages hold, shared by the routes and the service.
enum ChatRules {
    static let maxName = 100
    static let maxDescription = 1000
    static let maxTags = 10
    static let maxTag = 30
    static let maxBody = 4000
    static let maxClientID = 64
    /// Members of one group; the creator included.
    static let maxMembers = 1000
    /// People on one user's contact list.
    static let maxContacts = 2000
    static let maxSearchQuery = 200

    /// The trimmed name, or the problem with it.
    static func name(_ raw: String) -> Result<String, RuleProblem> { oneLine(raw, max: maxName, what: "") }

    /// `raw` trimmed, when it is 1 to `max` characters on one line; else the problem with it.
    private static func oneLine(_ raw: String, max: Int, what: String) -> Result<String, RuleProblem> {
        let text = raw.trimmingWhitespace()
        if text.isEmpty { return .failure(RuleProblem(what.isEmpty ? "must not be empty" : "must not hold empty \(what)s")) }
        if text.count > max { return .failure(RuleProblem("\(what.isEmpty ? "must" : "each \(what) must") be at most \(max) characters")) }
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .failure(RuleProblem("must be one line without control characters"))
        }
        return .success(text)
    }

    static func description(_ raw: String) -> Result<String, RuleProblem> {
        raw.count > maxDescription ? .failure(RuleProblem("must be at most \(maxDescription) characters")) : .success(raw)
    }

    /// Tags trimmed, without repeats (the first spelling kept), or the problem with them.
    static func tags(_ raw: [String]) -> Result<[String], RuleProblem> {
        var out: [String] = []
        var seen = Set<String>()
        for tag in raw {
            let t: String
            switch oneLine(tag, max: maxTag, what: "tag") {
            case let .success(text): t = text
            case let .failure(problem): return .failure(problem)
            }
            if seen.insert(t.lowercased()).inserted { out.append(t) }
        }
        if out.count > maxTags { return .failure(RuleProblem("must hold at most \(maxTags) tags")) }
        return .success(out)
    }

    /// The body as sent, or the problem with it (empty or only whitespace is refused).
    static func body(_ raw: String) -> Result<String, RuleProblem> {
        if raw.trimmingWhitespace().isEmpty { return .failure(RuleProblem("must not be empty")) }
        if raw.count > maxBody { return .failure(RuleProblem("must be at most \(maxBody) characters")) }
        return .success(raw)
    }

    static func clientID(_ raw: String) -> Result<String, RuleProblem> {
        if raw.isEmpty || raw.count > maxClientID { return .failure(RuleProblem("must be 1 to \(maxClientID) characters")) }
        return .success(raw)
    }

    /// The lowercased usernames written as `@username` in `body`: an `@` at the start or after a
    /// character that cannot be part of a username (so `ana@example.com` names nobody).
    static func mentionedUsernames(in body: String) -> Set<String> {
        guard body.utf8.contains(UInt8(ascii: "@")) else { return [] }
        func usernameByte(_ b: UInt8) -> Bool {
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2E || b == 0x5F || b == 0x2D
        }
        let bytes = Array(body.utf8)
        var names = Set<String>()
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "@"), i == 0 || !usernameByte(bytes[i - 1]) {
                var j = i + 1
                while j < bytes.count, usernameByte(bytes[j]) { j += 1 }
                var end = j
                // A sentence's full stop after the name is not part of it.
                while end > i + 1, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
                if end - (i + 1) >= 3, end - (i + 1) <= 32 {
                    names.insert(String(decoding: bytes[(i + 1)..<end], as: UTF8.self).lowercased())
                }
                i = j
            } else {
                i += 1
            }
        }
        return names
    }
}

/// Why a field was refused, in words for a 422 field.
struct RuleProblem: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
