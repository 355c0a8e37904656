/* gs-trace-source.c: the core every kind of source shares: the queue of received bytes
 * between the worker thread and the UI thread, pumping it into a model within a time budget,
 * handing over a model loaded on the worker, and the state, message and signals.
 * The kinds themselves are in gs-source-file.c, gs-source-listen.c and gs-source-spawn.c. */
#include "gs-trace-source-private.h"

#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* A worker stops reading while this much is received and not pumped, so a program that
 * writes faster than the UI takes it is slowed down instead of filling memory. */
#define MAX_PENDING (64u << 20)
/* Pumped into the model at a time, between looks at the clock. */
#define PUMP_SLICE (32u << 10)

G_DEFINE_ENUM_TYPE(GsTraceSourceState, gs_trace_source_state,
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_CONNECTING, "connecting"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_LOADING, "loading"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_LIVE, "live"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_ENDED, "ended"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_BROKEN, "broken"))

G_DEFINE_ENUM_TYPE(GsTraceSourceKind, gs_trace_source_kind,
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_FILE, "file"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_LISTEN, "listen"),
  G_DEFINE_ENUM_VALUE(GS_TRACE_SOURCE_SPAWN, "spawn"))

G_DEFINE_FINAL_TYPE(GsTraceSource, gs_trace_source, G_TYPE_OBJECT)

