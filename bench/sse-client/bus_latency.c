#define _GNU_SOURCE
/*
 * Cross-replica bus load client: every interaction is followed by one event stream on replica A and one on
 * replica B; messages are posted at a fixed rate through both replicas in turn (at most INFLIGHT requests in
 * flight, on keep-alive connections, half to each replica); for each message, the time from its POST being sent
 * until each stream has it — on the replica that took the POST ("same") and on the other one ("other").
 *
 *   bus_latency HOST API_A STREAM_A API_B STREAM_B TOKEN IDS_FILE RATE SECONDS INFLIGHT
 *
 * IDS_FILE holds one interaction id per line (all readable with TOKEN). Prints "READY <streams>" once every stream
 * has its first event, then, after the run and up to 5 s of drain:
 *   RESULT sent acked failed achieved_rate post_p50 post_p99 same_p50 same_p99 other_p50 other_p99 lost dup closed
 * (milliseconds; lost = stream deliveries missing after the drain; dup = a message seen twice on one stream;
 * closed = streams the server ended during the run, and what they last said).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client_common.h"

enum { KIND_STREAM = 1, KIND_POST = 2 };

typedef struct {
    int fd;
    int kind;
    int replica;        /* 0 = A, 1 = B */
    int interaction;    /* streams: which interaction it follows */
    int ready;          /* streams: got the first event */
    int busy;           /* posts: message index in flight, or -1 */
    char buf[16384];
    size_t len;
} conn_t;

/* p-th percentile of the n values (sorted in place); -1 when there are none. */
static double pct(double *v, int n, double p) {
    if (n == 0) return -1;
    qsort(v, n, sizeof *v, cmp);
    int i = (int)(n * p);
    return v[i < n ? i : n - 1];
}

static char **ids;
static int nids;
static double *sent_at, *acked_at, *seen_at[2];
static int *seen_count[2];
static int nmsg;
static int closed;

/* Streams: find every "bus:<k>" in the buffer, keep the unfinished tail. */
static void scan_stream(conn_t *c, double t) {
    char *p = c->buf, *end = c->buf + c->len;
    if (!c->ready && memmem(p, c->len, "event: state", 12)) c->ready = 1;
    char *last_complete = p;
    for (;;) {
        char *m = memmem(p, end - p, "bus:", 4);
        if (!m) break;
        char *d = m + 4;
        while (d < end && *d >= '0' && *d <= '9') d++;
        if (d == end) break; /* the number may go on in the next read */
        int k = atoi(m + 4);
        if (k >= 0 && k < nmsg) {
            if (seen_count[c->replica][k]++ == 0) seen_at[c->replica][k] = t;
        }
        p = d;
        last_complete = d;
    }
    /* Keep at most the last 32 bytes after the last complete marker (a marker cut in two). */
    size_t keep = end - last_complete;
    if (keep > 32) keep = 32;
    memmove(c->buf, end - keep, keep);
    c->len = keep;
}

/* Posts: one response at a time per connection; returns 1 when a whole response was consumed. */
static int scan_post(conn_t *c, double t, int *failed) {
    char *head_end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    if (!head_end) return 0;
    size_t head = head_end + 4 - c->buf;
    char *cl = memmem(c->buf, head, "Content-Length:", 15);
    if (!cl) cl = memmem(c->buf, head, "content-length:", 15);
    size_t body = cl ? (size_t)atol(cl + 15) : 0;
    if (c->len < head + body) return 0;
    int ok = c->len > 12 && c->buf[9] == '2';
    if (c->busy >= 0) {
        if (ok) acked_at[c->busy] = t; else (*failed)++;
    }
    memmove(c->buf, c->buf + head + body, c->len - head - body);
    c->len -= head + body;
    c->busy = -1;
    return 1;
}

/* Reads whatever the ready connections have (waiting up to timeout_ms): stream events are scanned for markers,
 * POST responses matched to their messages; a stream the server ends is closed and counted. */
