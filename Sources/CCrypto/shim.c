#include "CCrypto.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

// libcrypto's one-shot functions read nothing through a NULL pointer when the length is 0, but they are documented
// for valid pointers only: an empty input is passed as a pointer to a zero-length buffer instead.
static const uint8_t empty[1] = {0};

int sb_sha256(const uint8_t *data, size_t length, uint8_t digest[32]) {
    return SHA256(length == 0 ? empty : data, length, digest) != NULL;
}

void *sb_sha256_begin(void) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context == NULL) return NULL;
    if (EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

int sb_sha256_update(void *context, const uint8_t *data, size_t length) {
    if (length == 0) return 1;
    return EVP_DigestUpdate((EVP_MD_CTX *)context, data, length) == 1;
}

int sb_sha256_finish(void *context, uint8_t digest[32]) {
    unsigned int written = 0;
    int ok = EVP_DigestFinal_ex((EVP_MD_CTX *)context, digest, &written) == 1 && written == 32;
    EVP_MD_CTX_free((EVP_MD_CTX *)context);
    return ok;
}

void sb_sha256_free(void *context) {
    EVP_MD_CTX_free((EVP_MD_CTX *)context);
}

int sb_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *data, size_t length, uint8_t mac[32]) {
    unsigned int written = 0;
    const unsigned char *result = HMAC(EVP_sha256(), key_length == 0 ? empty : key, (int)key_length,
                                       length == 0 ? empty : data, length, mac, &written);
    return result != NULL && written == 32;
}

void *sb_hmac_sha256_key_new(const uint8_t *key, size_t key_length) {
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (mac == NULL) return NULL;
    EVP_MAC_CTX *context = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac); // the context holds its own reference
    if (context == NULL) return NULL;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(context, key_length == 0 ? empty : key, key_length, params) != 1) {
        EVP_MAC_CTX_free(context);
        return NULL;
    }
    return context;
}

void *sb_hmac_sha256_key_copy(void *key) {
    return EVP_MAC_CTX_dup((EVP_MAC_CTX *)key);
}

int sb_hmac_sha256_keyed(void *key, const uint8_t *data, size_t length, uint8_t mac[32]) {
    EVP_MAC_CTX *context = (EVP_MAC_CTX *)key;
    size_t written = 0;
    // Initialised without a key, an HMAC context starts over with the key it has: its pads are not hashed again.
    return EVP_MAC_init(context, NULL, 0, NULL) == 1
        && EVP_MAC_update(context, length == 0 ? empty : data, length) == 1
        && EVP_MAC_final(context, mac, &written, 32) == 1 && written == 32;
}

void sb_hmac_sha256_key_free(void *key) {
    EVP_MAC_CTX_free((EVP_MAC_CTX *)key);
}

// AES-256-GCM through libcrypto's EVP interface: one context per call (a few hundred nanoseconds), so no state is
// shared between threads.
static int aes256gcm(int encrypt, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                     size_t aad_length, const uint8_t *input, size_t length, uint8_t *output, uint8_t tag[16]) {
    if (length > INT32_MAX || aad_length > INT32_MAX) return 0;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return 0;
    int ok = EVP_CipherInit_ex(context, EVP_aes_256_gcm(), NULL, NULL, NULL, encrypt) == 1
          && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1
          && EVP_CipherInit_ex(context, NULL, NULL, key, nonce, encrypt) == 1;
    int written = 0;
    if (ok && aad_length > 0) ok = EVP_CipherUpdate(context, NULL, &written, aad, (int)aad_length) == 1;
    if (ok && length > 0) ok = EVP_CipherUpdate(context, output, &written, input, (int)length) == 1;
    if (ok && !encrypt) ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1;
    // Decrypting, the final step is where the tag is checked: it fails for a forged or altered input.
    if (ok) ok = EVP_CipherFinal_ex(context, output + (length > 0 ? written : 0), &written) == 1;
    if (ok && encrypt) ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(context);
    return ok;
}

int sb_aes256gcm_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t aad_length,
                      const uint8_t *plain, size_t length, uint8_t *sealed, uint8_t tag[16]) {
    return aes256gcm(1, key, nonce, aad, aad_length, plain, length, sealed, tag);
}

int sb_aes256gcm_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t aad_length,
                      const uint8_t *sealed, size_t length, const uint8_t tag[16], uint8_t *plain) {
    return aes256gcm(0, key, nonce, aad, aad_length, sealed, length, plain, (uint8_t *)tag);
}
