/*
 * mhd-message: a text message's POST in the leanest C this author could write, so that Switchboard's CPU per POST
 * can be set beside C doing the same work in the same run, not only beside pgbench (which does no HTTP) or Python.
 *
 *   POST /v1/interactions/{id}/messages   {"text": "..."}   -> 201 with the message's JSON, as Switchboard answers
 *   GET /healthz                                             -> 200 once it listens (for the benchmark's start)
 *
 * Per request, as Switchboard's POST does with the benchmark's settings (no access log, no rate limit):
 *   - the path's interaction id read and checked (a UUID, 36 characters);
 *   - the Authorization header read, a bearer token looked up in a table under a lock, its expiry checked;
 *   - the body gathered (at most 64 KiB: 413 beyond), its Content-Type checked, the JSON object read strictly
 *     (one key, "text", a string: escapes decoded, UTF-8 checked), the text's length checked (1-4,000 code points);
 *   - a random (version 4) message id from getrandom, the event's payload and the answer's pieces written as JSON;
 *   - the connection suspended and the request handed to a worker thread, which runs bench/c-baseline/message.sql
 *     (the statement Switchboard runs, checked by its test suite) as a prepared statement on its own connection:
 *     the lock, the append, the inbox's change, the notice, one round trip;
 *   - 201 with the answer the statement assembled, 404 (no such interaction) or 409 (it is over), with
 *     Content-Type and X-Request-ID (the client's when sane, else one generated); the request counted by status
 *     and timed in a histogram (atomics);
 *   - the notice the statement sends read back on a LISTEN connection and parsed (its interaction id and seq), as
 *     each of Switchboard's replicas reads its own.
 * A worker waits on its connection (libpq's blocking calls): the cheapest wait there is, and the pool's size bounds
 * the statements in flight as Switchboard's pool does.
 *
 * Environment:
 *   PORT (8091), HOST (127.0.0.1), DATABASE_URL (libpq connection string; required), WORKERS (8: connections),
 *   MESSAGE_SQL (path of message.sql; required), MESSAGE_TOKEN (the one bearer token accepted; required),
 *   MESSAGE_TENANT (its tenant's UUID; required), MESSAGE_USER (agent-1), MESSAGE_ROLE (agent).
 *
 * Build: gcc -O2 -Wall -I"$(pg_config --includedir)" -o bench/c-baseline/mhd-message bench/c-baseline/message.c
 *        -lmicrohttpd -lpq -lpthread
 * Stops cleanly on SIGTERM / SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libpq-fe.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "handoff.h"
#include "process.h"

#define PATH_PREFIX "/v1/interactions/"
#define PATH_SUFFIX "/messages"
#define BODY_LIMIT (64 * 1024)
#define TEXT_LIMIT 4000
#define TOKEN_BUCKETS 1024

/* ---- What a request carries from its first call to its answer ---- */

struct message_request {
    struct handoff handoff; /* first: a worker gets the request back by a cast */
    char interaction[37];
    unsigned status;    /* 0 while it may still be stored; the answer's status once known */
    char *body;         /* the request's bytes, then the answer's (malloc'd) */
    size_t length;
    size_t capacity;
    char *payload;      /* $4, $5, $6 of the statement */
    char *middle;
    char *tail;
    struct timespec started;
};

static atomic_bool stopping;

static const char *database_url, *statement_sql, *sender_id, *sender_role;
static char sender_id_json[256], sender_role_json[64];

/* ---- Counting, as feed.c does ---- */

#define DURATION_BUCKETS 16
static atomic_ulong status_counts[6];
static atomic_ulong duration_buckets[DURATION_BUCKETS]; /* 1 µs, 2 µs, ... doubling */
static atomic_ulong notices_read;

