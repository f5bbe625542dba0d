/* The connection front: one listening socket whose connections are handed to a daemon chosen by their first
   request, whose head is read with MSG_PEEK so that the daemon still reads every byte itself. */
#define _GNU_SOURCE
#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Longest request head the front looks at; a head that does not end within it is handed over without a target
   (so to the default daemon, whose connections have room for it; the streams' daemon is sized for heads this long). */
#define SB_FRONT_PEEK_BYTES 2048
/* How long the front stops accepting after running out of descriptors or memory (accept would fail at once again). */
#define SB_FRONT_ACCEPT_PAUSE_MS 100

struct sb_pending {
    struct sb_pending *prev, *next;
    int fd;
    int64_t since_ms;
    socklen_t address_length;
    struct sockaddr_storage address;
};

struct sb_front {
    int listen_fd;
    int epoll_fd;
    int wake_fd;
    uint16_t port;
    unsigned int pending_limit;
    int64_t head_deadline_ms;
    sb_front_handoff_callback handoff;
    void *cls;
    sb_addresses *addresses; /* not owned; may be NULL */
    _Atomic uint64_t refused_by_address;
    pthread_t thread;
    int thread_started;
    /* Connections still waiting for their request head, oldest first (they share one deadline, so the list is also
       in deadline order). Touched only by the front's thread, and by sb_front_stop after that thread has ended. */
    struct sb_pending *head, *tail;
    unsigned int pending_count;
    /* pending_count, published for other threads to read. */
    _Atomic uint64_t waiting;
    int64_t accept_paused_until_ms;
    _Atomic uint64_t heads_late;
};

/* Markers told apart from pending entries in epoll's data pointer. */
static char sb_listen_marker, sb_wake_marker;

static int64_t sb_front_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Hands a connection over; when no daemon took it (the callee closed it), its address counts it no longer. */
static void sb_front_hand(sb_front *front, int fd, const struct sockaddr *address, socklen_t address_length,
                          const char *target, size_t target_length) {
    if (!front->handoff(front->cls, fd, address, address_length, target, target_length)) {
        sb_addresses_leave(front->addresses, address, address_length);
    }
}

/* Closes a connection no daemon has seen. */
static void sb_front_close(sb_front *front, int fd, const struct sockaddr *address, socklen_t address_length) {
    close(fd);
    sb_addresses_leave(front->addresses, address, address_length);
}

static void sb_front_unlink(sb_front *front, struct sb_pending *entry) {
    if (entry->prev != NULL) entry->prev->next = entry->next; else front->head = entry->next;
    if (entry->next != NULL) entry->next->prev = entry->prev; else front->tail = entry->prev;
    front->pending_count--;
    atomic_store_explicit(&front->waiting, front->pending_count, memory_order_relaxed);
}

/* The request target in a request line ("GET /path HTTP/1.1"), or NULL. */
static const char *sb_front_target(const char *line, size_t length, size_t *target_length) {
    const char *space = memchr(line, ' ', length);
    if (space == NULL) return NULL;
    const char *start = space + 1;
    size_t rest = length - (size_t)(start - line);
    const char *end = memchr(start, ' ', rest);
    *target_length = end == NULL ? rest : (size_t)(end - start);
    return start;
}

/* Whether the head whose request line ends at `newline` is complete within [newline, end): an empty line follows. */
static int sb_front_head_complete(const char *newline, const char *end) {
    for (const char *at = newline; at != NULL; at = memchr(at + 1, '\n', (size_t)(end - at - 1))) {
        const char *next = at + 1;
        if (next < end && *next == '\n') return 1;
        if (end - next >= 2 && next[0] == '\r' && next[1] == '\n') return 1;
        if (end - next < 2) return 0;
    }
    return 0;
}

/* Most header fields and query parameters a head may carry. libmicrohttpd 0.9.75 keeps a record of each in the
   connection's memory pool; when the pool runs out it answers 431 for header fields, but for query parameters it
   drops the connection without an answer. Far more than any client of this API sends. */
#define SB_FRONT_MAX_RECORDS 100

enum sb_peek_outcome { SB_PEEK_WAIT, SB_PEEK_DONE };

/* Header fields plus query parameters in a complete head of `length` bytes starting with its request line. */
static unsigned int sb_front_records(const char *head, size_t length) {
    unsigned int records = 0;
    const char *end = head + length;
    const char *line_end = memchr(head, '\n', length);
    if (line_end == NULL) return 0;
    for (const char *at = head; at < line_end; at++) {
        if (*at == '?' || *at == '&') records++;
    }
    for (const char *at = line_end + 1; at < end && *at != '\r' && *at != '\n';) {
        records++;
        const char *next = memchr(at, '\n', (size_t)(end - at));
        if (next == NULL) break;
        at = next + 1;
    }
    return records;
}

/* Answers 431 itself and closes: the head carries more records than libmicrohttpd can keep. */
static void sb_front_refuse_head(sb_front *front, int fd, const struct sockaddr *address, socklen_t address_length,
                                 size_t peeked) {
    static const char answer[] =
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "Content-Type: application/problem+json\r\n"
        "Connection: close\r\n"
        "Content-Length: 167\r\n\r\n"
        "{\"type\":\"about:blank\",\"title\":\"Request Header Fields Too Large\",\"status\":431,"
        "\"detail\":\"The request carries more than 100 header fields and query parameters together.\"}";
    char drain[SB_FRONT_PEEK_BYTES];
    (void)recv(fd, drain, peeked, 0); /* what was peeked at, so that the close is an orderly end */
    (void)send(fd, answer, sizeof answer - 1, MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    sb_front_close(front, fd, address, address_length);
}

/* Looks at what the client has sent; hands the connection over once its request head is complete (or too long to
   look at), closes it when the client left first. A `registered` descriptor leaves the epoll set first: once handed
   over it belongs to a daemon, which may close it at once. When the client has stopped sending (`peer_closed`)
   before its head was whole, no request can come: the connection is closed, as a daemon would (handing it over
   would not do: libmicrohttpd, edge-triggered, may not see an end of input that arrived before it took the socket). */
static enum sb_peek_outcome sb_front_peek(sb_front *front, int fd, const struct sockaddr *address,
                                          socklen_t address_length, int registered, int peer_closed) {
    char buffer[SB_FRONT_PEEK_BYTES];
    ssize_t got;
    do {
        got = recv(fd, buffer, sizeof buffer, MSG_PEEK);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return SB_PEEK_WAIT;
    size_t length = got > 0 ? (size_t)got : 0, skip = 0;
    /* Empty lines before the request line are allowed (RFC 9112, 2.2). */
    while (skip < length && (buffer[skip] == '\r' || buffer[skip] == '\n')) skip++;
    const char *line = buffer + skip;
    const char *newline = got > 0 ? memchr(line, '\n', length - skip) : NULL;
    int complete = newline != NULL && sb_front_head_complete(newline, buffer + length);
    if (got > 0 && !complete && length < sizeof buffer && !peer_closed) return SB_PEEK_WAIT;
    if (registered) epoll_ctl(front->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    if (got <= 0 || (!complete && length < sizeof buffer)) {
        /* Read what was peeked at, so that the close is an orderly end rather than a reset. */
        if (got > 0) (void)recv(fd, buffer, length, 0);
        sb_front_close(front, fd, address, address_length);
        return SB_PEEK_DONE;
    }
    if (!complete) {
        sb_front_hand(front, fd, address, address_length, NULL, 0);
        return SB_PEEK_DONE;
    }
    if (sb_front_records(line, length - skip) > SB_FRONT_MAX_RECORDS) {
        sb_front_refuse_head(front, fd, address, address_length, length);
        return SB_PEEK_DONE;
    }
    size_t line_length = (size_t)(newline - line);
    if (line_length > 0 && line[line_length - 1] == '\r') line_length--;
    size_t target_length = 0;
    const char *target = sb_front_target(line, line_length, &target_length);
    sb_front_hand(front, fd, address, address_length, target, target_length);
    return SB_PEEK_DONE;
}

static void sb_front_pause_accepting(sb_front *front) {
    epoll_ctl(front->epoll_fd, EPOLL_CTL_DEL, front->listen_fd, NULL);
    front->accept_paused_until_ms = sb_front_now_ms() + SB_FRONT_ACCEPT_PAUSE_MS;
}

static void sb_front_accept(sb_front *front) {
    for (;;) {
        struct sockaddr_storage address;
        socklen_t address_length = sizeof address;
        int fd = accept4(front->listen_fd, (struct sockaddr *)&address, &address_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) sb_front_pause_accepting(front);
            return; /* EAGAIN: all taken */
        }
        const struct sockaddr *peer = (const struct sockaddr *)&address;
        /* Counted against its address from now on, while it waits for its head here as much as once a daemon has it. */
        if (!sb_addresses_enter(front->addresses, peer, address_length)) {
            close(fd);
            atomic_fetch_add_explicit(&front->refused_by_address, 1, memory_order_relaxed);
            continue;
        }
        if (front->pending_count >= front->pending_limit) {
            /* Too many connections are silent already: this one goes to the default daemon unread. */
            sb_front_hand(front, fd, peer, address_length, NULL, 0);
            continue;
        }
        if (sb_front_peek(front, fd, peer, address_length, 0, 0) == SB_PEEK_DONE) continue;
        struct sb_pending *entry = calloc(1, sizeof *entry);
        if (entry == NULL) {
            sb_front_hand(front, fd, peer, address_length, NULL, 0);
            continue;
        }
        entry->fd = fd;
        entry->since_ms = sb_front_now_ms();
        entry->address_length = address_length;
        memcpy(&entry->address, &address, address_length);
        /* Edge-triggered: a partial head stays in the socket (it is only peeked at), so a level-triggered wait
           would report it again at once; each new segment is a new edge. Data that arrived between the peek and
           this call is reported too, as the socket is checked when added. */
        struct epoll_event event = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = entry };
        if (epoll_ctl(front->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
            free(entry);
            sb_front_hand(front, fd, peer, address_length, NULL, 0);
            continue;
        }
        entry->prev = front->tail;
        if (front->tail != NULL) front->tail->next = entry; else front->head = entry;
        front->tail = entry;
        front->pending_count++;
        atomic_store_explicit(&front->waiting, front->pending_count, memory_order_relaxed);
    }
}

static void sb_front_readable(sb_front *front, struct sb_pending *entry, uint32_t events) {
    int peer_closed = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    if (sb_front_peek(front, entry->fd, (const struct sockaddr *)&entry->address, entry->address_length, 1,
                      peer_closed) == SB_PEEK_DONE) {
        sb_front_unlink(front, entry);
        free(entry);
    }
}

/* Closes connections whose request head did not come within the deadline; returns the wait until the next one is
   due, in milliseconds, or -1. */
static int sb_front_expire(sb_front *front) {
    int64_t now = sb_front_now_ms();
    while (front->head != NULL && now - front->head->since_ms >= front->head_deadline_ms) {
        struct sb_pending *entry = front->head;
        sb_front_unlink(front, entry);
        epoll_ctl(front->epoll_fd, EPOLL_CTL_DEL, entry->fd, NULL);
        sb_front_close(front, entry->fd, (const struct sockaddr *)&entry->address, entry->address_length);
        free(entry);
        atomic_fetch_add_explicit(&front->heads_late, 1, memory_order_relaxed);
    }
    int64_t wait = -1;
    if (front->head != NULL) wait = front->head->since_ms + front->head_deadline_ms - now;
    if (front->accept_paused_until_ms != 0) {
        int64_t resume = front->accept_paused_until_ms - now;
        if (resume <= 0) {
            struct epoll_event event = { .events = EPOLLIN, .data.ptr = &sb_listen_marker };
            epoll_ctl(front->epoll_fd, EPOLL_CTL_ADD, front->listen_fd, &event);
            front->accept_paused_until_ms = 0;
        } else if (wait < 0 || resume < wait) {
            wait = resume;
        }
    }
    if (wait > 60000) wait = 60000;
    return (int)wait;
}

static void *sb_front_run(void *argument) {
    sb_front *front = argument;
    struct epoll_event events[64];
    for (;;) {
        int timeout = sb_front_expire(front);
        int count = epoll_wait(front->epoll_fd, events, 64, timeout);
        if (count < 0 && errno != EINTR) break;
        for (int i = 0; i < count; i++) {
            void *data = events[i].data.ptr;
            if (data == &sb_wake_marker) return NULL;
            if (data == &sb_listen_marker) sb_front_accept(front);
            else sb_front_readable(front, data, events[i].events);
        }
    }
    return NULL;
}

static int sb_front_bind(sb_front *front, const char *host, uint16_t port, int backlog, int *error) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    socklen_t length;
    int family;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    /* No host: every IPv4 interface (INADDR_ANY is the zero the memset left). */
    if (host == NULL || host[0] == '\0' || inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        family = AF_INET;
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        family = AF_INET6;
        length = sizeof *v6;
    } else {
        *error = -1;
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = errno;
        return -1;
    }
    int on = 1;
    /* As libmicrohttpd does for its own listener: a restart may bind while old connections sit in TIME_WAIT. Not
       SO_REUSEPORT, which would let a second process bind the same port unnoticed. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
    if (bind(fd, (struct sockaddr *)&storage, length) != 0 || listen(fd, backlog) != 0) {
        *error = errno;
        close(fd);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &bound_length) == 0) {
        front->port = family == AF_INET ? ntohs(((struct sockaddr_in *)&bound)->sin_port)
                                        : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    }
    return fd;
}

sb_front *sb_front_start(const char *host, uint16_t port, int backlog, unsigned int pending_limit,
                         int64_t head_deadline_ms, sb_addresses *addresses, sb_front_handoff_callback handoff,
                         void *cls, int *error) {
    *error = 0;
    sb_front *front = calloc(1, sizeof *front);
    if (front == NULL) {
        *error = ENOMEM;
        return NULL;
    }
    front->pending_limit = pending_limit;
    front->head_deadline_ms = head_deadline_ms;
    front->handoff = handoff;
    front->cls = cls;
    front->addresses = addresses;
    front->epoll_fd = -1;
    front->wake_fd = -1;
    front->listen_fd = sb_front_bind(front, host, port, backlog, error);
    if (front->listen_fd < 0) goto fail;
    front->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    front->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (front->epoll_fd < 0 || front->wake_fd < 0) {
        *error = errno;
        goto fail;
    }
    struct epoll_event listen_event = { .events = EPOLLIN, .data.ptr = &sb_listen_marker };
    struct epoll_event wake_event = { .events = EPOLLIN, .data.ptr = &sb_wake_marker };
    if (epoll_ctl(front->epoll_fd, EPOLL_CTL_ADD, front->listen_fd, &listen_event) != 0
        || epoll_ctl(front->epoll_fd, EPOLL_CTL_ADD, front->wake_fd, &wake_event) != 0) {
        *error = errno;
        goto fail;
    }
    int started = pthread_create(&front->thread, NULL, sb_front_run, front);
    if (started != 0) {
        *error = started;
        goto fail;
    }
    front->thread_started = 1;
    return front;
fail:
    if (front->listen_fd >= 0) close(front->listen_fd);
    if (front->epoll_fd >= 0) close(front->epoll_fd);
    if (front->wake_fd >= 0) close(front->wake_fd);
    free(front);
    return NULL;
}

uint16_t sb_front_port(const sb_front *front) { return front->port; }

uint64_t sb_front_heads_late(const sb_front *front) {
    return atomic_load_explicit(&front->heads_late, memory_order_relaxed);
}

uint64_t sb_front_waiting(const sb_front *front) {
    return atomic_load_explicit(&front->waiting, memory_order_relaxed);
}

uint64_t sb_front_refused_by_address(const sb_front *front) {
    return atomic_load_explicit(&front->refused_by_address, memory_order_relaxed);
}

void sb_front_stop(sb_front *front, uint64_t *heads_late) {
    if (front == NULL) return;
    if (front->thread_started) {
        uint64_t one = 1;
        ssize_t written;
        do {
            written = write(front->wake_fd, &one, sizeof one);
        } while (written < 0 && errno == EINTR);
        pthread_join(front->thread, NULL);
    }
    close(front->listen_fd);
    struct sb_pending *entry = front->head;
    while (entry != NULL) {
        struct sb_pending *next = entry->next;
        sb_front_close(front, entry->fd, (const struct sockaddr *)&entry->address, entry->address_length);
        free(entry);
        entry = next;
    }
    close(front->epoll_fd);
    close(front->wake_fd);
    *heads_late = sb_front_heads_late(front);
    free(front);
}
