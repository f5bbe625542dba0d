#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
