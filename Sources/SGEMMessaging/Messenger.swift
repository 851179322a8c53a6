import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// The messaging operations in domain words: what the routes call. Every change and the
/// realtime events it records share one write transaction; the journal is told after the commit.
/// A chat someone is not a member of is `MessagingError.noSuchChat` to them, whatever they ask of
/// it. Refusals are `MessagingError`s; the routes say them in HTTP.
struct Messenger: Sendable {
    let store: Store
    let journal: any EventJournal
    let directory: any UserDirectory
    /// The translation module's view of who reads which chat translated; resolved per page, so
    /// messaging runs the same without it.
    var services: ServiceRegistry? = nil

    /// The reads that stand alone; writes run their statements in one `store.write`.
    var repository: MessagingRepository { MessagingRepository(store: store) }

    // MARK: Reading chats

    func chats(of viewer: Int64) async throws -> [ChatView] {
        try await repository.chats(of: viewer).map(ChatView.init)
    }

    func chat(_ id: Int64, viewer: Int64) async throws -> ChatView {
        guard let (chat, view) = try await repository.chat(id, viewer: viewer) else { throw MessagingError.noSuchChat }
        return ChatView(chat, view)
    }

    func publicGroups(viewer: Int64, before: Int64?, limit: Int) async throws -> [ChatView] {
        try await repository.publicGroups(viewer: viewer, before: before, limit: limit).map(ChatView.init)
    }

    func isMember(_ user: Int64, of chatID: Int64) async throws -> Bool {
        try await repository.isMember(user, of: chatID)
    }

    // MARK: Creating chats

    /// Creates a group with `creator` as its admin and `memberIDs` (active users) as members.
    func createGroup(by creator: Int64, name: String, description: String, tags: [String], isPublic: Bool,
                     memberIDs: [Int64]) async throws -> ChatView {
        var unique: [Int64] = []
        for id in memberIDs where id != creator && !unique.contains(id) { unique.append(id) }
        let others = unique
        if others.count + 1 > ChatRules.maxMembers {
            throw MessagingError.invalid(field: "memberIds", problem: "a group holds at most \(ChatRules.maxMembers) members")
        }
        try await requireActiveUsers(others, field: "memberIds")
        let now = Timestamp.now()
        let journal = self.journal
        let (chat, line) = try await store.write { db -> (Chat, Message) in
            guard let id = try MessagingRepository.insertChat(kind: .group, name: name, description: description, tags: tags,
                                                              isPublic: isPublic, creator: creator, pairKey: nil, at: now, in: db) else {
                throw StoreError(code: .system, message: "inserting a group returned no id")
            }
            try MessagingRepository.addMember(creator, to: id, admin: true, at: now, in: db)
            for member in others { try MessagingRepository.addMember(member, to: id, admin: false, at: now, in: db) }
            guard let chat = try MessagingRepository.chat(id, in: db) else { throw MessagingError.noSuchChat }
            _ = try journal.append(RealtimeEvent(type: "chat.created", audience: .users(chat.memberIDs), data: chat.eventData), in: db)
            let line = try Messenger.writeLine(SystemLine(event: .chatCreated, actorID: creator, userIDs: others), in: id, at: now,
                                               journal: journal, db: db)
            return (chat, line)
        }
        return ChatView(chat, Chat.ReaderView(lastMessage: line))
    }

