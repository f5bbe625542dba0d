/*
 * mhd-baseline: the raw-C libmicrohttpd reference server for Switchboard's benchmarks.
 *
 * It is the yardstick the Swift server is compared against, so it does the same thing the Swift
 * server does, in the leanest C:
 *
 *   GET /direct   200 {"status":"ok"}, queued on the final access-handler call (no suspend).
 *   GET /async    200 {"status":"ok"} through the async hop: the final call suspends the connection,
 *                 a worker thread (pool fed by a mutex+condvar queue) marks the request ready and
 *                 resumes it, MHD calls the handler again and the handler queues the response.
 *   GET /healthz  same as /async (lets this binary stand in for Switchboard when testing the scripts).
 *   GET /page     200 with a fixed JSON body of PAGE_BYTES bytes, queued at once from memory: the same bytes as
 *                 Switchboard's hot feed page, so the two compare like with like.
 *   GET /v1/feeds/{key}  the same page with the hot feed's obligations, in the leanest C (feed.c): a bearer
 *                 token looked up under a lock and its expiry checked, the page looked up under another lock (with
 *                 its change count) and held by a reference count while it is sent, If-None-Match answered with
 *                 304, the client's X-Request-ID echoed or one generated, ETag, Cache-Control, Content-Type and
 *                 X-Request-ID on a response made per request, and the request counted and timed. Answers only
 *                 the token FEED_TOKEN and the key FEED_KEY (default "launch"); anything else is 401 or 404.
 *   POST /hook    204, the body read and dropped, counted: a webhook receiver that answers at once.
 *   GET /count    200 with the number of /hook requests answered so far.
 *   anything else 404 (405 for a known path with another method).
 *
 * Environment / arguments:
 *   PORT      listening port (default 8090)
 *   HOST      listening IPv4 address (default 127.0.0.1)
 *   THREADS   MHD thread-pool size (default: number of online cores); argv[1] overrides it
 *   WORKERS   async worker threads (default: number of online cores)
 *   PAGE_BYTES size of the /page body (default 5440, a 20-item feed page)
 *   FEED_TOKEN the bearer token /v1/feeds/{key} accepts (default: none, so every feed request is 401)
 *   FEED_KEY   the one feed key it knows (default "launch"); FEED_ETAG the page's ETag (default W/"1-20")
 *
 * Build: gcc -O2 -Wall -o bench/c-baseline/mhd-baseline bench/c-baseline/baseline.c -lmicrohttpd -lpthread
 * (feed.c is included by this file, so the command stays one file).
 * Stops cleanly on SIGTERM / SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BODY_OK "{\"status\":\"ok\"}"
#define BODY_NOT_FOUND "{\"error\":\"not found\"}"
#define BODY_NOT_ALLOWED "{\"error\":\"method not allowed\"}"

enum route { ROUTE_NONE = 0, ROUTE_DIRECT, ROUTE_PAGE, ROUTE_FEED, ROUTE_HOOK, ROUTE_COUNT, ROUTE_ASYNC, ROUTE_NOT_FOUND, ROUTE_NOT_ALLOWED };

static atomic_ulong hooks_received;

#include "handoff.h"
#include "process.h"

/* Per-request context, stored in *con_cls and freed in the completion callback. */
struct request {
    struct handoff handoff; /* the worker hands it straight back */
    enum route route;
};

static struct MHD_Response *resp_ok, *resp_page, *resp_empty, *resp_not_found, *resp_not_allowed;

#include "feed.c"

static atomic_bool stopping;

/* A worker: the "work" is the fixed body, so it hands each request straight back. */
static void *worker_main(void *arg) {
    (void)arg;
    struct handoff *h;
    while ((h = handoff_take()))
        handoff_return(h);
    return NULL;
}

