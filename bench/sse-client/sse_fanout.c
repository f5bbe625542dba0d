#define _GNU_SOURCE
/*
 * SSE fan-out load client: opens N event-stream subscriptions, then publishes messages through the API and
 * measures, for each message, the time until every subscriber has received it.
 *
 *   sse_fanout HOST STREAM_PORT API_PORT INTERACTION_ID TOKEN N PUBLISHES HOLD_SECONDS
 *
 * With FANOUT_NCHAN=1 in the environment it drives a hub with the paths of nginx's nchan module instead (nchan
 * itself, or the C baseline bench/c-baseline/sse.c): subscribers GET /sub/ID as EventSource (ready once the
 * response headers arrive, as nchan sends no first event) and messages are POSTed to /pub/ID on API_PORT (TOKEN
 * unused).
 *
 * Prints "READY <n> <ms>" once all subscribers got their first event (ms: since the first connect), holds them HOLD_SECONDS (the caller measures
 * memory and API throughput meanwhile), then publishes PUBLISHES messages one after another and prints
 * "RESULT p50_ms p99_ms max_ms received_all" over the per-message "everyone has it" times.
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

typedef struct {
    int fd;
    int ready;          /* got the first event */
    int seen;           /* index of the last marker seen */
    char tail[64];      /* last bytes, so a marker split across reads is still found */
    size_t tail_len;
} sub_t;

static int nchan;   /* FANOUT_NCHAN: the reference hub's paths and answers */

static int publish(const char *host, int port, const char *id, const char *token, int k) {
    int fd = dial(host, port, 0);
    if (fd < 0) return -1;
    char body[64], req[1024];
    int blen = snprintf(body, sizeof body, "{\"text\":\"mark-%06d\"}", k);
    int len = nchan
        ? snprintf(req, sizeof req, "POST /pub/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Content-Length: %d\r\nConnection: close\r\n\r\n%s", id, blen, body)
        : snprintf(req, sizeof req,
        "POST /v1/interactions/%s/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
        "Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", id, token, blen, body);
    if (write(fd, req, len) != len) { close(fd); return -1; }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 12) return -1;
    buf[n] = 0;
    return strncmp(buf + 9, nchan ? "20" : "201", nchan ? 2 : 3) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 9) { fprintf(stderr, "usage: see source\n"); return 2; }
    const char *host = argv[1], *id = argv[4], *token = argv[5];
    int sport = atoi(argv[2]), aport = atoi(argv[3]), n = atoi(argv[6]), pubs = atoi(argv[7]), hold = atoi(argv[8]);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);

    nchan = getenv("FANOUT_NCHAN") && strcmp(getenv("FANOUT_NCHAN"), "1") == 0;
    const char *first = nchan ? "HTTP/1.1 200" : "event: state";
    size_t first_len = strlen(first);
    sub_t *subs = calloc(n, sizeof *subs);
    int ep = epoll_create1(0);
    char req[1024];
    int rlen = nchan
        ? snprintf(req, sizeof req, "GET /sub/%s HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n", id)
        : snprintf(req, sizeof req, "GET /v1/interactions/%s/events HTTP/1.1\r\nHost: x\r\n"
                   "Accept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n", id, token);
    double started = now_ms();
    struct epoll_event evs[512];
    int ready = 0;
    for (int i = 0; i < n; i++) {
        subs[i].fd = dial(host, sport, 1);
        if (subs[i].fd < 0) { fprintf(stderr, "connect %d failed: %s\n", i, strerror(errno)); return 1; }
        if (write(subs[i].fd, req, rlen) != rlen) { fprintf(stderr, "write failed\n"); return 1; }
        subs[i].seen = -1;
        struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };
        epoll_ctl(ep, EPOLL_CTL_ADD, subs[i].fd, &e);
        if (i % 200 == 199) { /* let the server keep up with the accepts */
            int m = epoll_wait(ep, evs, 512, 20);
            for (int j = 0; j < m; j++) {
                sub_t *s = &subs[evs[j].data.u32];
                char b[8192];
                ssize_t r;
                while ((r = read(s->fd, b, sizeof b)) > 0) if (!s->ready && memmem(b, r, first, first_len)) { s->ready = 1; ready++; }
            }
        }
    }
    double deadline = now_ms() + 60000;
    while (ready < n && now_ms() < deadline) {
        int m = epoll_wait(ep, evs, 512, 100);
        for (int j = 0; j < m; j++) {
            sub_t *s = &subs[evs[j].data.u32];
            char b[8192];
            ssize_t r;
            while ((r = read(s->fd, b, sizeof b)) > 0) if (!s->ready && memmem(b, r, first, first_len)) { s->ready = 1; ready++; }
        }
    }
    printf("READY %d %.0f\n", ready, now_ms() - started);
    fflush(stdout);
    if (ready < n) return 1;
    sleep(hold);

    double *times = calloc(pubs, sizeof *times);
    int complete = 0;
    for (int k = 0; k < pubs; k++) {
        char marker[32];
        int mlen = snprintf(marker, sizeof marker, "mark-%06d", k);
        double t0 = now_ms();
        if (publish(host, aport, id, token, k) != 0) { fprintf(stderr, "publish %d failed\n", k); return 1; }
        double answered = now_ms() - t0, first = -1;
        int got = 0;
        double until = t0 + 10000;
        while (got < n && now_ms() < until) {
            int m = epoll_wait(ep, evs, 512, 50);
            for (int j = 0; j < m; j++) {
                sub_t *s = &subs[evs[j].data.u32];
                char b[8192 + 64];
                ssize_t r;
                while ((r = read(s->fd, b + s->tail_len, 8192)) > 0) {
                    memcpy(b, s->tail, s->tail_len);
                    size_t total = s->tail_len + r;
                    if (s->seen < k && memmem(b, total, marker, mlen)) {
                        s->seen = k;
                        if (got++ == 0) first = now_ms() - t0;
                    }
                    s->tail_len = total < 32 ? total : 32;
                    memcpy(s->tail, b + total - s->tail_len, s->tail_len);
                }
            }
        }
        times[k] = now_ms() - t0;
        if (got == n) complete++;
        if (getenv("FANOUT_EACH")) printf("PUBLISH %d %.1f %d answered %.1f first %.1f\n", k, times[k], got, answered, first);
        usleep(100000);
    }
    qsort(times, pubs, sizeof *times, cmp);
    printf("RESULT %.1f %.1f %.1f %d/%d\n", times[pubs / 2], times[(int)(pubs * 0.99) < pubs ? (int)(pubs * 0.99) : pubs - 1],
           times[pubs - 1], complete, pubs);
    return 0;
}
