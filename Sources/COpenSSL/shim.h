#ifndef SGEM_COPENSSL_SHIM_H
#define SGEM_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/x509v3.h>
#include "webpush.h"

/* Several OpenSSL entry points are macros; these inline wrappers make them callable from Swift. */
static inline int sgem_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}
static inline long sgem_ssl_ctx_set_options(SSL_CTX *ctx, long options) {
    return (long)SSL_CTX_set_options(ctx, (uint64_t)options);
}
static inline long sgem_ssl_op_no_compression(void) { return (long)SSL_OP_NO_COMPRESSION; }
static inline long sgem_ssl_op_no_renegotiation(void) { return (long)SSL_OP_NO_RENEGOTIATION; }
static inline long sgem_ssl_op_cipher_server_preference(void) { return (long)SSL_OP_CIPHER_SERVER_PREFERENCE; }
static inline long sgem_ssl_ctx_set_mode_partial_write(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
/* Client side: SNI (a macro over SSL_ctrl) and the verify mode without a callback. */
static inline int sgem_ssl_set_sni(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline void sgem_ssl_ctx_verify_peer(SSL_CTX *ctx) { SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL); }
static inline int sgem_ssl_get_version_number(const SSL *ssl) { return SSL_version(ssl); }
#endif
