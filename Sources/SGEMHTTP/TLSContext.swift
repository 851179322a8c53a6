import COpenSSL
import SGEMSupport
import Synchronization

/// A server-side OpenSSL context: TLS 1.2+, no compression or renegotiation, forward-secret
/// AEAD ciphers, the configured certificate chain and key.
// @unchecked Sendable: the SSL_CTX is configured once in init and only read afterwards
// (SSL_new is thread-safe on a configured context).
final class TLSContext: @unchecked Sendable {
    let ctx: OpaquePointer
    /// Tests set this to make the next stream creations fail as SSL_new would.
    let injectedStreamFailures = Atomic<Int>(0)

    init(_ configuration: TLSConfiguration) throws {
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TLSContext.failure("SSL_CTX_new failed") }
        self.ctx = ctx
        guard sgem_ssl_ctx_set_min_tls12(ctx) == 1 else { throw TLSContext.failure("cannot require TLS 1.2") }
        // Both return the resulting option/mode bit mask and cannot fail; check the bits took.
        let options = sgem_ssl_op_no_compression() | sgem_ssl_op_no_renegotiation() | sgem_ssl_op_cipher_server_preference()
        guard sgem_ssl_ctx_set_options(ctx, options) & options == options else { throw TLSContext.failure("cannot set the TLS options") }
        guard sgem_ssl_ctx_set_mode_partial_write(ctx) != 0 else { throw TLSContext.failure("cannot enable partial writes") }
        guard SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL:!MD5:!RC4:!3DES") == 1 else {
            throw TLSContext.failure("cannot set the cipher list")
        }
        guard SSL_CTX_use_certificate_chain_file(ctx, configuration.certificatePath) == 1 else {
            throw TLSContext.failure("cannot load certificate \(configuration.certificatePath)")
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, configuration.keyPath, 1 /* SSL_FILETYPE_PEM */) == 1 else {
            throw TLSContext.failure("cannot load private key \(configuration.keyPath)")
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else { throw TLSContext.failure("the private key does not match the certificate") }
    }

    deinit { SSL_CTX_free(ctx) }

    /// A connection's TLS state over `fd`, or nil when OpenSSL cannot make it (the caller must
    /// then close the connection: it is never served without TLS).
    func makeStream(fd: Int32) -> TLSStream? {
        var pending = injectedStreamFailures.load(ordering: .relaxed)
        while pending > 0 {
            let (exchanged, original) = injectedStreamFailures.compareExchange(expected: pending, desired: pending - 1, ordering: .relaxed)
            if exchanged { return nil }
            pending = original
        }
        return TLSStream(context: self, fd: fd)
    }

    static func failure(_ message: String) -> HTTPServerError {
        HTTPServerError(code: .tls, message: message + opensslErrors())
    }

    /// Drains this thread's OpenSSL error queue into a readable suffix.
    static func opensslErrors() -> String {
        let messages = Crypto.openSSLErrors()
        return messages.isEmpty ? "" : ": " + messages.joined(separator: "; ")
    }
}

/// One connection's TLS state over a non-blocking socket.
final class TLSStream {
    let ssl: OpaquePointer
    var handshakeDone = false
    /// Whether the last `.wouldBlock` waits for the socket to be writable (else readable).
    var wantsWrite = false
    /// OpenSSL's error queue at the last `.failed`, as text (the client reports it).
    var lastError = ""

    enum IOResult { case done(Int), wouldBlock, closed, failed }

    convenience init?(context: TLSContext, fd: Int32) {
        self.init(sslContext: context.ctx, fd: fd, accepting: true)
    }

    /// TLS over `fd` from a configured SSL_CTX, as the server (`accepting`) or as a client.
    init?(sslContext: OpaquePointer, fd: Int32, accepting: Bool) {
        guard let ssl = SSL_new(sslContext) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        self.ssl = ssl
        if accepting { SSL_set_accept_state(ssl) } else { SSL_set_connect_state(ssl) }
    }

    deinit { SSL_free(ssl) }

    /// Advances the handshake; `.done(0)` once it completed.
    func handshake() -> IOResult {
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 {
            handshakeDone = true
            return .done(0)
        }
        return classify(rc)
    }

    func read(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> IOResult {
        ERR_clear_error()
        let rc = SSL_read(ssl, buffer, Int32(clamping: count))
        return rc > 0 ? .done(Int(rc)) : classify(rc)
    }

    func write(_ buffer: UnsafeRawPointer, _ count: Int) -> IOResult {
        ERR_clear_error()
        let rc = SSL_write(ssl, buffer, Int32(clamping: count))
        return rc > 0 ? .done(Int(rc)) : classify(rc)
    }

    /// Best-effort close_notify; the socket closes right after, so a failed or unfinished
    /// shutdown (its return value) changes nothing.
    func shutdown() {
        ERR_clear_error()
        if handshakeDone { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
    }

    private func classify(_ rc: Int32) -> IOResult {
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ:
            wantsWrite = false
            return .wouldBlock
        case SSL_ERROR_WANT_WRITE:
            wantsWrite = true
            return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .closed
        default:
            lastError = TLSContext.opensslErrors()   // drains the queue, as ERR_clear_error would
            return .failed
        }
    }
}
