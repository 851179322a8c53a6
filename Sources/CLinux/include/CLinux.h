#ifndef SGEM_CLINUX_H
#define SGEM_CLINUX_H
/* A narrow shim over Linux calls that Swift's Glibc module does not expose (epoll, accept4,
   eventfd) plus a few constants. Every function returns what the syscall returns; errno is
   left for the Swift caller to read and turn into an error on the spot. */
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>

typedef struct {
    uint32_t events;
    uint64_t data;
} sgem_epoll_event;

extern const uint32_t SGEM_EPOLLIN;
extern const uint32_t SGEM_EPOLLOUT;
extern const uint32_t SGEM_EPOLLERR;
extern const uint32_t SGEM_EPOLLHUP;
extern const uint32_t SGEM_EPOLLRDHUP;
extern const uint32_t SGEM_EPOLLET;
/* Wake one of the epoll sets waiting on a shared descriptor, not all (the listener). */
extern const uint32_t SGEM_EPOLLEXCLUSIVE;

int sgem_epoll_create(void);
int sgem_epoll_add(int epfd, int fd, uint32_t events, uint64_t data);
int sgem_epoll_del(int epfd, int fd);
/* Waits for events; fills `out` (up to `max`) and returns the count, or -1 with errno. */
int sgem_epoll_wait(int epfd, sgem_epoll_event *out, int max, int timeout_ms);

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC. */
int sgem_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len);
/* A non-blocking, close-on-exec stream socket of `family` (AF_INET or AF_INET6). */
int sgem_socket_nonblocking(int family);
/* A non-blocking, close-on-exec eventfd used to wake an event loop. */
int sgem_eventfd(void);
int sgem_eventfd_signal(int fd);
int sgem_eventfd_drain(int fd);
/* CPUs this process may run on (sched_getaffinity), at least 1. */
int sgem_available_cpus(void);
/* Sets SO_REUSEADDR (and SO_REUSEPORT when reuse_port != 0) on a socket. */
int sgem_set_reuse(int fd, int reuse_port);
/* Disables Nagle. */
int sgem_set_nodelay(int fd);
/* send() with MSG_NOSIGNAL so a closed peer gives EPIPE instead of SIGPIPE. */
ssize_t sgem_send(int fd, const void *buf, size_t len);
/* Resident set size of this process in bytes, from /proc/self/statm (0 if unknown). */
long long sgem_resident_bytes(void);
/* Number of open file descriptors of this process (count of /proc/self/fd), or -1. */
int sgem_open_fd_count(void);
/* Names the calling thread (at most 15 bytes are kept), so `top -H` and debuggers show what it is. */
void sgem_set_thread_name(const char *name);

/// Puts the calling thread in SCHED_IDLE: it runs only when no ordinary thread wants the CPU
/// (Linux schedules threads one by one); 0 on success.
int sgem_set_thread_idle(void);
/* Monotonic clock in nanoseconds. */
uint64_t sgem_monotonic_ns(void);
#endif
