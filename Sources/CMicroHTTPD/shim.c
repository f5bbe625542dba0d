#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>

struct MHD_Daemon *sb_mhd_start(const sb_mhd_settings *s,
                                MHD_AccessHandlerCallback access_handler, void *access_cls,
                                MHD_RequestCompletedCallback completed, void *completed_cls,
                                int *bad_host) {
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *addr = NULL;
    unsigned int flags = s->flags;
    *bad_host = 0;
    if (s->host != NULL && s->host[0] != '\0') {
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
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_THREAD_POOL_SIZE, s->thread_pool_size, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, s->connection_limit, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, s->connection_timeout, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL },
        { MHD_OPTION_LISTEN_BACKLOG_SIZE, s->listen_backlog, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls },
        { addr != NULL ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, 0, (void *)addr },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(flags, s->port, NULL, NULL, access_handler, access_cls,
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

long sb_raise_nofile_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    }
    return (long)rl.rlim_cur;
}
