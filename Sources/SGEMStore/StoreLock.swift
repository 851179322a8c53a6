/// A lock every instance on one database names the same way ("job:realtime.retention",
/// "worker:push"): what `Store.exclusively` and `Store.leadership` take. On PostgreSQL it is the
/// advisory lock `key`; SQLite has one process and needs none.
public struct StoreLock: Sendable, Hashable, CustomStringConvertible {
    /// The name every instance uses.
    public let name: String
    /// PostgreSQL's advisory-lock key: "SGEM" in the high half, as the writer's and the
    /// migrations' keys; in the low half a hash of the name that every build and process computes
    /// alike (FNV-1a, not Swift's seeded `Hasher`), kept clear of the store's own small keys.
    public let key: Int64

    public init(_ name: String) {
        self.name = name
        var hash: UInt32 = 0x811C_9DC5
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        if hash < StoreLock.reservedKeys { hash += StoreLock.reservedKeys }
        key = Int64(bitPattern: 0x5347_454D_0000_0000 | UInt64(hash))
    }

    /// Keys 0x5347454D_00000000 to _000000FF belong to the store itself (the writer's batch lock,
    /// the migrations' lock).
    static let reservedKeys: UInt32 = 0x100

    public var description: String { name }
}
