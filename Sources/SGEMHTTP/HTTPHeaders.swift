/// An ordered list of header fields; names compare case-insensitively (ASCII).
public struct HTTPHeaders: Sendable, Sequence {
    public typealias Element = (name: String, value: String)

    var fields: [(name: String, value: String)]

    /// No fields.
    public init() { fields = [] }

    /// Fields in the given order.
    public init(_ pairs: [(String, String)]) { fields = pairs.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        for field in fields where Self.equalsIgnoringCase(field.name, name) { return field.value }
        return nil
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.equalsIgnoringCase($0.name, name) ? $0.value : nil }
    }

    /// Whether at least one field is called `name`.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.equalsIgnoringCase($0.name, name) }
    }

    /// Appends a field, keeping any existing ones of that name.
    public mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every field called `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        fields.append((name: name, value: value))
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.equalsIgnoringCase($0.name, name) }
    }

    /// Number of fields.
    public var count: Int { fields.count }

    /// Iterates the fields in order as `(name, value)`.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Whether a comma-separated header (e.g. `Connection`) carries `token`, case-insensitively.
    /// Whether `If-None-Match` names `etag` (weakly, or `*`): the client's copy is current (304).
    public func ifNoneMatchMatches(_ etag: String) -> Bool {
        guard let header = self["If-None-Match"] else { return false }
        return header.split(separator: ",").contains { part in
            let tag = part.trimmingASCIISpaces()
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    func hasToken(_ name: String, _ token: String) -> Bool {
        for field in fields where Self.equalsIgnoringCase(field.name, name) {
            for part in field.value.split(separator: ",") where Self.equalsIgnoringCase(part.trimmingASCIISpaces(), token) {
                return true
            }
        }
        return false
    }

    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        // Lengths first (O(1) for native strings): most header names differ there. Then one
        // pass over contiguous bytes, not the generic zip of two UTF-8 views.
        guard a.utf8.count == b.utf8.count else { return false }
        if let equal = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in bytesEqualIgnoringCase(x, y) }
        }), let equal { return equal }
        return bytesEqualIgnoringCase(a.utf8, b.utf8)
    }

    static func bytesEqualIgnoringCase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count {
            let x = a[i], y = b[i]
            if x == y { continue }
            // ASCII letters differ by 0x20 between cases.
            guard x | 0x20 == y | 0x20, (x | 0x20) >= 0x61, (x | 0x20) <= 0x7A else { return false }
        }
        return true
    }

    static func bytesEqualIgnoringCase<A: Collection, B: Collection>(_ a: A, _ b: B) -> Bool where A.Element == UInt8, B.Element == UInt8 {
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            // ASCII letters differ by 0x20 between cases.
            guard x | 0x20 == y | 0x20, (x | 0x20) >= 0x61, (x | 0x20) <= 0x7A else { return false }
        }
        return true
    }
}
