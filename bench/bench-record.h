/* bench-record.h: recording a benchmark's log in a child process, so that the parent, which
 * then opens the log, holds only what reading it costs (bench-open, bench-symbols). */
#pragma once

#include <gradscope/gradscope.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks; the child records body(n) into path and exits. Exits the parent with a message
 * naming who if recording failed. */
static inline void bench_record_in_child(const char *path, void (*body)(uint64_t n), uint64_t n,
                                         const char *who) {
  pid_t child = fork();
  if (child == 0) {
    if (gs_trace_open(path) != 0)
      _exit(2);
    body(n);
    gs_trace_close();
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s: recording the log failed\n", who);
    exit(1);
  }
}
