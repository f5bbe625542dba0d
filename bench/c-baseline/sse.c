/*
 * mhd-sse: event-stream fan-out in the leanest C on libmicrohttpd, suspending and resuming each stream the way
 * Switchboard's event-stream daemon does. It tells how much of Switchboard's fan-out time libmicrohttpd itself takes.
 *
 *   GET /sub/{channel}   200 text/event-stream, a callback response. Its reader copies what the stream has buffered
 *                        or, with nothing buffered, suspends the connection (MHD_suspend_connection inside the
 *                        reader, under the stream's lock, returning 0), as Switchboard's ServerCore.read does.
 *                        The stream opens with a comment line, as Switchboard's opens with its state event.
 *   POST /pub/{channel}  the body becomes one event ("data: <body>\n\n"); every stream gets a copy in its buffer, and
 *                        each suspended one is resumed (MHD_resume_connection, outside the stream's lock), as
 *                        Switchboard's StreamWriter.write does. Answered 201 once every stream has it queued.
 *   GET /healthz         200 {"status":"ok"}.
 *
 * The channel is not looked at: every stream hears every publish (the benchmark has one channel). The daemon is set
 * up as Switchboard's event-stream daemon is: epoll, an internal thread pool of THREADS (default: online cores),
 * suspend/resume, 4 KiB of memory per connection, a 256-byte reader block, a listen queue of 4096. There is no
 * database, no authentication and no log: what is left is libmicrohttpd's work and the kernel's.
 *
 * Environment: PORT (8091), HOST (127.0.0.1), THREADS (online cores).
 * Build: gcc -O2 -Wall -o bench/c-baseline/mhd-sse bench/c-baseline/sse.c -lmicrohttpd -lpthread (process.h is
 * included by this file).
 * Stops cleanly on SIGTERM / SIGINT: every stream is ended, then the daemon stops.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "process.h"

#define OPENING ": open\n\n"
#define BODY_OK "{\"status\":\"ok\"}"
#define MAX_EVENT 4096

/* One event stream. The reader (libmicrohttpd's thread) and the publisher (another request's thread) meet under
 * `lock`; `next` is guarded by streams_lock. Freed by the publisher or at shutdown once `closed` is set: after the
 * response's free callback sets it, libmicrohttpd no longer touches the stream. */
