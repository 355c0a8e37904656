/* source-test-util.h: what the source tests (test-source-*.c) share: a real log recorded
 * from tests/inspector/cli/cli-workload, the reader's own count of the events in any bytes (the
 * truth a source's model must match), and a loop that drives a source the way the app does: the
 * main context runs, and a pump with a small budget stands in for each frame-clock tick. */
#pragma once

#include <glib.h>

#include "gs-trace-source.h"

/* The path of the cli-workload program (from the environment meson sets). */
const char *source_test_workload(void);
/* Runs cli-workload with GS_TRACE=path and returns the log it wrote. */
GBytes *source_test_record_workload(const char *path);
/* Records cli-workload into name (in the test dir) and returns the log; *kept receives the
 * events in all but its last cut_back bytes, which must be fewer (the cut is in a chunk). */
GBytes *source_test_record_cut(const char *name, gsize cut_back, guint64 *kept);
/* How many whole events (string-table entries aside, as the model counts) the reader gets
 * out of these bytes, stopping at damage. */
guint64 source_test_count_events(const void *bytes, gsize n);
/* The source's message contains part (or the test fails, showing the message). */
void source_test_assert_message(GsTraceSource *source, const char *part);
/* A temporary directory for this test process, removed by source_test_cleanup. */
const char *source_test_dir(void);
void source_test_cleanup(void);

typedef struct source_run {
  GsTraceSource *source;
  gs_trace_model *model; /* taken from the source, or made here for live sources */
  guint64 events;
  guint growths;         /* pumps that added events */
} source_run;

/* Drives run->source until stop(run, data) says so or timeout_ms passes; FALSE on timeout.
 * stop may be NULL: until the source is ended or broken. */
typedef gboolean (*source_run_done)(source_run *run, gpointer data);
gboolean source_run_until(source_run *run, source_run_done done, gpointer data, int timeout_ms);
gboolean source_run_is_final(source_run *run, gpointer data);
void source_run_clear(source_run *run);
/* The source ended in state, its message contains part, and the model has events events. */
void source_test_assert_final(source_run *run, GsTraceSourceState state, const char *part,
                              guint64 events);
