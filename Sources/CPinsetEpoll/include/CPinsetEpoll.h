// The Linux readiness and wake-up interfaces the server's event loops use, which Swift's Glibc module does not
// export: epoll(7) and eventfd(2).
#ifndef C_PINSET_EPOLL_H
#define C_PINSET_EPOLL_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