enum { PROP_0, PROP_KIND, PROP_STATE, PROP_MESSAGE, PROP_DESCRIPTION, PROP_PROGRESS, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_CHANGED, SIGNAL_LOADED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- waking the UI thread -------------------------------------------------------------- */

static gboolean gs_trace_source_sync(gpointer data);

/* A source that stays attached for the object's life; a worker sets its ready time to wake
 * it (thread-safe), so no callback can outlive the object it points at. */
static gboolean wakeup_dispatch(GSource *source, GSourceFunc callback, gpointer data) {
  g_source_set_ready_time(source, -1);
  return callback(data);
}

static GSourceFuncs wakeup_funcs = {.dispatch = wakeup_dispatch};

static void wake(GsTraceSource *self) { g_source_set_ready_time(self->wakeup, 0); }

/* ---- object ---------------------------------------------------------------------------- */

static void gs_trace_source_init(GsTraceSource *self) {
  g_mutex_init(&self->lock);
  g_cond_init(&self->cond);
  g_queue_init(&self->pieces);
  self->cancellable = g_cancellable_new();
  g_queue_init(&self->output);
  self->exit_status = -1;
  self->trace_fd = -1;
  self->echo_fd[0] = self->echo_fd[1] = -1;
  self->context = g_main_context_ref_thread_default();
  self->wakeup = g_source_new(&wakeup_funcs, sizeof(GSource));
  g_source_set_static_name(self->wakeup, "GsTraceSource wakeup");
  g_source_set_callback(self->wakeup, gs_trace_source_sync, self, NULL);
  g_source_attach(self->wakeup, self->context);
}

/* Tells the worker to leave and waits for it: after this no other thread touches self. */
static void stop_worker(GsTraceSource *self) {
  g_mutex_lock(&self->lock);
  self->stopping = TRUE;
  g_cond_broadcast(&self->cond);
  g_mutex_unlock(&self->lock);
  g_cancellable_cancel(self->cancellable);
  if (self->process)
    g_subprocess_force_exit(self->process); /* closing the inspector ends what it started */
  if (self->worker)
    g_thread_join(g_steal_pointer(&self->worker));
}

static void gs_trace_source_dispose(GObject *object) {
  GsTraceSource *self = GS_TRACE_SOURCE(object);
  stop_worker(self);
  if (self->wakeup) {
    g_source_destroy(self->wakeup);
    g_clear_pointer(&self->wakeup, g_source_unref);
  }
  if (self->listener)
    g_socket_close(self->listener, NULL);
  g_clear_object(&self->listener);
  if (self->owns_socket_path)
    g_unlink(self->socket_path);
  self->owns_socket_path = FALSE;
  g_clear_object(&self->process);
  G_OBJECT_CLASS(gs_trace_source_parent_class)->dispose(object);
}

static void gs_trace_source_finalize(GObject *object) {
  GsTraceSource *self = GS_TRACE_SOURCE(object);
  g_queue_clear_full(&self->pieces, (GDestroyNotify)g_bytes_unref);
  g_clear_pointer(&self->loaded, gs_trace_model_free);
  g_clear_pointer(&self->worker_model, gs_trace_model_free);
  if (self->trace_fd >= 0)
    close(self->trace_fd);
  g_queue_clear_full(&self->output, (GDestroyNotify)gs_output_line_free);
  g_free(self->description);
  g_free(self->message);
  g_free(self->end_note);
  g_free(self->live_note);
  g_free(self->path);
  g_free(self->socket_path);
  g_object_unref(self->cancellable);
  g_clear_object(&self->exited);
  g_main_context_unref(self->context);
  g_mutex_clear(&self->lock);
  g_cond_clear(&self->cond);
  G_OBJECT_CLASS(gs_trace_source_parent_class)->finalize(object);
}

static void gs_trace_source_get_property(GObject *object, guint prop_id, GValue *value,
                                         GParamSpec *pspec) {
  GsTraceSource *self = GS_TRACE_SOURCE(object);
  switch (prop_id) {
  case PROP_KIND: g_value_set_enum(value, self->kind); break;
  case PROP_STATE: g_value_set_enum(value, self->state); break;
  case PROP_MESSAGE: g_value_set_string(value, self->message); break;
  case PROP_DESCRIPTION: g_value_set_string(value, self->description); break;
  case PROP_PROGRESS: g_value_set_double(value, self->progress); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_trace_source_class_init(GsTraceSourceClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = gs_trace_source_dispose;
  object_class->finalize = gs_trace_source_finalize;
  object_class->get_property = gs_trace_source_get_property;

  GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;
  properties[PROP_KIND] = g_param_spec_enum("kind", NULL, NULL, GS_TYPE_TRACE_SOURCE_KIND,
                                            GS_TRACE_SOURCE_FILE, flags);
  properties[PROP_STATE] = g_param_spec_enum("state", NULL, NULL, GS_TYPE_TRACE_SOURCE_STATE,
                                             GS_TRACE_SOURCE_CONNECTING, flags);
  properties[PROP_MESSAGE] = g_param_spec_string("message", NULL, NULL, NULL, flags);
  properties[PROP_DESCRIPTION] = g_param_spec_string("description", NULL, NULL, NULL, flags);
  properties[PROP_PROGRESS] = g_param_spec_double("progress", NULL, NULL, 0, 1, 0, flags);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* Anything shown changed: state, message, progress or a spawned program's output. */
  signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* A file's content is loaded: take the model with gs_trace_source_take_model. */
  signals[SIGNAL_LOADED] = g_signal_new("loaded", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                        0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

GsTraceSource *gs_trace_source_new_of_kind(GsTraceSourceKind kind, const char *description,
                                           GsTraceSourceState state, const char *message) {
  GsTraceSource *self = g_object_new(GS_TYPE_TRACE_SOURCE, NULL);
  self->kind = kind;
  self->description = g_strdup(description);
  self->state = state;
  self->message = g_strdup(message);
  self->loading = state == GS_TRACE_SOURCE_LOADING;
  return self;
}

void gs_trace_source_start_worker(GsTraceSource *self, const char *name, GThreadFunc func) {
  self->worker = g_thread_new(name, func, self);
}

/* ---- worker side ----------------------------------------------------------------------- */

gboolean gs_trace_source_push(GsTraceSource *self, const void *bytes, gsize n) {
  g_mutex_lock(&self->lock);
  while (self->pending >= MAX_PENDING && !self->stopping)
    g_cond_wait(&self->cond, &self->lock);
  gboolean go_on = !self->stopping;
  if (go_on && n > 0) {
    g_queue_push_tail(&self->pieces, g_bytes_new(bytes, n));
    self->pending += n;
    self->received += n;
  }
  g_mutex_unlock(&self->lock);
  return go_on;
}

gboolean gs_trace_source_wait(GsTraceSource *self, gint64 timeout_us) {
  gint64 until = g_get_monotonic_time() + timeout_us;
  g_mutex_lock(&self->lock);
  while (!self->stopping && g_cond_wait_until(&self->cond, &self->lock, until))
    ; /* woken by a pump: keep sleeping until the time is up */
  gboolean go_on = !self->stopping;
  g_mutex_unlock(&self->lock);
  return go_on;
}

gboolean gs_trace_source_stopping(GsTraceSource *self) {
  g_mutex_lock(&self->lock);
  gboolean stopping = self->stopping;
  g_mutex_unlock(&self->lock);
  return stopping;
}

void gs_trace_source_post_live(GsTraceSource *self, char *note) {
  g_mutex_lock(&self->lock);
  g_free(self->live_note);
  self->live_note = note;
  g_mutex_unlock(&self->lock);
  wake(self);
}

void gs_trace_source_post_progress(GsTraceSource *self, double progress) {
  g_mutex_lock(&self->lock);
  self->worker_progress = CLAMP(progress, 0.0, 1.0);
  g_mutex_unlock(&self->lock);
  wake(self);
}

void gs_trace_source_post_loaded(GsTraceSource *self, gs_trace_model *m, gboolean last,
                                 gboolean broken, char *note) {
  g_mutex_lock(&self->lock);
  self->worker_model = m;
  if (last) {
    self->input_done = TRUE;
    self->end_broken = broken;
    g_free(self->end_note);
    self->end_note = note;
  } else {
    g_free(note);
  }
  g_mutex_unlock(&self->lock);
  wake(self);
}

void gs_trace_source_post_output(GsTraceSource *self, GPtrArray *lines) {
  if (lines->len == 0)
    return;
  gsize n;
  GsOutputLine **taken = (GsOutputLine **)g_ptr_array_steal(lines, &n);
  g_mutex_lock(&self->lock);
  for (gsize i = 0; i < n; i++) {
    g_queue_push_tail(&self->output, taken[i]);
    self->output_bytes += strlen(taken[i]->text);
  }
  self->output_total += n;
  /* Keep the end: the last lines explain an exit. */
  while (self->output.length > GS_OUTPUT_KEPT_LINES ||
         self->output_bytes > GS_OUTPUT_KEPT_BYTES) {
    GsOutputLine *oldest = g_queue_pop_head(&self->output);
    self->output_bytes -= strlen(oldest->text);
    gs_output_line_free(oldest);
  }
  self->output_changed = TRUE;
  g_mutex_unlock(&self->lock);
  g_free(taken);
  wake(self);
}

void gs_trace_source_post_exit_status(GsTraceSource *self, int status) {
  g_mutex_lock(&self->lock);
  self->exit_status = status;
  g_mutex_unlock(&self->lock);
}

void gs_trace_source_post_end(GsTraceSource *self, gboolean broken, char *note) {
  g_mutex_lock(&self->lock);
  self->input_done = TRUE;
  self->end_broken = broken;
  g_free(self->end_note);
  self->end_note = note;
  g_mutex_unlock(&self->lock);
  wake(self);
}

/* ---- UI side --------------------------------------------------------------------------- */

static void set_state(GsTraceSource *self, GsTraceSourceState state, const char *message) {
  if (self->state != state) {
    self->state = state;
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_STATE]);
  }
  if (g_strcmp0(self->message, message) != 0) {
    g_free(self->message);
    self->message = g_strdup(message);
    g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_MESSAGE]);
  }
}

static void set_progress(GsTraceSource *self, double progress) {
  if (self->progress == progress)
    return;
  self->progress = progress;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_PROGRESS]);
}

