#if canImport(Glibc)
import Glibc
#endif

/// The process environment as a dictionary (without Foundation's ProcessInfo).
public func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var pointer = environ
    while let entry = pointer.pointee {
        let pair = String(cString: entry)
        if let eq = pair.firstIndex(of: "=") {
            result[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        pointer += 1
    }
    return result
}

/// Creates `path` and its missing parents with mode 0700 (the data directory holds secrets).
func makeDirectories(_ path: String) -> Bool {
    var current = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        current += "/" + part
        if mkdir(current, 0o700) != 0 && errno != EEXIST { return false }
    }
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

/// An exclusive advisory lock on a file; the server holds it while it runs so that `restore`
/// can refuse to replace a database in use. The kernel drops it if the process dies.
final class DataDirectoryLock: Sendable {
    let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock without waiting; nil when another process holds it.
    static func acquire(_ path: String) throws -> DataDirectoryLock? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw AppError("cannot open lock file \(path): \(String(cString: strerror(errno)))") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            close(fd)
            if errno == EWOULDBLOCK { return nil }
            throw AppError("cannot lock \(path): \(String(cString: strerror(errno)))")
        }
        return DataDirectoryLock(fd: fd)
    }

    deinit { close(fd) }
}

/// A start-up or command failure with one clear line for the operator.
struct AppError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
