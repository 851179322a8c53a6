/// Bytes written through a pointer into memory the writer owns, doubling when full: a response
/// head is a dozen small appends, and an Array checked its uniqueness and capacity on each.
/// Noncopyable: one owner frees the memory, and no copy can outlive it.
struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(16, capacity)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Empties the writer; memory past `keeping` bytes is given back (a large body's).
    mutating func reset(keeping: Int) {
        count = 0
        if capacity > keeping {
            base.deallocate()
            capacity = max(16, keeping)
            base = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        }
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let larger = max(2 * capacity, count + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = larger
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Writes `count` bytes with `body`, which gets a pointer to room for them.
    @inline(__always)
    mutating func append(count extra: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Void) {
        reserve(extra)
        body(base + count)
        count += extra
    }

    /// Calls `body` with the bytes written so far.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The bytes written so far, copied.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}