static void count(const struct message_request *r, unsigned status) {
    atomic_fetch_add_explicit(&status_counts[status / 100 < 6 ? status / 100 : 5], 1, memory_order_relaxed);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long micros = (now.tv_sec - r->started.tv_sec) * 1000000L + (now.tv_nsec - r->started.tv_nsec) / 1000;
    unsigned bucket = 0;
    while (bucket + 1 < DURATION_BUCKETS && micros > (1L << bucket))
        bucket++;
    atomic_fetch_add_explicit(&duration_buckets[bucket], 1, memory_order_relaxed);
}

/* ---- Tokens: one table under a lock, as Switchboard's token cache is ---- */

struct token_entry {
    char *token;
    size_t length;
    char tenant[37];
    time_t expires_at;
    struct token_entry *next;
};
static struct token_entry *tokens[TOKEN_BUCKETS]; /* guarded by tokens_lock */
static pthread_mutex_t tokens_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a(const char *bytes, size_t length) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ (unsigned char)bytes[i]) * 0x100000001b3ULL;
    return hash;
}

/* Copies out the tenant of a known, unexpired bearer token; false for anything else. */
static bool authenticate(const char *header, char tenant[37]) {
    static const char scheme[] = "Bearer ";
    if (!header || strncmp(header, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *token = header + sizeof scheme - 1;
    size_t length = strlen(token);
    bool found = false;
    time_t expires_at = 0;
    pthread_mutex_lock(&tokens_lock);
    for (struct token_entry *e = tokens[fnv1a(token, length) % TOKEN_BUCKETS]; e; e = e->next) {
        if (e->length == length && memcmp(e->token, token, length) == 0) {
            memcpy(tenant, e->tenant, 37);
            expires_at = e->expires_at;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&tokens_lock);
    return found && expires_at > time(NULL);
}

/* ---- JSON: the one object a text message is, read strictly; strings written escaped ---- */

struct buffer {
    char *bytes;
    size_t length, capacity;
};

static bool put(struct buffer *b, const char *bytes, size_t length) {
    if (b->length + length + 1 > b->capacity) {
        size_t capacity = (b->length + length + 1) * 2;
        char *grown = realloc(b->bytes, capacity);
        if (!grown)
            return false;
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->length, bytes, length);
    b->length += length;
    b->bytes[b->length] = '\0';
    return true;
}

static bool put_code_point(struct buffer *b, uint32_t c) {
    char out[4];
    size_t n;
    if (c < 0x80) { out[0] = (char)c; n = 1; }
    else if (c < 0x800) { out[0] = (char)(0xC0 | c >> 6); out[1] = (char)(0x80 | (c & 0x3F)); n = 2; }
    else if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12); out[1] = (char)(0x80 | (c >> 6 & 0x3F)); out[2] = (char)(0x80 | (c & 0x3F)); n = 3;
    } else {
        out[0] = (char)(0xF0 | c >> 18); out[1] = (char)(0x80 | (c >> 12 & 0x3F));
        out[2] = (char)(0x80 | (c >> 6 & 0x3F)); out[3] = (char)(0x80 | (c & 0x3F)); n = 4;
    }
    return put(b, out, n);
}

/* The length of the well-formed UTF-8 sequence at p (at most `left` bytes), or 0; its code point in *c. */
static size_t utf8_sequence(const unsigned char *p, size_t left, uint32_t *c) {
    if (p[0] < 0x80) { *c = p[0]; return 1; }
    size_t n = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : 0;
    if (n == 0 || n > left)
        return 0;
    uint32_t value = p[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        value = value << 6 | (p[i] & 0x3F);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (value < least[n] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))
        return 0;
    *c = value;
    return n;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool read_hex4(const char **p, const char *end, uint32_t *value) {
    if (end - *p < 4)
        return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit((*p)[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint32_t)d;
    }
    *p += 4;
    *value = v;
    return true;
}

/* Reads the JSON string at *p (just past its opening quote) into out, counting its code points. */
static bool read_string(const char **p, const char *end, struct buffer *out, size_t *code_points) {
    const char *s = *p;
    while (s < end) {
        unsigned char c = (unsigned char)*s;
        if (c == '"') {
            *p = s + 1;
            return true;
        }
        uint32_t point;
        if (c == '\\') {
            if (++s == end)
                return false;
            char e = *s++;
            switch (e) {
            case '"': case '\\': case '/': point = (uint32_t)e; break;
            case 'b': point = '\b'; break;
            case 'f': point = '\f'; break;
            case 'n': point = '\n'; break;
            case 'r': point = '\r'; break;
            case 't': point = '\t'; break;
            case 'u': {
                if (!read_hex4(&s, end, &point))
                    return false;
                if (point >= 0xD800 && point <= 0xDBFF) {
                    uint32_t low;
                    if (end - s < 2 || s[0] != '\\' || s[1] != 'u')
                        return false;
                    s += 2;
                    if (!read_hex4(&s, end, &low) || low < 0xDC00 || low > 0xDFFF)
                        return false;
                    point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00);
                } else if (point >= 0xDC00 && point <= 0xDFFF) {
                    return false;
                }
                break;
            }
            default: return false;
            }
            if (!put_code_point(out, point))
                return false;
        } else {
            if (c < 0x20)
                return false;
            size_t n = utf8_sequence((const unsigned char *)s, (size_t)(end - s), &point);
            if (n == 0 || !put(out, s, n))
                return false;
            s += n;
        }
        (*code_points)++;
    }
    return false;
}

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The text of a body that is exactly {"text": "<string>"}, into text; false for anything else. */
static bool read_message(const char *body, size_t length, struct buffer *text, size_t *code_points) {
    const char *p = skip_space(body, body + length), *end = body + length;
    if (p == end || *p++ != '{')
        return false;
    p = skip_space(p, end);
    struct buffer key = {0};
    size_t key_points = 0;
    bool ok = p < end && *p++ == '"' && read_string(&p, end, &key, &key_points) && key.length == 4
        && memcmp(key.bytes, "text", 4) == 0;
    free(key.bytes);
    if (!ok)
        return false;
    p = skip_space(p, end);
    if (p == end || *p++ != ':')
        return false;
    p = skip_space(p, end);
    if (p == end || *p++ != '"' || !read_string(&p, end, text, code_points))
        return false;
    p = skip_space(p, end);
    if (p == end || *p++ != '}')
        return false;
    return skip_space(p, end) == end;
}

/* value as a JSON string, quotes included. */
static bool put_json_string(struct buffer *b, const char *value, size_t length) {
    static const char hex[] = "0123456789abcdef";
    if (!put(b, "\"", 1))
        return false;
    size_t run = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (!put(b, value + run, i - run))
            return false;
        char escape[6] = {'\\', 0};
        size_t n = 2;
        switch (c) {
        case '"': escape[1] = '"'; break;
        case '\\': escape[1] = '\\'; break;
        case '\n': escape[1] = 'n'; break;
        case '\r': escape[1] = 'r'; break;
        case '\t': escape[1] = 't'; break;
        case '\b': escape[1] = 'b'; break;
        case '\f': escape[1] = 'f'; break;
        default:
            memcpy(escape, "\\u00", 4);
            escape[4] = hex[c >> 4];
            escape[5] = hex[c & 15];
            n = 6;
        }
        if (!put(b, escape, n))
            return false;
        run = i + 1;
    }
    return put(b, value + run, length - run) && put(b, "\"", 1);
}

