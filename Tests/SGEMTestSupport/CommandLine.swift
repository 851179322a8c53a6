import SGEMApp
import SGEMShell

/// `sgem-server WORDS…` run in-process on `dir` (cheap password hashing, errors-only logging);
/// returns the exit code and the captured I/O. `input` is what the command reads from stdin;
/// `hashLogN` the scrypt cost of the hashes it makes.
public func sgem(_ dir: TempDir, _ words: [String], input: [String] = [], hashLogN: Int = 10) async -> (code: Int32, io: MemoryIO) {
    let io = MemoryIO(input: input)
    let settings = ["--data-dir", dir.path, "--password-hash-log-n", String(hashLogN), "--log-level", "error"] + dir.storageFlags
    return (await Application.main(words + settings, environment: [:], io: io, configureLogging: false), io)
}

/// `sgem-server admin WORDS…` in-process on `dir`.
@discardableResult
public func admin(_ dir: TempDir, _ words: [String], input: [String] = [], hashLogN: Int = 10) async -> (code: Int32, io: MemoryIO) {
    await sgem(dir, ["admin"] + words, input: input, hashLogN: hashLogN)
}

/// `sgem-server migrate`: creates the database that admin verbs refuse to create.
public func createDatabase(_ dir: TempDir) async throws {
    let (code, io) = await sgem(dir, ["migrate"])
    guard code == 0 else { throw TestFailure("migrate failed: \(io.errors)") }
}
