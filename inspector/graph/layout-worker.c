/* layout-worker.c: one Graphviz thread with a one-slot queue (see layout-worker.h). */
#include "layout-worker.h"

typedef struct request {
  gs_layout_worker *worker;
  guint64 serial;
  gs_graph *graph;
  gboolean clusters;
  char *title;
  GMainContext *context;
  gs_layout_done_fn done;
  gpointer user_data;
  GDestroyNotify destroy;
  /* filled by the worker */
  gs_layout *layout;
  GError *error;
} request;

struct gs_layout_worker {
  GThread *thread;
  GMutex lock;
  GCond wake;
  request *pending;   /* at most one: newer requests replace it */
  gboolean quit;
  guint64 serial;
  guint64 n_done, n_superseded;
  /* Delivered results check this so a freed worker's callbacks never run. */
  gint *alive;
};

static void request_free(request *r) {
  gs_graph_free(r->graph);
  gs_layout_free(r->layout);
  g_clear_error(&r->error);
  g_free(r->title);
  if (r->context)
    g_main_context_unref(r->context);
  if (r->destroy)
    r->destroy(r->user_data);
  g_free(r);
}

typedef struct delivery {
  request *r;
  gint *alive; /* shared flag, refcounted with g_atomic_rc_box */
} delivery;

static gboolean deliver(gpointer data) {
  delivery *d = data;
  request *r = d->r;
  if (g_atomic_int_get(d->alive))
    r->done(r->serial, g_steal_pointer(&r->layout), r->error, r->user_data);
  return G_SOURCE_REMOVE;
}

static void delivery_free(gpointer data) {
  delivery *d = data;
  request_free(d->r);
  g_atomic_rc_box_release(d->alive);
  g_free(d);
}

static gpointer run(gpointer data) {
  gs_layout_worker *w = data;
  /* The context lives and dies on this thread: Graphviz state never crosses threads. */
  GVC_t *gvc = gvContext();
  for (;;) {
    g_mutex_lock(&w->lock);
    while (!w->pending && !w->quit)
      g_cond_wait(&w->wake, &w->lock);
    if (w->quit) {
      g_mutex_unlock(&w->lock);
      break;
    }
    request *r = g_steal_pointer(&w->pending);
    g_mutex_unlock(&w->lock);

    gs_layout_options options = {r->clusters, r->title};
    r->layout = gs_layout_compute(gvc, g_steal_pointer(&r->graph), &options, &r->error);

    g_mutex_lock(&w->lock);
    w->n_done++;
    g_mutex_unlock(&w->lock);
    delivery *d = g_new0(delivery, 1);
    d->r = r;
    d->alive = g_atomic_rc_box_acquire(w->alive);
    g_main_context_invoke_full(r->context, G_PRIORITY_DEFAULT, deliver, d, delivery_free);
  }
  gvFreeContext(gvc);
  return NULL;
}

gs_layout_worker *gs_layout_worker_new(void) {
  gs_layout_worker *w = g_new0(gs_layout_worker, 1);
  g_mutex_init(&w->lock);
  g_cond_init(&w->wake);
  w->alive = g_atomic_rc_box_new(gint);
  *w->alive = 1;
  w->thread = g_thread_new("graph-layout", run, w);
  return w;
}

void gs_layout_worker_free(gs_layout_worker *w) {
  if (!w)
    return;
  g_atomic_int_set(w->alive, 0);
  g_mutex_lock(&w->lock);
  w->quit = TRUE;
  request *pending = g_steal_pointer(&w->pending);
  g_cond_signal(&w->wake);
  g_mutex_unlock(&w->lock);
  if (pending)
    request_free(pending);
  g_thread_join(w->thread);
  g_atomic_rc_box_release(w->alive);
  g_mutex_clear(&w->lock);
  g_cond_clear(&w->wake);
  g_free(w);
}

guint64 gs_layout_worker_request(gs_layout_worker *w, gs_graph *graph,
                                 const gs_layout_options *options, gs_layout_done_fn done,
                                 gpointer user_data, GDestroyNotify destroy) {
  request *r = g_new0(request, 1);
  r->worker = w;
  r->graph = graph;
  r->clusters = options->clusters;
  r->title = g_strdup(options->title);
  r->context = g_main_context_ref_thread_default();
  r->done = done;
  r->user_data = user_data;
  r->destroy = destroy;
  g_mutex_lock(&w->lock);
  r->serial = ++w->serial;
  request *old = g_steal_pointer(&w->pending);
  if (old)
    w->n_superseded++;
  w->pending = r;
  g_cond_signal(&w->wake);
  g_mutex_unlock(&w->lock);
  if (old)
    request_free(old);
  return r->serial;
}

guint64 gs_layout_worker_n_done(gs_layout_worker *w) {
  g_mutex_lock(&w->lock);
  guint64 n = w->n_done;
  g_mutex_unlock(&w->lock);
  return n;
}

guint64 gs_layout_worker_n_superseded(gs_layout_worker *w) {
  g_mutex_lock(&w->lock);
  guint64 n = w->n_superseded;
  g_mutex_unlock(&w->lock);
  return n;
}
