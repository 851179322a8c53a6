#if canImport(Glibc)
import Glibc
#endif

/// Files admin verbs read (a notice body, a list of public holidays).
public enum CommandFile {
    /// Up to `limit` bytes of the file at `path`; nil when it cannot be read (errno says why).
    /// `limit + 1` lets a caller tell "exactly the limit" from "too large".
    public static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { errno = EISDIR; return nil }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while out.count < limit {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, limit - out.count)) }
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            out += chunk[0..<n]
        }
        return out
    }
}
