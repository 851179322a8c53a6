#if canImport(Glibc)
import Glibc
#endif

/// The file that holds the `SecretBox` key: 32 raw bytes (or their base64 on one line), mode
/// 0600, kept outside the database so that neither it nor a backup can open its secrets.
public enum SecretKeyFile {
    /// The box over the key at `path`, nil when there is no file.
    public static func load(_ path: String) throws(SecretKeyFileError) -> SecretBox? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .init("cannot read secret key file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 128)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .init("cannot read secret key file \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        return try box(Array(bytes.prefix(count)), path: path)
    }

    /// The box over the key at `path`, made first when there is none: random bytes written to a
    /// private temporary file, then linked into place, which fails if another process got there
    /// first — two processes starting together end up with the same key, and no reader ever
    /// sees a half-written file. `created` says whether this call made it.
    public static func loadOrCreate(_ path: String) throws(SecretKeyFileError) -> (box: SecretBox, created: Bool) {
        if let box = try load(path) { return (box, false) }
        let key = Crypto.randomBytes(SecretBox.keyByteCount)
        let temporary = "\(path).\(getpid()).\(Crypto.hex(Crypto.randomBytes(4))).tmp"
        try writePrivate(key, to: temporary, naming: path)
        defer { unlink(temporary) }
        if link(temporary, path) != 0 {
            guard errno == EEXIST, let box = try load(path) else {
                throw .init("cannot create secret key file \(path): \(String(cString: strerror(errno)))")
            }
            return (box, false)
        }
        try syncDirectory(of: path)
        return (try box(key, path: path), true)
    }

    /// The key in `bytes`: 32 raw bytes, or their base64 on one line.
    private static func box(_ bytes: [UInt8], path: String) throws(SecretKeyFileError) -> SecretBox {
        var key = bytes
        if bytes.count != SecretBox.keyByteCount {
            let text = bytes.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            key = Crypto.base64Decode(String(decoding: text, as: UTF8.self)) ?? []
        }
        guard let box = try? SecretBox(key: key) else {
            throw .init("secret key file \(path) must hold \(SecretBox.keyByteCount) bytes (raw, or base64 on one line)")
        }
        return box
    }

    /// Writes `bytes` to a new file at `path`, mode 0600 whatever the umask, and syncs it;
    /// errors name the key file `name` it stands in for.
    private static func writePrivate(_ bytes: [UInt8], to path: String, naming name: String) throws(SecretKeyFileError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .init("cannot create secret key file \(name): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                unlink(path)
                throw .init("cannot write secret key file \(name): \(String(cString: strerror(errno)))")
            }
            written += n
        }
        guard fchmod(fd, 0o600) == 0, fsync(fd) == 0 else {
            unlink(path)
            throw .init("cannot write secret key file \(name): \(String(cString: strerror(errno)))")
        }
    }

    /// Makes the new directory entry durable.
    private static func syncDirectory(of path: String) throws(SecretKeyFileError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard fsync(fd) == 0 || errno == EINVAL else {
            throw .init("cannot sync \(directory): \(String(cString: strerror(errno)))")
        }
    }
}

/// A secret key file that cannot be read, made or used; one line for the operator.
public struct SecretKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    /// An error saying `description`, one line naming the key file.
    public init(_ description: String) { self.description = description }
}
