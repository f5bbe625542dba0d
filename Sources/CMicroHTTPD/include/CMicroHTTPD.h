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
    int no_listener;                      /* 1: no listening socket; connections come by MHD_add_connection */
    struct sb_connection_watch *watch;    /* head deadlines and libmicrohttpd's own log lines; not NULL */
} sb_mhd_settings;

/// Receives libmicrohttpd's own log lines (formatted, without the trailing newline), on a daemon thread.
typedef void (*sb_log_line_callback)(void *cls, const char *line);

/// Per-daemon bookkeeping the shim keeps in C: every open connection with the time it began waiting for a request
/// head (on accept, and again each time a request completes), so connections that trickle a head byte by byte can
/// be cut off at a deadline that no amount of dripping resets (libmicrohttpd's own timeout is an idle timeout);
/// and where libmicrohttpd's log lines go. Guarded by its own mutex; connections leave it in libmicrohttpd's
/// "closed" notification, which comes before their socket is closed, so a sweep never touches a reused descriptor.
typedef struct sb_connection_watch sb_connection_watch;

/// Connections per client address (IPv4, or IPv6; an IPv4-mapped address counts as its IPv4 one), counted from
/// accept until libmicrohttpd reports the connection closed, across a front and the daemons it hands connections to
/// (all of which must share one table). Internally locked.
typedef struct sb_addresses sb_addresses;

/// A table admitting at most `limit` connections per address (0: no limit, nothing counted).
sb_addresses *sb_addresses_create(unsigned int limit);

/// Frees a table once no front or daemon uses it.
void sb_addresses_free(sb_addresses *table);

/// Counts one more connection from `address`: 1, or 0 (nothing counted) when the address is at its limit.
/// Addresses that are not IP are always admitted, uncounted.
int sb_addresses_enter(sb_addresses *table, const struct sockaddr *address, socklen_t length);

/// Counts one connection from `address` fewer.
void sb_addresses_leave(sb_addresses *table, const struct sockaddr *address, socklen_t length);

/// A watch whose log lines go to `log` (may be NULL: discarded), admitting at most `limit` connections to its
/// daemon and at most the table's limit per address (`addresses` may be NULL: no limit per address). Connections
/// beyond either are closed as libmicrohttpd accepts them, or refused by `sb_mhd_add_connection`.
sb_connection_watch *sb_connection_watch_create(sb_log_line_callback log, void *log_cls, unsigned int limit,
                                                sb_addresses *addresses);

/// Connections the watch's daemon has admitted and not yet closed.
unsigned int sb_connection_watch_admitted(sb_connection_watch *watch);

/// `MHD_add_connection` for a connection already counted against its address (by the front): 1 when the daemon
/// took it; 0 when it refused it (over its limit, out of memory), having closed `fd` — the caller then counts the
/// address one connection fewer.
int sb_mhd_add_connection(struct MHD_Daemon *daemon, int fd, const struct sockaddr *address, socklen_t length);

/// Frees a watch once its daemon has stopped.
void sb_connection_watch_free(sb_connection_watch *watch);

/// The request head on `connection` is complete (the access handler's first call): no deadline while it is served.
void sb_connection_watch_head_received(struct MHD_Connection *connection);

/// The request on `connection` completed: it now waits for the next head, against the deadline.
void sb_connection_watch_request_done(struct MHD_Connection *connection);

/// Shuts down (SHUT_RDWR) every connection that has waited for a request head longer than `deadline_ms`;
/// libmicrohttpd then closes it. Returns how many were cut. Safe from any thread.
unsigned int sb_connection_watch_sweep(sb_connection_watch *watch, int64_t deadline_ms);

/// Connections the watch knows of (open now).
unsigned int sb_connection_watch_count(sb_connection_watch *watch);

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

/// Writes the client's address as text (`192.0.2.7`, `2001:db8::1`) into `buffer`; 0 when it is not known.
int sb_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