/* A version 4 UUID, lowercase, from getrandom. */
static bool random_uuid(char out[37]) {
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes)
        return false;
    bytes[6] = (unsigned char)((bytes[6] & 0x0F) | 0x40);
    bytes[8] = (unsigned char)((bytes[8] & 0x3F) | 0x80);
    static const char hex[] = "0123456789abcdef";
    size_t at = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[at++] = '-';
        out[at++] = hex[bytes[i] >> 4];
        out[at++] = hex[bytes[i] & 15];
    }
    out[at] = '\0';
    return true;
}

static bool is_uuid(const char *s, size_t length) {
    if (length != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : hex_digit(s[i]) < 0)
            return false;
    }
    return true;
}

/* Writes $4 (the event's payload: keys sorted), $5 and $6 (the answer but for its time and seq) for `text`. */
static bool build_pieces(struct message_request *r, const struct buffer *text) {
    char id[37];
    if (!random_uuid(id))
        return false;
    struct buffer payload = {0}, middle = {0}, tail = {0};
    bool ok = put(&payload, "{\"id\":\"", 7) && put(&payload, id, 36) && put(&payload, "\",\"sender_id\":", 14)
        && put(&payload, sender_id_json, strlen(sender_id_json)) && put(&payload, ",\"sender_role\":", 15)
        && put(&payload, sender_role_json, strlen(sender_role_json)) && put(&payload, ",\"text\":", 8)
        && put_json_string(&payload, text->bytes, text->length) && put(&payload, "}", 1)
        && put(&middle, "\",\"id\":\"", 8) && put(&middle, id, 36) && put(&middle, "\",\"sender_id\":", 14)
        && put(&middle, sender_id_json, strlen(sender_id_json)) && put(&middle, ",\"sender_role\":", 15)
        && put(&middle, sender_role_json, strlen(sender_role_json)) && put(&middle, ",\"seq\":", 7)
        && put(&tail, ",\"text\":", 8) && put_json_string(&tail, text->bytes, text->length) && put(&tail, "}", 1);
    r->payload = payload.bytes;
    r->middle = middle.bytes;
    r->tail = tail.bytes;
    return ok;
}

