#include "floor.h"

#include <arpa/inet.h>
#include <string.h>

struct MHD_Daemon *floor_start(uint16_t port, unsigned threads, MHD_AccessHandlerCallback handler,
                               MHD_RequestCompletedCallback completed) {
    static struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_OptionItem opts[8];
    unsigned n = 0;
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &addr};
    if (threads > 1)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, 10000, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 60, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                                MHD_USE_ERROR_LOG,
                            port, NULL, NULL, handler, NULL, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

struct MHD_Response *floor_ok_response(void) {
    static const char body[] = "{\"status\":\"ok\"}";
    struct MHD_Response *response =
        MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (response != NULL)
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    return response;
}
