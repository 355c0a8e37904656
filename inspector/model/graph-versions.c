/* graph-versions.c: per-storage write histories (see graph-versions.h). */
#include "graph-versions.h"

#include <string.h>

struct gs_graph_versions {
  GHashTable *writes;  /* storage id (guint64*) -> GArray of gs_graph_write, in seq order */
  GStringChunk *strings;
  char *error_text;
  guint64 error_seq;
};

static void free_key(gpointer p) { g_free(p); }
static void free_writes(gpointer p) { g_array_unref(p); }

gs_graph_versions *gs_graph_versions_new(void) {
  gs_graph_versions *v = g_new0(gs_graph_versions, 1);
  v->writes = g_hash_table_new_full(g_int64_hash, g_int64_equal, free_key, free_writes);
  v->strings = g_string_chunk_new(256);
  return v;
}

void gs_graph_versions_free(gs_graph_versions *v) {
  if (!v)
    return;
  g_hash_table_unref(v->writes);
  g_string_chunk_free(v->strings);
  g_free(v->error_text);
  g_free(v);
}

gboolean gs_graph_versions_wants(gs_trace_kind kind) {
  return kind == GS_TRACE_INPLACE_WRITE || kind == GS_TRACE_STORAGE_FREE ||
         kind == GS_TRACE_ERROR;
}

/* The engine's message for a failed saved-tensor check (engine/autograd/backward.c). */
static gboolean is_version_mismatch(const char *text) {
  return text && strstr(text, "expected version") != NULL;
}

void gs_graph_versions_apply(gs_graph_versions *v, const gs_trace_event *e, const char *op_text) {
  switch (e->kind) {
  case GS_TRACE_INPLACE_WRITE: {
    GArray *list = g_hash_table_lookup(v->writes, &e->storage);
    if (!list) {
      list = g_array_new(FALSE, FALSE, sizeof(gs_graph_write));
      g_hash_table_insert(v->writes, g_memdup2(&e->storage, sizeof e->storage), list);
    }
    gs_graph_write w = {e->seq, e->tensor, e->version,
                        g_string_chunk_insert_const(v->strings, op_text ? op_text : "")};
    g_array_append_val(list, w);
    break;
  }
  case GS_TRACE_STORAGE_FREE:
    /* Storage ids carry a generation, so a freed one never comes back: drop its history. */
    g_hash_table_remove(v->writes, &e->storage);
    break;
  case GS_TRACE_ERROR:
    if (is_version_mismatch(e->text)) {
      g_free(v->error_text);
      v->error_text = g_strndup(e->text, e->text_len);
      v->error_seq = e->seq;
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

const gs_graph_write *gs_graph_versions_last_write(const gs_graph_versions *v, guint64 storage) {
  GArray *list = g_hash_table_lookup(v->writes, &storage);
  return list && list->len ? &g_array_index(list, gs_graph_write, list->len - 1) : NULL;
}

const char *gs_graph_versions_error(const gs_graph_versions *v, guint64 *seq) {
  if (seq)
    *seq = v->error_seq;
  return v->error_text;
}
