/* model-filter.c: which events the event list shows: by kind and thread from the per-event
 * columns (no decoding), by scope from the scope spans, by tensor from its life (computed once
 * per tensor and kept until the log grows), and by text, which decodes the event. */
/* strcasestr needs _GNU_SOURCE, which the project sets for every file. */
#include "model-private.h"

#include <stdlib.h>
#include <string.h>

#include "event-fields.h"

static gboolean in_life(gs_trace_model *m, guint64 tensor, guint64 index) {
  guint64 n = m->kinds->len;
  if (!m->life_cache || m->life_cache_tensor != tensor || m->life_cache_events != n) {
    g_clear_pointer(&m->life_cache, gs_tensor_life_free);
    m->life_cache = gs_trace_model_tensor_life(m, tensor);
    m->life_cache_tensor = tensor;
    m->life_cache_events = n;
  }
  return gs_tensor_life_contains(m->life_cache, index);
}

/* "#12" or "#12.3": a handle (slot, generation: the engine's spelling) or a plain id. */
static gboolean parse_id(const char *text, guint64 *slot, guint64 *generation,
                         gboolean *has_generation) {
  if (text[0] != '#' || !g_ascii_isdigit(text[1]))
    return FALSE;
  char *end = NULL;
  *slot = g_ascii_strtoull(text + 1, &end, 10);
  *has_generation = *end == '.';
  *generation = 0;
  if (*has_generation) {
    if (!g_ascii_isdigit(end[1]))
      return FALSE;
    *generation = g_ascii_strtoull(end + 1, &end, 10);
  }
  return *end == '\0';
}

static gboolean id_matches(const gs_trace_event *e, guint64 slot, guint64 generation,
                           gboolean has_generation) {
  const guint64 handles[] = {e->tensor, e->target, e->source, e->object, e->scope,
                             e->outer, e->module, e->owner, e->previous_owner};
  for (gsize i = 0; i < G_N_ELEMENTS(handles); i++) {
    guint64 h = handles[i];
    if (h && (h & 0xffffffffu) == slot && (!has_generation || h >> 32 == generation))
      return TRUE;
  }
  for (guint i = 0; i < e->n_saved; i++)
    if ((e->saved[i] & 0xffffffffu) == slot &&
        (!has_generation || e->saved[i] >> 32 == generation))
      return TRUE;
  for (guint i = 0; i < e->n_parts; i++)
    if ((e->parts[i] & 0xffffffffu) == slot &&
        (!has_generation || e->parts[i] >> 32 == generation))
      return TRUE;
  /* Plain counters: storages and nodes. */
  return !has_generation && ((e->storage && e->storage == slot) || (e->node && e->node == slot));
}

static gboolean text_has(const char *haystack, const char *needle) {
  if (!haystack || !*haystack)
    return FALSE;
  if (strcasestr(haystack, needle))
    return TRUE;
  /* Beyond ASCII, compare case-folded forms. */
  for (const char *p = needle; *p; p++)
    if ((guchar)*p >= 0x80) {
      g_autofree char *h = g_utf8_casefold(haystack, -1);
      g_autofree char *n = g_utf8_casefold(needle, -1);
      return strstr(h, n) != NULL;
    }
  return FALSE;
}

static gboolean tensor_name_has(const gs_trace_model *m, guint64 id, const char *needle) {
  return id && text_has(gs_replay_tensor_name(m->head, id), needle);
}

static gboolean scope_name_has(const gs_trace_model *m, guint64 id, const char *needle) {
  const gs_replay_scope *s = id ? gs_trace_model_scope(m, id) : NULL;
  return s && text_has(s->name, needle);
}

static gboolean search_matches(gs_trace_model *m, guint64 index, const char *needle) {
  gs_trace_kind kind = gs_trace_model_kind_at(m, index);
  if (text_has(gs_trace_kind_name(kind), needle))
    return TRUE;
  gs_trace_event e;
  if (!model_decode(m, &m->query_decoder, index, &e))
    return FALSE;
  guint64 slot, generation;
  gboolean has_generation;
  if (parse_id(needle, &slot, &generation, &has_generation))
    return id_matches(&e, slot, generation, has_generation);
  if (text_has(gs_trace_model_string(m, e.op), needle) ||
      text_has(gs_trace_model_string(m, e.name), needle) ||
      (e.text && text_has(e.text, needle)))
    return TRUE;
  if (tensor_name_has(m, e.tensor, needle) || tensor_name_has(m, e.target, needle) ||
      tensor_name_has(m, e.object, needle) || tensor_name_has(m, e.source, needle))
    return TRUE;
  for (guint i = 0; i < e.n_saved; i++)
    if (tensor_name_has(m, e.saved[i], needle))
      return TRUE;
  return scope_name_has(m, e.scope, needle) ||
         scope_name_has(m, gs_trace_model_scope_of(m, index), needle);
}

gboolean gs_trace_model_event_matches(gs_trace_model *m, guint64 index,
                                      const gs_event_filter *f) {
  if (index >= m->kinds->len)
    return FALSE;
  if (!f)
    return TRUE;
  gs_trace_kind kind = gs_trace_model_kind_at(m, index);
  if (f->kinds && (kind >= 64 || !(f->kinds & (G_GUINT64_CONSTANT(1) << kind))))
    return FALSE;
  if (f->thread && gs_trace_model_thread_at(m, index) != f->thread)
    return FALSE;
  if (f->scope && gs_trace_model_scope_of(m, index) != f->scope)
    return FALSE;
  if (f->tensor && !in_life(m, f->tensor, index))
    return FALSE;
  if (f->search && *f->search && !search_matches(m, index, f->search))
    return FALSE;
  return TRUE;
}
