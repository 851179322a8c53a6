import SGEMApp
import SGEMShell

/// `sgem-server WORDS…` run in-process on `dir` (cheap password hashing, errors-only logging);
/// returns the exit code and the captured I/O. `input` is what the command reads from stdin.
public func sgem(_ dir: TempDir, _ words: [String], input: [String] = []) async -> (code: Int32, io: MemoryIO) {
    let io = MemoryIO(input: input)
    let settings = ["--data-dir", dir.path, "--password-hash-log-n", "10", "--log-level", "error"]
    return (await Application.main(words + settings, environment: [:], io: io, configureLogging: false), io)
}
