/* What the benchmark clients share: a monotonic clock in milliseconds, a TCP dial, and a comparison for qsort. */
#ifndef CLIENT_COMMON_H
#define CLIENT_COMMON_H
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A connected TCP socket to host:port with Nagle off (non-blocking when asked), or -1. To a loopback host, the
   connections come from 16 loopback addresses in turn: from one address, ~20,000 connections to one port fill most
   of the ephemeral port range, and the kernel's search for a free port then costs the client more than the server
   spends on the connection (seen at 19,000 subscribers). */
static int dial(const char *host, int port, int nonblock) {
    static unsigned next_source;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, host, &a.sin_addr);
    if ((ntohl(a.sin_addr.s_addr) >> 24) == 127) {
        int on = 1;
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
        struct sockaddr_in source = { .sin_family = AF_INET };
        source.sin_addr.s_addr = htonl((127u << 24) | (1u + next_source++ % 16u));
        bind(fd, (struct sockaddr *)&source, sizeof source);
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { close(fd); return -1; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
#endif
