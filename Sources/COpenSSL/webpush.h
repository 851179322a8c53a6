#ifndef SGEM_COPENSSL_WEBPUSH_H
#define SGEM_COPENSSL_WEBPUSH_H
/* Web Push's primitives (RFC 8291, RFC 8292) over OpenSSL 3's EVP interfaces: P-256 keys given as
 * raw bytes (a 32-byte private scalar, a 65-byte uncompressed point), ECDH, ES256 with the raw
 * r||s signature JWS wants, HKDF-SHA-256 and AES-128-GCM. Each returns 1 on success, 0 otherwise;
 * every object made here is freed here. */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
#include <openssl/bn.h>

/* A P-256 key from its uncompressed point and, when `priv` is not NULL, its private scalar. */
static inline EVP_PKEY *sgem_p256_key(const uint8_t *priv, const uint8_t *pub) {
    EVP_PKEY *key = NULL;
    BIGNUM *d = NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    if (!bld || !ctx) goto done;
    if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0)) goto done;
    if (!OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 65)) goto done;
    if (priv) {
        d = BN_bin2bn(priv, 32, NULL);
        if (!d || !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d)) goto done;
    }
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!params || EVP_PKEY_fromdata_init(ctx) != 1) goto done;
    if (EVP_PKEY_fromdata(ctx, &key, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
done:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_clear_free(d);
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* Whether `pub` is an uncompressed point on P-256. */
static inline int sgem_p256_check_public(const uint8_t *pub) {
    if (pub[0] != 0x04) return 0;
    EVP_PKEY *key = sgem_p256_key(NULL, pub);
    if (!key) return 0;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
    int ok = ctx && EVP_PKEY_public_check(ctx) == 1;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(key);
    return ok;
}

/* A new key pair: `priv` 32 bytes, `pub` 65. */
static inline int sgem_p256_generate(uint8_t *priv, uint8_t *pub) {
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!key) return 0;
    int ok = 0;
    BIGNUM *d = NULL;
    size_t length = 0;
    if (EVP_PKEY_set_utf8_string_param(key, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "uncompressed") != 1) goto done;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pub, 65, &length) != 1 || length != 65) goto done;
    if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_PRIV_KEY, &d) != 1) goto done;
    ok = BN_bn2binpad(d, priv, 32) == 32;
done:
    BN_clear_free(d);
    EVP_PKEY_free(key);
    return ok;
}

/* ECDH: the 32-byte shared x coordinate of our (`priv`, `pub`) with the peer's point. */
static inline int sgem_p256_ecdh(const uint8_t *priv, const uint8_t *pub, const uint8_t *peer, uint8_t *secret) {
    EVP_PKEY *mine = sgem_p256_key(priv, pub), *theirs = sgem_p256_key(NULL, peer);
    EVP_PKEY_CTX *ctx = mine ? EVP_PKEY_CTX_new(mine, NULL) : NULL;
    size_t length = 32;
    int ok = ctx && theirs && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, theirs) == 1
        && EVP_PKEY_derive(ctx, secret, &length) == 1 && length == 32;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(mine);
    EVP_PKEY_free(theirs);
    return ok;
}

/* ECDH with a fresh key pair made here and never kept: its point into `pub` (65 bytes), the
 * shared secret with `peer` into `secret` (32). One push's sender key, without a round trip
 * through raw bytes. */
static inline int sgem_p256_ephemeral_ecdh(const uint8_t *peer, uint8_t *pub, uint8_t *secret) {
    EVP_PKEY *mine = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"), *theirs = sgem_p256_key(NULL, peer);
    EVP_PKEY_CTX *ctx = mine ? EVP_PKEY_CTX_new(mine, NULL) : NULL;
    size_t length = 0, secretLength = 32;
    int ok = ctx && theirs
        && EVP_PKEY_set_utf8_string_param(mine, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT, "uncompressed") == 1
        && EVP_PKEY_get_octet_string_param(mine, OSSL_PKEY_PARAM_PUB_KEY, pub, 65, &length) == 1 && length == 65
        && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, theirs) == 1
        && EVP_PKEY_derive(ctx, secret, &secretLength) == 1 && secretLength == 32;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(mine);
    EVP_PKEY_free(theirs);
    return ok;
}

