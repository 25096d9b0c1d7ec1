// The Linux readiness and wake-up interfaces the server's event loops use, which Swift's Glibc module does not
// export: epoll(7) and eventfd(2). Linux only: elsewhere the module is empty and the server uses Dispatch.
#ifndef C_PINSET_EPOLL_H
#define C_PINSET_EPOLL_H

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#endif
