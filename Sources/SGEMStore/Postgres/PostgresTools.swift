#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport

/// PostgreSQL's own client programs (`pg_dump`, `pg_restore`), run as child processes for
/// backups and restores. The password never goes on their command line (where `ps` shows it):
/// it travels in `PGPASSWORD`, and the URL they get has it removed.
public enum PostgresTools {
    /// The program `name`: from `$PG_BINDIR`, then `$PATH`, then the newest
    /// `/usr/lib/postgresql/N/bin` (Debian's layout); nil when none is installed.
    public static func find(_ name: String) -> String? {
        var candidates: [String] = []
        if let bindir = getenv("PG_BINDIR").map({ String(cString: $0) }), !bindir.isEmpty { candidates.append(bindir + "/" + name) }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        candidates += path.split(separator: ":").map { $0 + "/" + name }
        candidates += debianVersions().map { "/usr/lib/postgresql/\($0)/bin/\(name)" }
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// Debian's installed PostgreSQL major versions, newest first.
    static func debianVersions() -> [Int] {
        guard let dir = opendir("/usr/lib/postgresql") else { return [] }
        defer { closedir(dir) }
        var versions: [Int] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if let version = Int(name) { versions.append(version) }
        }
        return versions.sorted(by: >)
    }

    /// Runs `program` with `arguments` against `url`'s password; returns its exit status and what
    /// it wrote to stderr (password masked). Blocks: call it off Swift's cooperative pool.
    public static func run(_ program: String, _ arguments: [String], url: PostgresURL) throws -> (status: Int32, errors: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw StoreError(code: .system, message: "pipe: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])

        var environment: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if !text.hasPrefix("PGPASSWORD=") { environment.append(text) }
            index += 1
        }
        if let password = url.password { environment.append("PGPASSWORD=" + password) }

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            throw StoreError(code: .system, message: "cannot run \(program): \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n > 0 { if output.count < 65_536 { output += buffer[0..<n] } } else if n == 0 || errno != EINTR { break }
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exit, url.redact(String(decoding: output, as: UTF8.self)))
    }
}

extension PostgresURL {
    /// The URL without its password (userinfo and `password=` parameter), for a child program's
    /// command line.
    public var withoutPassword: String {
        var text = raw
        if let query = text.split(separator: "?", maxSplits: 1).dropFirst().first {
            let kept = query.split(separator: "&").filter { !$0.hasPrefix("password=") }
            text = String(text.split(separator: "?", maxSplits: 1)[0]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
        }
        let schemeEnd = text.split(separator: "://", maxSplits: 1).first.map { $0.count + 3 } ?? 0
        let rest = text.dropFirst(schemeEnd)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            text = String(text[..<colon]) + String(text[at...])
        }
        return text
    }

    /// The password, percent-decoded, from the userinfo or a `password=` parameter; nil when none.
    var password: String? {
        let afterScheme = raw.split(separator: "://", maxSplits: 1).last.map(String.init) ?? ""
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            return Self.percentDecoded(String(authority[authority.index(after: colon)..<at]))
        }
        if let query = raw.split(separator: "?", maxSplits: 1).dropFirst().first,
           let pair = query.split(separator: "&").first(where: { $0.hasPrefix("password=") }) {
            return Self.percentDecoded(String(pair.dropFirst("password=".count)))
        }
        return nil
    }
}
