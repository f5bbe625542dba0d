/*
 * The floor under a webhook delivery's own CPU: POSTs of a webhook-sized body with libcurl's easy interface, one at
 * a time over one kept connection, with the headers a delivery sends, and nothing else (no database, no signing, no
 * hand-offs). Prints the process's CPU per POST. bench/delivery.sh runs it against the same receiver.
 *
 *   curl_post URL [COUNT]
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL [COUNT]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1];
    int count = argc > 2 ? atoi(argv[2]) : 5000;
    char body[420];
    memset(body, 'x', sizeof(body));
    body[0] = '{';
    body[sizeof(body) - 1] = '}';
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *curl = curl_easy_init();
    double start = cpu_seconds();
    for (int i = 0; i < count; i++) {
        curl_easy_reset(curl); /* as a delivery does: options from scratch, the connection kept */
        struct curl_slist *headers = NULL;
        headers = curl_slist_append(headers, "Content-Type: application/json");
        headers = curl_slist_append(headers, "webhook-id: msg_0123456789abcdef0123456789abcdef");
        headers = curl_slist_append(headers, "webhook-timestamp: 1760000000");
        headers = curl_slist_append(headers, "webhook-signature: v1,abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=");
        headers = curl_slist_append(headers, "Expect:");
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)sizeof(body));
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 15000L);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
        CURLcode code = curl_easy_perform(curl);
        curl_slist_free_all(headers);
        if (code != CURLE_OK) {
            fprintf(stderr, "POST failed: %s\n", curl_easy_strerror(code));
            return 1;
        }
    }
    printf("%.0f\n", (cpu_seconds() - start) * 1e6 / count);
    curl_easy_cleanup(curl);
    return 0;
}