/* ES256: SHA-256 and ECDSA over `message`, the signature as JWS wants it (r||s, 64 bytes). */
static inline int sgem_p256_sign(const uint8_t *priv, const uint8_t *pub, const uint8_t *message, size_t count, uint8_t *signature) {
    EVP_PKEY *key = sgem_p256_key(priv, pub);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char der[80];
    size_t length = sizeof der;
    int ok = 0;
    ECDSA_SIG *sig = NULL;
    if (!key || !md) goto done;
    if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1) goto done;
    if (EVP_DigestSign(md, der, &length, message, count) != 1) goto done;
    const unsigned char *p = der;
    sig = d2i_ECDSA_SIG(NULL, &p, (long)length);
    if (!sig) goto done;
    ok = BN_bn2binpad(ECDSA_SIG_get0_r(sig), signature, 32) == 32 && BN_bn2binpad(ECDSA_SIG_get0_s(sig), signature + 32, 32) == 32;
done:
    ECDSA_SIG_free(sig);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    return ok;
}

/* Whether `signature` (r||s) is `pub`'s ES256 signature of `message`. */
static inline int sgem_p256_verify(const uint8_t *pub, const uint8_t *message, size_t count, const uint8_t *signature) {
    EVP_PKEY *key = sgem_p256_key(NULL, pub);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ECDSA_SIG *sig = ECDSA_SIG_new();
    unsigned char *der = NULL;
    int ok = 0, length;
    BIGNUM *r = BN_bin2bn(signature, 32, NULL), *s = BN_bin2bn(signature + 32, 32, NULL);
    if (!key || !md || !sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) { BN_free(r); BN_free(s); goto done; }
    length = i2d_ECDSA_SIG(sig, &der);
    if (length <= 0) goto done;
    ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1
        && EVP_DigestVerify(md, der, (size_t)length, message, count) == 1;
done:
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    return ok;
}

/* HKDF-SHA-256 (RFC 5869) for an output of at most 32 bytes: one expand step. */
static inline int sgem_hkdf_sha256(const uint8_t *salt, size_t saltCount, const uint8_t *ikm, size_t ikmCount,
                                   const uint8_t *info, size_t infoCount, uint8_t *out, size_t outCount) {
    uint8_t prk[32], block[32], input[256];
    unsigned int length = 0;
    if (outCount > 32 || infoCount > sizeof input - 1) return 0;
    if (!HMAC(EVP_sha256(), salt, (int)saltCount, ikm, ikmCount, prk, &length) || length != 32) return 0;
    memcpy(input, info, infoCount);
    input[infoCount] = 0x01;
    if (!HMAC(EVP_sha256(), prk, 32, input, infoCount + 1, block, &length) || length != 32) return 0;
    memcpy(out, block, outCount);
    OPENSSL_cleanse(prk, sizeof prk);
    OPENSSL_cleanse(block, sizeof block);
    return 1;
}

/* AES-128-GCM with a 12-byte nonce and no additional data; `out` gets the ciphertext then the
 * 16-byte tag (count + 16 bytes). */
static inline int sgem_aes128gcm_seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *in, size_t count, uint8_t *out) {
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int length = 0, tail = 0;
    int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, nonce) == 1
        && EVP_EncryptUpdate(ctx, out, &length, in, (int)count) == 1
        && EVP_EncryptFinal_ex(ctx, out + length, &tail) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + length + tail) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* The reverse: `in` is ciphertext then tag (count ≥ 16); `out` gets count − 16 bytes. */
static inline int sgem_aes128gcm_open(const uint8_t *key, const uint8_t *nonce, const uint8_t *in, size_t count, uint8_t *out) {
    if (count < 16) return 0;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int length = 0, tail = 0;
    uint8_t tag[16];
    memcpy(tag, in + count - 16, 16);
    int ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, nonce) == 1
        && EVP_DecryptUpdate(ctx, out, &length, in, (int)(count - 16)) == 1
        && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1
        && EVP_DecryptFinal_ex(ctx, out + length, &tail) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}
#endif
