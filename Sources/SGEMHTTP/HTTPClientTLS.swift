import COpenSSL
import SGEMSupport

/// The client's OpenSSL context: TLS 1.2+, peer verification against the system CA store (or
/// one CA file, for tests and private CAs), no compression or renegotiation.
// @unchecked Sendable: the SSL_CTX is configured once in init and only read afterwards
// (SSL_new is thread-safe on a configured context).
final class ClientTLSContext: @unchecked Sendable {
    let ctx: OpaquePointer

    init(caFile: String?) throws(HTTPClientError) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw Self.failure("SSL_CTX_new failed") }
        self.ctx = ctx
        guard sgem_ssl_ctx_set_min_tls12(ctx) == 1 else { throw Self.failure("cannot require TLS 1.2") }
        let options = sgem_ssl_op_no_compression() | sgem_ssl_op_no_renegotiation()
        guard sgem_ssl_ctx_set_options(ctx, options) & options == options else { throw Self.failure("cannot set the TLS options") }
        // A write that would block is retried from the same offset, maybe from a moved buffer.
        guard sgem_ssl_ctx_set_mode_partial_write(ctx) != 0 else { throw Self.failure("cannot enable partial writes") }
        sgem_ssl_ctx_verify_peer(ctx)
        if let caFile {
            guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else { throw Self.failure("cannot load the CA file \(caFile)") }
        } else {
            guard SSL_CTX_set_default_verify_paths(ctx) == 1 else { throw Self.failure("cannot load the system CA store") }
        }
    }

    deinit { SSL_CTX_free(ctx) }

    /// A client stream over connected `fd` that sends SNI and checks the certificate names `host`.
    func makeStream(fd: Int32, url: HTTPClientURL) throws(HTTPClientError) -> TLSStream {
        guard let stream = TLSStream(sslContext: ctx, fd: fd, accepting: false) else { throw Self.failure("SSL_new failed") }
        if url.hostIsIPAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(stream.ssl), url.host) == 1 else { throw Self.failure("cannot set the expected address") }
        } else {
            guard sgem_ssl_set_sni(stream.ssl, url.host) == 1 else { throw Self.failure("cannot set SNI") }
            guard SSL_set1_host(stream.ssl, url.host) == 1 else { throw Self.failure("cannot set the expected host name") }
        }
        return stream
    }

    /// Why a handshake failed: the verification result when the chain or name was refused, else
    /// OpenSSL's own reason.
    static func handshakeFailure(_ stream: TLSStream) -> HTTPClientError {
        let result = SSL_get_verify_result(stream.ssl)
        if result != X509_V_OK, let reason = X509_verify_cert_error_string(result) {
            return HTTPClientError(.tlsFailed, "certificate refused: \(String(cString: reason))")
        }
        return HTTPClientError(.tlsFailed, "TLS handshake failed" + (stream.lastError.isEmpty ? "" : stream.lastError))
    }

    static func failure(_ message: String) -> HTTPClientError {
        HTTPClientError(.tlsFailed, message + TLSContext.opensslErrors())
    }
}
