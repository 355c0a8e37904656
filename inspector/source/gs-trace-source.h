/* gs-trace-source.h: where the inspector's events come from: a log file (read once or
 * followed while a program appends to it), a Unix socket a traced program connects to, or a
 * program the inspector runs itself with tracing pointed back at it.
 *
 * Reading happens on a worker thread; the UI thread takes what arrived with
 * gs_trace_source_pump, a little at a time (the app calls it from a frame-clock tick). A file
 * is first loaded whole on the worker into a model of its own, with progress, and handed over
 * through the "loaded" signal and gs_trace_source_take_model; a followed file then continues
 * through pump into that same model. A source that ends or breaks says so in its state and
 * message, and everything it delivered stays in the model.
 *
 * Signals are emitted on the main context that was the thread default when the source was
 * made. */
#pragma once

#include <gio/gio.h>

#include "trace-model.h"

G_BEGIN_DECLS

typedef enum {
  GS_TRACE_SOURCE_CONNECTING, /* waiting for a program to connect, or starting one */
  GS_TRACE_SOURCE_LOADING,    /* reading a file's existing content on the worker */
  GS_TRACE_SOURCE_LIVE,       /* events arrive as the program makes them */
  GS_TRACE_SOURCE_ENDED,      /* the input ended cleanly: everything was received */
  GS_TRACE_SOURCE_BROKEN,     /* the input stopped early: damage, a cut chunk, a lost link */
} GsTraceSourceState;

typedef enum {
  GS_TRACE_SOURCE_FILE,
  GS_TRACE_SOURCE_LISTEN,
  GS_TRACE_SOURCE_SPAWN,
} GsTraceSourceKind;

/* Where a line of a spawned program's output came from. */
typedef enum {
  GS_OUTPUT_STDOUT,
  GS_OUTPUT_STDERR,
  GS_OUTPUT_EXIT, /* not printed: the source's sentence on how the program ended, last */
} GsOutputStream;

typedef struct {
  GsOutputStream stream;
  char *text; /* valid UTF-8 (other bytes became U+FFFD), without its newline */
} GsOutputLine;

void gs_output_line_free(GsOutputLine *line);

/* Bounds on a program's output kept in memory: a line longer than GS_OUTPUT_LINE_MAX bytes
 * arrives in pieces of at most that, and only the last GS_OUTPUT_KEPT_LINES lines (and at
 * most GS_OUTPUT_KEPT_BYTES of text) are kept, here and in the Output pane. */
#define GS_OUTPUT_LINE_MAX (16u << 10)
#define GS_OUTPUT_KEPT_LINES 10000u
#define GS_OUTPUT_KEPT_BYTES (8u << 20)

GType gs_trace_source_state_get_type(void) G_GNUC_CONST;
#define GS_TYPE_TRACE_SOURCE_STATE (gs_trace_source_state_get_type())
GType gs_trace_source_kind_get_type(void) G_GNUC_CONST;
#define GS_TYPE_TRACE_SOURCE_KIND (gs_trace_source_kind_get_type())

#define GS_TYPE_TRACE_SOURCE (gs_trace_source_get_type())
G_DECLARE_FINAL_TYPE(GsTraceSource, gs_trace_source, GS, TRACE_SOURCE, GObject)

/* Reads the log at path; with follow, keeps reading what a running program appends. Problems
 * (no such file, damage) arrive as the broken state, like every later problem. A file read
 * once keeps its event bytes on disk (gs_trace_model_load_file); a followed one is fed as a
 * stream, so the model holds its bytes in memory. */
GsTraceSource *gs_trace_source_new_file(const char *path, gboolean follow);
/* Listens on a Unix socket (NULL: $XDG_RUNTIME_DIR/gradscope/inspector.sock, directory 0700,
 * socket 0600) and takes the first program of this user that connects with
 * GS_TRACE=unix:PATH; programs of other users are refused, with the reason logged. */
GsTraceSource *gs_trace_source_new_listen(const char *socket_path, GError **error);
/* Runs argv[0] (searched in PATH) in cwd (NULL: ours) with its log written to a pipe
 * (GS_TRACE_FD), and collects its output, line by line, and its exit status. What it prints
 * on stdout is also written, unchanged and as it arrives, to echo_stdout, and its stderr to
 * echo_stderr (the inspector's own: STDOUT_FILENO, STDERR_FILENO; -1: not echoed). The
 * caller keeps those descriptors open while the source lives. */
GsTraceSource *gs_trace_source_new_spawn(const char *const *argv, const char *cwd,
                                         int echo_stdout, int echo_stderr, GError **error);
/* The same with env's NAME=VALUE entries added to the program's environment (NULL: none;
 * GS_TRACE and GS_TRACE_FD are the source's own and are not taken from env). */
GsTraceSource *gs_trace_source_new_spawn_env(const char *const *argv, const char *cwd,
                                             const char *const *env, int echo_stdout,
                                             int echo_stderr, GError **error);

/* The per-user socket path new_listen uses by default (newly allocated). */
char *gs_trace_source_default_socket_path(void);

/* Feeds bytes that arrived into m on the calling (UI) thread for about budget_us of work at
 * most (at least one piece), and returns how many events that added. m must be the model
 * taken from this source if it handed one over. Returns 0 while a file is still loading. */
guint64 gs_trace_source_pump(GsTraceSource *self, gs_trace_model *m, gint64 budget_us);
/* The model a file was loaded into, once "loaded" was emitted (transfer full), else NULL. */
gs_trace_model *gs_trace_source_take_model(GsTraceSource *self);
/* Stops reading (a spawned program is sent SIGTERM, and SIGKILL if asked again): the source
 * ends, not broken, once what arrived is pumped. */
void gs_trace_source_stop(GsTraceSource *self);

GsTraceSourceKind gs_trace_source_get_kind(GsTraceSource *self);
GsTraceSourceState gs_trace_source_get_state(GsTraceSource *self);
/* One translated sentence about the state ("the program exited with status 1"). */
const char *gs_trace_source_get_message(GsTraceSource *self);
/* What is read: the file, the socket or the command line. */
const char *gs_trace_source_get_description(GsTraceSource *self);
/* Loading progress 0..1 (1 once loaded; live sources stay at 0). */
double gs_trace_source_get_progress(GsTraceSource *self);
/* Bytes of log received so far, and those received but not pumped yet. */
guint64 gs_trace_source_get_bytes_received(GsTraceSource *self);
guint64 gs_trace_source_get_bytes_pending(GsTraceSource *self);
/* A spawned program's output lines, numbered from 0 as they were read; its last line is
 * the GS_OUTPUT_EXIT sentence. Between stdout and stderr the order is the order the reads
 * saw, the program's own order only when it paused between them (two pipes have no common
 * clock). Returns the kept lines numbered from `from` on (GsOutputLine*, transfer full);
 * *first receives the number of the first one returned, more than `from` when lines in
 * between were dropped to keep within the bounds above. */
GPtrArray *gs_trace_source_get_output(GsTraceSource *self, guint64 from, guint64 *first);
/* How many output lines have arrived (the number the next one will get). */
guint64 gs_trace_source_get_n_output(GsTraceSource *self);
/* A spawned program's exit status once it exited normally, else -1. */
int gs_trace_source_get_exit_status(GsTraceSource *self);

G_END_DECLS
