#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import SGEMSupport
import Synchronization

// A stand-in for the translation providers (LibreTranslate, DeepL, Yandex v1.5) on 127.0.0.1,
// port 0, plain or TLS: it speaks each provider's request and response shapes, records what it
// received, and can be told at run time to fail every way a provider or a network can.

/// A translation provider's stub server. Translations are deterministic: `"[<target>] " + text`
/// (the target as an ISO 639-1 code), with `detectedSource` as the language detected.
///
///     let stub = try TranslationStub(.deepl)
///     defer { stub.stop() }
///     stub.fail(.status(456))      // every answer from now on: DeepL's quota error
///     stub.fail(nil)               // back to translating
///     #expect(stub.requestCount == 1)
public final class TranslationStub: Sendable {
    public enum Provider: String, Sendable, CaseIterable {
        case libretranslate, deepl, yandex
    }

    /// How every request is answered until `fail(nil)`.
    public enum Failure: Sendable, Equatable {
        /// The provider's own error answer for `status` (its body shape; `message` instead of
        /// the stub's usual wording). 429 comes with `Retry-After: 7`.
        case status(Int, message: String? = nil)
        /// The normal answer, after `delay`.
        case slow(Duration)
        /// Never answers; the connection stays open until the client or `stop()` closes it.
        case hang
        /// A 200 whose body is not JSON.
        case notJSON
        /// A 200 with JSON that lacks the translation (or the language list).
        case missingText
        /// Bytes that are not HTTP at all, then the connection closes.
        case notHTTP
        /// A valid 200 JSON answer of 2 MiB.
        case oversized
        /// Closes the connection as soon as the request is read.
        case close
    }

    /// One request as the stub received it.
    public struct Request: Sendable {
        public let method: String
        /// The path without the query (`/translate`, `/v2/translate`, `/api/v1.5/tr.json/translate`).
        public let path: String
        public let headers: [(name: String, value: String)]
        public let body: [UInt8]
        /// Query parameters, then form-body parameters (Yandex), decoded.
        public let params: [(name: String, value: String)]

        public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        public func param(_ name: String) -> String? { params.first { $0.name == name }?.value }
        /// The body parsed as JSON (LibreTranslate, DeepL), or nil.
        public var json: JSONValue? { try? JSONValue.parse(body) }
        public var bodyText: String { String(decoding: body, as: UTF8.self) }
        /// The API key the request carried, wherever its provider puts it.
        public var key: String? {
            if let authorization = header("Authorization"), authorization.hasPrefix("DeepL-Auth-Key ") {
                return String(authorization.dropFirst("DeepL-Auth-Key ".count))
            }
            return json?["api_key"]?.stringValue ?? param("key")
        }
    }

    public let provider: Provider
    public let port: Int
    /// The base URL to configure the provider with (Yandex's includes `/api/v1.5/tr.json`).
    public let url: String
    /// The CA to trust (`HTTPClient.Configuration.caFile`) when the stub speaks TLS.
    public let caFile: String?
    private let listener: StubListener
    private let tls: StubTLSContext?
    private struct State {
        var failure: Failure?
        var detectedSource = "en"
        var key: String?
        var requests: [Request] = []
    }
    private let state = Mutex(State())

    /// A stub for `provider` on 127.0.0.1, port 0; over TLS with `certificate` (from the shared
    /// test CA, or self-signed) when given.
    public init(_ provider: Provider, tls certificate: TestCertificates.Leaf? = nil) throws {
        signal(SIGPIPE, SIG_IGN)   // a client gone mid-answer must give EPIPE, not end the tests
        self.provider = provider
        if let certificate {
            let certificates = try TestCertificates.shared()
            tls = try StubTLSContext(certificate: certificates.certificate(certificate), key: certificates.key(certificate))
            caFile = certificates.ca
        } else {
            tls = nil
            caFile = nil
        }
        listener = try StubListener()
        port = listener.port
        let origin = (certificate == nil ? "http://127.0.0.1:" : "https://localhost:") + String(port)
        url = provider == .yandex ? origin + "/api/v1.5/tr.json" : origin
        try listener.start(name: "translation-stub") { [self] fd in serve(fd) }
    }

    /// Closes the listener and every open connection; later connections are refused.
    public func stop() { listener.stop() }

