/* tour-common.h: what every tour program shares: a CHECK that counts failures (a tour is a
 * test, so a program whose story stops being true exits non-zero), and an error handler that
 * keeps the message and returns, so a tour can show an error and carry on. */
#pragma once

#include <gradscope/gradscope.h>
#include <stdio.h>
#include <string.h>

static int tour_failures;

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s: check failed: %s (line %d)\n", __FILE__, #cond, __LINE__);        \
      tour_failures++;                                                                       \
    }                                                                                        \
  } while (0)

typedef struct tour_caught {
  int count;
  char last[1024];
} tour_caught;

static inline void tour_keep_error(const gs_error *error, void *user_data) {
  tour_caught *caught = user_data;
  caught->count++;
  snprintf(caught->last, sizeof caught->last, "%s", error->message);
}

/* A mark in the log (what a tour's steps search from) and the same heading on stdout. */
static inline void tour_section(const char *mark) {
  gs_trace_mark(mark);
  printf("\n== %s ==\n", mark);
}

/* A tensor's name in the log, so the inspector and `gradscope explain` say "m", not "#3.1". */
static inline gs_tensor tour_named(gs_tensor t, const char *name) {
  gs_trace_name(t, name);
  return t;
}