/* ---- Workers: one connection each, the statement prepared once ---- */

static void set_answer(struct message_request *r, unsigned status, const char *body) {
    free(r->body);
    r->body = strdup(body);
    r->length = r->body ? strlen(r->body) : 0;
    r->status = r->body ? status : 500;
}

static PGconn *connect_database(void) {
    PGconn *connection = PQconnectdb(database_url);
    if (PQstatus(connection) != CONNECTION_OK) {
        fprintf(stderr, "mhd-message: cannot connect: %s", PQerrorMessage(connection));
        PQfinish(connection);
        return NULL;
    }
    PGresult *prepared = PQprepare(connection, "message", statement_sql, 0, NULL);
    bool ok = PQresultStatus(prepared) == PGRES_COMMAND_OK;
    if (!ok)
        fprintf(stderr, "mhd-message: cannot prepare the statement: %s", PQerrorMessage(connection));
    PQclear(prepared);
    if (!ok) {
        PQfinish(connection);
        return NULL;
    }
    return connection;
}

static void store(PGconn **connection, struct message_request *r, const char *tenant) {
    if (!*connection && !(*connection = connect_database())) {
        set_answer(r, 503, "{\"title\":\"The database is unavailable.\",\"status\":503}");
        return;
    }
    const char *values[9] = {r->interaction, tenant, NULL, r->payload, r->middle, r->tail, NULL, NULL, NULL};
    PGresult *result = PQexecPrepared(*connection, "message", 9, values, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK || PQntuples(result) != 1) {
        set_answer(r, 503, "{\"title\":\"The message could not be stored.\",\"status\":503}");
        if (PQstatus(*connection) != CONNECTION_OK) {
            PQfinish(*connection);
            *connection = NULL;
        }
    } else if (PQgetisnull(result, 0, 0)) {
        set_answer(r, 404, "{\"title\":\"No such interaction.\",\"status\":404}");
    } else if (PQgetisnull(result, 0, 1)) {
        set_answer(r, 409, "{\"title\":\"The interaction is over.\",\"status\":409}");
    } else {
        set_answer(r, 201, PQgetvalue(result, 0, 1));
    }
    PQclear(result);
}