    /// Answers every request with `failure` from now on; nil answers normally again.
    public func fail(_ failure: Failure?) { state.withLock { $0.failure = failure } }

    /// The language reported as detected when a request names no source (default "en").
    public var detectedSource: String {
        get { state.withLock { $0.detectedSource } }
        set { state.withLock { $0.detectedSource = newValue } }
    }

    /// When set, a request carrying another key (or none) gets the provider's invalid-key answer.
    public var key: String? {
        get { state.withLock { $0.key } }
        set { state.withLock { $0.key = newValue } }
    }

    /// Every request received, in order.
    public var requests: [Request] { state.withLock { $0.requests } }
    public var requestCount: Int { state.withLock { $0.requests.count } }
    public var lastRequest: Request? { state.withLock { $0.requests.last } }

    // MARK: Serving

    private func serve(_ fd: Int32) {
        guard let connection = StubConnection(fd: fd, tls: tls) else { return }
        defer { connection.end() }
        while let request = connection.readRequest() {
            let failure = state.withLock { s -> Failure? in
                s.requests.append(request)
                return s.failure
            }
            switch failure {
            case .hang?:
                connection.waitUntilClosed(milliseconds: -1)
                return
            case .close?:
                return
            case .notHTTP?:
                connection.write(Array("SSH-2.0-not-http \u{1}\u{2}\u{3}\r\n\r\n".utf8) + (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 37) })
                return
            case .slow(let delay)?:
                let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
                // Waits on the socket, not a sleep: a client that gives up (or `stop()`) ends it early.
                if connection.waitUntilClosed(milliseconds: Int32(clamping: milliseconds)) { return }
                guard connection.write(answer(to: request, failure: nil)) else { return }
            default:
                guard connection.write(answer(to: request, failure: failure)) else { return }
            }
        }
    }

    // MARK: The providers' shapes

    /// The whole HTTP response for `request`.
    private func answer(to request: Request, failure: Failure?) -> [UInt8] {
        switch failure {
        case .status(let status, let message)?: return errorResponse(status, message: message)
        case .notJSON?: return Self.response(200, Array("<html><body>Service temporarily unavailable</body></html>".utf8), type: "text/html")
        case .missingText?: return Self.response(200, Array(#"{"unexpected": true}"#.utf8))
        case .oversized?:
            // The provider's shape around 2 MiB of text, spliced in (serialising it would be slow).
            let shape = success(text: "@@", source: "en", request: request).serialized().split(separator: "@@", omittingEmptySubsequences: false)
            return Self.response(200, Array(shape[0].utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 2 * 1024 * 1024) + Array(shape[1].utf8))
        default: break
        }
        let (key, detected) = state.withLock { ($0.key, $0.detectedSource) }
        // LibreTranslate lists its languages to anyone; every other call needs the key.
        if let key, request.key != key, !(provider == .libretranslate && request.path == "/languages") {
            return errorResponse(provider == .yandex ? 401 : 403, message: nil)
        }
        switch (provider, request.method, request.path) {
        case (.libretranslate, "POST", "/translate"):
            guard let body = request.json, let text = body["q"]?.stringValue, let target = body["target"]?.stringValue else {
                return errorResponse(400, message: "Invalid request: missing q parameter")
            }
            let source = body["source"]?.stringValue ?? "auto"
            return Self.response(200, success(text: "[\(Self.iso(target))] " + text, source: source == "auto" ? detected : source, request: request).serializedBytes())
        case (.libretranslate, "GET", "/languages"):
            let codes = Self.languages.map(\.code)
            let list: [JSONValue] = Self.languages.map { language in
                ["code": .string(language.code), "name": .string(language.name),
                 "targets": .array(codes.filter { $0 != language.code }.map(JSONValue.string))]
            }
            return Self.response(200, JSONValue.array(list).serializedBytes())
        case (.deepl, "POST", "/v2/translate"):
            guard let body = request.json, let text = body["text"]?.arrayValue?.first?.stringValue,
                  let target = body["target_lang"]?.stringValue else {
                return errorResponse(400, message: "Parameter 'text' not specified.")
            }
            let source = body["source_lang"]?.stringValue ?? detected
            return Self.response(200, success(text: "[\(Self.iso(target))] " + text, source: source, request: request).serializedBytes())
        case (.deepl, "GET", "/v2/languages"):
            let list: [JSONValue] = Self.deepLTargets.map { ["language": .string($0.0), "name": .string($0.1), "supports_formality": false] }
            return Self.response(200, JSONValue.array(list).serializedBytes())
        case (.yandex, "POST", "/api/v1.5/tr.json/translate"):
            guard let text = request.param("text"), let lang = request.param("lang") else {
                return errorResponse(400, message: "Invalid parameter: lang")
            }
            let parts = lang.split(separator: "-").map(String.init)
            let source = parts.count == 2 ? parts[0] : detected
            return Self.response(200, success(text: "[\(Self.iso(parts.last ?? lang))] " + text, source: source, request: request).serializedBytes())
        case (.yandex, "POST", "/api/v1.5/tr.json/getLangs"):
            let codes = Self.languages.map(\.code)
            let dirs = codes.flatMap { a in codes.filter { $0 != a }.map { JSONValue.string(a + "-" + $0) } }
            let langs = JSONValue.object(Self.languages.map { ($0.code, .string($0.name)) })
            return Self.response(200, JSONValue.object([("dirs", .array(dirs)), ("langs", langs)]).serializedBytes())
        default:
            return errorResponse(404, message: "Not Found")
        }
    }

    /// A successful translation in the provider's shape.
    private func success(text: String, source: String, request: Request) -> JSONValue {
        switch provider {
        case .libretranslate:
            let auto = (request.json?["source"]?.stringValue ?? "auto") == "auto"
            return auto ? ["translatedText": .string(text), "detectedLanguage": ["language": .string(source.lowercased()), "confidence": 90]]
                        : ["translatedText": .string(text)]
        case .deepl:
            return ["translations": [["detected_source_language": .string(source.uppercased()), "text": .string(text)]]]
        case .yandex:
            let target = request.param("lang")?.split(separator: "-").last.map(String.init) ?? "en"
            return ["code": 200, "lang": .string(source.lowercased() + "-" + target), "text": [.string(text)]]
        }
    }

    /// The provider's error answer for `status`, in its own body shape.
    private func errorResponse(_ status: Int, message: String?) -> [UInt8] {
        let headers = status == 429 ? [("Retry-After", "7")] : []
        switch provider {
        case .libretranslate:
            let words = message ?? [400: "Invalid request", 403: "Invalid API key", 429: "Too many request limits violations",
                                    500: "Cannot translate text"][status] ?? "Error"
            return Self.response(status, JSONValue.object([("error", .string(words))]).serializedBytes(), headers: headers)
        case .deepl:
            let words = message ?? [400: "Bad request", 403: "Authorization failure, check auth_key", 413: "Request Entity Too Large",
                                    429: "Too many requests", 456: "Quota Exceeded", 500: "Internal server error"][status] ?? "Error"
            return Self.response(status, JSONValue.object([("message", .string(words))]).serializedBytes(), headers: headers)
        case .yandex:
            let words = message ?? [401: "API key is invalid", 402: "API key is blocked",
                                    403: "Exceeded the daily limit on the number of requests",
                                    404: "Exceeded the daily limit on the amount of translated text", 413: "Exceeded the maximum text size",
                                    422: "The text cannot be translated", 501: "The specified translation direction is not supported"][status] ?? "Error"
            return Self.response(status, JSONValue.object([("code", .number(Double(status))), ("message", .string(words))]).serializedBytes(), headers: headers)
        }
    }

    static let languages: [(code: String, name: String)] = [("en", "English"), ("es", "Spanish"), ("de", "German"), ("fr", "French"), ("pt", "Portuguese")]
    static let deepLTargets = [("DE", "German"), ("EN-GB", "English (British)"), ("EN-US", "English (American)"), ("ES", "Spanish"),
                               ("FR", "French"), ("PT-BR", "Portuguese (Brazilian)"), ("PT-PT", "Portuguese (European)")]

    /// "EN-US" → "en": what the deterministic translation is marked with.
    static func iso(_ code: String) -> String { String(code.split(separator: "-").first ?? Substring(code)).lowercased() }

    static func response(_ status: Int, _ body: [UInt8], type: String = "application/json", headers: [(String, String)] = []) -> [UInt8] {
        var head = "HTTP/1.1 \(status) Stub\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }
}

/// A port on 127.0.0.1 where nothing listens: connections to it are refused (the socket is bound,
/// so no one else takes the port while it lives).
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Int32
    public var url: String { "http://127.0.0.1:\(port)" }

    public init() throws { (fd, port) = try loopbackSocket(listening: nil) }
    deinit { Glibc.close(fd) }
}

// MARK: - Sockets and TLS for the stub

/// The server side of TLS for the stub: one certificate and key.
// @unchecked Sendable: the SSL_CTX is configured once in init and only read afterwards.
private final class StubTLSContext: @unchecked Sendable {
    let ctx: OpaquePointer

    init(certificate: String, key: String) throws {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TestFailure("SSL_CTX_new failed") }
        self.ctx = ctx
        guard SSL_CTX_use_certificate_chain_file(ctx, certificate) == 1,
              SSL_CTX_use_PrivateKey_file(ctx, key, 1 /* SSL_FILETYPE_PEM */) == 1 else {
            throw TestFailure("cannot load \(certificate) or \(key)")
        }
    }

    deinit { SSL_CTX_free(ctx) }
}