struct stream {
    pthread_mutex_t lock;
    struct MHD_Connection *connection;
    char *buffer;      /* guarded by lock: bytes not yet handed to libmicrohttpd, from `offset` to `length` */
    size_t offset, length, capacity;
    bool suspended;    /* guarded by lock: set right before MHD_suspend_connection */
    bool ended;        /* guarded by lock: end the response once the buffer is sent (shutdown) */
    bool closed;       /* guarded by lock: libmicrohttpd destroyed the response */
    struct stream *next;
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stream *streams; /* guarded by streams_lock */
static long stream_count;      /* guarded by streams_lock: streams not yet closed */

/* A publish's body, gathered over the upload calls. */
struct upload {
    char body[MAX_EVENT];
    size_t length;
    bool too_large;
};

static void append(struct stream *s, const char *bytes, size_t count) {
    if (s->offset == s->length) s->offset = s->length = 0;
    if (s->length + count > s->capacity) {
        size_t wanted = s->capacity ? s->capacity : 256;
        while (wanted < s->length + count) wanted *= 2;
        char *grown = realloc(s->buffer, wanted);
        if (!grown) abort();
        s->buffer = grown;
        s->capacity = wanted;
    }
    memcpy(s->buffer + s->length, bytes, count);
    s->length += count;
}

static ssize_t reader(void *cls, uint64_t pos, char *out, size_t max) {
    (void)pos;
    struct stream *s = cls;
    ssize_t result;
    pthread_mutex_lock(&s->lock);
    if (s->offset < s->length) {
        size_t count = s->length - s->offset < max ? s->length - s->offset : max;
        memcpy(out, s->buffer + s->offset, count);
        s->offset += count;
        result = (ssize_t)count;
    } else if (s->ended) {
        result = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        s->suspended = true;
        MHD_suspend_connection(s->connection); /* under the lock: no publisher resumes it before it is suspended */
        result = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return result;
}

static void reader_free(void *cls) {
    struct stream *s = cls;
    pthread_mutex_lock(&s->lock);
    s->closed = true;
    pthread_mutex_unlock(&s->lock);
}

/* Appends `count` bytes to every open stream and resumes the suspended ones; unlinks and frees the closed ones. */
static void publish(const char *bytes, size_t count) {
    pthread_mutex_lock(&streams_lock);
    for (struct stream **link = &streams; *link;) {
        struct stream *s = *link;
        pthread_mutex_lock(&s->lock);
        if (s->closed) {
            pthread_mutex_unlock(&s->lock);
            *link = s->next;
            stream_count--;
            pthread_mutex_destroy(&s->lock);
            free(s->buffer);
            free(s);
            continue;
        }
        append(s, bytes, count);
        bool resume = s->suspended;
        s->suspended = false;
        pthread_mutex_unlock(&s->lock);
        if (resume) MHD_resume_connection(s->connection);
        link = &s->next;
    }
    pthread_mutex_unlock(&streams_lock);
}

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned status, const char *body, const char *type) {
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result result = MHD_queue_response(connection, status, r);
    MHD_destroy_response(r);
    return result;
}

static enum MHD_Result subscribe(struct MHD_Connection *connection) {
    struct stream *s = calloc(1, sizeof *s);
    if (!s) return MHD_NO;
    pthread_mutex_init(&s->lock, NULL);
    s->connection = connection;
    append(s, OPENING, sizeof OPENING - 1);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, reader, s, reader_free);
    if (!r) { free(s->buffer); free(s); return MHD_NO; }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    pthread_mutex_lock(&streams_lock);
    s->next = streams;
    streams = s;
    stream_count++;
    pthread_mutex_unlock(&streams_lock);
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, r);
    MHD_destroy_response(r); /* on failure this frees the stream's response, and reader_free marks it closed */
    return result;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_size, void **con_cls) {
    (void)cls; (void)version;
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    if (get && strncmp(url, "/sub/", 5) == 0) return subscribe(connection);
    if (get && strcmp(url, "/healthz") == 0) return answer(connection, MHD_HTTP_OK, BODY_OK, "application/json");
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0 || strncmp(url, "/pub/", 5) != 0)
        return answer(connection, MHD_HTTP_NOT_FOUND, "{\"error\":\"not found\"}", "application/json");
    struct upload *u = *con_cls;
    if (!u) {
        if (!(u = calloc(1, sizeof *u))) return MHD_NO;
        *con_cls = u;
        return MHD_YES;
    }
    if (*upload_size) {
        if (u->length + *upload_size > MAX_EVENT - 16) u->too_large = true;
        else { memcpy(u->body + u->length, upload_data, *upload_size); u->length += *upload_size; }
        *upload_size = 0;
        return MHD_YES;
    }
    if (u->too_large) return answer(connection, MHD_HTTP_CONTENT_TOO_LARGE, "{\"error\":\"too large\"}", "application/json");
    char event[MAX_EVENT + 16];
    int length = snprintf(event, sizeof event, "data: %.*s\n\n", (int)u->length, u->body);
    publish(event, (size_t)length);
    return answer(connection, MHD_HTTP_CREATED, BODY_OK, "application/json");
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                      enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    free(*con_cls); /* a publish's upload; NULL for everything else */
    *con_cls = NULL;
}

/* Ends every stream and waits (bounded) until libmicrohttpd has closed them: it aborts when stopped with a
 * connection still suspended. */
static void end_streams(void) {
    pthread_mutex_lock(&streams_lock);
    for (struct stream *s = streams; s; s = s->next) {
        pthread_mutex_lock(&s->lock);
        s->ended = true;
        bool resume = s->suspended && !s->closed;
        s->suspended = false;
        pthread_mutex_unlock(&s->lock);
        if (resume) MHD_resume_connection(s->connection);
    }
    pthread_mutex_unlock(&streams_lock);
    for (int waited = 0; waited < 500; waited++) {
        long open = 0;
        pthread_mutex_lock(&streams_lock);
        for (struct stream *s = streams; s; s = s->next) {
            pthread_mutex_lock(&s->lock);
            open += !s->closed;
            pthread_mutex_unlock(&s->lock);
        }
        pthread_mutex_unlock(&streams_lock);
        if (open == 0) return;
        usleep(10000);
    }
}

int main(void) {
    const char *host = getenv("HOST") ? getenv("HOST") : "127.0.0.1";
    unsigned port = getenv("PORT") ? (unsigned)atoi(getenv("PORT")) : 8091;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = getenv("THREADS") ? (unsigned)atoi(getenv("THREADS")) : (unsigned)(cores > 0 ? cores : 1);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) { fprintf(stderr, "mhd-sse: bad HOST %s\n", host); return 2; }

    process_raise_descriptor_limit("mhd-sse");
    sigset_t stop_set;
    process_block_stop_signals(&stop_set);

    struct MHD_OptionItem opts[8];
    unsigned n = 0;
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
    if (threads > 1) opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, 60000, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, 4 * 1024, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handler, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    if (!d) { fprintf(stderr, "mhd-sse: cannot start on %s:%u\n", host, port); return 1; }
    fprintf(stderr, "mhd-sse: listening on http://%s:%u (%u threads)\n", host, port, threads);

    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0) {}
    end_streams();
    MHD_stop_daemon(d);
    fprintf(stderr, "mhd-sse: stopped (signal %d)\n", sig);
    return 0;
}
