#ifndef CCRYPTO_H
#define CCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// Writes the 32-byte SHA-256 digest of `data` (`length` bytes; `data` may be NULL when `length` is 0) to `digest`.
/// Returns 1 on success, 0 when libcrypto failed.
int sb_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);

/// An incremental SHA-256 (an EVP_MD_CTX): begin, update any number of times, then finish (which frees it).
/// Returns NULL when libcrypto failed.
void *sb_sha256_begin(void);
/// Adds `length` bytes of `data` (may be NULL when `length` is 0). Returns 1 on success, 0 when libcrypto failed.
int sb_sha256_update(void *context, const uint8_t *data, size_t length);
/// Writes the digest to `digest` and frees the context. Returns 1 on success, 0 when libcrypto failed.
int sb_sha256_finish(void *context, uint8_t digest[32]);
/// Frees a context that is not to be finished.
void sb_sha256_free(void *context);

/// Writes the 32-byte HMAC-SHA256 of `data` under `key` to `mac` (either pointer may be NULL when its length is 0).
/// Returns 1 on success, 0 when libcrypto failed.
int sb_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length, uint8_t mac[32]);

/// An HMAC-SHA256 key made ready (an EVP_MAC_CTX with the key's pads hashed once), or NULL when libcrypto failed.
/// `key` may be NULL when `key_length` is 0. Free it with `sb_hmac_sha256_key_free`.
void *sb_hmac_sha256_key_new(const uint8_t *key, size_t key_length);
/// A copy of a ready key (NULL when libcrypto failed): one context computes one code at a time, so each thread that
/// signs at the same moment needs its own. Copying only reads `key`.
void *sb_hmac_sha256_key_copy(void *key);
/// Writes the 32-byte HMAC-SHA256 of `data` under the ready key to `mac`; the context may be used again afterwards.
/// Returns 1 on success, 0 when libcrypto failed.
int sb_hmac_sha256_keyed(void *key, const uint8_t *data, size_t length, uint8_t mac[32]);
/// Frees a ready key or a copy of one.
void sb_hmac_sha256_key_free(void *key);

/// AES-256-GCM: encrypts `length` bytes of `plain` into `sealed` (the same length) under `key` and the 12-byte
/// `nonce` (never reuse one with the same key), authenticating `aad` too, and writes the 16-byte tag. Returns 1 on
/// success, 0 when libcrypto failed.
int sb_aes256gcm_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t aad_length,
                      const uint8_t *plain, size_t length, uint8_t *sealed, uint8_t tag[16]);

/// AES-256-GCM: checks `tag` over `sealed` and `aad` and decrypts into `plain` (the same length). Returns 1 when the
/// input is authentic, 0 otherwise (`plain` must then be ignored).
int sb_aes256gcm_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t aad_length,
                      const uint8_t *sealed, size_t length, const uint8_t tag[16], uint8_t *plain);

#endif
