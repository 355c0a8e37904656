/* gs-trace-source-private.h: what the three kinds of source (gs-source-file.c,
 * gs-source-listen.c, gs-source-spawn.c) share with the core (gs-trace-source.c): the
 * instance struct and the calls a worker thread makes to hand over what it read.
 *
 * Threads: fields under "UI thread" are touched only on the source's main context; fields
 * under "shared" only with `lock` held; a worker reaches the UI thread by waking `wakeup`. */
#pragma once

#include "gs-trace-source.h"

G_BEGIN_DECLS

struct _GsTraceSource {
  GObject parent_instance;
  GsTraceSourceKind kind;
  char *description;
  GMainContext *context;
  GSource *wakeup; /* dispatches gs_trace_source_sync on context when a worker wakes it */
  GThread *worker;
  GCancellable *cancellable; /* cancelled when the worker must leave */

  /* UI thread */
  GsTraceSourceState state;
  char *message;
  double progress;
  gboolean loading;       /* a model is being loaded on the worker: pump waits for it */
  gs_trace_model *loaded; /* loaded and not yet taken */
  gs_trace_model *taken;  /* the model taken (not owned): the one pump must be given */
  gboolean final;         /* ended or broken: nothing changes any more */
  gboolean user_stopped;

  /* shared, under lock */
  GMutex lock;
  GCond cond;            /* pieces consumed or stopping: a blocked worker may go on */
  GQueue pieces;         /* GBytes* of log received, oldest first */
  gsize head_used;       /* bytes of the oldest piece already pumped */
  guint64 pending;       /* bytes received, not pumped */
  guint64 received;
  gboolean stopping;     /* the worker must leave */
  gboolean input_done;   /* the worker has delivered all it ever will */
  char *end_note;        /* how the input ended (translated) */
  gboolean end_broken;   /* ... and whether that is a failure (read error, killed program) */
  char *live_note;       /* the input went live (connected, started): what to say */
  double worker_progress;
  gs_trace_model *worker_model; /* loaded on the worker, to hand over */
  GQueue output;         /* GsOutputLine*: a spawned program's last lines, oldest first */
  gsize output_bytes;    /* their text's size */
  guint64 output_total;  /* lines received, kept or not */
  gboolean output_changed;
  int exit_status;       /* -1 until the program exited normally */

  /* per kind, set before the worker starts */
  char *path;            /* file */
  gboolean follow;
  GSocket *listener;     /* listen: the listening socket, until a program connects */
  char *socket_path;
  gboolean owns_socket_path; /* we bound it: unlink it when done */
  GSubprocess *process;  /* spawn */
  int trace_fd;          /* spawn: our end of the log pipe */
  int echo_fd[2];        /* spawn: where stdout and stderr are echoed, or -1 */
  GCancellable *exited;  /* spawn: cancelled once the program has exited (a pollable flag) */
};

/* Made by the kinds' constructors: a source of kind in state connecting or loading. */
GsTraceSource *gs_trace_source_new_of_kind(GsTraceSourceKind kind, const char *description,
                                           GsTraceSourceState state, const char *message);
void gs_trace_source_start_worker(GsTraceSource *self, const char *name, GThreadFunc func);

/* Worker calls. push waits while too much is queued; it returns FALSE when the worker must
 * leave (so does wait, which sleeps up to timeout_us unless told to leave). */
gboolean gs_trace_source_push(GsTraceSource *self, const void *bytes, gsize n);
gboolean gs_trace_source_wait(GsTraceSource *self, gint64 timeout_us);
gboolean gs_trace_source_stopping(GsTraceSource *self);
void gs_trace_source_post_live(GsTraceSource *self, char *note /* owned */);
void gs_trace_source_post_progress(GsTraceSource *self, double progress);
/* Hands over a model loaded on the worker. With last, the input ends with it, as post_end
 * would say (in one step, so the UI never sees a loaded file as live for a moment). */
void gs_trace_source_post_loaded(GsTraceSource *self, gs_trace_model *m /* owned */,
                                 gboolean last, gboolean broken, char *note /* owned */);
/* Takes the lines (GsOutputLine*, oldest first) out of lines, which stays the caller's. */
void gs_trace_source_post_output(GsTraceSource *self, GPtrArray *lines);
void gs_trace_source_post_exit_status(GsTraceSource *self, int status);
/* The worker is done: broken says the input failed (not merely ended); note is owned. */
void gs_trace_source_post_end(GsTraceSource *self, gboolean broken, char *note);

G_END_DECLS
