/// One console file compiled into the binary, with its gzip form when that is smaller.
struct EmbeddedAsset: Sendable {
    let contentType: String
    let etag: String
    let bytes: [UInt8]
    let gzipped: [UInt8]?

    init(contentType: String, etag: String, base64: String, gzipBase64: String?) {
        self.contentType = contentType
        self.etag = etag
        self.bytes = decodeBase64(base64)
        self.gzipped = gzipBase64.map(decodeBase64)
    }
}

/// Decodes standard base64, skipping line breaks; the generator guarantees well-formed input.
func decodeBase64(_ text: String) -> [UInt8] {
    var table = [UInt8](repeating: 255, count: 256)
    for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { table[Int(c)] = UInt8(i) }
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count * 3 / 4)
    var acc: UInt32 = 0
    var bits = 0
    for c in text.utf8 {
        let v = table[Int(c)]
        if v == 255 { continue }   // newline or padding
        acc = acc << 6 | UInt32(v)
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
        }
    }
    return out
}
