import SGEMCore

/// How many times `text`'s bytes appear in the file at `path` (0 when there is no file): a
/// secret looked for in a database, its WAL or a backup.
public func occurrences(of text: String, inFile path: String) -> Int {
    guard let bytes = readFileBytes(path, limit: 1 << 30) else { return 0 }
    let needle = Array(text.utf8)
    guard let first = needle.first, bytes.count >= needle.count else { return 0 }
    var count = 0
    for start in 0...(bytes.count - needle.count) where bytes[start] == first && bytes[start..<(start + needle.count)].elementsEqual(needle) {
        count += 1
    }
    return count
}
