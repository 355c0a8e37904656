/* hostile-logs.h: well-formed event logs (valid header, chunks and CRCs) whose content is
 * hostile or merely unusual, each one shape issue 22 found taking the `gradscope` commands
 * down: relation cycles, ids chosen to collide in hash tables, 100,000 threads, 200,000 names,
 * a node with millions of edges, scopes nested 100,000 deep, huge names and sizes, names that
 * are markup or not UTF-8, logs with no events. Written with the tests' encoder
 * (trace-writer-test.h); used by make-hostile-logs (files for the cli suite and the benchmark)
 * and as seeds of the model fuzzer. GLib-free. */
#pragma once

#include <stddef.h>

#include "trace-writer-test.h"

typedef struct hostile_log {
  const char *name; /* file name without .gst: "scope-self-outer" */
  /* Writes the log into *log; scale 1.0 is the size the issue measured, smaller scales keep
   * the shape with fewer events (a test's budget), never fewer than a handful. */
  void (*build)(tw_log *log, double scale);
} hostile_log;

/* Every shape, NULL-terminated. */
extern const hostile_log hostile_logs[];
