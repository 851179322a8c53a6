#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMSystem

/// The secret key file: made once, private, the same key for every process.
@Suite struct SecretKeyFileTests {
    @Test func theKeyFileIsMadeOnceWithModeSixHundredWhateverTheUmask() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.path + "/secret.key"
        let old = umask(0)   // the loosest umask: the file must still come out 0600
        defer { umask(old) }
        let first = try SecretKeyFile.loadOrCreate(path)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600 && info.st_size == 32)
        let second = try SecretKeyFile.loadOrCreate(path)
        #expect(first.created && !second.created)
        #expect(try second.box.open(try first.box.seal("k", as: "n"), as: "n") == "k")
        #expect(try directoryEntries(dir.path) == ["secret.key"])
    }

    @Test func processesStartingTogetherEndUpWithOneKey() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let path = dir.path + "/secret.key"
        let made = try await withThrowingTaskGroup(of: (SecretBox, Bool).self) { group in
            for _ in 0..<8 { group.addTask { try SecretKeyFile.loadOrCreate(path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(made.filter(\.1).count == 1, "exactly one of them made the file")
        let sealed = try made[0].0.seal("k", as: "n")
        for (box, _) in made { #expect(try box.open(sealed, as: "n") == "k") }
    }

    @Test func aKeyFileOfTheWrongSizeIsRefusedAndBase64IsRead() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let short = dir.path + "/short.key"
        #expect(writeFile(short, Array(repeating: 1, count: 16)))
        #expect(throws: SecretKeyFileError("secret key file \(short) must hold 32 bytes (raw, or base64 on one line)")) {
            try SecretKeyFile.loadOrCreate(short)
        }
        let text = dir.path + "/text.key"
        #expect(writeFile(text, Array((Crypto.base64([UInt8](repeating: 9, count: 32)) + "\n").utf8)))
        let raw = try SecretBox(key: [UInt8](repeating: 9, count: 32))
        #expect(try SecretKeyFile.load(text)?.open(try raw.seal("k", as: "n"), as: "n") == "k")
        #expect(try SecretKeyFile.load(dir.path + "/none.key") == nil)
    }

    @Test func withoutAKeyFileNothingIsMadeAndSealedValuesDoNotOpen() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let reading = Secrets(keyFile: dir.path + "/secret.key", creating: false)
        let sealed = try Secrets.ephemeral().seal("k-123", as: "n")
        #expect(try reading.open(sealed, as: "n") == nil)
        #expect(try reading.open("clear from an older release", as: "n") == "clear from an older release")
        #expect(throws: SecretKeyFileError.self) { try reading.seal("k", as: "n") }
        #expect(try directoryEntries(dir.path).isEmpty)
    }
}

/// Secret runtime settings at rest: sealed in the table, read back by their module, reported
/// when they no longer open.
@Suite struct SealedSettingsTests {
    static let key = "translation.api_key"

    @Test func aSecretIsStoredSealedAndReadBackInClear() async throws {
        let f = try await SystemFixture()
        try await f.settings.set(Self.key, to: "k-123:fx")
        let stored = try #require(try await storedValue(f.store, Self.key))
        #expect(stored.hasPrefix("sealed:v1:") && !stored.contains("k-123"))
        #expect(try await f.settings.value(Self.key) == "k-123:fx")
        try await f.settings.set("translation.provider", to: "deepl")
        #expect(try await storedValue(f.store, "translation.provider") == "deepl", "what is not secret stays readable")
        await f.close()
    }

    @Test func aSecretSealedUnderAnotherKeyReadsAsUnsetAndMustBeEnteredAgain() async throws {
        let f = try await SystemFixture()
        try await f.settings.set(Self.key, to: "k-123:fx")
        let replaced = StoredRuntimeSettings(openStore: { f.store }, declared: SystemFixture.declared,
                                             secrets: Secrets(keyFile: f.dir.path + "/another.key"),
                                             journal: StoredEventJournal(store: { f.store }))
        #expect(try await replaced.value(Self.key) == nil)
        #expect(try await replaced.views().last == RuntimeSettingView(key: Self.key, secret: true, value: nil, isSet: false, needsReentry: true))
        #expect(try await replaced.secretsToReenter() == [Self.key])
        try await replaced.set(Self.key, to: "k-456:fx")
        #expect(try await replaced.value(Self.key) == "k-456:fx")
        #expect(try await replaced.secretsToReenter().isEmpty, "entered again, it opens")
        await f.close()
    }

    @Test func aTamperedSecretIsRefused() async throws {
        let f = try await SystemFixture()
        try await f.settings.set(Self.key, to: "k-123:fx")
        let stored = try #require(try await storedValue(f.store, Self.key))
        var bytes = try #require(Crypto.base64Decode(stored.dropFirst("sealed:v1:".count)))
        bytes[14] ^= 0x20
        let tampered = "sealed:v1:" + Crypto.base64(bytes)
        try await f.store.write { db in
            try db.execute("UPDATE system_runtime_settings SET value = ? WHERE key = ?", tampered, Self.key)
        }
        #expect(try await f.settings.value(Self.key) == nil)
        #expect(try await f.settings.views().last?.needsReentry == true)
        await f.close()
    }

    /// What an older release stored in clear is sealed at start, and its bytes are gone from the
    /// file (not left in the page's free space).
    @Test func clearSecretsAreSealedAtStartAndLeaveNoTrace() async throws {
        let clear = "CLEAR-KEY-4f1e9a0b7c"
        let f = try await SystemFixture { store in
            try await store.write { db in
                try db.execute("INSERT INTO system_runtime_settings (key, value, updated_at) VALUES (?, ?, 0), (?, ?, 0)",
                               SealedSettingsTests.key, clear, "translation.provider", "deepl")
            }
        }
        let stored = try #require(try await storedValue(f.store, Self.key))
        #expect(stored.hasPrefix("sealed:v1:"))
        #expect(try await f.settings.value(Self.key) == clear)
        #expect(try await f.settings.value("translation.provider") == "deepl")
        let path = f.store.path
        await f.store.close()
        #expect(occurrences(of: clear, inFile: path) == 0)
        #expect(occurrences(of: "deepl", inFile: path) == 1, "the search itself finds what is there")
        f.dir.cleanup()
    }
}

func storedValue(_ store: Store, _ key: String) async throws -> String? {
    try await store.read { db in try db.queryOne("SELECT value FROM system_runtime_settings WHERE key = ?", key)?.string("value") }
}

func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}

func directoryEntries(_ path: String) throws -> [String] {
    guard let dir = opendir(path) else { throw TestFailure("cannot list \(path)") }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}