    /// The direct chat of `me` and `other`, created the first time (`created` true then). The
    /// pair's unique key makes concurrent first calls return the same chat.
    func directChat(_ me: Int64, with other: Int64) async throws -> (chat: ChatView, created: Bool) {
        if other == me { throw MessagingError.invalid(field: "userId", problem: "must be someone else") }
        try await requireActiveUsers([other], field: "userId")
        let key = "\(min(me, other)):\(max(me, other))"
        let now = Timestamp.now()
        let journal = self.journal
        let (chatID, created) = try await store.write { db -> (Int64, Bool) in
            if let existing = try MessagingRepository.directChatID(pairKey: key, in: db) { return (existing, false) }
            guard let id = try MessagingRepository.insertChat(kind: .direct, name: nil, description: "", tags: [], isPublic: false,
                                                              creator: me, pairKey: key, at: now, in: db) else {
                throw StoreError(code: .system, message: "inserting a direct chat returned no id")
            }
            try MessagingRepository.addMember(me, to: id, admin: false, at: now, in: db)
            try MessagingRepository.addMember(other, to: id, admin: false, at: now, in: db)
            guard let chat = try MessagingRepository.chat(id, in: db) else { throw MessagingError.noSuchChat }
            _ = try journal.append(RealtimeEvent(type: "chat.created", audience: .users(chat.memberIDs), data: chat.eventData), in: db)
            return (id, true)
        }
        return (try await chat(chatID, viewer: me), created)
    }

    // MARK: Administration

    /// Changes a group's settings; group admins only.
    func editGroup(_ id: Int64, by user: Int64, name: String?, description: String?, tags: [String]?, isPublic: Bool?) async throws -> ChatView {
        let now = Timestamp.now()
        let journal = self.journal
        let chat = try await store.write { db -> Chat in
            let old = try Messenger.group(id, admin: user, in: db)
            try MessagingRepository.updateChat(id, name: name, description: description, tags: tags, isPublic: isPublic, in: db)
            let chat = try Messenger.recordUpdate(id, journal: journal, in: db)
            if let name, name != old.name {
                try Messenger.writeLine(SystemLine(event: .chatRenamed, actorID: user, userIDs: [], name: name), in: id, at: now,
                                        journal: journal, db: db)
            }
            return chat
        }
        return try await self.chat(chat.id, viewer: user)
    }

    /// Deletes a group and everything in it; group admins only. Its members at deletion get
    /// `chat.deleted`.
    func deleteGroup(_ id: Int64, by user: Int64) async throws {
        let journal = self.journal
        try await store.write { db in
            let chat = try Messenger.group(id, admin: user, in: db)
            try MessagingRepository.deleteChat(id, in: db)
            _ = try journal.append(RealtimeEvent(type: "chat.deleted", audience: .users(chat.memberIDs),
                                                 data: ["chatId": .number(Double(id))]), in: db)
        }
    }

    /// Adds an active user to a group; group admins only.
    func addMember(_ newMember: Int64, to id: Int64, by user: Int64) async throws {
        try await requireActiveUsers([newMember], field: "userId")
        let now = Timestamp.now()
        let journal = self.journal
        try await store.write { db in
            let chat = try Messenger.group(id, admin: user, in: db)
            if chat.isMember(newMember) { throw MessagingError.alreadyMember }
            if chat.members.count >= ChatRules.maxMembers { throw MessagingError.chatFull }
            try MessagingRepository.addMember(newMember, to: id, admin: false, at: now, in: db)
            _ = try journal.append(RealtimeEvent(type: "member.added", audience: .chat(id), data: Messenger.memberData(id, newMember)), in: db)
            try Messenger.writeLine(SystemLine(event: .memberAdded, actorID: user, userIDs: [newMember]), in: id, at: now,
                                    journal: journal, db: db)
        }
    }

    /// Joins a public group; again is fine. Anything else (private, direct, none) is no such chat.
    func join(_ id: Int64, user: Int64) async throws {
        let now = Timestamp.now()
        let journal = self.journal
        _ = try await store.write { db -> Bool in
            guard let chat = try MessagingRepository.chat(id, in: db), chat.kind == .group else { throw MessagingError.noSuchChat }
            if chat.isMember(user) { return false }
            guard chat.isPublic else { throw MessagingError.noSuchChat }
            if chat.members.count >= ChatRules.maxMembers { throw MessagingError.chatFull }
            try MessagingRepository.addMember(user, to: id, admin: false, at: now, in: db)
            _ = try journal.append(RealtimeEvent(type: "member.added", audience: .chat(id), data: Messenger.memberData(id, user)), in: db)
            // Joining a public group is adding oneself: the actor is the one added.
            try Messenger.writeLine(SystemLine(event: .memberAdded, actorID: user, userIDs: [user]), in: id, at: now,
                                    journal: journal, db: db)
            return true
        }
    }

