#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Daemon settings the Swift side passes to `sb_mhd_start` (MHD_start_daemon is variadic).
typedef struct sb_mhd_settings {
    unsigned int flags;
    uint16_t port;
    const char *host;               /* NULL: all interfaces; else an IPv4 or IPv6 literal */
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int connection_timeout; /* seconds, idle connections only */
    size_t connection_memory_limit;
    unsigned int listen_backlog;
} sb_mhd_settings;

/// Starts a daemon with the given settings and callbacks. Returns NULL on failure (errno may tell why),
/// or -1 in *bad_host when `host` is not a numeric address.
struct MHD_Daemon *sb_mhd_start(const sb_mhd_settings *settings,
                                MHD_AccessHandlerCallback access_handler, void *access_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                int *bad_host);

/// Stops the daemon's listening socket taking connections, so new clients are refused, without
/// `MHD_quiesce_daemon`, whose epoll branch races with the daemon's own threads and can abort the process
/// (MHD_PANIC) in 0.9.x. Instead an idle eventfd is put in its place under the same descriptor number
/// (dup2), which closes the listening socket and drops it from the daemon's epoll sets. The daemon keeps the number
/// and closes the placeholder when it stops. Returns 0, or -1 (errno set).
int sb_mhd_close_listener(struct MHD_Daemon *daemon);

/// The port the daemon is bound to (useful after binding port 0), or 0 when unknown.
uint16_t sb_mhd_bound_port(struct MHD_Daemon *daemon);

/// The socket of a connection, or -1.
int sb_mhd_connection_fd(struct MHD_Connection *connection);

/// `MHD_SIZE_UNKNOWN`, which Swift does not import.
static inline uint64_t sb_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft limit, or -1.
long sb_raise_nofile_limit(void);

#endif
