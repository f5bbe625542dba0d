#include "CCurl.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_code = 0;

static void global_init(void) { init_code = (int)curl_global_init(CURL_GLOBAL_DEFAULT); }

int sb_curl_global_init(void) {
    pthread_once(&once, global_init);
    return init_code;
}

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

/// Keeps the `Retry-After` value of the last response head (a redirect is not followed, so there is one).
static size_t header_line(char *line, size_t size, size_t count, void *user) {
    size_t length = size * count;
    sb_http_result *result = user;
    static const char name[] = "retry-after:";
    size_t name_length = sizeof(name) - 1;
    if (length > name_length && strncasecmp(line, name, name_length) == 0) {
        const char *value = line + name_length;
        size_t remaining = length - name_length;
        while (remaining > 0 && (*value == ' ' || *value == '\t')) { value++; remaining--; }
        while (remaining > 0 && isspace((unsigned char)value[remaining - 1])) remaining--;
        if (remaining >= sizeof(result->retry_after)) remaining = sizeof(result->retry_after) - 1;
        memcpy(result->retry_after, value, remaining);
        result->retry_after[remaining] = 0;
    }
    return length;
}

/// One POST in flight, or a finished one kept for reuse (its easy handle keeps its TLS session cache).
typedef struct transfer {
    CURL *easy;
    uint64_t tag;
    struct curl_slist *headers;
    struct curl_slist *resolve;
    char error[CURL_ERROR_SIZE];
    sb_http_result result;
    struct transfer *next_free;
    /// The transfers in flight, linked both ways (so that one is unlinked when it finishes).
    struct transfer *previous_active, *next_active;
} transfer;

typedef struct engine {
    CURLM *multi;
    transfer *free_list;
    transfer *active;
} engine;

static void link_active(engine *e, transfer *t) {
    t->previous_active = NULL;
    t->next_active = e->active;
    if (e->active) e->active->previous_active = t;
    e->active = t;
}

static void unlink_active(engine *e, transfer *t) {
    if (t->previous_active) t->previous_active->next_active = t->next_active; else e->active = t->next_active;
    if (t->next_active) t->next_active->previous_active = t->previous_active;
    t->previous_active = t->next_active = NULL;
}

void *sb_curl_engine_new(void) {
    if (sb_curl_global_init() != 0) return NULL;
    engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->multi = curl_multi_init();
    if (!e->multi) { free(e); return NULL; }
    // Left to itself, the multi handle keeps four idle connections per transfer in flight at the moment: as a burst
    // thinned out, it closed connections that the next burst opened again (a new connection every 30 deliveries to one
    // receiver, a burst of 16 at a time). A fixed size keeps them; idle ones still close after libcurl's maximum age.
    curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, 64L);
    return e;
}

/// Puts a transfer no longer in flight on the free list, its header and resolve lists freed.
static void recycle(engine *e, transfer *t) {
    curl_slist_free_all(t->headers);
    curl_slist_free_all(t->resolve);
    t->headers = NULL;
    t->resolve = NULL;
    t->next_free = e->free_list;
    e->free_list = t;
}

void sb_curl_engine_free(void *handle) {
    engine *e = handle;
    if (!e) return;
    while (e->active) {
        transfer *t = e->active;
        unlink_active(e, t);
        curl_multi_remove_handle(e->multi, t->easy);
        recycle(e, t);
    }
    while (e->free_list) {
        transfer *t = e->free_list;
        e->free_list = t->next_free;
        curl_easy_cleanup(t->easy);
        free(t);
    }
    curl_multi_cleanup(e->multi);
    free(e);
}

int sb_curl_engine_add(void *handle, uint64_t tag, const char *url, const char *resolve, const char *const *headers,
                       size_t header_count, const uint8_t *body, size_t body_length, long timeout_ms) {
    engine *e = handle;
    if (!e) return CURLE_FAILED_INIT;
    transfer *t = e->free_list;
    if (t) {
        e->free_list = t->next_free;
        curl_easy_reset(t->easy); // options back to defaults; its TLS session cache survives
    } else {
        t = calloc(1, sizeof(*t));
        if (!t) return CURLE_OUT_OF_MEMORY;
        t->easy = curl_easy_init();
        if (!t->easy) { free(t); return CURLE_FAILED_INIT; }
    }
    t->tag = tag;
    t->next_free = NULL;
    t->error[0] = 0;
    memset(&t->result, 0, sizeof(t->result));
    for (size_t i = 0; i < header_count; i++) t->headers = curl_slist_append(t->headers, headers[i]);
    t->headers = curl_slist_append(t->headers, "Expect:");
    if (resolve) t->resolve = curl_slist_append(NULL, resolve);
    CURL *curl = t->easy;
    curl_easy_setopt(curl, CURLOPT_PRIVATE, (char *)t);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    curl_easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, (const char *)body);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, t->headers);
    if (t->resolve) curl_easy_setopt(curl, CURLOPT_RESOLVE, t->resolve);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_PROXY, "");
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "Switchboard-Webhooks/1");
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, t->error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_line);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t->result);
    CURLMcode added = curl_multi_add_handle(e->multi, curl);
    if (added != CURLM_OK) {
        recycle(e, t);
        return CURLE_FAILED_INIT;
    }
    link_active(e, t);
    return 0;
}

/// Moves the finished transfers' outcomes to `done` (at most `capacity`); returns how many.
static int collect(engine *e, sb_curl_done *done, int capacity) {
    int count = 0;
    CURLMsg *message;
    int left;
    while (count < capacity && (message = curl_multi_info_read(e->multi, &left))) {
        if (message->msg != CURLMSG_DONE) continue;
        CURL *curl = message->easy_handle;
        transfer *t = NULL;
        curl_easy_getinfo(curl, CURLINFO_PRIVATE, (char **)&t);
        CURLcode code = message->data.result;
        t->result.curl_code = (int)code;
        if (code == CURLE_OK) {
            curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &t->result.status);
        } else {
            snprintf(t->result.error, sizeof(t->result.error), "%s", t->error[0] ? t->error : curl_easy_strerror(code));
        }
        curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &t->result.seconds);
        curl_multi_remove_handle(e->multi, curl);
        unlink_active(e, t);
        done[count].tag = t->tag;
        done[count].result = t->result;
        count++;
        recycle(e, t);
    }
    return count;
}

int sb_curl_engine_run(void *handle, int wait_ms, sb_curl_done *done, int capacity) {
    engine *e = handle;
    if (!e || capacity <= 0) return 0;
    int running = 0;
    curl_multi_perform(e->multi, &running);
    int count = collect(e, done, capacity);
    if (count > 0) return count;
    curl_multi_poll(e->multi, NULL, 0, wait_ms, NULL);
    curl_multi_perform(e->multi, &running);
    return collect(e, done, capacity);
}

void sb_curl_engine_wakeup(void *handle) {
    engine *e = handle;
    if (e) curl_multi_wakeup(e->multi);
}
