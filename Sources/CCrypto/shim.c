#include "CCrypto.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

// libcrypto's one-shot functions read nothing through a NULL pointer when the length is 0, but they are documented
// for valid pointers only: an empty input is passed as a pointer to a zero-length buffer instead.
static const uint8_t empty[1] = {0};

int sb_sha256(const uint8_t *data, size_t length, uint8_t digest[32]) {
    return SHA256(length == 0 ? empty : data, length, digest) != NULL;
}

int sb_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length, uint8_t mac[32]) {
    unsigned int written = 0;
    const unsigned char *result = HMAC(EVP_sha256(), key_length == 0 ? empty : key, (int)key_length,
                                       length == 0 ? empty : data, length, mac, &written);
    return result != NULL && written == 32;
}
