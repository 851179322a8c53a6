/* LD_PRELOAD shim for writes.sh: emulates slow storage (a spinning or network disk) by adding
 * a delay to every fsync/fdatasync after the real call returns.
 *
 *   gcc -shared -fPIC -O2 -o slowfsync.so slowfsync.c -ldl
 *   LD_PRELOAD=./slowfsync.so SLOW_FSYNC_US=2000 SLOW_FSYNC_COUNT=/tmp/n some-program
 *
 * SLOW_FSYNC_US: delay per call in microseconds (default 2000).
 * SLOW_FSYNC_COUNT: a file that always holds the number of calls intercepted so far (rewritten
 * on each call, so it is right even when the program is killed): proof that the shim is in the
 * path SQLite actually takes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static long delay_us = 2000;
static int count_fd = -1;
static atomic_long calls;

__attribute__((constructor)) static void slowfsync_init(void) {
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    const char *us = getenv("SLOW_FSYNC_US");
    if (us && *us) delay_us = strtol(us, NULL, 10);
    const char *path = getenv("SLOW_FSYNC_COUNT");
    if (path && *path) count_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static void slow_down(void) {
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (count_fd >= 0) {
        char text[32];
        int len = snprintf(text, sizeof text, "%ld\n", n);
        /* One pwrite at offset 0; numbers only grow, so a racing writer leaves at most one behind. */
        if (pwrite(count_fd, text, (size_t)len, 0) < 0) { /* counting is best effort */ }
    }
    struct timespec left = { delay_us / 1000000, (delay_us % 1000000) * 1000 };
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {}
}

/* Calls the real function, then waits; errno is the real call's. */
static int slowed(int (*real)(int), int fd) {
    int rc = real ? real(fd) : (errno = ENOSYS, -1);
    int saved = errno;
    slow_down();
    errno = saved;
    return rc;
}

int fsync(int fd) { return slowed(real_fsync, fd); }

int fdatasync(int fd) { return slowed(real_fdatasync, fd); }
