import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What every provider shares: one call to the provider through the shared `HTTPClient` with the
/// admin's timeout, the mapping of client failures, statuses and unusable answers to the
/// contract's codes, and messages in plain words that never hold the key.
struct ProviderCall: Sendable {
    /// The provider's name as the admin knows it ("LibreTranslate", "DeepL", "Yandex").
    let name: String
    let client: HTTPClient
    let timeout: Duration
    /// The API key, kept out of every message (removed from any provider text quoted).
    let key: String?

    /// Largest answer accepted from a provider.
    static let maxAnswerBytes = 1024 * 1024

    /// Sends one request and returns the provider's answer, whatever its status; client
    /// failures and oversized answers become `provider_timeout` or `provider_unavailable`.
    func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws(TranslationFailure) -> HTTPClientResponse {
        var request: HTTPClientRequest
        do {
            request = try HTTPClientRequest(method: method, url: url, headers: HTTPHeaders(headers), body: body, timeout: timeout)
            request.maxResponseBytes = ProviderCall.maxAnswerBytes
        } catch {
            throw TranslationFailure(.providerUnavailable, "The \(name) URL is not a valid http or https address.")
        }
        let response: HTTPClientResponse
        do {
            response = try await client.send(request)
        } catch let error as HTTPClientError {
            throw failure(error, host: request.url.hostHeader)
        } catch {
            throw TranslationFailure(.providerUnavailable, "The call to \(name) failed unexpectedly.")
        }
        guard response.body.count <= Self.maxAnswerBytes else {
            throw TranslationFailure(.providerUnavailable, "\(name) sent an answer larger than 1 MiB, which was refused.")
        }
        return response
    }

    /// A client failure in the contract's words.
    func failure(_ error: HTTPClientError, host: String) -> TranslationFailure {
        switch error.code {
        case .timeout, .connectTimeout:
            TranslationFailure(.providerTimeout, "No answer from \(name) within \(Self.words(timeout)).")
        case .connectFailed:
            TranslationFailure(.providerUnavailable, "\(name) at \(host) refused the connection or could not be reached.")
        case .resolveFailed:
            TranslationFailure(.providerUnavailable, "The host name \(host.split(separator: ":").first ?? "") of \(name) could not be found.")
        // The client words a refused chain or name "certificate refused: <OpenSSL's reason>".
        case .tlsFailed where error.message.hasPrefix("certificate refused"):
            TranslationFailure(.providerUnavailable, "The certificate of \(name) at \(host) could not be verified, so nothing was sent.")
        case .tlsFailed:
            TranslationFailure(.providerUnavailable, "No secure connection to \(name) at \(host) could be set up, so nothing was sent.")
        case .tooLarge:
            TranslationFailure(.providerUnavailable, "\(name) sent an answer larger than 1 MiB, which was refused.")
        case .refusedDestination:
            TranslationFailure(.providerUnavailable, "\(name) at \(host) is inside the company's network or on this server, so sgem-server "
                + "will not call it. An administrator can allow it with --outbound-allow (for example --outbound-allow 127.0.0.1:5000).")
        case .badResponse, .tooManyRedirects, .redirectRefused:
            TranslationFailure(.providerUnavailable, "\(name) at \(host) did not answer like an HTTP server.")
        case .invalidURL, .invalidRequest:
            TranslationFailure(.providerUnavailable, "The \(name) URL is not a valid http or https address.")
        case .cancelled:
            TranslationFailure(.providerUnavailable, "The call to \(name) was cancelled.")
        }
    }

    /// The JSON answer of a 2xx; for another status, the failure `code` names for it (given the
    /// provider's own words, found under `field` of its error body), else `provider_unavailable`.
    func answer(_ response: HTTPClientResponse, detail field: String,
                _ code: (_ status: Int, _ detail: String?) -> TranslationFailure.Code?) throws(TranslationFailure) -> JSONValue {
        if (200..<300).contains(response.status) { return try json(response) }
        let detail = (try? JSONValue.parse(response.body))?[field]?.stringValue
        throw failure(status: response.status, code: code(response.status, detail), detail: detail, response: response)
    }

