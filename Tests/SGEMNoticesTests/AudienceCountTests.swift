import SGEMCore
@testable import SGEMNotices
import SGEMSupport
import Synchronization
import Testing

/// A directory whose users were created at the given times; it counts the questions it answers.
final class FakeDirectory: UserDirectory {
    let created: [Int64]
    let asked = Atomic<Int>(0)

    init(created: [Int64]) { self.created = created }

    func user(id: Int64) async throws -> DirectoryUser? { nil }
    func activeAdminIDs() async throws -> [Int64] { [] }
    func activeUserCount() async throws -> Int { created.count }
    func users(ids: [Int64]) async throws -> [Int64: DirectoryUser] { [:] }
    func user(login: String) async throws -> DirectoryUser? { nil }
    func usersCreated(after time: Timestamp) async throws -> Int {
        asked.add(1, ordering: .relaxed)
        return created.filter { $0 > time.milliseconds }.count
    }
}

@Suite("Audience counts")
struct AudienceCountTests {
    @Test("users joined since each notice: the same as asking for each, in far fewer questions",
          arguments: [[Int64](), [5], [0, 1, 2], [150, 151, 152, 700], Array(stride(from: 0, to: 1000, by: 97))])
    func joinedSince(created: [Int64]) async throws {
        let directory = FakeDirectory(created: created)
        let times = stride(from: Int64(0), to: 1000, by: 4).map { Timestamp(milliseconds: $0) }
        let counts = try await NoticeBoard.joinedSince(times, directory)
        for t in times {
            #expect(counts[t] == created.filter { $0 > t.milliseconds }.count, "at \(t.milliseconds)")
        }
        let asked = directory.asked.load(ordering: .relaxed)
        #expect(asked <= 2 + created.count * 2 * 8, "at most a binary search per joining user: \(asked) for \(times.count) notices")
        if created.count <= 4 { #expect(asked < times.count / 4) }
    }

    @Test("no notices, no questions")
    func empty() async throws {
        let directory = FakeDirectory(created: [1, 2])
        #expect(try await NoticeBoard.joinedSince([], directory).isEmpty)
        #expect(directory.asked.load(ordering: .relaxed) == 0)
    }
}
