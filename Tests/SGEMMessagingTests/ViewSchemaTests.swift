import SGEMContracts
import SGEMCore
@testable import SGEMMessaging
import SGEMSupport
import Testing

/// The response types and the OpenAPI schemas the routes document for them cannot drift apart:
/// sample values are encoded as the routes encode them and checked against their schema — every
/// key written is a documented property of the documented type, every required property is
/// written, in the documented order, and every documented property is written by some sample.
@Suite("Messaging views match their OpenAPI schemas")
struct ViewSchemaTests {
    static let at = Timestamp(milliseconds: 1_764_633_600_000)
    static let text = Message(id: 7, chatID: 3, senderID: 1, body: "hi @bob", mentions: [2], clientID: "c1", createdAt: at,
                              editedAt: Timestamp(milliseconds: 1_764_633_700_000), deleted: false)
    static let deleted = Message(id: 8, chatID: 3, senderID: 1, body: nil, mentions: [], clientID: nil, createdAt: at,
                                 editedAt: nil, deleted: true)
    static let renamed = Message(id: 9, chatID: 3, senderID: 1, body: nil, mentions: [], clientID: nil, createdAt: at, editedAt: nil,
                                 deleted: false, kind: .system, system: SystemLine(event: .chatRenamed, actorID: 1, userIDs: [], name: "Ops"))
    static let added = Message(id: 10, chatID: 3, senderID: 1, body: nil, mentions: [], clientID: nil, createdAt: at, editedAt: nil,
                               deleted: false, kind: .system, system: SystemLine(event: .memberAdded, actorID: 1, userIDs: [2]))
    static let group = Chat(id: 3, kind: .group, name: "Ops", description: "the ops room", tags: ["ops"], isPublic: true, creatorID: 1,
                            createdAt: at, members: [.init(userID: 1, admin: true), .init(userID: 2, admin: false)])
    static let direct = Chat(id: 4, kind: .direct, name: nil, description: "", tags: [], isPublic: false, creatorID: 1,
                             createdAt: at, members: [.init(userID: 1, admin: false), .init(userID: 2, admin: false)])

    static let bob = DirectoryUser(id: 2, username: "bob", displayName: "Bob", email: "bob@example.com", role: .employee,
                                   active: false, language: "en")

    static func value<T: Encodable>(_ view: T) throws -> JSONValue { try OrderedJSONEncoder.jsonValue(view) }

    static func messages() throws -> [JSONValue] { try [text, deleted, renamed, added].map { try value(MessageView($0)) } }

    static func chats() throws -> [JSONValue] {
        [
            try value(ChatView(group, Chat.ReaderView(lastMessage: text, unreadCount: 2, mentionCount: 1, member: true,
                                                      notifications: NotificationLevel.none)).markingAway([2: "2026-12-24"])),
            try value(ChatView(direct, Chat.ReaderView())),
            // A system line as the last message: the nested message schema is written whole too.
            try value(ChatView(direct, Chat.ReaderView(lastMessage: renamed))),
        ]
    }

    static func contacts() throws -> [JSONValue] {
        [try value(ContactView(bob, addedAt: at))]
    }

    static func hits() throws -> [JSONValue] {
        // Search never finds a system line; the second hit only writes the nested schema whole.
        [try value(SearchHitView(message: MessageView(text), chatID: 3, snippet: "hi «bob»")),
         try value(SearchHitView(message: MessageView(renamed), chatID: 3, snippet: ""))]
    }

    @Test("every sample conforms to its schema", arguments: ["message", "chat", "contact", "hit"])
    func conforms(_ name: String) throws {
        let (samples, schema) = try Self.case(name)
        for sample in samples {
            let problems = Self.problems(sample, schema, at: name)
            #expect(problems.isEmpty, "\(problems)")
        }
    }

    @Test("every documented property is written by some sample", arguments: ["message", "chat", "contact", "hit"])
    func covers(_ name: String) throws {
        let (samples, schema) = try Self.case(name)
        var missing = Set<String>()
        Self.documented(schema, at: name, into: &missing)
        for sample in samples { Self.written(sample, schema, at: name, removingFrom: &missing) }
        #expect(missing.isEmpty, "documented but never written: \(missing.sorted())")
    }

    @Test("a list answer is {items} of its schema")
    func lists() throws {
        let list = try Self.value(Items(items: [ContactView(Self.bob, addedAt: Self.at)]))
        #expect(Self.problems(list, MessagingDocs.items(MessagingDocs.contact), at: "contacts").isEmpty)
        // The history page is written by hand for speed: byte for byte the `Items<MessageView>` the schema describes.
        let messages = [Self.text, Self.deleted, Self.renamed]
        #expect(Message.page(messages) == (try OrderedJSONEncoder.encode(Items(items: messages.map(MessageView.init)))))
    }

