// What the end-to-end tests need from glibc that Swift's Glibc module does not show without
// _GNU_SOURCE: spawning a child that inherits nothing but its standard streams.
#define _GNU_SOURCE
#include "CTestSupport.h"
#include <fcntl.h>
#include <unistd.h>

int sgem_test_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int sgem_test_spawn_closefrom(posix_spawn_file_actions_t *actions, int low) {
    return posix_spawn_file_actions_addclosefrom_np(actions, low);
}
