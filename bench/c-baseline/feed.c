/*
 * GET /v1/feeds/{key} for mhd-baseline: a page from memory with the obligations of Switchboard's hot feed, in the
 * leanest C this author could write, so that the hot feed can be compared with C doing the same work, not only with
 * C sending the same bytes (/page). Included by baseline.c; its globals are that file's.
 *
 * Per request, as the hot feed does:
 *   - the Authorization header read, a bearer token looked up in a table under a lock, its expiry checked;
 *   - the limit and cursor arguments read (only the first page of FEED_KEY is known here);
 *   - the page looked up under another lock by tenant and key, served only when its change count is current, and
 *     held by a reference count until libmicrohttpd has sent it (a write may replace it meanwhile);
 *   - If-None-Match compared with the page's ETag (304 without a body);
 *   - the client's X-Request-ID echoed when sane (1-128 visible ASCII characters), else one generated;
 *   - a response made for the request, with ETag, Cache-Control, Content-Type and X-Request-ID;
 *   - the request counted by status and its duration put in a histogram (atomics: the leanest form).
 * What the hot feed does beyond this is not here: a route table, an access log (off in the benchmark), rate
 * limiting (off in the benchmark).
 */

#define FEED_PREFIX "/v1/feeds/"
#define FEED_TABLE_SIZE 1024 /* buckets; both tables hold one entry in the benchmark, as the hot feed's caches do */

struct token_entry {
    const char *token;
    size_t length;
    unsigned char tenant[16];
    time_t expires_at;
    struct token_entry *next;
};

struct page_entry {
    unsigned char tenant[16];
    const char *key;
    size_t key_length;
    const char *body;
    size_t size;
    const char *etag;
    unsigned long cached_epoch;  /* guarded by pages_lock */
    unsigned long current_epoch; /* guarded by pages_lock: a write to the feed moves it on */
    atomic_long references;      /* the table's one, and one per response still being sent */
    struct page_entry *next;
};

static struct token_entry *token_table[FEED_TABLE_SIZE]; /* guarded by tokens_lock */
static pthread_mutex_t tokens_lock = PTHREAD_MUTEX_INITIALIZER;
static struct page_entry *page_table[FEED_TABLE_SIZE]; /* guarded by pages_lock */
static pthread_mutex_t pages_lock = PTHREAD_MUTEX_INITIALIZER;

static char request_id_prefix[18]; /* 16 hex digits and a dash */
static atomic_ulong request_id_counter;

#define FEED_BUCKETS 12
static atomic_ulong feed_status_counts[6];             /* by status class: 1xx .. 5xx */
static atomic_ulong feed_duration_buckets[FEED_BUCKETS]; /* 1 µs, 2 µs, ... doubling */

static uint64_t fnv1a(uint64_t hash, const void *bytes, size_t length) {
    const unsigned char *p = bytes;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ p[i]) * 0x100000001b3ULL;
    return hash;
}

static const uint64_t fnv_basis = 0xcbf29ce484222325ULL;