    /// Removes `member` from a group: group admins remove anyone, anyone removes themselves
    /// (that is leaving).
    func removeMember(_ member: Int64, from id: Int64, by user: Int64) async throws {
        if member == user { return try await leave(id, user: user) }
        let now = Timestamp.now()
        let journal = self.journal
        try await store.write { db in
            let chat = try Messenger.group(id, admin: user, in: db)
            guard chat.isMember(member) else { throw MessagingError.notAMember }
            _ = try MessagingRepository.removeMember(member, from: id, in: db)
            let remaining = chat.memberIDs.filter { $0 != member }
            _ = try journal.append(RealtimeEvent(type: "member.removed", audience: .users(remaining + [member]),
                                                 data: Messenger.memberData(id, member)), in: db)
            try Messenger.writeLine(SystemLine(event: .memberRemoved, actorID: user, userIDs: [member]), in: id, at: now,
                                    journal: journal, db: db)
        }
    }

    /// Leaves a group. When the last admin leaves, the longest-standing member becomes admin;
    /// when the last member leaves, the group is deleted. A direct chat cannot be left.
    func leave(_ id: Int64, user: Int64) async throws {
        let now = Timestamp.now()
        let journal = self.journal
        try await store.write { db in
            guard let chat = try MessagingRepository.chat(id, member: user, in: db) else { throw MessagingError.noSuchChat }
            guard chat.kind == .group else { throw MessagingError.directChatFixed }
            _ = try MessagingRepository.removeMember(user, from: id, in: db)
            let remaining = chat.memberIDs.filter { $0 != user }
            _ = try journal.append(RealtimeEvent(type: "member.removed", audience: .users(remaining + [user]),
                                                 data: Messenger.memberData(id, user)), in: db)
            if remaining.isEmpty {
                try MessagingRepository.deleteChat(id, in: db)
                return
            }
            try Messenger.writeLine(SystemLine(event: .memberLeft, actorID: user, userIDs: [user]), in: id, at: now,
                                    journal: journal, db: db)
            if chat.isAdmin(user), !chat.members.contains(where: { $0.admin && $0.userID != user }),
               let heir = try MessagingRepository.longestStandingMember(of: id, in: db) {
                try MessagingRepository.setAdmin(heir, of: id, true, in: db)
                _ = try Messenger.recordUpdate(id, journal: journal, in: db)
                // The group keeps an admin because the last one left: theirs is the act.
                try Messenger.writeLine(SystemLine(event: .adminGranted, actorID: user, userIDs: [heir]), in: id, at: now,
                                        journal: journal, db: db)
            }
        }
    }

    /// Grants or revokes a member's admin right; group admins only; never the last admin's.
    func setAdmin(_ member: Int64, of id: Int64, _ admin: Bool, by user: Int64) async throws {
        let now = Timestamp.now()
        let journal = self.journal
        _ = try await store.write { db -> Bool in
            let chat = try Messenger.group(id, admin: user, in: db)
            guard let target = chat.members.first(where: { $0.userID == member }) else { throw MessagingError.notAMember }
            if target.admin == admin { return false }
            if !admin, chat.members.filter(\.admin).count <= 1 { throw MessagingError.lastAdmin }
            try MessagingRepository.setAdmin(member, of: id, admin, in: db)
            _ = try Messenger.recordUpdate(id, journal: journal, in: db)
            try Messenger.writeLine(SystemLine(event: admin ? .adminGranted : .adminRevoked, actorID: user, userIDs: [member]),
                                    in: id, at: now, journal: journal, db: db)
            return true
        }
    }

    // MARK: Messages

