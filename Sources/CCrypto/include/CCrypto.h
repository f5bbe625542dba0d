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