struct worker_start {
    char tenant[37];
};

static void *worker_main(void *argument) {
    const struct worker_start *start = argument;
    PGconn *connection = connect_database();
    struct handoff *h;
    while ((h = handoff_take())) {
        store(&connection, (struct message_request *)h, start->tenant);
        handoff_return(h); /* the request must not be touched after this */
    }
    PQfinish(connection);
    return NULL;
}

/* ---- The notice, read back as every replica reads its own ---- */

static void *listener_main(void *argument) {
    (void)argument;
    PGconn *connection = PQconnectdb(database_url);
    PGresult *listening = PQexec(connection, "LISTEN switchboard_interactions");
    bool ok = PQresultStatus(listening) == PGRES_COMMAND_OK;
    PQclear(listening);
    if (!ok) {
        fprintf(stderr, "mhd-message: cannot listen: %s", PQerrorMessage(connection));
        PQfinish(connection);
        return NULL;
    }
    struct pollfd socket_poll = {.fd = PQsocket(connection), .events = POLLIN};
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        if (poll(&socket_poll, 1, 200) <= 0)
            continue;
        if (!PQconsumeInput(connection))
            break;
        PGnotify *notice;
        while ((notice = PQnotifies(connection))) {
            const char *payload = notice->extra;
            char *end = NULL;
            if (strlen(payload) > 37 && payload[36] == ':' && is_uuid(payload, 36) && strtoll(payload + 37, &end, 10) > 0
                && *end == '\0')
                atomic_fetch_add_explicit(&notices_read, 1, memory_order_relaxed);
            PQfreemem(notice);
        }
    }
    PQfinish(connection);
    return NULL;
}

/* ---- HTTP ---- */

static char request_id_prefix[18];
static atomic_ulong request_id_counter;

static bool sane_request_id(const char *id) {
    size_t length = id ? strlen(id) : 0;
    if (length == 0 || length > 128)
        return false;
    for (size_t i = 0; i < length; i++)
        if (id[i] < 0x21 || id[i] > 0x7E)
            return false;
    return true;
}

static enum MHD_Result answer(struct MHD_Connection *connection, struct message_request *r) {
    if (!r->body || r->status == 0)
        set_answer(r, r->status ? r->status : 500, "{\"title\":\"Internal error.\",\"status\":500}");
    struct MHD_Response *response = MHD_create_response_from_buffer(r->length, r->body, MHD_RESPMEM_MUST_FREE);
    if (!response)
        return MHD_NO;
    r->body = NULL; /* the response owns it now */
    const char *supplied = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Request-ID");
    char generated[40];
    if (!sane_request_id(supplied)) {
        snprintf(generated, sizeof generated, "%s%lu", request_id_prefix,
                 atomic_fetch_add_explicit(&request_id_counter, 1, memory_order_relaxed));
        supplied = generated;
    }
    const char *type = r->status < 300 ? "application/json" : "application/problem+json";
    enum MHD_Result queued = MHD_NO;
    if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type) == MHD_YES
        && MHD_add_response_header(response, "X-Request-ID", supplied) == MHD_YES)
        queued = MHD_queue_response(connection, r->status, response);
    MHD_destroy_response(response);
    count(r, r->status);
    return queued;
}

static enum MHD_Result refuse(struct MHD_Connection *connection, struct message_request *r, unsigned status,
                              const char *title) {
    char body[160];
    snprintf(body, sizeof body, "{\"title\":\"%s\",\"status\":%u}", title, status);
    set_answer(r, status, body);
    return answer(connection, r);
}