    /// `{"items": [...]}` of a page of a chat's history, as JSON bytes.
    func messages(in id: Int64, viewer: Int64, after: Int64?, before: Int64?, limit: Int) async throws -> [UInt8] {
        let found = try await repository.messages(chatID: id, reader: viewer, after: after, before: before, limit: limit)
        guard let found else { throw MessagingError.noSuchChat }
        // Optional, and resolved here rather than at boot: translation boots after messaging
        // (it reads messages through `MessageLookup`) and may be left out.
        guard let translator = services?.resolve((any ChatTranslations).self) else { return Message.page(found) }
        let readable = found.compactMap { m in m.deleted ? nil : m.body.map { (id: m.id, body: $0) } }
        let translations = readable.isEmpty ? [:] : await translator.translations(reader: viewer, chatID: id, messages: readable)
        return Message.page(found, translations: translations)
    }

    /// Posts a message; durable when this returns. The same `clientID` from the same sender in
    /// the same chat returns the first message (`created` false) instead of storing a copy.
    func send(_ body: String, clientID: String?, to id: Int64, by sender: Int64) async throws -> (message: MessageView, created: Bool) {
        let mentionable = try await mentionable(in: id, body: body)
        let now = Timestamp.now()
        let journal = self.journal
        // Where the store can reserve the message's id (PostgreSQL), the send waits for no answer
        // inside the batch: its statements ride in the pipeline and its event is recorded only if
        // the message is stored. Not stored (not a member, or a retry): the exact way says which.
        let ahead = !store.reservesIDs ? nil : try await store.write { db -> MessagingRepository.SentAhead? in
            guard let sent = try MessagingRepository.insertMessageAhead(chatID: id, senderID: sender, body: body, clientID: clientID,
                                                                         mentions: mentionable, at: now, in: db) else { return nil }
            try journal.record(RealtimeEvent(type: "message.created", audience: .chat(id), data: sent.message.eventData,
                                             subject: RealtimeEvent.subject(message: sent.message.id)),
                               in: db, onlyIf: MessagingRepository.messageExists(sent.message.id))
            return sent
        }
        if let ahead, ahead.stored.value == 1 { return (MessageView(ahead.message), true) }
        let (message, created) = try await store.write { db -> (Message, Bool) in
            guard let message = try MessagingRepository.insertMessage(chatID: id, senderID: sender, body: body, clientID: clientID,
                                                                      mentions: mentionable, at: now, in: db) else {
                guard try MessagingRepository.isMember(sender, of: id, in: db) else { throw MessagingError.noSuchChat }
                guard let clientID, let first = try MessagingRepository.message(chatID: id, senderID: sender, clientID: clientID,
                                                                                in: db) else {
                    throw StoreError(code: .system, message: "a message was neither stored nor a retry")
                }
                return (first, false)
            }
            try journal.record(RealtimeEvent(type: "message.created", audience: .chat(id), data: message.eventData,
                                             subject: RealtimeEvent.subject(message: message.id)), in: db)
            return (message, true)
        }
        return (MessageView(message), created)
    }

    /// Edits a message's body; its author only (no such message for anyone who cannot see it).
    func edit(_ messageID: Int64, body: String, by user: Int64) async throws -> MessageView {
        let chatID = try await repository.chatID(ofMessage: messageID)
        let mentionable = try await mentionable(in: chatID ?? 0, body: body)
        let now = Timestamp.now()
        let journal = self.journal
        let edited = try await store.write { db -> Message in
            let old = try Messenger.visibleMessage(messageID, to: user, in: db)
            guard !old.isSystem else { throw MessagingError.systemMessageFixed }
            guard old.senderID == user else { throw MessagingError.onlyAuthorEdits }
            guard !old.deleted else { throw MessagingError.messageDeleted }
            try MessagingRepository.editMessage(old, body: body, mentions: mentionable, at: now, in: db)
            guard let edited = try MessagingRepository.message(messageID, in: db) else { throw MessagingError.noSuchMessage }
            try Messenger.record("message.updated", of: edited, journal: journal, in: db)
            return edited
        }
        return MessageView(edited)
    }

