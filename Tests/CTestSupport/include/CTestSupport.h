#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H
#include <spawn.h>

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the moment they exist.
int sgem_test_pipe_cloexec(int fds[2]);

/// Adds "close every descriptor from `low` up" to a spawn's file actions (glibc 2.34+).
int sgem_test_spawn_closefrom(posix_spawn_file_actions_t *actions, int low);
#endif
