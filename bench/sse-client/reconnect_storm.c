#define _GNU_SOURCE
/*
 * Reconnect storm client: CLIENTS event streams come back at once, as after a replica restart, each resuming with a
 * Last-Event-ID, and the client measures how long until every one has its replay (the server takes the live
 * subscription before it reads the log, so a stream with its replay is also attached to live events).
 *
 *   reconnect_storm HOST STREAM_PORT LIST_FILE CLIENTS LAST_EVENT_ID WANT_ID TIMEOUT_SECONDS
 *
 * LIST_FILE has one "INTERACTION_ID TOKEN" per line; client i follows line i % lines. A client is resumed when its
 * stream carries the event with id WANT_ID. Prints
 *   RESULT resumed failed connect_ms all_ms p50_ms p99_ms
 * with times from the first connect: connect_ms when the last connection was open, all_ms when the last stream had
 * its replay (the slowest), p50/p99 over the clients that resumed. Connections open concurrently (up to 512 connecting
 * at once) and every open stream is read meanwhile, so each replay is timed when it arrives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include "client_common.h"

typedef struct {
    int fd;
    int done;           /* 1 resumed, -1 failed */
    int header_checked;
    int connecting;     /* the connect is in progress: the next event says how it ended */
    char tail[96];      /* last bytes, so a marker split across reads is still found */
    size_t tail_len;
} client_t;

int main(int argc, char **argv) {
    if (argc != 8) { fprintf(stderr, "usage: see source\n"); return 2; }
    const char *host = argv[1];
    int port = atoi(argv[2]), clients = atoi(argv[4]), timeout = atoi(argv[7]);
    const char *last_id = argv[5];
    char marker[64];
    snprintf(marker, sizeof marker, "id: %s\n", argv[6]);
    size_t marker_len = strlen(marker);

    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl); rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl);

    FILE *list = fopen(argv[3], "r");
    if (!list) { perror("list"); return 2; }
    int lines = 0, capacity = 1024;
    char **ids = malloc(capacity * sizeof *ids), **tokens = malloc(capacity * sizeof *tokens);
    char id[128], token[256];
    while (fscanf(list, "%127s %255s", id, token) == 2) {
        if (lines == capacity) {
            capacity *= 2;
            ids = realloc(ids, capacity * sizeof *ids);
            tokens = realloc(tokens, capacity * sizeof *tokens);
        }
        ids[lines] = strdup(id);
        tokens[lines++] = strdup(token);
    }
    fclose(list);
    if (lines == 0) { fprintf(stderr, "empty list\n"); return 2; }

    client_t *all = calloc(clients, sizeof *all);
    double *times = calloc(clients, sizeof *times);
    int ep = epoll_create1(0);
    /* Connections are opened without waiting for each other, at most WINDOW connecting at a time, and the streams
       already open are read in the same loop: a stream's replay is timed when it arrives, not once this client has
       finished opening all the others (as 10,000 phones would each read their own stream). */
    enum { WINDOW = 512 };
    int next = 0, connecting = 0, pending = clients;
    double start = now_ms(), connected = 0;
    struct epoll_event events[512];
    char buffer[16384];
    while (pending > 0 && now_ms() - start < timeout * 1000.0) {
        while (next < clients && connecting < WINDOW) {
            int i = next++;
            int fd = dial_started(host, port);
            if (fd < 0) { all[i].fd = -1; all[i].done = -1; pending--; continue; }
            all[i].fd = fd;
            all[i].connecting = 1;
            connecting++;
            struct epoll_event event = { .events = EPOLLOUT, .data.u32 = (unsigned)i };
            epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event);
        }
        int n = epoll_wait(ep, events, 512, 100);
        for (int k = 0; k < n; k++) {
            int i = (int)events[k].data.u32;
            client_t *c = &all[i];
            if (c->done) continue;
            if (c->connecting) {
                c->connecting = 0;
                connecting--;
                if (next == clients && connecting == 0) connected = now_ms() - start;
                int error = 0;
                socklen_t length = sizeof error;
                getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &length);
                char request[1024];
                int size = snprintf(request, sizeof request,
                    "GET /v1/interactions/%s/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                    "Authorization: Bearer %s\r\nLast-Event-ID: %s\r\n\r\n", ids[i % lines], tokens[i % lines], last_id);
                if (error != 0 || write(c->fd, request, size) != size) { c->done = -1; pending--; continue; }
                struct epoll_event event = { .events = EPOLLIN, .data.u32 = (unsigned)i };
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &event);
                continue;
            }
            ssize_t got;
            while ((got = read(c->fd, buffer, sizeof buffer)) > 0) {
                if (!c->header_checked) {
                    c->header_checked = 1;
                    if (got < 12 || strncmp(buffer + 9, "200", 3) != 0) { c->done = -1; pending--; break; }
                }
                /* Search the tail of the last read joined with this one. */
                size_t keep = c->tail_len;
                char joined[sizeof c->tail + sizeof buffer];
                memcpy(joined, c->tail, keep);
                memcpy(joined + keep, buffer, (size_t)got);
                size_t total = keep + (size_t)got;
                if (memmem(joined, total, marker, marker_len)) {
                    c->done = 1;
                    times[i] = now_ms() - start;
                    pending--;
                    break;
                }
                size_t tail = total < sizeof c->tail ? total : sizeof c->tail;
                memcpy(c->tail, joined + total - tail, tail);
                c->tail_len = tail;
            }
            if (!c->done && (got == 0 || (got < 0 && errno != EAGAIN))) { c->done = -1; pending--; }
        }
    }
    if (connected == 0) connected = now_ms() - start;

    int resumed = 0, failed = 0;
    double *done_times = calloc(clients, sizeof *done_times);
    double slowest = 0;
    for (int i = 0; i < clients; i++) {
        if (all[i].done == 1) {
            done_times[resumed++] = times[i];
            if (times[i] > slowest) slowest = times[i];
        } else {
            failed++;
        }
    }
    qsort(done_times, resumed, sizeof *done_times, cmp);
    double p50 = resumed ? done_times[resumed / 2] : 0, p99 = resumed ? done_times[(int)(resumed * 0.99)] : 0;
    printf("RESULT %d %d %.0f %.0f %.0f %.0f\n", resumed, failed, connected, slowest, p50, p99);
    for (int i = 0; i < clients; i++) if (all[i].fd >= 0) close(all[i].fd);
    return 0;
}
