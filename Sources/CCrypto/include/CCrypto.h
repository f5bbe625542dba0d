#ifndef CCRYPTO_H
#define CCRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// Writes the 32-byte SHA-256 digest of `data` (`length` bytes; `data` may be NULL when `length` is 0) to `digest`.
/// Returns 1 on success, 0 when libcrypto failed.
int sb_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);

/// Writes the 32-byte HMAC-SHA256 of `data` under `key` to `mac` (either pointer may be NULL when its length is 0).
/// Returns 1 on success, 0 when libcrypto failed.
int sb_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length, uint8_t mac[32]);

#endif