/* Two sentences as one message. */
static char *join_sentences(const char *first, const char *second) {
  if (!first)
    return g_strdup(second);
  if (!second)
    return g_strdup(first);
  /* TRANSLATORS: two sentences of a source's status, e.g. "The program exited with status
   * 0." and "The log ends in the middle of a chunk...". */
  return g_strdup_printf(_("%s %s"), first, second);
}

/* The input is over and everything was pumped (or the log is damaged): says how it ended,
 * from how the input ended (the worker's note) and what the model found in the log. m is
 * the model that got the bytes (NULL if there is none). */
static void finalize_state(GsTraceSource *self, gs_trace_model *m) {
  if (self->final)
    return;
  self->final = TRUE;
  g_mutex_lock(&self->lock);
  self->stopping = TRUE; /* a follower or reader still running may leave now */
  g_cond_broadcast(&self->cond);
  g_autofree char *note = g_strdup(self->end_note);
  gboolean broken = self->end_broken;
  g_mutex_unlock(&self->lock);
  g_cancellable_cancel(self->cancellable);

  /* A model that got no bytes knows nothing about the log (it would call it empty). */
  if (m && gs_trace_model_bytes_fed(m) == 0)
    m = NULL;
  if (m)
    gs_trace_model_finish(m); /* from here a cut chunk counts as a problem of the log */
  gboolean damaged = m && gs_trace_model_damaged(m);
  /* A user who stops a source mid-chunk cut it on purpose: only damage is a failure then. */
  gboolean stopped = self->user_stopped && !damaged;
  const char *problem = m && !stopped ? gs_trace_model_problem(m) : NULL;
  gboolean failed = !stopped && (broken || problem != NULL);

  /* A file with no events in it: the sentence every command gives (empty, not a log, a cut
   * header) says more than the reader's damage report. */
  g_autofree char *not_a_log = NULL;
  if (self->kind == GS_TRACE_SOURCE_FILE && self->path && !stopped &&
      (!m || gs_trace_model_n_events(m) == 0))
    not_a_log = gs_trace_file_not_a_log(self->path);
  if (not_a_log)
    failed = TRUE;

  g_autofree char *message = NULL;
  if (not_a_log)
    message = g_steal_pointer(&not_a_log); /* alone: "the whole log was read" is not true */
  else if (stopped && note && self->kind == GS_TRACE_SOURCE_SPAWN)
    message = g_strdup(note); /* how the program took being stopped */
  else if (stopped)
    message = g_strdup(_("Stopped. Everything received so far is kept."));
  else if (!m && self->kind != GS_TRACE_SOURCE_FILE)
    message = join_sentences(note, _("No event log arrived."));
  else if (note || problem)
    message = join_sentences(note, problem);
  else
    message = g_strdup(_("The log ended."));
  set_state(self, failed ? GS_TRACE_SOURCE_BROKEN : GS_TRACE_SOURCE_ENDED, message);
}