static enum route route_for(const char *url, const char *method) {
    enum route r;
    if (strcmp(url, "/hook") == 0)
        return strcmp(method, MHD_HTTP_METHOD_POST) == 0 ? ROUTE_HOOK : ROUTE_NOT_ALLOWED;
    if (strcmp(url, "/count") == 0)
        r = ROUTE_COUNT;
    else if (strcmp(url, "/direct") == 0)
        r = ROUTE_DIRECT;
    else if (strcmp(url, "/page") == 0)
        r = ROUTE_PAGE;
    else if (strncmp(url, FEED_PREFIX, sizeof FEED_PREFIX - 1) == 0)
        r = ROUTE_FEED;
    else if (strcmp(url, "/async") == 0 || strcmp(url, "/healthz") == 0)
        r = ROUTE_ASYNC;
    else
        return ROUTE_NOT_FOUND;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return ROUTE_NOT_ALLOWED;
    return r;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *connection, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls) {
    (void)cls;
    (void)version;
    (void)upload_data;
    struct request *r = *con_cls;

    if (r == NULL) {
        /* First call (headers only). Queuing here would force Connection: close: just set up. */
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        r->route = route_for(url, method);
        r->handoff.connection = connection;
        *con_cls = r;
        return MHD_YES;
    }

    if (*upload_data_size != 0) { /* a body we do not need: discard it */
        *upload_data_size = 0;
        return MHD_YES;
    }

    switch (r->route) {
    case ROUTE_DIRECT:
        return MHD_queue_response(connection, MHD_HTTP_OK, resp_ok);
    case ROUTE_PAGE:
        return MHD_queue_response(connection, MHD_HTTP_OK, resp_page);
    case ROUTE_FEED:
        return feed_answer(connection, url);
    case ROUTE_HOOK:
        atomic_fetch_add_explicit(&hooks_received, 1, memory_order_relaxed);
        return MHD_queue_response(connection, MHD_HTTP_NO_CONTENT, resp_empty);
    case ROUTE_COUNT: {
        char text[32];
        int length = snprintf(text, sizeof text, "%lu", atomic_load_explicit(&hooks_received, memory_order_relaxed));
        struct MHD_Response *count = MHD_create_response_from_buffer((size_t)length, text, MHD_RESPMEM_MUST_COPY);
        if (!count)
            return MHD_NO;
        enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, count);
        MHD_destroy_response(count);
        return queued;
    }
    case ROUTE_NOT_FOUND:
        return MHD_queue_response(connection, MHD_HTTP_NOT_FOUND, resp_not_found);
    case ROUTE_NOT_ALLOWED:
        return MHD_queue_response(connection, MHD_HTTP_METHOD_NOT_ALLOWED, resp_not_allowed);
    case ROUTE_ASYNC: {
        if (handoff_returned(&r->handoff)) /* called again after the worker resumed us */
            return MHD_queue_response(connection, MHD_HTTP_OK, resp_ok);
        /* shutting down: answer without suspending, so nothing is left suspended */
        if (atomic_load_explicit(&stopping, memory_order_relaxed))
            return MHD_queue_response(connection, MHD_HTTP_OK, resp_ok);
        handoff_suspend(&r->handoff);
        return MHD_YES; /* never NO after suspending */
    }
    case ROUTE_NONE:
        break;
    }
    return MHD_NO;
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)connection;
    (void)toe;
    struct request *r = *con_cls;
    if (!r)
        return;
    handoff_completed(&r->handoff);
    free(r);
    *con_cls = NULL;
}

static struct MHD_Response *make_response(const char *body) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!resp || MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") != MHD_YES) {
        fprintf(stderr, "mhd-baseline: cannot create response\n");
        exit(1);
    }
    return resp;
}

/* A JSON body of exactly `size` bytes (at least 16): {"items":"xxx…"}. Kept for the process's life. */
static const char *make_page(unsigned size) {
    if (size < 16)
        size = 16;
    char *body = malloc(size + 1);
    if (!body) {
        fprintf(stderr, "mhd-baseline: out of memory\n");
        exit(1);
    }
    const char *head = "{\"items\":\"";
    size_t head_len = strlen(head);
    memcpy(body, head, head_len);
    memset(body + head_len, 'x', size - head_len - 2);
    body[size - 2] = '"';
    body[size - 1] = '}';
    body[size] = '\0';
    return body;
}

