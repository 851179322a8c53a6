import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMTranslation
import Testing

@Suite("Translation: the cache's bound")
struct CacheTests {
    @Test("past its bound the cache drops the least recently used entries down to 90 %; under it nothing goes",
          arguments: TestBackend.available)
    func eviction(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var migrations = MigrationList()
        TranslationRepository.registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        let text = String(repeating: "x", count: 904) // 1,000 bytes a row with its overhead
        @Sendable func k(_ n: Int) -> CacheKey { Crypto.sha256(Array("k\(n)".utf8)) }
        @Sendable func t(_ n: Int) -> CacheKey { Crypto.sha256(Array("t\(n)".utf8)) }
        try await store.write { db in
            for n in 0..<100 {
                try TranslationRepository.store(key: k(n), target: "es", entry: .init(source: "en", translated: text), textKey: t(n),
                                                at: Timestamp(milliseconds: Int64(n)), in: db)
            }
            // Used lately: the oldest entry is now the newest in use.
            try TranslationRepository.touch(k(0), at: Timestamp(milliseconds: 1_000), in: db)
        }
        #expect(try await TranslationRuntime.evict(store, bound: 200_000) == 0)
        let removed = try await TranslationRuntime.evict(store, bound: 50_000)
        let size = try await store.read { db in try TranslationRepository.size(in: db) }
        #expect(size.bytes <= 45_000 && size.bytes > 40_000 && removed == 100 - size.entries)
        let kept = try await store.read { db in try TranslationRepository.cached((0..<100).map(k), in: db) }
        #expect(kept[k(0)] != nil && kept[k(1)] == nil && kept[k(99)] != nil)
        // The detected languages of texts older than every entry kept went with them.
        let sources = try await store.read { db in try TranslationRepository.knownSources((0..<100).map(t), in: db) }
        #expect(sources[t(1)] == nil && sources[t(99)] == "en" && sources.count < 100)
        await store.close()
    }
}