    /// Deletes a message softly; its author or a group admin. Again is fine.
    func delete(_ messageID: Int64, by user: Int64) async throws {
        let journal = self.journal
        _ = try await store.write { db -> Bool in
            let old = try Messenger.visibleMessage(messageID, to: user, in: db)
            guard !old.isSystem else { throw MessagingError.systemMessageFixed }
            if old.deleted { return false }
            if old.senderID != user {
                guard let chat = try MessagingRepository.chat(old.chatID, in: db), chat.kind == .group, chat.isAdmin(user) else {
                    throw MessagingError.onlyAuthorOrAdminDeletes
                }
            }
            try MessagingRepository.deleteMessage(old, in: db)
            guard let gone = try MessagingRepository.message(messageID, in: db) else { throw MessagingError.noSuchMessage }
            try Messenger.record("message.deleted", of: gone, journal: journal, in: db)
            return true
        }
    }

    /// Moves the reader's marker up to `messageID` (never back): drives unread and mention counts.
    func markRead(_ id: Int64, upTo messageID: Int64, by user: Int64) async throws {
        try await store.write { db in
            guard try MessagingRepository.isMember(user, of: id, in: db) else { throw MessagingError.noSuchChat }
            try MessagingRepository.markRead(chatID: id, userID: user, upTo: messageID, in: db)
        }
    }

    /// Sets `user`'s notification level in chat `id` (a member's own choice).
    func setNotifications(_ id: Int64, _ level: NotificationLevel, by user: Int64) async throws {
        try await store.write { db in
            guard try MessagingRepository.isMember(user, of: id, in: db) else { throw MessagingError.noSuchChat }
            try MessagingRepository.setNotifications(chatID: id, userID: user, level: level.rawValue, in: db)
        }
    }

    // MARK: Search

    /// Messages of `viewer`'s chats (of `chatID` only, when given) holding `text`, newest first.
    func search(_ text: String, viewer: Int64, chatID: Int64?, before: Int64?, limit: Int) async throws -> [SearchHitView] {
        if let chatID, try await !isMember(viewer, of: chatID) { throw MessagingError.noSuchChat }
        let hits = try await repository.search(text: text, userID: viewer, chatID: chatID, before: before, limit: limit)
        return hits.map { SearchHitView(message: MessageView($0.message), chatID: $0.message.chatID, snippet: $0.snippet) }
    }

    // MARK: Contacts

    func contacts(of owner: Int64) async throws -> [ContactView] {
        let list = try await repository.contacts(of: owner)
        var out: [ContactView] = []
        for (id, at) in list {
            guard let user = try await directory.user(id: id) else { continue }
            out.append(ContactView(user, addedAt: at))
        }
        return out
    }

    /// Adds a user to `owner`'s contacts; again is fine.
    func addContact(_ contact: Int64, to owner: Int64) async throws {
        guard contact != owner else { throw MessagingError.invalid(field: "userId", problem: "must be someone else") }
        guard try await directory.user(id: contact) != nil else { throw MessagingError.noSuchUser }
        let now = Timestamp.now()
        try await store.write { db in
            if try MessagingRepository.contactCount(of: owner, in: db) >= ChatRules.maxContacts { throw MessagingError.tooManyContacts }
            try MessagingRepository.addContact(contact, to: owner, at: now, in: db)
        }
    }

    func removeContact(_ contact: Int64, from owner: Int64) async throws {
        try await store.write { db in try MessagingRepository.removeContact(contact, from: owner, in: db) }
    }

    // MARK: Helpers

    /// Writes a system line in chat `chatID` and records its `message.created` for the chat's
    /// members, in the caller's transaction (so the change, its events and its line stand or fall together).
    @discardableResult
    static func writeLine(_ line: SystemLine, in chatID: Int64, at time: Timestamp, journal: any EventJournal, db: Database) throws -> Message {
        let message = try MessagingRepository.insertSystemMessage(chatID: chatID, line: line, at: time, in: db)
        _ = try journal.append(RealtimeEvent(type: "message.created", audience: .chat(chatID), data: message.eventData,
                                             subject: RealtimeEvent.subject(message: message.id)), in: db)
        return message
    }

