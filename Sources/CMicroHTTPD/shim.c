#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct sb_watched {
    struct sb_watched *prev, *next;
    struct sb_connection_watch *watch;
    int fd;
    /* -1 while a request is being served. Atomic: set on every request by the connection's thread without the
       watch's lock (which guards only the list), read by sweeps. */
    _Atomic int64_t waiting_since_ms;
};

struct sb_connection_watch {
    pthread_mutex_t lock; /* guards the list (links, count); entries' deadlines are atomics */
    struct sb_watched *head;
    unsigned int count;
    sb_log_line_callback log;
    void *log_cls;
    /* Connections admitted by sb_admit and not yet reported closed: at most `limit`. */
    _Atomic unsigned int admitted;
    unsigned int limit;
    sb_addresses *addresses; /* not owned; may be NULL */
};

/* Set on the thread that is inside MHD_add_connection for sb_mhd_add_connection: the connection was counted against
   its address when the front accepted it, so the admission policy, which libmicrohttpd calls from within, must not
   count it again. */
static _Thread_local int sb_handing_off;

static int64_t sb_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

sb_connection_watch *sb_connection_watch_create(sb_log_line_callback log, void *log_cls, unsigned int limit,
                                                sb_addresses *addresses) {
    sb_connection_watch *watch = calloc(1, sizeof *watch);
    if (watch == NULL) return NULL;
    pthread_mutex_init(&watch->lock, NULL);
    watch->log = log;
    watch->log_cls = log_cls;
    watch->limit = limit;
    watch->addresses = addresses;
    atomic_init(&watch->admitted, 0);
    return watch;
}

/* libmicrohttpd's accept policy, called for every connection before it is set up, on the accepting thread (a
   daemon's own, or the front's inside MHD_add_connection): admits it within the daemon's connection limit and its
   address's limit, counting it until its "closed" notification. libmicrohttpd's own limit is never what stops a
   connection (see sb_mhd_start). */
static enum MHD_Result sb_admit(void *cls, const struct sockaddr *address, socklen_t length) {
    sb_connection_watch *watch = cls;
    int counted_already = sb_handing_off;
    if (!counted_already && !sb_addresses_enter(watch->addresses, address, length)) return MHD_NO;
    if (atomic_fetch_add_explicit(&watch->admitted, 1, memory_order_relaxed) >= watch->limit) {
        atomic_fetch_sub_explicit(&watch->admitted, 1, memory_order_relaxed);
        if (!counted_already) sb_addresses_leave(watch->addresses, address, length);
        return MHD_NO;
    }
    return MHD_YES;
}

int sb_mhd_add_connection(struct MHD_Daemon *daemon, int fd, const struct sockaddr *address, socklen_t length) {
    sb_handing_off = 1;
    enum MHD_Result added = MHD_add_connection(daemon, fd, address, length);
    sb_handing_off = 0;
    return added == MHD_YES ? 1 : 0;
}

unsigned int sb_connection_watch_admitted(sb_connection_watch *watch) {
    return atomic_load_explicit(&watch->admitted, memory_order_relaxed);
}

void sb_connection_watch_free(sb_connection_watch *watch) {
    if (watch == NULL) return;
    struct sb_watched *entry = watch->head;
    while (entry != NULL) {
        struct sb_watched *next = entry->next;
        free(entry);
        entry = next;
    }
    pthread_mutex_destroy(&watch->lock);
    free(watch);
}

static void sb_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                 enum MHD_ConnectionNotificationCode code) {
    sb_connection_watch *watch = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct sb_watched *entry = calloc(1, sizeof *entry);
        if (entry == NULL) return;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        entry->fd = info == NULL ? -1 : info->connect_fd;
        atomic_init(&entry->waiting_since_ms, sb_now_ms());
        entry->watch = watch;
        pthread_mutex_lock(&watch->lock);
        entry->next = watch->head;
        if (watch->head != NULL) watch->head->prev = entry;
        watch->head = entry;
        watch->count++;
        pthread_mutex_unlock(&watch->lock);
        *socket_context = entry;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        /* Every connection that was started passed sb_admit (and its address was counted, there or by the front). */
        const union MHD_ConnectionInfo *peer = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (peer != NULL && peer->client_addr != NULL) {
            socklen_t length = peer->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                                         : sizeof(struct sockaddr_in);
            sb_addresses_leave(watch->addresses, peer->client_addr, length);
        }
        atomic_fetch_sub_explicit(&watch->admitted, 1, memory_order_relaxed);
        struct sb_watched *entry = *socket_context;
        if (entry == NULL) return;
        pthread_mutex_lock(&watch->lock);
        if (entry->prev != NULL) entry->prev->next = entry->next; else watch->head = entry->next;
        if (entry->next != NULL) entry->next->prev = entry->prev;
        watch->count--;
        pthread_mutex_unlock(&watch->lock);
        *socket_context = NULL;
        free(entry);
    }
}