static void pump(conn_t *conns, int ep, int timeout_ms, int *failed) {
    struct epoll_event evs[512];
    int m = epoll_wait(ep, evs, 512, timeout_ms);
    for (int j = 0; j < m; j++) {
        conn_t *c = &conns[evs[j].data.u32];
        ssize_t r;
        while ((r = read(c->fd, c->buf + c->len, sizeof c->buf - c->len - 1)) > 0) {
            c->len += r;
            double at = now_ms();
            if (c->kind == KIND_STREAM) scan_stream(c, at);
            else while (scan_post(c, at, failed)) {}
        }
        if (r == 0 && c->kind == KIND_STREAM) {
            c->buf[c->len] = 0;
            fprintf(stderr, "stream %d (replica %d) closed; last bytes: %s\n", evs[j].data.u32, c->replica, c->buf);
            epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
            close(c->fd);
            closed++;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 11) { fprintf(stderr, "usage: see source\n"); return 2; }
    const char *host = argv[1], *token = argv[6];
    int api[2] = { atoi(argv[2]), atoi(argv[4]) }, stream[2] = { atoi(argv[3]), atoi(argv[5]) };
    double rate = atof(argv[8]), seconds = atof(argv[9]);
    int inflight = atoi(argv[10]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);

    FILE *f = fopen(argv[7], "r");
    if (!f) { perror("ids"); return 2; }
    char line[128];
    int cap = 1024;
    ids = malloc(cap * sizeof *ids);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        if (nids == cap) ids = realloc(ids, (cap *= 2) * sizeof *ids);
        ids[nids++] = strdup(line);
    }
    fclose(f);
    nmsg = (int)(rate * seconds);
    sent_at = calloc(nmsg, sizeof *sent_at);
    acked_at = calloc(nmsg, sizeof *acked_at);
    for (int r = 0; r < 2; r++) { seen_at[r] = calloc(nmsg, sizeof(double)); seen_count[r] = calloc(nmsg, sizeof(int)); }

    int nconn = nids * 2 + inflight;
    conn_t *conns = calloc(nconn, sizeof *conns);
    int ep = epoll_create1(0);
    int streams = 0;
    for (int i = 0; i < nids; i++) {
        for (int r = 0; r < 2; r++) {
            conn_t *c = &conns[streams];
            c->kind = KIND_STREAM; c->replica = r; c->interaction = i;
            c->fd = dial(host, stream[r], 1);
            if (c->fd < 0) { fprintf(stderr, "stream connect failed: %s\n", strerror(errno)); return 1; }
            char req[512];
            int len = snprintf(req, sizeof req, "GET /v1/interactions/%s/events HTTP/1.1\r\nHost: x\r\n"
                               "Accept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n", ids[i], token);
            if (write(c->fd, req, len) != len) { fprintf(stderr, "stream write failed\n"); return 1; }
            struct epoll_event e = { .events = EPOLLIN, .data.u32 = streams };
            epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
            streams++;
        }
    }
    for (int j = 0; j < inflight; j++) {
        conn_t *c = &conns[streams + j];
        c->kind = KIND_POST; c->replica = j % 2; c->busy = -1;
        c->fd = dial(host, api[c->replica], 1);
        if (c->fd < 0) { fprintf(stderr, "api connect failed: %s\n", strerror(errno)); return 1; }
        struct epoll_event e = { .events = EPOLLIN, .data.u32 = streams + j };
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &e);
    }

    int failed = 0, ready = 0;
    double deadline = now_ms() + 60000;
    while (ready < streams && now_ms() < deadline) {
        pump(conns, ep, 100, &failed);
        ready = 0;
        for (int i = 0; i < streams; i++) ready += conns[i].ready;
    }
    printf("READY %d\n", ready);
    fflush(stdout);
    if (ready < streams) return 1;

    double start = now_ms();
    int next = 0, sent = 0;
    double stop_at = start + seconds * 1000, drain_until = stop_at + 5000;
    for (;;) {
        double t = now_ms();
        /* Send every message that is due, on a free connection of its replica. */
        while (next < nmsg && t < stop_at && start + next * 1000.0 / rate <= t) {
            int r = next % 2, slot = -1;
            for (int j = r; j < inflight; j += 2) if (conns[streams + j].busy < 0) { slot = j; break; }
            if (slot < 0) break; /* saturated: the message waits for a free connection */
            conn_t *c = &conns[streams + slot];
            char body[64], req[1024];
            int blen = snprintf(body, sizeof body, "{\"text\":\"bus:%d \"}", next);
            int len = snprintf(req, sizeof req,
                "POST /v1/interactions/%s/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", ids[next % nids], token, blen, body);
            if (write(c->fd, req, len) != len) { fprintf(stderr, "post write failed\n"); return 1; }
            c->busy = next;
            sent_at[next] = t;
            next++; sent++;
        }
        int outstanding = 0;
        for (int j = 0; j < inflight; j++) if (conns[streams + j].busy >= 0) outstanding++;
        if (t >= stop_at || next == nmsg) {
            if (outstanding == 0) {
                int missing = 0;
                for (int k = 0; k < sent && !missing; k++)
                    if (acked_at[k] > 0 && (!seen_count[0][k] || !seen_count[1][k])) missing = 1;
                if (!missing || t >= drain_until) break;
            } else if (t >= drain_until) break;
        }
        pump(conns, ep, 1, &failed);
    }
    double *post = calloc(nmsg, sizeof(double)), *same = calloc(nmsg, sizeof(double)), *other = calloc(nmsg, sizeof(double));
    int np = 0, ns = 0, no = 0, acked = 0, lost = 0, dup = 0;
    double last_sent = start;
    for (int k = 0; k < sent; k++) {
        if (sent_at[k] > last_sent) last_sent = sent_at[k];
        if (acked_at[k] <= 0) continue;
        acked++;
        post[np++] = acked_at[k] - sent_at[k];
        int via = k % 2;
        for (int r = 0; r < 2; r++) {
            if (!seen_count[r][k]) {
                lost++;
                if (getenv("BUS_LIST_LOST")) fprintf(stderr, "lost: bus:%d (interaction %s, posted via %d) on replica %d\n", k, ids[k % nids], via, r);
                continue;
            }
            if (seen_count[r][k] > 1) dup++;
            double lat = seen_at[r][k] - sent_at[k];
            if (r == via) same[ns++] = lat; else other[no++] = lat;
        }
    }
    double achieved = sent > 1 ? (sent - 1) * 1000.0 / (last_sent - start) : 0;
    printf("RESULT %d %d %d %.0f %.1f %.1f %.1f %.1f %.1f %.1f %d %d %d\n", sent, acked, failed, achieved,
           pct(post, np, 0.5), pct(post, np, 0.99), pct(same, ns, 0.5), pct(same, ns, 0.99),
           pct(other, no, 0.5), pct(other, no, 0.99), lost, dup, closed);
    return 0;
}