    /// A group `user` administers; refused when they are not a member, for a direct chat, and
    /// when they are not one of its admins.
    static func group(_ id: Int64, admin user: Int64, in db: Database) throws -> Chat {
        guard let chat = try MessagingRepository.chat(id, member: user, in: db) else { throw MessagingError.noSuchChat }
        guard chat.kind == .group else { throw MessagingError.directChatFixed }
        guard chat.isAdmin(user) else { throw MessagingError.needsGroupAdmin }
        return chat
    }

    /// A message in one of `user`'s chats; no such message otherwise.
    static func visibleMessage(_ id: Int64, to user: Int64, in db: Database) throws -> Message {
        guard let message = try MessagingRepository.message(id, in: db),
              try MessagingRepository.isMember(user, of: message.chatID, in: db) else { throw MessagingError.noSuchMessage }
        return message
    }

    /// Records an edit or deletion of `message`: its earlier events (creation, edits, translations)
    /// now carry it as it is, so replay never brings back a deleted or edited-out text; then the
    /// event of this change.
    static func record(_ type: String, of message: Message, journal: any EventJournal, in db: Database) throws {
        let subject = RealtimeEvent.subject(message: message.id)
        try journal.rewrite(subject: subject, to: message.eventData, in: db)
        _ = try journal.append(RealtimeEvent(type: type, audience: .chat(message.chatID), data: message.eventData, subject: subject), in: db)
    }

    /// Records `chat.updated` with the chat as it is now in `db`.
    static func recordUpdate(_ id: Int64, journal: any EventJournal, in db: Database) throws -> Chat {
        guard let chat = try MessagingRepository.chat(id, in: db) else { throw MessagingError.noSuchChat }
        _ = try journal.append(RealtimeEvent(type: "chat.updated", audience: .chat(id), data: chat.eventData), in: db)
        return chat
    }

    static func memberData(_ chatID: Int64, _ userID: Int64) -> JSONValue {
        ["chatId": .number(Double(chatID)), "userId": .number(Double(userID))]
    }

    /// The members of chat `id` named as `@username` in `body` (only looked up when the body has
    /// an `@`); the write checks again that they are members.
    func mentionable(in id: Int64, body: String) async throws -> [Int64] {
        let names = ChatRules.mentionedUsernames(in: body)
        guard !names.isEmpty else { return [] }
        let members = try await repository.memberIDs(of: id)
        var out: [Int64] = []
        for member in members {
            if let user = try await directory.user(id: member), names.contains(user.username.lowercased()) { out.append(member) }
        }
        return out
    }

    /// Refuses `field` unless every id is an active user.
    func requireActiveUsers(_ ids: [Int64], field: String) async throws {
        for id in ids {
            guard let user = try await directory.user(id: id), user.active else {
                throw MessagingError.invalid(field: field, problem: "no active user has id \(id)")
            }
        }
    }
}

/// `ChatAccess` for the realtime hub: membership as it is in the store now.
struct StoredChatAccess: ChatAccess, MessageLookup, ChatPushLookup {
    let store: Store

    private var repository: MessagingRepository { MessagingRepository(store: store) }

    /// The chat's members at their notification levels, for the push module.
    func pushAudience(chat chatID: Int64) async throws -> ChatPushAudience? {
        try await repository.pushAudience(chatID)
    }

    func chatIDs(of userID: Int64) async throws -> Set<Int64> {
        try await repository.chatIDs(of: userID)
    }

    // MessageLookup, for the translation module.

    func message(_ id: Int64, readableBy reader: Int64) async throws -> ReadableMessage? {
        try await repository.message(id, readableBy: reader)?.readable
    }

    func message(_ id: Int64) async throws -> ReadableMessage? {
        try await repository.message(id)?.readable
    }

    func message(_ id: Int64, in db: Database) throws -> ReadableMessage? {
        try MessagingRepository.message(id, in: db)?.readable
    }

    func isMember(_ user: Int64, of chatID: Int64) async throws -> Bool {
        try await repository.isMember(user, of: chatID)
    }

    func members(of chatID: Int64, among userIDs: [Int64]) async throws -> Set<Int64> {
        guard !userIDs.isEmpty else { return [] }
        let all = try await repository.memberIDs(of: chatID)
        return Set(all).intersection(userIDs)
    }
}