static void sb_set_waiting(struct MHD_Connection *connection, int waiting) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == NULL || info->socket_context == NULL) return;
    struct sb_watched *entry = info->socket_context;
    /* No lock on this per-request path: the entry lives until the connection's "closed" notification, which runs
       on this same thread, and sweeps read the deadline atomically. */
    atomic_store_explicit(&entry->waiting_since_ms, waiting ? sb_now_ms() : -1, memory_order_relaxed);
}

void sb_connection_watch_head_received(struct MHD_Connection *connection) { sb_set_waiting(connection, 0); }

void sb_connection_watch_request_done(struct MHD_Connection *connection) { sb_set_waiting(connection, 1); }

unsigned int sb_connection_watch_sweep(sb_connection_watch *watch, int64_t deadline_ms) {
    unsigned int cut = 0;
    int64_t now = sb_now_ms();
    pthread_mutex_lock(&watch->lock);
    for (struct sb_watched *entry = watch->head; entry != NULL; entry = entry->next) {
        int64_t since = atomic_load_explicit(&entry->waiting_since_ms, memory_order_relaxed);
        if (since < 0 || now - since <= deadline_ms || entry->fd < 0) continue;
        /* Cut once, and only if no request head arrived meanwhile (then the value changed). */
        if (atomic_compare_exchange_strong(&entry->waiting_since_ms, &since, -1)) {
            shutdown(entry->fd, SHUT_RDWR); /* libmicrohttpd closes it on its next look */
            cut++;
        }
    }
    pthread_mutex_unlock(&watch->lock);
    return cut;
}

unsigned int sb_connection_watch_count(sb_connection_watch *watch) {
    pthread_mutex_lock(&watch->lock);
    unsigned int count = watch->count;
    pthread_mutex_unlock(&watch->lock);
    return count;
}

static int sb_hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %HH in the path and query, except %00: libmicrohttpd hands the path over as a C string, so a decoded NUL
   would silently cut it ("/v1/interactions/%00/messages" would be served as "/v1/interactions/"). It stays the
   literal text "%00", which no identifier accepts. */
static size_t sb_unescape(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    char *read = text, *write = text;
    while (*read != '\0') {
        int high, low;
        if (read[0] == '%' && (high = sb_hex(read[1])) >= 0 && (low = sb_hex(read[2])) >= 0 && (high | low) != 0) {
            *write++ = (char)(high * 16 + low);
            read += 3;
        } else {
            *write++ = *read++;
        }
    }
    *write = '\0';
    return (size_t)(write - text);
}

static void sb_log_adapter(void *cls, const char *format, va_list arguments) {
    sb_connection_watch *watch = cls;
    if (watch->log == NULL) return;
    char line[512];
    line[0] = '\0';
    if (vsnprintf(line, sizeof line, format, arguments) < 0) return;
    size_t length = strlen(line);
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = '\0';
    watch->log(watch->log_cls, line);
}