/* Reads the request and hands it to a worker; called again once the worker has the answer. */
static enum MHD_Result handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                               const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
    (void)cls;
    (void)version;
    struct message_request *r = *con_cls;
    if (!r) {
        if (!(r = calloc(1, sizeof *r)))
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &r->started);
        r->handoff.connection = connection;
        *con_cls = r;
        if (strcmp(url, "/healthz") == 0) {
            r->status = 200;
            return MHD_YES;
        }
        size_t length = strlen(url), prefix = sizeof PATH_PREFIX - 1, suffix = sizeof PATH_SUFFIX - 1;
        if (length != prefix + 36 + suffix || strncmp(url, PATH_PREFIX, prefix) != 0
            || strcmp(url + prefix + 36, PATH_SUFFIX) != 0 || !is_uuid(url + prefix, 36))
            r->status = 404;
        else if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
            r->status = 405;
        else
            memcpy(r->interaction, url + prefix, 36);
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        if (r->status == 0 && r->length + *upload_data_size > BODY_LIMIT)
            r->status = 413;
        if (r->status == 0) {
            struct buffer b = {r->body, r->length, r->capacity};
            if (!put(&b, upload_data, *upload_data_size))
                r->status = 500;
            r->body = b.bytes, r->length = b.length, r->capacity = b.capacity;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (handoff_returned(&r->handoff))
        return answer(connection, r);
    switch (r->status) {
    case 200:
        set_answer(r, 200, "{\"status\":\"ok\"}");
        return answer(connection, r);
    case 404: return refuse(connection, r, 404, "No such route.");
    case 405: return refuse(connection, r, 405, "Method not allowed.");
    case 413: return refuse(connection, r, 413, "The body is too large.");
    case 500: return refuse(connection, r, 500, "Out of memory.");
    default: break;
    }
    char tenant[37];
    if (!authenticate(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION), tenant))
        return refuse(connection, r, 401, "A valid bearer token is required.");
    const char *type = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!type || strncmp(type, "application/json", 16) != 0)
        return refuse(connection, r, 415, "The body must be application/json.");
    struct buffer text = {0};
    size_t code_points = 0;
    bool read = read_message(r->body ? r->body : "", r->length, &text, &code_points);
    if (!read || code_points < 1 || code_points > TEXT_LIMIT || !build_pieces(r, &text)) {
        free(text.bytes);
        return refuse(connection, r, 400, read ? "text must be 1 to 4,000 characters." : "The body is not a message.");
    }
    free(text.bytes);
    if (atomic_load_explicit(&stopping, memory_order_relaxed))
        return refuse(connection, r, 503, "Stopping.");
    handoff_suspend(&r->handoff);
    return MHD_YES; /* never NO after suspending */
}

static void completed(void *cls, struct MHD_Connection *connection, void **con_cls, enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)connection;
    (void)toe;
    struct message_request *r = *con_cls;
    if (!r)
        return;
    handoff_completed(&r->handoff);
    free(r->body);
    free(r->payload);
    free(r->middle);
    free(r->tail);
    free(r);
    *con_cls = NULL;
}

static const char *required(const char *name) {
    const char *value = getenv(name);
    if (!value || !*value) {
        fprintf(stderr, "mhd-message: %s is required\n", name);
        exit(2);
    }
    return value;
}

static char *read_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "mhd-message: cannot read %s\n", path);
        exit(2);
    }
    struct buffer b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, file)) > 0)
        if (!put(&b, chunk, n))
            exit(1);
    fclose(file);
    return b.bytes;
}

