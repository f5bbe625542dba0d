#ifndef CCURL_H
#define CCURL_H

#include <stddef.h>
#include <stdint.h>

/// What one POST came to: the response status (0 when none arrived), curl's result code and message, the
/// `Retry-After` header's value (empty when absent) and the time taken.
typedef struct sb_http_result {
    long status;
    int curl_code;
    char error[256];
    char retry_after[64];
    double seconds;
} sb_http_result;

/// Initialises libcurl once for the process (curl_global_init is not safe to race); returns curl's code.
int sb_curl_global_init(void);

/// A reusable transfer handle: it keeps the connections it opened (HTTP keep-alive) and its TLS sessions between
/// posts. Use one per thread; NULL when libcurl cannot be initialised.
void *sb_curl_handle_new(void);

/// Frees a handle from `sb_curl_handle_new` (NULL does nothing), closing its connections.
void sb_curl_handle_free(void *handle);

/// POSTs `body` to `url` with `headers` ("Name: value"), following no redirect, through no proxy, over http or https
/// only, with TLS verification on, within `timeout_ms` (connection included). `resolve`, when not NULL, is a curl
/// RESOLVE entry ("host:port:addr[,addr]") that pins the connection to addresses the caller has checked. The
/// response body is read and discarded. `handle` (from `sb_curl_handle_new`, or NULL for a one-off handle) may reuse
/// a connection it opened before to the same host and port. Blocking: call it on a thread of its own.
void sb_curl_post(void *handle, const char *url, const char *resolve, const char *const *headers, size_t header_count,
                  const uint8_t *body, size_t body_length, long timeout_ms, sb_http_result *result);

#endif
