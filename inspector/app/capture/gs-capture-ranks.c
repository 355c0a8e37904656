/* gs-capture-ranks.c: a run's other ranks loaded on a worker thread (see the header). The
 * task owns what it fills; a page closed while it runs cancels it and the task frees all. */
#include "gs-capture-ranks.h"

struct gs_capture_ranks {
  GArray *logs; /* gs_rank_log, their paths owned (paths) */
  GPtrArray *paths;
  GPtrArray *models; /* loaded, logs[1..] */
  GCancellable *cancel;
  char *error;
  gboolean loading, orphaned;
  void (*done)(gpointer);
  gpointer data;
};

static void free_all(gs_capture_ranks *r) {
  g_array_unref(r->logs);
  g_ptr_array_unref(r->paths);
  g_ptr_array_unref(r->models);
  g_object_unref(r->cancel);
  g_free(r->error);
  g_free(r);
}

static void load_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel) {
  (void)source;
  gs_capture_ranks *r = data;
  for (guint i = 1; i < r->logs->len; i++) {
    GError *error = NULL;
    const gs_rank_log *l = &g_array_index(r->logs, gs_rank_log, i);
    gs_trace_model *m = gs_trace_model_load_file(l->path, NULL, NULL, cancel, &error);
    if (!m) {
      g_task_return_error(task, error);
      return;
    }
    g_ptr_array_add(r->models, m);
  }
  g_task_return_boolean(task, TRUE);
}

static void load_done(GObject *source, GAsyncResult *result, gpointer data) {
  (void)source;
  gs_capture_ranks *r = data;
  GError *error = NULL;
  g_task_propagate_boolean(G_TASK(result), &error);
  r->loading = FALSE;
  if (r->orphaned) {
    g_clear_error(&error);
    free_all(r);
    return;
  }
  if (error) {
    r->error = g_strdup(error->message);
    g_error_free(error);
  }
  r->done(r->data);
}

gs_capture_ranks *gs_capture_ranks_new(const gs_rank_log *logs, guint n, void (*done)(gpointer),
                                       gpointer data) {
  gs_capture_ranks *r = g_new0(gs_capture_ranks, 1);
  r->logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  r->paths = g_ptr_array_new_with_free_func(g_free);
  r->models = g_ptr_array_new_with_free_func((GDestroyNotify)gs_trace_model_free);
  r->cancel = g_cancellable_new();
  r->done = done;
  r->data = data;
  for (guint i = 0; i < n; i++) {
    gs_rank_log l = logs[i];
    l.path = g_strdup(logs[i].path);
    g_ptr_array_add(r->paths, (char *)l.path);
    g_array_append_val(r->logs, l);
  }
  r->loading = TRUE;
  GTask *task = g_task_new(NULL, r->cancel, load_done, r);
  g_task_set_task_data(task, r, NULL);
  g_task_run_in_thread(task, load_thread);
  g_object_unref(task);
  return r;
}

void gs_capture_ranks_free(gs_capture_ranks *r) {
  if (!r)
    return;
  if (r->loading) { /* the task frees it when it returns */
    r->orphaned = TRUE;
    g_cancellable_cancel(r->cancel);
    return;
  }
  free_all(r);
}

gboolean gs_capture_ranks_loading(const gs_capture_ranks *r) { return r->loading; }
guint gs_capture_ranks_count(const gs_capture_ranks *r) { return r->logs->len; }
const char *gs_capture_ranks_error(const gs_capture_ranks *r) { return r->error; }

gs_rank_run *gs_capture_ranks_make_run(gs_capture_ranks *r, gs_trace_model *first) {
  g_return_val_if_fail(!r->loading && !r->error && r->models->len + 1 == r->logs->len, NULL);
  g_autofree gs_trace_model **models = g_new(gs_trace_model *, r->logs->len);
  models[0] = first;
  for (guint i = 1; i < r->logs->len; i++)
    models[i] = r->models->pdata[i - 1];
  g_ptr_array_set_free_func(r->models, NULL); /* the run owns them now */
  g_ptr_array_set_size(r->models, 0);
  gs_rank_run *run = gs_rank_run_new(models, (const gs_rank_log *)r->logs->data, r->logs->len);
  gs_rank_run_release_model(run, 0);
  return run;
}
