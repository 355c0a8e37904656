/* graph-versions.c: per-storage write histories (see graph-versions.h). */
#include "graph-versions.h"

#include "escape.h"
#include "replay.h"

#include <string.h>

/* A version-mismatch error seen. */
typedef struct mismatch {
  guint64 index, seq;
  char *text;
} mismatch;

struct gs_graph_versions {
  GHashTable *writes;  /* storage id (guint64*) -> GArray of gs_graph_write, in log order */
  GStringChunk *strings;
  GArray *errors;      /* mismatch, in log order */
  GArray *backwards;   /* guint64 indices of backward_begin events, in log order */
};

static void clear_mismatch(gpointer p) { g_free(((mismatch *)p)->text); }

static void free_key(gpointer p) { g_free(p); }
static void free_writes(gpointer p) { g_array_unref(p); }

gs_graph_versions *gs_graph_versions_new(void) {
  gs_graph_versions *v = g_new0(gs_graph_versions, 1);
  v->writes = g_hash_table_new_full(gs_id_hash, gs_id_equal, free_key, free_writes);
  v->strings = g_string_chunk_new(256);
  v->errors = g_array_new(FALSE, FALSE, sizeof(mismatch));
  g_array_set_clear_func(v->errors, clear_mismatch);
  v->backwards = g_array_new(FALSE, FALSE, sizeof(guint64));
  return v;
}

void gs_graph_versions_free(gs_graph_versions *v) {
  if (!v)
    return;
  g_hash_table_unref(v->writes);
  g_string_chunk_free(v->strings);
  g_array_unref(v->errors);
  g_array_unref(v->backwards);
  g_free(v);
}

gboolean gs_graph_versions_wants(gs_trace_kind kind) {
  return kind == GS_TRACE_INPLACE_WRITE || kind == GS_TRACE_ERROR ||
         kind == GS_TRACE_BACKWARD_BEGIN;
}

/* The engine's message for a failed saved-tensor check (engine/autograd/backward.c). */
static gboolean is_version_mismatch(const char *text) {
  return text && strstr(text, "expected version") != NULL;
}

void gs_graph_versions_apply(gs_graph_versions *v, guint64 index, const gs_trace_event *e,
                             const char *op_text) {
  switch (e->kind) {
  case GS_TRACE_INPLACE_WRITE: {
    GArray *list = g_hash_table_lookup(v->writes, &e->storage);
    if (!list) {
      list = g_array_new(FALSE, FALSE, sizeof(gs_graph_write));
      g_hash_table_insert(v->writes, g_memdup2(&e->storage, sizeof e->storage), list);
    }
    gs_graph_write w = {index, e->seq, e->tensor, e->version,
                        g_string_chunk_insert_const(v->strings, op_text ? op_text : "")};
    g_array_append_val(list, w);
    break;
  }
  case GS_TRACE_BACKWARD_BEGIN:
    g_array_append_val(v->backwards, index);
    break;
  case GS_TRACE_ERROR:
    if (is_version_mismatch(e->text)) {
      mismatch m = {index, e->seq, gs_text_from_log(e->text, e->text_len)};
      g_array_append_val(v->errors, m);
    }
    break;
  default:
    break;
  }
}

guint64 gs_graph_versions_now(const gs_graph_versions *v, guint64 storage) {
  const gs_graph_write *w = gs_graph_versions_last_write(v, storage);
  return w ? w->version : 0;
}

guint64 gs_graph_versions_before(const gs_graph_versions *v, guint64 storage, guint64 seq) {
  GArray *list = g_hash_table_lookup(v->writes, &storage);
  guint64 version = 0, best = 0;
  /* Threads' chunks interleave, so log order is not seq order: take the latest earlier write. */
  for (guint i = 0; list && i < list->len; i++) {
    const gs_graph_write *w = &g_array_index(list, gs_graph_write, i);
    if (w->seq < seq && w->seq >= best) {
      best = w->seq;
      version = w->version;
    }
  }
  return version;
}

const gs_graph_write *gs_graph_versions_writes(const gs_graph_versions *v, guint64 storage,
                                               guint *n) {
  GArray *list = g_hash_table_lookup(v->writes, &storage);
  *n = list ? list->len : 0;
  return list && list->len ? &g_array_index(list, gs_graph_write, 0) : NULL;
}

const gs_graph_write *gs_graph_versions_last_write(const gs_graph_versions *v, guint64 storage) {
  GArray *list = g_hash_table_lookup(v->writes, &storage);
  return list && list->len ? &g_array_index(list, gs_graph_write, list->len - 1) : NULL;
}

void gs_graph_versions_rewind(gs_graph_versions *v, guint64 until) {
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, v->writes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    GArray *list = value;
    guint keep = list->len;
    while (keep > 0 && g_array_index(list, gs_graph_write, keep - 1).index >= until)
      keep--;
    if (keep == 0)
      g_hash_table_iter_remove(&it);
    else
      g_array_set_size(list, keep);
  }
  guint keep = v->errors->len;
  while (keep > 0 && g_array_index(v->errors, mismatch, keep - 1).index >= until)
    keep--;
  g_array_set_size(v->errors, keep);
  keep = v->backwards->len;
  while (keep > 0 && g_array_index(v->backwards, guint64, keep - 1) >= until)
    keep--;
  g_array_set_size(v->backwards, keep);
}

const char *gs_graph_versions_error(const gs_graph_versions *v, guint64 *seq) {
  const mismatch *last =
      v->errors->len ? &g_array_index(v->errors, mismatch, v->errors->len - 1) : NULL;
  /* A backward begun since is the latest word: that earlier failure is history, not news. */
  if (last && v->backwards->len &&
      g_array_index(v->backwards, guint64, v->backwards->len - 1) > last->index)
    last = NULL;
  if (seq)
    *seq = last ? last->seq : 0;
  return last ? last->text : NULL;
}
