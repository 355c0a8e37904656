/* layout-worker.c: the process's layout thread and the views' one-slot queues on it (see
 * layout-worker.h). */
#include "layout-worker.h"

#include "graph-collapse.h"

typedef struct request request;

/* A view's queue. Reference-counted (g_atomic_rc_box): the view holds one reference, every
 * request in flight another, so the thread never touches a freed queue. */
struct gs_layout_worker {
  request *pending;  /* at most one: newer requests replace it */
  gboolean queued;   /* in the thread's ready queue */
  gboolean alive;    /* FALSE once the view freed it: deliver nothing more */
  guint64 serial;
  guint64 n_done, n_superseded;
};

struct request {
  gs_layout_worker *worker; /* a reference */
  guint64 serial;
  gs_graph *graph;
  gboolean shown;          /* graph is as shown; else full: collapse and split hubs first */
  guint collapse_limit;
  GHashTable *expanded;    /* owned copy, or NULL */
  gboolean clusters;
  char *title;
  GMainContext *context;
  gs_layout_done_fn done;
  gpointer user_data;
  GDestroyNotify destroy;
  gs_layout *layout; /* filled by the thread */
  GError *error;
};

/* Everything below is guarded by lock. */
static GMutex lock;
static GCond wake;
static GQueue ready = G_QUEUE_INIT; /* workers with a pending request, in turn order */
static GThread *thread;

static void request_free(request *r) {
  gs_graph_free(r->graph);
  g_clear_pointer(&r->expanded, g_hash_table_unref);
  gs_layout_free(r->layout);
  g_clear_error(&r->error);
  g_free(r->title);
  if (r->destroy)
    r->destroy(r->user_data);
  if (r->context)
    g_main_context_unref(r->context);
  g_atomic_rc_box_release(r->worker);
  g_free(r);
}

static gboolean deliver(gpointer data) {
  request *r = data;
  g_mutex_lock(&lock);
  gboolean alive = r->worker->alive;
  g_mutex_unlock(&lock);
  if (alive)
    r->done(r->serial, g_steal_pointer(&r->layout), r->error, r->user_data);
  return G_SOURCE_REMOVE;
}

static gpointer run(gpointer unused) {
  (void)unused;
  for (;;) {
    g_mutex_lock(&lock);
    while (g_queue_is_empty(&ready))
      g_cond_wait(&wake, &lock);
    gs_layout_worker *w = g_queue_pop_head(&ready);
    w->queued = FALSE;
    request *r = g_steal_pointer(&w->pending);
    g_mutex_unlock(&lock);
    if (!r)
      continue;

    if (!r->shown) {
      gs_graph *shown = gs_graph_collapse(r->graph, r->collapse_limit, r->expanded);
      gs_graph_split_hubs(shown, GS_GRAPH_HUB_LIMIT);
      gs_graph_free(r->graph);
      r->graph = shown;
    }
    gs_layout_options options = {r->clusters, r->title};
    r->layout = gs_layout_compute(g_steal_pointer(&r->graph), &options, &r->error);

    g_mutex_lock(&lock);
    w->n_done++;
    g_mutex_unlock(&lock);
    /* Always through a source: invoking directly could run the UI's callback here. */
    GSource *idle = g_idle_source_new();
    g_source_set_priority(idle, G_PRIORITY_DEFAULT);
    g_source_set_callback(idle, deliver, r, (GDestroyNotify)request_free);
    g_source_set_static_name(idle, "graph layout delivery");
    g_source_attach(idle, r->context);
    g_source_unref(idle);
  }
  return NULL;
}

gs_layout_worker *gs_layout_worker_new(void) {
  gs_layout_worker *w = g_atomic_rc_box_new0(gs_layout_worker);
  w->alive = TRUE;
  g_mutex_lock(&lock);
  /* The thread lives as long as the process, as Graphviz's own state does. */
  if (!thread)
    thread = g_thread_new("graph-layout", run, NULL);
  g_mutex_unlock(&lock);
  return w;
}

void gs_layout_worker_free(gs_layout_worker *w) {
  if (!w)
    return;
  g_mutex_lock(&lock);
  w->alive = FALSE;
  request *pending = g_steal_pointer(&w->pending);
  if (w->queued) {
    g_queue_remove(&ready, w);
    w->queued = FALSE;
  }
  g_mutex_unlock(&lock);
  if (pending)
    request_free(pending);
  g_atomic_rc_box_release(w);
}

static guint64 enqueue(gs_layout_worker *w, request *r);

/* What both kinds of request carry: the graph, the layout's options and the reply. */
static request *new_request(gs_graph *graph, const gs_layout_options *options,
                            gs_layout_done_fn done, gpointer user_data, GDestroyNotify destroy) {
  request *r = g_new0(request, 1);
  r->graph = graph;
  r->clusters = options->clusters;
  r->title = g_strdup(options->title);
  r->done = done;
  r->user_data = user_data;
  r->destroy = destroy;
  return r;
}

guint64 gs_layout_worker_request(gs_layout_worker *w, gs_graph *graph,
                                 const gs_layout_options *options, gs_layout_done_fn done,
                                 gpointer user_data, GDestroyNotify destroy) {
  request *r = new_request(graph, options, done, user_data, destroy);
  r->shown = TRUE;
  return enqueue(w, r);
}

guint64 gs_layout_worker_request_full(gs_layout_worker *w, gs_graph *full, guint collapse_limit,
                                      GHashTable *expanded, const gs_layout_options *options,
                                      gs_layout_done_fn done, gpointer user_data,
                                      GDestroyNotify destroy) {
  request *r = new_request(full, options, done, user_data, destroy);
  r->collapse_limit = collapse_limit;
  if (expanded && g_hash_table_size(expanded)) {
    /* A copy: the view goes on changing its own set while the thread reads this one. */
    r->expanded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, expanded);
    while (g_hash_table_iter_next(&it, &key, NULL))
      g_hash_table_add(r->expanded, g_strdup(key));
  }
  return enqueue(w, r);
}

static guint64 enqueue(gs_layout_worker *w, request *r) {
  r->worker = g_atomic_rc_box_acquire(w);
  r->context = g_main_context_ref_thread_default();
  g_mutex_lock(&lock);
  guint64 serial = r->serial = ++w->serial;
  request *old = g_steal_pointer(&w->pending);
  if (old)
    w->n_superseded++;
  w->pending = r;
  if (!w->queued) {
    g_queue_push_tail(&ready, w);
    w->queued = TRUE;
  }
  g_cond_signal(&wake);
  g_mutex_unlock(&lock);
  if (old)
    request_free(old);
  return serial;
}

guint64 gs_layout_worker_n_done(gs_layout_worker *w) {
  g_mutex_lock(&lock);
  guint64 n = w->n_done;
  g_mutex_unlock(&lock);
  return n;
}

guint64 gs_layout_worker_n_superseded(gs_layout_worker *w) {
  g_mutex_lock(&lock);
  guint64 n = w->n_superseded;
  g_mutex_unlock(&lock);
  return n;
}