/// One accepted connection, plain or TLS, with blocking reads and writes on its own thread (the
/// stub's listener closes the socket).
private final class StubConnection {
    let fd: Int32
    private var ssl: OpaquePointer?
    private var buffer: [UInt8] = []

    /// Nil when the TLS handshake fails (the client refused the certificate).
    init?(fd: Int32, tls: StubTLSContext?) {
        self.fd = fd
        if let tls {
            guard let ssl = SSL_new(tls.ctx) else { return nil }
            self.ssl = ssl
            guard SSL_set_fd(ssl, fd) == 1, SSL_accept(ssl) == 1 else {
                end()
                return nil
            }
        }
    }

    /// Frees the TLS state.
    func end() {
        if let ssl {
            SSL_free(ssl)
            self.ssl = nil
        }
    }

    /// Reads more bytes; false on end of stream or error.
    private func fill() -> Bool {
        guard let ssl else { return receiveSome(fd, into: &buffer) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = Int(SSL_read(ssl, &chunk, Int32(chunk.count)))
        if n <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard let ssl else { return sendAll(fd, bytes) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Int(SSL_write(ssl, $0.baseAddress! + offset, Int32(clamping: $0.count - offset))) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Waits up to `milliseconds` (-1: without limit) for the client to close (or `stop()`);
    /// true when it did.
    @discardableResult
    func waitUntilClosed(milliseconds: Int32) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + UInt64(max(milliseconds, 0)) * 1_000_000
        while true {
            var remaining: Int32 = -1
            if milliseconds >= 0 {
                let now = MonotonicClock.nanoseconds()
                if now >= deadline { return false }
                remaining = Int32(clamping: (deadline - now) / 1_000_000 + 1)
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, remaining)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return true }
            if ready == 0 { return false }
            // Readable: either more bytes (kept for the next request) or the end of the stream.
            if !fill() { return true }
        }
    }

    /// The next request (head and Content-Length body), or nil when the connection ends.
    func readRequest() -> TranslationStub.Request? {
        var headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
        while headEnd == nil {
            guard fill() else { return nil }
            headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
        }
        let lines = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self).split(separator: "\r\n").map(String.init)
        buffer.removeFirst(headEnd!.upperBound)
        let requestLine = (lines.first ?? "").split(separator: " ").map(String.init)
        guard requestLine.count == 3 else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingWhitespace())
        }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        while buffer.count < length { guard fill() else { return nil } }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        let target = requestLine[1]
        let path = String(target.prefix { $0 != "?" })
        var params = target.contains("?") ? formDecoded(String(target.drop { $0 != "?" }.dropFirst())) : []
        let type = headers.first { $0.name.lowercased() == "content-type" }?.value ?? ""
        if type.hasPrefix("application/x-www-form-urlencoded") { params += formDecoded(String(decoding: body, as: UTF8.self)) }
        return TranslationStub.Request(method: requestLine[0], path: path, headers: headers, body: body, params: params)
    }
}

/// `a=1&b=x%20y` decoded (`+` is a space).
private func formDecoded(_ text: String) -> [(name: String, value: String)] {
    func decode(_ part: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(part.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    return text.split(separator: "&").map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
    }
}
