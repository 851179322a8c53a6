#define _GNU_SOURCE
#include "CLinux.h"
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <unistd.h>
#include <stdio.h>
#include <dirent.h>
#include <time.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>


const uint32_t SGEM_EPOLLIN = EPOLLIN;
const uint32_t SGEM_EPOLLOUT = EPOLLOUT;
const uint32_t SGEM_EPOLLERR = EPOLLERR;
const uint32_t SGEM_EPOLLHUP = EPOLLHUP;
const uint32_t SGEM_EPOLLRDHUP = EPOLLRDHUP;
const uint32_t SGEM_EPOLLET = EPOLLET;
const uint32_t SGEM_EPOLLEXCLUSIVE = EPOLLEXCLUSIVE;

int sgem_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static int ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}
int sgem_epoll_add(int epfd, int fd, uint32_t events, uint64_t data) { return ctl(epfd, EPOLL_CTL_ADD, fd, events, data); }
int sgem_epoll_del(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

int sgem_epoll_wait(int epfd, sgem_epoll_event *out, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { out[i].events = evs[i].events; out[i].data = evs[i].data.u64; }
    return n;
}

int sgem_accept_nonblocking(int fd, struct sockaddr *addr, socklen_t *len) {
    return accept4(fd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int sgem_socket_nonblocking(int family) { return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0); }

int sgem_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int sgem_eventfd_signal(int fd) { uint64_t one = 1; return (int)write(fd, &one, sizeof one); }
int sgem_eventfd_drain(int fd) { uint64_t v; return (int)read(fd, &v, sizeof v); }

int sgem_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

int sgem_set_reuse(int fd, int reuse_port) {
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) return -1;
    if (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) return -1;
    return 0;
}

int sgem_set_nodelay(int fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

ssize_t sgem_send(int fd, const void *buf, size_t len) { return send(fd, buf, len, MSG_NOSIGNAL); }

long long sgem_resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    long long size = 0, resident = 0;
    int ok = fscanf(f, "%lld %lld", &size, &resident);
    fclose(f);
    if (ok != 2) return 0;
    return resident * (long long)sysconf(_SC_PAGESIZE);
}

int sgem_open_fd_count(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) { if (e->d_name[0] != '.') n++; }
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

uint64_t sgem_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sgem_set_thread_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    pthread_setname_np(pthread_self(), buf);
}

int sgem_set_thread_idle(void) {
    struct sched_param param = { .sched_priority = 0 };
    return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
}