struct MHD_Daemon *sb_mhd_start(const sb_mhd_settings *s,
                                MHD_AccessHandlerCallback access_handler, void *access_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                int *bad_host) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *addr = NULL;
    unsigned int flags = s->flags;
    *bad_host = 0;
    if (s->no_listener) flags |= MHD_USE_NO_LISTEN_SOCKET;
    if (s->host != NULL && s->host[0] != '\0' && !s->no_listener) {
        memset(&v4, 0, sizeof v4);
        memset(&v6, 0, sizeof v6);
        if (inet_pton(AF_INET, s->host, &v4.sin_addr) == 1) {
            v4.sin_family = AF_INET;
            v4.sin_port = htons(s->port);
            addr = (const struct sockaddr *)&v4;
        } else if (inet_pton(AF_INET6, s->host, &v6.sin6_addr) == 1) {
            v6.sin6_family = AF_INET6;
            v6.sin6_port = htons(s->port);
            addr = (const struct sockaddr *)&v6;
            flags |= MHD_USE_IPv6;
        } else {
            *bad_host = -1;
            return NULL;
        }
    }
    /* libmicrohttpd 0.9.75 leaves a worker's mutex locked, and the worker hung for good, when a connection given by
       MHD_add_connection finds that worker at its share of the connection limit (daemon.c, new_connection_process_;
       fixed in 1.0). So its limit is set beyond reach: each worker's share exceeds the whole limit, which sb_admit
       enforces instead, for all workers together. */
    unsigned int workers = s->thread_pool_size > 1 ? s->thread_pool_size : 1;
    unsigned int unreachable = (s->connection_limit + 2) * workers;
    struct MHD_OptionItem options[] = {
        /* A pool only for more than one thread: libmicrohttpd warns about a pool size of 0 or 1. */
        { s->thread_pool_size > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_CONNECTION_LIMIT,
          s->thread_pool_size > 1 ? s->thread_pool_size : unreachable, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, unreachable, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, s->connection_timeout, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL },
        { MHD_OPTION_LISTEN_BACKLOG_SIZE, s->listen_backlog, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)sb_notify_connection, s->watch },
        { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)sb_unescape, NULL },
        { addr != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, 0, (void *)addr },
        { MHD_OPTION_END, 0, NULL },
    };
    /* The logger comes first, ahead of the array: libmicrohttpd counts options as it parses them and warns (through
       its default logger, on stderr) when the logger is not the very first, as the array itself would be. */
    return MHD_start_daemon(flags, s->port, sb_admit, s->watch, access_handler, access_cls,
                            MHD_OPTION_EXTERNAL_LOGGER, sb_log_adapter, s->watch,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

int sb_mhd_close_listener(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (info == NULL || info->listen_fd < 0) return -1;
    /* An eventfd nobody signals: if the daemon ever puts it back in an epoll set, it never reports an event. */
    int placeholder = eventfd(0, EFD_CLOEXEC);
    if (placeholder < 0) return -1;
    int result = dup2(placeholder, info->listen_fd) < 0 ? -1 : 0;
    close(placeholder);
    return result;
}

uint16_t sb_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int sb_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

int sb_mhd_response_close_delimited(struct MHD_Response *response) {
    return MHD_set_response_options(response, MHD_RF_HTTP_1_0_COMPATIBLE_STRICT, MHD_RO_END) == MHD_YES ? 0 : -1;
}

int sb_socket_prepare_direct_writes(int fd) {
    int corked = 0;
    socklen_t length = sizeof corked;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CORK, &corked, &length) != 0 || corked) return -1;
    int on = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0 ? 0 : -1;
}

long sb_socket_send_now(int fd, const void *bytes, size_t count) {
    for (;;) {
        ssize_t sent = send(fd, bytes, count, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (sent >= 0) return (long)sent;
        if (errno == EINTR) continue;
        return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    }
}

int sb_format_ipv4(const void *address, char *buffer, size_t size) {
    const unsigned char *octets = (const unsigned char *)address;
    char text[16];
    size_t length = 0;
    for (int index = 0; index < 4; index++) {
        unsigned value = octets[index];
        if (value >= 100) text[length++] = (char)('0' + value / 100);
        if (value >= 10) text[length++] = (char)('0' + value / 10 % 10);
        text[length++] = (char)('0' + value % 10);
        if (index < 3) text[length++] = '.';
    }
    if (length >= size) return 0;
    memcpy(buffer, text, length);
    buffer[length] = '\0';
    return 1;
}

int sb_mhd_client_ipv4(struct MHD_Connection *connection, uint32_t *address) {
    const union MHD_ConnectionInfo *peer = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (peer == NULL || peer->client_addr == NULL || peer->client_addr->sa_family != AF_INET) return 0;
    memcpy(address, &((const struct sockaddr_in *)peer->client_addr)->sin_addr, 4);
    return 1;
}

int sb_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *peer = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (peer == NULL || peer->client_addr == NULL || size == 0) return 0;
    const void *address = NULL;
    if (peer->client_addr->sa_family == AF_INET) {
        return sb_format_ipv4(&((const struct sockaddr_in *)peer->client_addr)->sin_addr, buffer, size);
    } else if (peer->client_addr->sa_family == AF_INET6) {
        address = &((const struct sockaddr_in6 *)peer->client_addr)->sin6_addr;
    } else {
        return 0;
    }
    return inet_ntop(peer->client_addr->sa_family, address, buffer, (socklen_t)size) != NULL;
}

long sb_raise_nofile_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    }
    return (long)rl.rlim_cur;
}