    /// The answer as JSON, or `provider_unavailable` when it is not JSON at all.
    func json(_ response: HTTPClientResponse) throws(TranslationFailure) -> JSONValue {
        guard let value = try? JSONValue.parse(response.body) else { throw unexpectedAnswer() }
        return value
    }

    /// A 2xx answer without what it should hold.
    func unexpectedAnswer() -> TranslationFailure {
        TranslationFailure(.providerUnavailable, "\(name) sent an answer that could not be understood.")
    }

    /// The failure for an error status: `code` when the provider's table names one, else
    /// `provider_unavailable`. `detail` is the provider's own words, quoted (without the key)
    /// for the codes where they help the admin.
    func failure(status: Int, code: TranslationFailure.Code?, detail: String?, response: HTTPClientResponse) -> TranslationFailure {
        let retryAfter = response.headers["Retry-After"].flatMap { Int($0.trimmingWhitespace()) }
        let quoted = detail.map(redacted).map { $0.isEmpty ? "" : " (\($0))" } ?? ""
        switch code {
        case .invalidKey?: return TranslationFailure(.invalidKey, "\(name) refused the API key.")
        case .blockedKey?: return TranslationFailure(.blockedKey, "\(name) has blocked the API key.")
        case .quotaExceeded?:
            return TranslationFailure(.quotaExceeded, "The \(name) quota for this API key is used up for now.", retryAfter: retryAfter)
        case .textTooLong?: return TranslationFailure(.textTooLong, "The text is longer than \(name) accepts.")
        case .unprocessable?: return TranslationFailure(.unprocessable, "\(name) could not translate this text\(quoted).")
        case .unsupportedDirection?:
            return TranslationFailure(.unsupportedDirection, "\(name) does not translate between these languages\(quoted).")
        case .rateLimited?:
            return TranslationFailure(.rateLimited, "\(name) is receiving too many requests right now.", retryAfter: retryAfter)
        case .providerTimeout?: return TranslationFailure(.providerTimeout, "No answer from \(name) within \(Self.words(timeout)).")
        case .providerUnavailable?, .translationDisabled?, nil:
            return TranslationFailure(.providerUnavailable, "\(name) answered with an error (HTTP \(status)).")
        }
    }

    /// Whether a provider's 400 is about a language it does not offer ("xx is not supported",
    /// "Value for 'target_lang' not supported") rather than about the text.
    static func isAboutLanguage(_ detail: String?) -> Bool {
        guard let lower = detail?.lowercased() else { return false }
        return lower.contains("not supported") || lower.contains("target_lang") || lower.contains("source_lang")
    }

    /// Provider text fit to quote in a message: one line, short, without the key.
    func redacted(_ text: String) -> String {
        var text = text
        if let key, !key.isEmpty { text = text.replacingOccurrences(of: key, with: "…") }
        text = String(text.map { $0.isNewline ? " " : $0 }.prefix(160)).trimmingWhitespace()
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// "5 seconds", "1 second", "300 milliseconds".
    static func words(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        if milliseconds % 1000 == 0 { return milliseconds == 1000 ? "1 second" : "\(milliseconds / 1000) seconds" }
        return "\(milliseconds) milliseconds"
    }

    /// The base URL without trailing slashes; `provider_unavailable` when it is empty.
    static func base(_ url: String, name: String) throws(TranslationFailure) -> String {
        var url = url.trimmingWhitespace()
        while url.hasSuffix("/") { url.removeLast() }
        guard !url.isEmpty else {
            throw TranslationFailure(.providerUnavailable, "The \(name) URL is missing: an admin can set it in Settings.")
        }
        return url
    }

    /// `application/x-www-form-urlencoded` from pairs (RFC 3986 unreserved characters kept).
    static func formEncoded(_ pairs: [(String, String)]) -> [UInt8] {
        func encode(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
                }
            }
            return out
        }
        return Array(pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&").utf8)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