/// Reads the peer's IPv4 address (4 bytes, network order) into `address`: 1 when the peer has one, else 0 (an IPv6
/// peer, say, whose address `sb_mhd_client_address` writes as text).
int sb_mhd_client_ipv4(struct MHD_Connection *connection, uint32_t *address);

/// Writes the IPv4 address at `address` (4 bytes, network order) as `inet_ntop` does, without its `sprintf` (every
/// request's client address); 0 when `buffer` is too small.
int sb_format_ipv4(const void *address, char *buffer, size_t size);

/// `MHD_SIZE_UNKNOWN`, which Swift does not import.
static inline uint64_t sb_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

/// Makes a response of unknown length end with its connection rather than with a last chunk: its body goes out as
/// bytes, never chunk-encoded (`MHD_RF_HTTP_1_0_COMPATIBLE_STRICT`; the status line stays HTTP/1.1), so bytes written
/// to the socket directly between two of libmicrohttpd's own writes fit in. 0 on success.
int sb_mhd_response_close_delimited(struct MHD_Response *response);

/// Readies a suspended connection's socket for writes made beside libmicrohttpd: sets `TCP_NODELAY` (a small event
/// must not wait for the client's ACK of the one before). 0 when direct writes may go ahead; -1 when they must not
/// (the socket is corked, so a direct write would be held back; or an option could not be read or set).
int sb_socket_prepare_direct_writes(int fd);

/// Writes as much of `bytes` as the socket takes now, without waiting and without SIGPIPE: the count written (0
/// when it takes nothing now), or -1 when the connection is broken.
long sb_socket_send_now(int fd, const void *bytes, size_t count);

/// Told of each connection the front accepted, on the front's thread: `target` is its first request's target
/// (not NUL-terminated; NULL when its head was too long to look at, or the front was too busy to wait for it). The
/// callee owns `fd` from then on: it hands it to a daemon with `sb_mhd_add_connection` and returns 1 when that took
/// it, or closes it and returns 0 (the front then counts its address one connection fewer).
typedef int (*sb_front_handoff_callback)(void *cls, int fd, const struct sockaddr *address, socklen_t address_length,
                                         const char *target, size_t target_length);

/// One listening socket whose connections go to the daemon their first request asks for. The front peeks at each
/// new connection (MSG_PEEK, so the daemon still reads every byte) until its request head is complete, then hands it
/// over; a head that does not come within `head_deadline_ms` closes the connection, and one longer than 2 KiB is
/// handed over without a target. Runs one thread.
typedef struct sb_front sb_front;

/// Binds `host` (NULL: every IPv4 interface; else an IPv4 or IPv6 literal) and `port`, listens, and starts the
/// front's thread. At most `pending_limit` connections wait for their head; beyond that, new ones are handed over
/// at once without a target. Each accepted connection is counted against its address in `addresses` (may be NULL),
/// which the daemons it is handed to must share; one over its address's limit is closed at once. Returns NULL with
/// *error set to an errno, or to -1 when `host` is not numeric.
sb_front *sb_front_start(const char *host, uint16_t port, int backlog, unsigned int pending_limit,
                         int64_t head_deadline_ms, sb_addresses *addresses, sb_front_handoff_callback handoff,
                         void *cls, int *error);

/// The bound port.
uint16_t sb_front_port(const sb_front *front);

/// Connections closed because their request head did not come within the deadline.
uint64_t sb_front_heads_late(const sb_front *front);

/// Connections closed as accepted because their address held as many as it may.
uint64_t sb_front_refused_by_address(const sb_front *front);
/* Connections the front holds now, waiting for their request head (safe from any thread). */
uint64_t sb_front_waiting(const sb_front *front);

/// Stops the thread (blocking until it has), closes the listening socket and the connections still waiting for
/// their head, reports the final count of heads that came late, and frees the front. Call once; no callback comes
/// after it returns.
void sb_front_stop(sb_front *front, uint64_t *heads_late);

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the new soft limit, or -1.
long sb_raise_nofile_limit(void);

#endif