int main(void) {
    database_url = required("DATABASE_URL");
    statement_sql = read_file(required("MESSAGE_SQL"));
    const char *token = required("MESSAGE_TOKEN");
    struct worker_start start;
    snprintf(start.tenant, sizeof start.tenant, "%s", required("MESSAGE_TENANT"));
    sender_id = getenv("MESSAGE_USER") && *getenv("MESSAGE_USER") ? getenv("MESSAGE_USER") : "agent-1";
    sender_role = getenv("MESSAGE_ROLE") && *getenv("MESSAGE_ROLE") ? getenv("MESSAGE_ROLE") : "agent";
    struct buffer id_json = {sender_id_json, 0, sizeof sender_id_json}, role_json = {sender_role_json, 0, sizeof sender_role_json};
    if (strlen(sender_id) > 100 || strlen(sender_role) > 20 || !put_json_string(&id_json, sender_id, strlen(sender_id))
        || !put_json_string(&role_json, sender_role, strlen(sender_role))) {
        fprintf(stderr, "mhd-message: MESSAGE_USER or MESSAGE_ROLE too long\n");
        return 2;
    }
    struct token_entry *entry = calloc(1, sizeof *entry);
    if (!entry || !(entry->token = strdup(token)))
        return 1;
    entry->length = strlen(token);
    memcpy(entry->tenant, start.tenant, 37);
    entry->expires_at = time(NULL) + 86400;
    tokens[fnv1a(token, entry->length) % TOKEN_BUCKETS] = entry;
    unsigned char prefix_bytes[8];
    if (getrandom(prefix_bytes, sizeof prefix_bytes, 0) != (ssize_t)sizeof prefix_bytes)
        return 1;
    for (int i = 0; i < 8; i++)
        snprintf(request_id_prefix + 2 * i, 3, "%02x", prefix_bytes[i]);
    request_id_prefix[16] = '-';

    unsigned port = getenv("PORT") ? (unsigned)atoi(getenv("PORT")) : 8091;
    unsigned workers = getenv("WORKERS") ? (unsigned)atoi(getenv("WORKERS")) : 8;
    if (port < 1 || port > 65535 || workers < 1 || workers > 256) {
        fprintf(stderr, "mhd-message: bad PORT or WORKERS\n");
        return 2;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    const char *host = getenv("HOST") && *getenv("HOST") ? getenv("HOST") : "127.0.0.1";
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) {
        fprintf(stderr, "mhd-message: bad HOST: %s\n", host);
        return 2;
    }

    process_raise_descriptor_limit("mhd-message");
    sigset_t stop_set;
    process_block_stop_signals(&stop_set);

    pthread_t listener, *worker_ids = calloc(workers, sizeof *worker_ids);
    if (!worker_ids || pthread_create(&listener, NULL, listener_main, NULL) != 0)
        return 1;
    for (unsigned i = 0; i < workers; i++)
        if (pthread_create(&worker_ids[i], NULL, worker_main, &start) != 0)
            return 1;

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, (uint16_t)port,
        NULL, NULL, handler, NULL, MHD_OPTION_SOCK_ADDR, &address, MHD_OPTION_CONNECTION_LIMIT, 10000,
        MHD_OPTION_CONNECTION_TIMEOUT, 60, MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "mhd-message: cannot listen on %s:%u\n", host, port);
        return 1;
    }
    fprintf(stderr, "mhd-message: listening on http://%s:%u (%u workers)\n", host, port, workers);

    int signal_number = 0;
    while (sigwait(&stop_set, &signal_number) != 0)
        ;
    /* Stop taking requests, let the suspended ones be answered (at most ~5 s), then stop everything. */
    atomic_store(&stopping, true);
    MHD_socket listening = MHD_quiesce_daemon(daemon);
    long left = handoff_settle();
    if (left > 0)
        fprintf(stderr, "mhd-message: %ld requests still suspended at shutdown\n", left);
    MHD_stop_daemon(daemon);
    if (listening != MHD_INVALID_SOCKET)
        close(listening);
    handoff_stop();
    for (unsigned i = 0; i < workers; i++)
        pthread_join(worker_ids[i], NULL);
    pthread_join(listener, NULL);
    free(worker_ids);
    unsigned long answered[6];
    for (int i = 0; i < 6; i++)
        answered[i] = atomic_load(&status_counts[i]);
    fprintf(stderr, "mhd-message: stopped (signal %d): %lu 2xx, %lu 4xx, %lu 5xx; %lu notices read\n", signal_number,
            answered[2], answered[4], answered[5], atomic_load(&notices_read));
    return 0;
}
