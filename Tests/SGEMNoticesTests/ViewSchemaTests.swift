import SGEMCore
@testable import SGEMNotices
import SGEMSupport
import SGEMTestSupport
import Testing

/// Each answer of the notices API, encoded from a sample value, against the OpenAPI schema
/// documented beside its route: the same keys (every required one), types and nullability, and
/// the keys in the contract's order.
@Suite("Notices: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static let at = Timestamp(rfc3339: "2030-05-02T09:30:00Z")!

    /// A company notice with every optional value set (`edited`) or none.
    static func notice(_ id: Int64, edited: Bool, kind: Notice.Kind = .company) -> Notice {
        Notice(id: id, draft: Notice.Draft(kind: kind, recipientID: kind == .company ? nil : 7, title: "Early closing", body: "At 15:00.",
                                           pinned: edited, authorID: edited ? 1 : nil, createdAt: at, audienceBase: 4),
               editedAt: edited ? at : nil, read: edited, readCount: 3)
    }

    static func json(_ value: some Encodable) -> JSONValue {
        (try? OrderedJSONEncoder.jsonValue(value)) ?? .null
    }

    static let page = NoticeBoard.Page(items: [], unreadCount: 2, unreadByKind: [.company: 1, .holiday: 1], nextBefore: 5)

    /// The counts only an admin sees: documented, and left out for everyone else.
    static let adminOnly = ["(root): audienceCount is documented but absent", "(root): readCount is documented but absent"]

    /// A sample, its schema, and the mismatches it must show (the keys it leaves out by design).
    static let cases: [(String, JSONValue, JSONValue, [String])] = [
        ("notice, as a reader", json(NoticeView(notice(1, edited: false), audienceCount: nil)), NoticesAPI.noticeSchema, adminOnly),
        ("notice, as an admin", json(NoticeView(notice(1, edited: true), audienceCount: 9)), NoticesAPI.noticeSchema, []),
        ("holiday notice", json(NoticeView(notice(2, edited: false, kind: .holiday), audienceCount: nil)), NoticesAPI.noticeSchema,
         adminOnly),
        ("page", json(NoticePageView(page, items: [NoticeView(notice(1, edited: true), audienceCount: 9)])), NoticesAPI.pageSchema, []),
        ("last page", json(NoticePageView(NoticeBoard.Page(items: [], unreadCount: 0, unreadByKind: [:], nextBefore: nil), items: [])),
         NoticesAPI.pageSchema, []),
    ]

    @Test("the encoded value has the schema's properties, types and nulls", arguments: cases.indices)
    func matches(_ index: Int) {
        let (name, value, schema, expected) = ViewSchemaTests.cases[index]
        #expect(value != .null, "\(name) did not encode")
        #expect(viewMismatches(value, against: schema) == expected, "\(name)")
    }

    @Test("keys come in the schema's order; the command line's list has readCount in place of read")
    func keyOrder() throws {
        let documented = NoticesAPI.noticeSchema["properties"]?.objectValue?.map(\.0) ?? []
        let admin = ViewSchemaTests.json(NoticeView(ViewSchemaTests.notice(1, edited: true), audienceCount: 9))
        #expect(admin.objectValue?.map(\.0) == documented)
        let reader = ViewSchemaTests.json(NoticeView(ViewSchemaTests.notice(1, edited: false), audienceCount: nil))
        #expect(reader.objectValue?.map(\.0) == Array(documented.prefix(9)))
        #expect(reader["authorId"] == .null && reader["editedAt"] == .null && reader["read"] == false)
        let listed = ViewSchemaTests.json(NoticeView(listing: ViewSchemaTests.notice(1, edited: true)))
        #expect(listed.objectValue?.map(\.0) == Array(documented.prefix(8)) + ["readCount"])
        #expect(listed["readCount"] == 3 && listed["id"] == 1)
        let page = ViewSchemaTests.json(NoticePageView(ViewSchemaTests.page, items: []))
        #expect(page.objectValue?.map(\.0) == ["items", "unreadCount", "unreadByKind", "nextBefore"])
        #expect(page["unreadByKind"] == ["company": 1, "holiday": 1])
    }
}
