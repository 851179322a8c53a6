import SGEMCore
@testable import SGEMMessaging
import SGEMSupport
import Testing

@Suite("Messaging module")
struct MessagingModuleTests {
    @Test("registers the chat screen in the console")
    func consolePages() {
        var pages = ConsoleRegistry()
        MessagingModule().registerConsolePages(&pages)
        #expect(pages.pages.map(\.id) == ["chat"])
    }
}

@Suite("Messaging JSON")
struct MessagingJSONTests {
    /// Messages covering every branch of the two encoders: mentions, edits, deletion, escapes.
    static let samples: [Message] = [
        Message(id: 1, chatID: 2, senderID: 3, body: "plain", mentions: [], clientID: nil,
                createdAt: Timestamp(milliseconds: 1_764_633_600_123), editedAt: nil, deleted: false),
        Message(id: 9_007_199_254, chatID: 2, senderID: 4, body: "\"quoted\" \\ <script>\n\u{2028} ünï 👋 @ana @bob",
                mentions: [5, 6], clientID: "c", createdAt: Timestamp(milliseconds: 1_764_633_600_999),
                editedAt: Timestamp(milliseconds: 1_764_633_700_000), deleted: false),
        Message(id: 10, chatID: 2, senderID: 4, body: nil, mentions: [5], clientID: nil,
                createdAt: Timestamp(milliseconds: 1_764_633_601_000), editedAt: nil, deleted: true),
        Message(id: 11, chatID: 2, senderID: 4, body: nil, mentions: [], clientID: nil,
                createdAt: Timestamp(milliseconds: 1_764_633_602_000), editedAt: nil, deleted: false,
                kind: .system, system: SystemLine(event: .memberAdded, actorID: 4, userIDs: [5, 6])),
        Message(id: 12, chatID: 2, senderID: 4, body: nil, mentions: [], clientID: nil,
                createdAt: Timestamp(milliseconds: 1_764_633_603_000), editedAt: nil, deleted: false,
                kind: .system, system: SystemLine(event: .chatRenamed, actorID: 4, userIDs: [], name: "\"Ops\" \\ ünï 👋\n")),
    ]

    @Test("a system line's stored JSON reads back as the same line; a malformed one is no line")
    func systemLineRoundTrip() {
        for line in MessagingJSONTests.samples.compactMap(\.system) {
            #expect(SystemLine.parse(line.json.serialized()) == line)
        }
        #expect(SystemLine.parse(#"{"event":"chat.exploded","actorId":1,"userIds":[]}"#) == nil)
        #expect(SystemLine.parse("not json") == nil)
    }

    @Test("a history page written as bytes is the same JSON as the messages' values", arguments: [0, 1, 3, 5])
    func pageMatchesValues(count: Int) throws {
        let messages = Array(MessagingJSONTests.samples.prefix(count))
        let bytes = Message.page(messages)
        let expected: JSONValue = ["items": .array(messages.map(\.json))]
        #expect(String(decoding: bytes, as: UTF8.self) == expected.serialized(), "same keys, order, values and escapes")
        #expect(same(try JSONValue.parse(bytes), expected), "and valid JSON")
    }
}
