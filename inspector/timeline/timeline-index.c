/* timeline-index.c: incremental scan for marks, outermost scope spans and backward spans
 * (see timeline-index.h). Scopes nest per thread, so a depth per thread finds the outermost
 * ones without decoding any event. */
#include "timeline-index.h"

/* Per thread: how deep scopes are nested now, and where its open spans sit in the arrays. */
typedef struct thread_state {
  guint scope_depth;
  gint64 open_scope;    /* position in scope_spans, or -1 */
  guint backward_depth; /* backward inside backward (a hook calling backward) nests */
  gint64 open_backward; /* position in backward_spans, or -1 */
} thread_state;

struct gs_timeline_index {
  const gs_trace_model *model;
  guint64 scanned; /* events scanned so far */
  GArray *marks;
  GArray *scope_spans;
  GArray *backward_spans;
  GHashTable *threads; /* thread id -> thread_state* */
  /* Decoded name string ids plus one, by position in marks / scope_spans. */
  GHashTable *mark_labels;
  GHashTable *scope_names;
};

static void index_clear(gs_timeline_index *index) {
  index->model = NULL;
  index->scanned = 0;
  g_array_set_size(index->marks, 0);
  g_array_set_size(index->scope_spans, 0);
  g_array_set_size(index->backward_spans, 0);
  g_hash_table_remove_all(index->threads);
  g_hash_table_remove_all(index->mark_labels);
  g_hash_table_remove_all(index->scope_names);
}

gs_timeline_index *gs_timeline_index_new(void) {
  gs_timeline_index *index = g_new0(gs_timeline_index, 1);
  index->marks = g_array_new(FALSE, FALSE, sizeof(guint64));
  index->scope_spans = g_array_new(FALSE, FALSE, sizeof(gs_timeline_span));
  index->backward_spans = g_array_new(FALSE, FALSE, sizeof(gs_timeline_span));
  index->threads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
  index->mark_labels = g_hash_table_new(g_direct_hash, g_direct_equal);
  index->scope_names = g_hash_table_new(g_direct_hash, g_direct_equal);
  return index;
}

void gs_timeline_index_free(gs_timeline_index *index) {
  if (!index)
    return;
  g_array_unref(index->marks);
  g_array_unref(index->scope_spans);
  g_array_unref(index->backward_spans);
  g_hash_table_unref(index->threads);
  g_hash_table_unref(index->mark_labels);
  g_hash_table_unref(index->scope_names);
  g_free(index);
}

static thread_state *thread_get(gs_timeline_index *index, guint32 thread) {
  thread_state *t = g_hash_table_lookup(index->threads, GUINT_TO_POINTER(thread));
  if (!t) {
    t = g_new0(thread_state, 1);
    t->open_scope = t->open_backward = -1;
    g_hash_table_insert(index->threads, GUINT_TO_POINTER(thread), t);
  }
  return t;
}

/* Opens a span at event i in spans and returns its position. */
static gint64 span_open(GArray *spans, guint64 i) {
  gs_timeline_span span = {i, G_MAXUINT64};
  g_array_append_val(spans, span);
  return (gint64)spans->len - 1;
}

static void span_close(GArray *spans, gint64 *open, guint64 i) {
  if (*open >= 0)
    g_array_index(spans, gs_timeline_span, *open).last = i;
  *open = -1;
}

void gs_timeline_index_update(gs_timeline_index *index, const gs_trace_model *m) {
  guint64 n = m ? gs_trace_model_n_events(m) : 0;
  if (m != index->model || n < index->scanned) {
    index_clear(index);
    index->model = m;
  }
  for (guint64 i = index->scanned; i < n; i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(m, i);
    switch (kind) {
    case GS_TRACE_MARK:
      g_array_append_val(index->marks, i);
      break;
    case GS_TRACE_SCOPE_BEGIN: {
      thread_state *t = thread_get(index, gs_trace_model_thread_at(m, i));
      if (t->scope_depth++ == 0)
        t->open_scope = span_open(index->scope_spans, i);
      break;
    }
    case GS_TRACE_SCOPE_END: {
      thread_state *t = thread_get(index, gs_trace_model_thread_at(m, i));
      if (t->scope_depth > 0 && --t->scope_depth == 0)
        span_close(index->scope_spans, &t->open_scope, i);
      break;
    }
    case GS_TRACE_BACKWARD_BEGIN: {
      thread_state *t = thread_get(index, gs_trace_model_thread_at(m, i));
      if (t->backward_depth++ == 0)
        t->open_backward = span_open(index->backward_spans, i);
      break;
    }
    case GS_TRACE_BACKWARD_END: {
      thread_state *t = thread_get(index, gs_trace_model_thread_at(m, i));
      if (t->backward_depth > 0 && --t->backward_depth == 0)
        span_close(index->backward_spans, &t->open_backward, i);
      break;
    }
    default:
      break;
    }
  }
  index->scanned = n;
}

const GArray *gs_timeline_index_marks(const gs_timeline_index *index) { return index->marks; }

const GArray *gs_timeline_index_scope_spans(const gs_timeline_index *index) {
  return index->scope_spans;
}

const GArray *gs_timeline_index_backward_spans(const gs_timeline_index *index) {
  return index->backward_spans;
}

guint gs_timeline_index_first_mark(const gs_timeline_index *index, guint64 event) {
  guint lo = 0, hi = index->marks->len;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g_array_index(index->marks, guint64, mid) < event)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The name of event i: its string id is remembered in cache under position (plus one, so
 * 0 means "not decoded yet"); the text is looked up each time, since a log may define an id
 * again. */
static const char *cached_name(GHashTable *cache, gs_trace_model *m, guint position,
                               guint64 i) {
  guint32 id_plus_one = GPOINTER_TO_UINT(g_hash_table_lookup(cache, GUINT_TO_POINTER(position)));
  if (!id_plus_one) {
    gs_trace_event e;
    if (!gs_trace_model_event(m, i, &e))
      return "";
    id_plus_one = e.name + 1;
    g_hash_table_insert(cache, GUINT_TO_POINTER(position), GUINT_TO_POINTER(id_plus_one));
  }
  return gs_trace_model_string(m, id_plus_one - 1);
}

const char *gs_timeline_index_mark_label(gs_timeline_index *index, gs_trace_model *m,
                                         guint position) {
  g_return_val_if_fail(position < index->marks->len, "");
  return cached_name(index->mark_labels, m, position,
                     g_array_index(index->marks, guint64, position));
}

const char *gs_timeline_index_scope_name(gs_timeline_index *index, gs_trace_model *m,
                                         guint position) {
  g_return_val_if_fail(position < index->scope_spans->len, "");
  return cached_name(index->scope_names, m, position,
                     g_array_index(index->scope_spans, gs_timeline_span, position).first);
}