static gboolean drained(GsTraceSource *self) {
  g_mutex_lock(&self->lock);
  gboolean done = self->input_done && self->pending == 0;
  g_mutex_unlock(&self->lock);
  return done;
}

/* Runs on the source's main context whenever a worker has something to say. */
static gboolean gs_trace_source_sync(gpointer data) {
  GsTraceSource *self = data;
  g_object_ref(self); /* a "changed" handler may drop the last reference */
  g_object_freeze_notify(G_OBJECT(self));

  g_mutex_lock(&self->lock);
  double progress = self->worker_progress;
  char *live_note = g_steal_pointer(&self->live_note);
  gs_trace_model *model = g_steal_pointer(&self->worker_model);
  gboolean output_changed = self->output_changed;
  self->output_changed = FALSE;
  gboolean input_done = self->input_done;
  guint64 received = self->received;
  g_mutex_unlock(&self->lock);

  gboolean changed = output_changed;
  if (self->loading && progress != self->progress) {
    set_progress(self, progress);
    changed = TRUE;
  }
  if (live_note && !self->final) {
    set_state(self, GS_TRACE_SOURCE_LIVE, live_note);
    changed = TRUE;
  }
  g_free(live_note);

  gboolean emit_loaded = FALSE;
  if (model) {
    self->loading = FALSE;
    set_progress(self, 1.0);
    if (drained(self))
      finalize_state(self, model); /* a file read once: its end is known now */
    else if (!self->final)
      set_state(self, GS_TRACE_SOURCE_LIVE, _("Following the file as it grows."));
    self->loaded = model;
    emit_loaded = changed = TRUE;
  } else if (input_done && !self->final && !self->loading && received == 0 &&
             self->taken == NULL) {
    /* Nothing arrived after the load (or at all), so no pump will come to end it. */
    finalize_state(self, self->loaded);
    changed = TRUE;
  } else if (input_done && !self->final && self->loading) {
    self->loading = FALSE; /* the load failed before it made a model */
    finalize_state(self, NULL);
    changed = TRUE;
  }

  g_object_thaw_notify(G_OBJECT(self));
  if (emit_loaded)
    g_signal_emit(self, signals[SIGNAL_LOADED], 0);
  if (changed)
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  g_object_unref(self);
  return G_SOURCE_CONTINUE;
}

