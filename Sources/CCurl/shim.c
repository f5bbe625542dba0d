#include "CCurl.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
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

void *sb_curl_handle_new(void) {
    if (sb_curl_global_init() != 0) return NULL;
    return curl_easy_init();
}

void sb_curl_handle_free(void *handle) {
    if (handle) curl_easy_cleanup(handle);
}

void sb_curl_post(void *handle, const char *url, const char *resolve, const char *const *headers, size_t header_count,
                  const uint8_t *body, size_t body_length, long timeout_ms, sb_http_result *result) {
    memset(result, 0, sizeof(*result));
    if (sb_curl_global_init() != 0) {
        result->curl_code = CURLE_FAILED_INIT;
        snprintf(result->error, sizeof(result->error), "libcurl could not be initialised");
        return;
    }
    // A kept handle starts from default options (its connection and TLS session caches survive the reset).
    CURL *curl = handle;
    if (curl) curl_easy_reset(curl); else curl = curl_easy_init();
    if (!curl) {
        result->curl_code = CURLE_FAILED_INIT;
        snprintf(result->error, sizeof(result->error), "curl_easy_init failed");
        return;
    }
    struct curl_slist *header_list = NULL;
    for (size_t i = 0; i < header_count; i++) header_list = curl_slist_append(header_list, headers[i]);
    header_list = curl_slist_append(header_list, "Expect:");
    struct curl_slist *resolve_list = resolve ? curl_slist_append(NULL, resolve) : NULL;
    char error[CURL_ERROR_SIZE];
    error[0] = 0;

    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, header_list);
    if (resolve_list) curl_easy_setopt(curl, CURLOPT_RESOLVE, resolve_list);
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
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, header_line);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, result);

    CURLcode code = curl_easy_perform(curl);
    result->curl_code = (int)code;
    if (code == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->status);
    } else {
        snprintf(result->error, sizeof(result->error), "%s", error[0] ? error : curl_easy_strerror(code));
    }
    curl_easy_getinfo(curl, CURLINFO_TOTAL_TIME, &result->seconds);
    // Nothing of this call may be pointed at once it returns (a kept handle lives on).
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, NULL);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(curl, CURLOPT_RESOLVE, NULL);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, NULL);
    if (curl != handle) curl_easy_cleanup(curl);
    curl_slist_free_all(header_list);
    curl_slist_free_all(resolve_list);
}