static unsigned parse_number(const char *s, const char *what, long max) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > max) {
        fprintf(stderr, "mhd-baseline: bad %s: %s\n", what, s);
        exit(2);
    }
    return (unsigned)v;
}

static unsigned parse_count(const char *s, const char *what) { return parse_number(s, what, 1024); }

int main(int argc, char **argv) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned cores = ncpu > 0 ? (unsigned)ncpu : 1;
    unsigned threads = cores, workers = cores;
    const char *env;
    if ((env = getenv("THREADS")) && *env)
        threads = parse_count(env, "THREADS");
    if (argc > 1)
        threads = parse_count(argv[1], "thread count");
    if ((env = getenv("WORKERS")) && *env)
        workers = parse_count(env, "WORKERS");

    unsigned port = 8090;
    if ((env = getenv("PORT")) && *env) {
        char *end;
        long p = strtol(env, &end, 10);
        if (*end || p < 1 || p > 65535) {
            fprintf(stderr, "mhd-baseline: bad PORT: %s\n", env);
            return 2;
        }
        port = (unsigned)p;
    }
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    const char *host = (env = getenv("HOST")) && *env ? env : "127.0.0.1";
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        fprintf(stderr, "mhd-baseline: bad HOST (IPv4 address expected): %s\n", host);
        return 2;
    }

    unsigned long long descriptors = process_raise_descriptor_limit("mhd-baseline");
    /* Block the stop signals in every thread; main waits for them with sigwait. */
    sigset_t stop_set;
    process_block_stop_signals(&stop_set);

    resp_ok = make_response(BODY_OK);
    resp_empty = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp_empty)
        return 1;
    const char *page_bytes = getenv("PAGE_BYTES");
    unsigned page_size = page_bytes ? parse_number(page_bytes, "PAGE_BYTES", 1 << 24) : 5440;
    const char *page = make_page(page_size);
    resp_page = make_response(page);
    feed_setup(page, page_size);
    resp_not_found = make_response(BODY_NOT_FOUND);
    resp_not_allowed = make_response(BODY_NOT_ALLOWED);
    if (MHD_add_response_header(resp_not_allowed, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES)
        return 1;

    pthread_t *worker_ids = calloc(workers, sizeof *worker_ids);
    if (!worker_ids)
        return 1;
    for (unsigned i = 0; i < workers; i++) {
        if (pthread_create(&worker_ids[i], NULL, worker_main, NULL) != 0) {
            fprintf(stderr, "mhd-baseline: cannot start worker thread\n");
            return 1;
        }
    }

    /* Options as an array so that the pool size can be left out for one thread (MHD warns on 1). */
    struct MHD_OptionItem opts[8];
    unsigned n = 0;
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
    if (threads > 1)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, 10000, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handler, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "mhd-baseline: cannot start daemon on %s:%u\n", host, port);
        return 1;
    }
    fprintf(stderr, "mhd-baseline: listening on http://%s:%u (%u MHD threads, %u workers, rlimit %llu)\n",
            host, port, threads, workers, descriptors);

    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0)
        ;

    /* Clean shutdown: stop accepting, answer new async requests inline, wait (bounded) until nothing is
     * suspended (MHD_stop_daemon with a suspended connection aborts), then stop the daemon and workers. */
    atomic_store(&stopping, true);
    MHD_socket lsock = MHD_quiesce_daemon(d);
    long left = handoff_settle();
    if (left > 0)
        fprintf(stderr, "mhd-baseline: %ld requests still suspended at shutdown\n", left);
    MHD_stop_daemon(d);
    if (lsock != MHD_INVALID_SOCKET)
        close(lsock);

    handoff_stop();
    for (unsigned i = 0; i < workers; i++)
        pthread_join(worker_ids[i], NULL);
    free(worker_ids);

    MHD_destroy_response(resp_ok);
    MHD_destroy_response(resp_page);
    MHD_destroy_response(resp_empty);
    MHD_destroy_response(resp_not_found);
    MHD_destroy_response(resp_not_allowed);
    fprintf(stderr, "mhd-baseline: stopped (signal %d)\n", sig);
    return 0;
}