    @Test("the checker itself refuses an undocumented key, a missing required one, a wrong type and another order")
    func checkerBites() {
        let schema = MessagingDocs.contact
        let good: JSONValue = ["userId": 2, "username": "bob", "displayName": "Bob", "active": true, "addedAt": "2026-12-01T00:00:00Z"]
        #expect(Self.problems(good, schema, at: "c").isEmpty)
        #expect(!Self.problems(.object(good.objectValue! + [("extra", 1)]), schema, at: "c").isEmpty)
        #expect(!Self.problems(.object(good.objectValue!.filter { $0.0 != "active" }), schema, at: "c").isEmpty)
        #expect(!Self.problems(.object(good.objectValue!.map { $0.0 == "userId" ? ($0.0, .string("2")) : $0 }), schema, at: "c").isEmpty)
        #expect(!Self.problems(.object(good.objectValue!.map { $0.0 == "username" ? ($0.0, .null) : $0 }), schema, at: "c").isEmpty)
        #expect(!Self.problems(.object(good.objectValue!.reversed()), schema, at: "c").isEmpty)
    }

    // MARK: The checker

    static func `case`(_ name: String) throws -> ([JSONValue], JSONValue) {
        switch name {
        case "message": (try messages(), MessagingDocs.message)
        case "chat": (try chats(), MessagingDocs.chat)
        case "contact": (try contacts(), MessagingDocs.contact)
        default: (try hits(), MessagingDocs.hit)
        }
    }

    /// What is wrong with `value` as an instance of `schema` (the subset of OpenAPI the routes use).
    static func problems(_ value: JSONValue, _ schema: JSONValue, at path: String) -> [String] {
        if value == .null {
            return schema["nullable"] == true ? [] : ["\(path): null but not nullable"]
        }
        if let allowed = schema["enum"]?.arrayValue, !allowed.contains(value) { return ["\(path): \(value) not in the enum"] }
        switch (schema["type"]?.stringValue, value) {
        case ("string", .string), ("boolean", .bool): return []
        case let ("integer", .number(n)): return n.rounded() == n ? [] : ["\(path): \(n) is not an integer"]
        case let ("array", .array(items)):
            return items.enumerated().flatMap { problems($1, schema["items"] ?? [:], at: "\(path)[\($0)]") }
        case let ("object", .object(pairs)):
            let properties = schema["properties"]?.objectValue ?? []
            var out: [String] = []
            for (key, item) in pairs {
                guard let property = properties.first(where: { $0.0 == key })?.1 else { out.append("\(path).\(key): not documented"); continue }
                out += problems(item, property, at: "\(path).\(key)")
            }
            // Keys in the documented order: the order the contract lists and clients have always seen.
            let order = pairs.compactMap { key, _ in properties.firstIndex { $0.0 == key } }
            if order != order.sorted() { out.append("\(path): keys \(pairs.map(\.0)) not in the documented order") }
            for required in schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !pairs.contains(where: { $0.0 == required }) {
                out.append("\(path).\(required): required but absent")
            }
            return out
        default:
            return ["\(path): \(value) is not of type \(schema["type"]?.stringValue ?? "?")"]
        }
    }

    /// Every property path the schema documents, objects and arrays of objects followed.
    static func documented(_ schema: JSONValue, at path: String, into paths: inout Set<String>) {
        if let items = schema["items"] { documented(items, at: path + "[]", into: &paths) }
        for (key, property) in schema["properties"]?.objectValue ?? [] {
            paths.insert("\(path).\(key)")
            documented(property, at: "\(path).\(key)", into: &paths)
        }
    }

    /// Removes from `paths` every property path `value` writes.
    static func written(_ value: JSONValue, _ schema: JSONValue, at path: String, removingFrom paths: inout Set<String>) {
        if let items = value.arrayValue, let itemSchema = schema["items"] {
            for item in items { written(item, itemSchema, at: path + "[]", removingFrom: &paths) }
        }
        let properties = schema["properties"]?.objectValue ?? []
        for (key, item) in value.objectValue ?? [] {
            paths.remove("\(path).\(key)")
            if let property = properties.first(where: { $0.0 == key })?.1 { written(item, property, at: "\(path).\(key)", removingFrom: &paths) }
        }
    }
}
