#ifndef BRIDGE_FLOOR_H
#define BRIDGE_FLOOR_H

#include <microhttpd.h>
#include <stdint.h>

/* Starts an epoll daemon with suspend/resume on 127.0.0.1:port with `threads` MHD threads (a pool when more than
 * one), the same options as bench/c-baseline. NULL on failure. */
struct MHD_Daemon *floor_start(uint16_t port, unsigned threads, MHD_AccessHandlerCallback handler,
                               MHD_RequestCompletedCallback completed);

/* A persistent 200 {"status":"ok"} application/json response, shared by every request. */
struct MHD_Response *floor_ok_response(void);

#endif