/* Copies out the tenant of a known, unexpired token; false for anything else. */
static bool feed_authenticate(const char *header, unsigned char tenant[16]) {
    static const char scheme[] = "Bearer ";
    if (!header || strncmp(header, scheme, sizeof scheme - 1) != 0)
        return false;
    const char *token = header + sizeof scheme - 1;
    size_t length = strlen(token);
    size_t bucket = fnv1a(fnv_basis, token, length) % FEED_TABLE_SIZE;
    time_t expires_at = 0;
    bool found = false;
    pthread_mutex_lock(&tokens_lock);
    for (struct token_entry *e = token_table[bucket]; e; e = e->next) {
        if (e->length == length && memcmp(e->token, token, length) == 0) {
            memcpy(tenant, e->tenant, 16);
            expires_at = e->expires_at;
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&tokens_lock);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return found && now.tv_sec < expires_at;
}

/* The current page of `key` for `tenant`, with a reference taken; NULL when not in memory. */
static struct page_entry *feed_page(const unsigned char tenant[16], const char *key, size_t key_length) {
    size_t bucket = fnv1a(fnv1a(fnv_basis, tenant, 16), key, key_length) % FEED_TABLE_SIZE;
    struct page_entry *found = NULL;
    pthread_mutex_lock(&pages_lock);
    for (struct page_entry *e = page_table[bucket]; e; e = e->next) {
        if (e->key_length == key_length && memcmp(e->key, key, key_length) == 0 && memcmp(e->tenant, tenant, 16) == 0) {
            if (e->cached_epoch == e->current_epoch) {
                atomic_fetch_add_explicit(&e->references, 1, memory_order_relaxed);
                found = e;
            }
            break;
        }
    }
    pthread_mutex_unlock(&pages_lock);
    return found;
}

static void feed_page_release(void *cls) {
    struct page_entry *e = cls;
    if (atomic_fetch_sub_explicit(&e->references, 1, memory_order_acq_rel) == 1)
        free(e); /* never in the benchmark: the table keeps its reference */
}

static bool feed_request_id_sane(const char *id) {
    size_t n = 0;
    for (; id[n]; n++)
        if (n == 128 || id[n] < 0x21 || id[n] > 0x7e)
            return false;
    return n > 0;
}

/* The prefix and the counter in lowercase hex without leading zeros. */
static void feed_generate_request_id(char out[40]) {
    unsigned long n = atomic_fetch_add_explicit(&request_id_counter, 1, memory_order_relaxed) + 1;
    memcpy(out, request_id_prefix, 17);
    int digits = 1;
    while (digits < 16 && (n >> (4 * digits)))
        digits++;
    for (int i = digits - 1; i >= 0; i--, n >>= 4)
        out[17 + i] = "0123456789abcdef"[n & 0xf];
    out[17 + digits] = '\0';
}

static bool feed_etag_matches(const char *header, const char *etag) {
    return header && (strcmp(header, "*") == 0 || strstr(header, etag) != NULL);
}

static void feed_count(unsigned status, const struct timespec *start) {
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    long micros = (end.tv_sec - start->tv_sec) * 1000000L + (end.tv_nsec - start->tv_nsec) / 1000;
    int bucket = 0;
    while (bucket < FEED_BUCKETS - 1 && micros >= (1L << bucket))
        bucket++;
    atomic_fetch_add_explicit(&feed_duration_buckets[bucket], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&feed_status_counts[status / 100], 1, memory_order_relaxed);
}

static enum MHD_Result feed_queue(struct MHD_Connection *connection, unsigned status, struct MHD_Response *response,
                                  const struct timespec *start) {
    if (!response)
        return MHD_NO;
    enum MHD_Result queued = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    feed_count(status, start);
    return queued;
}

static enum MHD_Result feed_answer(struct MHD_Connection *connection, const char *url) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    char generated[40];
    const char *request_id = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "X-Request-ID");
    if (!request_id || !feed_request_id_sane(request_id)) {
        feed_generate_request_id(generated);
        request_id = generated;
    }
    unsigned char tenant[16];
    if (!feed_authenticate(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Authorization"), tenant)) {
        struct MHD_Response *denied = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (denied)
            MHD_add_response_header(denied, "X-Request-ID", request_id);
        return feed_queue(connection, MHD_HTTP_UNAUTHORIZED, denied, &start);
    }
    const char *key = url + sizeof FEED_PREFIX - 1;
    size_t key_length = strlen(key);
    const char *limit = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "limit");
    const char *cursor = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "cursor");
    struct page_entry *page = key_length && !strchr(key, '/') && !limit && !cursor
                                  ? feed_page(tenant, key, key_length) : NULL;
    if (!page) {
        struct MHD_Response *missing = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (missing)
            MHD_add_response_header(missing, "X-Request-ID", request_id);
        return feed_queue(connection, MHD_HTTP_NOT_FOUND, missing, &start);
    }
    struct MHD_Response *response;
    unsigned status;
    if (feed_etag_matches(MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "If-None-Match"), page->etag)) {
        status = MHD_HTTP_NOT_MODIFIED;
        response = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        feed_page_release(page);
    } else {
        status = MHD_HTTP_OK;
        response = MHD_create_response_from_buffer_with_free_callback_cls(page->size, (void *)page->body,
                                                                          feed_page_release, page);
        if (!response)
            feed_page_release(page);
        else
            MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    }
    if (response) {
        MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, page->etag);
        MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "private, no-cache");
        MHD_add_response_header(response, "X-Request-ID", request_id);
    }
    return feed_queue(connection, status, response, &start);
}

/* Fills both tables with the one token and the one page the benchmark asks for. */
static void feed_setup(const char *body, size_t size) {
    const char *env;
    uint64_t prefix = ((uint64_t)getpid() * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)time(NULL);
    for (int i = 15; i >= 0; i--, prefix >>= 4)
        request_id_prefix[i] = "0123456789abcdef"[prefix & 0xf];
    request_id_prefix[16] = '-';
    request_id_prefix[17] = '\0';

    static const unsigned char tenant[16] = {0x5b, 0x0a, 0x4c, 0x11};
    if ((env = getenv("FEED_TOKEN")) && *env) {
        struct token_entry *t = calloc(1, sizeof *t);
        if (!t)
            exit(1);
        t->token = env;
        t->length = strlen(env);
        memcpy(t->tenant, tenant, 16);
        t->expires_at = time(NULL) + 24 * 3600;
        token_table[fnv1a(fnv_basis, env, t->length) % FEED_TABLE_SIZE] = t;
    }
    struct page_entry *p = calloc(1, sizeof *p);
    if (!p)
        exit(1);
    memcpy(p->tenant, tenant, 16);
    p->key = (env = getenv("FEED_KEY")) && *env ? env : "launch";
    p->key_length = strlen(p->key);
    p->body = body;
    p->size = size;
    p->etag = (env = getenv("FEED_ETAG")) && *env ? env : "W/\"1-20\"";
    atomic_init(&p->references, 1);
    page_table[fnv1a(fnv1a(fnv_basis, tenant, 16), p->key, p->key_length) % FEED_TABLE_SIZE] = p;
}
