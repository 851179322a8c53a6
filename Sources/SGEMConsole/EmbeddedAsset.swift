import SGEMSupport

/// One console file compiled into the binary, with its gzip form when that is smaller.
struct EmbeddedAsset: Sendable {
    let contentType: String
    let etag: String
    let bytes: [UInt8]
    let gzipped: [UInt8]?

    init(contentType: String, etag: String, base64: String, gzipBase64: String?) {
        self.contentType = contentType
        self.etag = etag
        // The generator writes well-formed base64; a broken asset shows up as an empty file, never a crash.
        self.bytes = Crypto.base64Decode(base64, skippingNewlines: true) ?? []
        self.gzipped = gzipBase64.flatMap { Crypto.base64Decode($0, skippingNewlines: true) }
    }
}
