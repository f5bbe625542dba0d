/* What the benchmark clients share: a monotonic clock in milliseconds, a TCP dial, and a comparison for qsort. */
#ifndef CLIENT_COMMON_H
#define CLIENT_COMMON_H
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A TCP socket (socket(2) `flags` added to its type) with the address of host:port in *to. To a loopback host, the
   connections come from 16 loopback addresses in turn: from one address, ~20,000 connections to one port fill most
   of the ephemeral port range, and the kernel's search for a free port then costs the client more than the server
   spends on the connection (seen at 19,000 subscribers). */
static inline int socket_to(const char *host, int port, int flags, struct sockaddr_in *to) {
    static unsigned next_source;
    int fd = socket(AF_INET, SOCK_STREAM | flags, 0);
    if (fd < 0) return -1;
    *to = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, host, &to->sin_addr);
    if ((ntohl(to->sin_addr.s_addr) >> 24) == 127) {
        int on = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
        struct sockaddr_in source = { .sin_family = AF_INET };
        source.sin_addr.s_addr = htonl((127u << 24) | (1u + next_source++ % 16u));
        bind(fd, (struct sockaddr *)&source, sizeof source);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* A connected TCP socket to host:port with Nagle off (non-blocking when asked), or -1. */
static inline int dial(const char *host, int port, int nonblock) {
    struct sockaddr_in to;
    int fd = socket_to(host, port, 0, &to);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) { close(fd); return -1; }
    if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* A non-blocking TCP socket to host:port whose connect has started (Nagle off), or -1: the connect's outcome comes
   with the socket's first writability (SO_ERROR). */
static inline int dial_started(const char *host, int port) {
    struct sockaddr_in to;
    int fd = socket_to(host, port, SOCK_NONBLOCK, &to);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0 && errno != EINPROGRESS) { close(fd); return -1; }
    return fd;
}

static inline int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
