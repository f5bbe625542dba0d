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

/// One POST the engine finished: the tag it was added with, and what it came to.
typedef struct sb_curl_done {
    uint64_t tag;
    sb_http_result result;
} sb_curl_done;

/// A transfer engine: many POSTs in flight on one thread (a libcurl multi handle). The connections it opens are
/// kept for the next POSTs to the same host and port (HTTP keep-alive, TLS sessions). Every call but
/// `sb_curl_engine_wakeup` must be made on the one thread that runs it. NULL when libcurl cannot be initialised.
void *sb_curl_engine_new(void);

/// Frees an engine (NULL does nothing), abandoning the POSTs still in flight and closing its connections.
void sb_curl_engine_free(void *engine);

/// Starts POSTing `body` to `url` with `headers` ("Name: value"), following no redirect, through no proxy, over http
/// or https only, with TLS verification on, within `timeout_ms` (connection included). `resolve`, when not NULL, is
/// a curl RESOLVE entry ("host:port:addr[,addr]") that pins the connection to addresses the caller has checked. The
/// strings and the body are copied. The response body is read and discarded. Returns 0, or curl's code when the
/// POST could not be started (then it is not reported by `sb_curl_engine_run`).
int sb_curl_engine_add(void *engine, uint64_t tag, const char *url, const char *resolve, const char *const *headers,
                       size_t header_count, const uint8_t *body, size_t body_length, long timeout_ms);

/// Moves the POSTs in flight on; when none finished, waits for their sockets, curl's own timers or a wakeup, at most
/// `wait_ms`, and moves them on again. Writes the POSTs that finished (at most `capacity`) to `done`; returns how many.
int sb_curl_engine_run(void *engine, int wait_ms, sb_curl_done *done, int capacity);

/// Ends a wait in `sb_curl_engine_run` now, or the next one at once. The one call that is safe from any thread.
void sb_curl_engine_wakeup(void *engine);

#endif