guint64 gs_trace_source_pump(GsTraceSource *self, gs_trace_model *m, gint64 budget_us) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), 0);
  g_return_val_if_fail(m != NULL, 0);
  if (self->final || self->loading)
    return 0;
  /* Bytes that continue a loaded file make sense only in the model it was loaded into. */
  g_return_val_if_fail(self->loaded == NULL, 0);
  g_return_val_if_fail(self->taken == NULL || self->taken == m, 0);
  self->taken = m;

  gint64 start = g_get_monotonic_time();
  guint64 added = 0;
  for (;;) {
    g_mutex_lock(&self->lock);
    GBytes *head = g_queue_peek_head(&self->pieces);
    gsize used = self->head_used, size = 0;
    const guint8 *data = head ? g_bytes_get_data(head, &size) : NULL;
    g_mutex_unlock(&self->lock);
    if (!head)
      break;
    /* Only this thread removes pieces, so head stays valid while it is fed unlocked. */
    gsize n = MIN(size - used, PUMP_SLICE);
    added += gs_trace_model_feed(m, data + used, n);

    g_mutex_lock(&self->lock);
    self->head_used += n;
    self->pending -= n;
    if (self->head_used == size) {
      g_bytes_unref(g_queue_pop_head(&self->pieces));
      self->head_used = 0;
    }
    g_cond_broadcast(&self->cond); /* a worker held back by MAX_PENDING may go on */
    g_mutex_unlock(&self->lock);

    if (gs_trace_model_damaged(m)) {
      finalize_state(self, m); /* nothing after damage can be trusted: stop reading */
      g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
      return added;
    }
    if (g_get_monotonic_time() - start >= budget_us)
      break;
  }
  if (drained(self)) {
    finalize_state(self, m);
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
  }
  return added;
}

gs_trace_model *gs_trace_source_take_model(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), NULL);
  if (self->loaded)
    self->taken = self->loaded;
  return g_steal_pointer(&self->loaded);
}

void gs_trace_source_stop(GsTraceSource *self) {
  g_return_if_fail(GS_IS_TRACE_SOURCE(self));
  if (self->final)
    return;
  if (self->kind == GS_TRACE_SOURCE_SPAWN && self->process) {
    /* The program's end is the source's end: its exit will be the last thing said. Asked
     * twice, a program that ignores SIGTERM gets SIGKILL. */
    if (self->user_stopped)
      g_subprocess_force_exit(self->process);
    else
      g_subprocess_send_signal(self->process, SIGTERM);
    self->user_stopped = TRUE;
    return;
  }
  self->user_stopped = TRUE;
  g_mutex_lock(&self->lock);
  self->stopping = TRUE;
  g_cond_broadcast(&self->cond);
  g_mutex_unlock(&self->lock);
  g_cancellable_cancel(self->cancellable);
}

/* ---- getters --------------------------------------------------------------------------- */

GsTraceSourceKind gs_trace_source_get_kind(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), GS_TRACE_SOURCE_FILE);
  return self->kind;
}

GsTraceSourceState gs_trace_source_get_state(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), GS_TRACE_SOURCE_BROKEN);
  return self->state;
}

const char *gs_trace_source_get_message(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), NULL);
  return self->message;
}

const char *gs_trace_source_get_description(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), NULL);
  return self->description;
}

double gs_trace_source_get_progress(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), 0);
  return self->progress;
}

guint64 gs_trace_source_get_bytes_received(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), 0);
  g_mutex_lock(&self->lock);
  guint64 n = self->received;
  g_mutex_unlock(&self->lock);
  return n;
}

guint64 gs_trace_source_get_bytes_pending(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), 0);
  g_mutex_lock(&self->lock);
  guint64 n = self->pending;
  g_mutex_unlock(&self->lock);
  return n;
}

GPtrArray *gs_trace_source_get_output(GsTraceSource *self, guint64 from, guint64 *first) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), NULL);
  GPtrArray *lines = g_ptr_array_new_with_free_func((GDestroyNotify)gs_output_line_free);
  g_mutex_lock(&self->lock);
  guint64 kept_from = self->output_total - self->output.length;
  guint64 start = MAX(from, kept_from);
  *first = start;
  if (start < self->output_total) {
    /* The newest lines are the ones asked for again and again: walk from the tail. */
    GList *link = g_queue_peek_tail_link(&self->output);
    for (guint64 n = self->output_total - start; n > 1; n--)
      link = link->prev;
    for (; link; link = link->next) {
      const GsOutputLine *line = link->data;
      GsOutputLine *copy = g_new(GsOutputLine, 1);
      copy->stream = line->stream;
      copy->text = g_strdup(line->text);
      g_ptr_array_add(lines, copy);
    }
  }
  g_mutex_unlock(&self->lock);
  return lines;
}

guint64 gs_trace_source_get_n_output(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), 0);
  g_mutex_lock(&self->lock);
  guint64 n = self->output_total;
  g_mutex_unlock(&self->lock);
  return n;
}

int gs_trace_source_get_exit_status(GsTraceSource *self) {
  g_return_val_if_fail(GS_IS_TRACE_SOURCE(self), -1);
  g_mutex_lock(&self->lock);
  int status = self->exit_status;
  g_mutex_unlock(&self->lock);
  return status;
}
