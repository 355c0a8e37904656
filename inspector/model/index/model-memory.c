/* model-memory.c: memory by category and by scope: what category an object is in, who holds
 * it (in words), bytes per category in a state, and the memory series kept as the log is
 * indexed (only where a value changes), summarised per pixel column for the timeline.
 *
 * Bytes are counted per buffer, as gs_replay counts live_bytes: a buffer's bytes belong to
 * the storage that allocated (or materialised) it, and a storage takes the first category, in
 * the enum's order, of the alive objects viewing it (a view of a parameter is parameter
 * memory, a view of a dataset's tensor is data), "saved for backward" if a node backward can
 * still run saved a tensor on it and no earlier category claims it, else other. Bytes no
 * storage owns any more (a copy-on-write buffer whose maker is gone) are other too, so the
 * categories always sum to the total. */
#include "model-private.h"
#include <inttypes.h>

#include <glib/gi18n-lib.h>
#include <gradscope/scope.h>
#include <string.h>

#include "escape.h"
#include "event-fields.h"

/* ---- categories -------------------------------------------------------------------------- */

char *gs_memory_origin_label(guint memory, guint peer) {
  /* gs_memory_origin's values (gradscope/memory.h), which the log records. */
  switch (memory) {
  case 0: return g_strdup(_("the engine’s allocator"));
  case 1: return g_strdup(_("the program’s own memory (gs_from_blob)"));
  case 2: return g_strdup(_("a DLPack producer"));
  case 3: return g_strdup(_("a memory-mapped file"));
  case 4: return g_strdup(_("shared memory made by this process"));
  case 5: return g_strdup_printf(_("shared memory received from process %u"), peer);
  default: return g_strdup_printf(_("memory of an unknown kind (%u)"), memory);
  }
}

const char *gs_mem_category_name(gs_mem_category category) {
  switch (category) {
  case GS_MEM_PARAMETERS: return _("parameters");
  case GS_MEM_GRADIENTS: return _("gradients");
  case GS_MEM_OPTIMIZER_STATE: return _("optimizer state");
  /* TRANSLATORS: memory category: tensors a dataset reads (gs_tensor_dataset) */
  case GS_MEM_DATA: return _("data");
  case GS_MEM_BATCH: return _("batch data");
  case GS_MEM_SAVED: return _("saved for backward");
  /* TRANSLATORS: memory category: tensors the program holds itself, outside every scope */
  case GS_MEM_PROGRAM: return _("held by the program");
  /* TRANSLATORS: memory category: tensors an open dispose scope holds */
  case GS_MEM_TEMPORARIES: return _("scope temporaries");
  /* TRANSLATORS: memory category: bytes held by the engine, by graph nodes that can no
   * longer run, or by a storage no tensor views any more */
  case GS_MEM_OTHER: return _("other");
  default: return "";
  }
}

_Static_assert(GS_MEM_N_CATEGORIES <= G_N_ELEMENTS(((gs_replay_tally *)0)->counts),
               "a storage's tally counts its objects per category");

/* The rules in the enum's order: the first that holds wins. */
const char *gs_mem_category_description(gs_mem_category category) {
  switch (category) {
  case GS_MEM_PARAMETERS: return _("held by a module, or made a parameter");
  case GS_MEM_GRADIENTS: return _("gradients (.grad) of tensors");
  case GS_MEM_OPTIMIZER_STATE: return _("what an optimizer keeps (momentum, running averages)");
  case GS_MEM_DATA: return _("tensors a dataset reads, while the dataset lives");
  case GS_MEM_BATCH: return _("DataLoader batches and packed sequences");
  case GS_MEM_SAVED:
    return _("tensors saved by graph nodes that backward can still reach");
  case GS_MEM_PROGRAM:
    return _("tensors the program holds outside every scope, datasets and modules (a "
             "leak grows here)");
  case GS_MEM_TEMPORARIES: return _("tensors an open dispose scope holds");
  case GS_MEM_OTHER:
    return _("held by the engine, by graph nodes backward can no longer reach, or by no "
             "tensor");
  default: return "";
  }
}

static gs_mem_category object_category(const gs_replay *r, const gs_replay_object *o) {
  if (o->holder == GS_TRACE_HELD_BY_MODULE || o->parameter)
    return GS_MEM_PARAMETERS;
  switch (o->holder) {
  case GS_TRACE_HELD_BY_TENSOR: return GS_MEM_GRADIENTS;
  case GS_TRACE_HELD_BY_OPTIMIZER: return GS_MEM_OPTIMIZER_STATE;
  default: break;
  }
  if (o->dataset_refs > 0 || (o->composite && o->object_kind == GS_OBJECT_DATASET))
    return GS_MEM_DATA;
  switch (o->holder) {
  case GS_TRACE_HELD_BY_COMPOSITE: { /* a part of a packed sequence or a DataLoader batch */
    const gs_replay_object *c = gs_replay_object_get(r, o->owner);
    if (c && c->composite &&
        (c->object_kind == GS_OBJECT_PACKED_SEQUENCE || c->object_kind == GS_OBJECT_BATCH))
      return GS_MEM_BATCH;
    break;
  }
  default: break;
  }
  /* The batch itself (its bytes are its parts'), whoever holds it. */
  if (o->composite && o->object_kind == GS_OBJECT_BATCH)
    return GS_MEM_BATCH;
  if (o->saved_refs > 0)
    return GS_MEM_SAVED;
  switch (o->holder) {
  case GS_TRACE_HELD_BY_CALLER: return GS_MEM_PROGRAM;
  case GS_TRACE_HELD_BY_SCOPE: return GS_MEM_TEMPORARIES;
  default: return GS_MEM_OTHER; /* the engine's, or a part of a composite of unknown kind */
  }
}

gs_mem_category gs_trace_model_category(const gs_trace_model *m, const gs_replay *state,
                                        const gs_replay_object *o) {
  (void)m;
  return object_category(state, o);
}

static gs_mem_category storage_category(gs_mem_category by_objects, guint saved_refs) {
  return saved_refs > 0 && GS_MEM_SAVED < by_objects ? GS_MEM_SAVED : by_objects;
}

typedef struct tally {
  GHashTable *by_storage; /* storage id -> first category + 1 */
  guint64 *out;
} tally;

static void tally_storage(guint64 id, guint64 own_bytes, guint saved_refs, gpointer data) {
  tally *t = data;
  guint c = GPOINTER_TO_UINT(g_hash_table_lookup(t->by_storage, &id));
  gs_mem_category cat = storage_category(c ? c - 1 : GS_MEM_OTHER, saved_refs);
  if (cat != GS_MEM_OTHER)
    t->out[cat] += own_bytes;
}

void gs_trace_model_category_bytes(const gs_trace_model *m, const gs_replay *state,
                                   guint64 *out) {
  (void)m;
  memset(out, 0, sizeof(guint64) * GS_MEM_N_CATEGORIES);
  tally t = {g_hash_table_new(gs_id_hash, gs_id_equal), out};
  gs_replay_iter it = {0};
  for (gs_replay_object *o; gs_replay_objects_next(state, &it, &o);) {
    if (o->composite || !o->storage)
      continue;
    guint c = GPOINTER_TO_UINT(g_hash_table_lookup(t.by_storage, &o->storage));
    guint mine = object_category(state, o) + 1;
    if (!c || mine < c)
      g_hash_table_insert(t.by_storage, (gpointer)&o->storage, GUINT_TO_POINTER(mine));
  }
  gs_replay_foreach_storage(state, tally_storage, &t);
  g_hash_table_destroy(t.by_storage);
  guint64 counted = 0;
  for (int c = 0; c < GS_MEM_OTHER; c++)
    counted += out[c];
  out[GS_MEM_OTHER] = state->live_bytes > counted ? state->live_bytes - counted : 0;
}

/* ---- who holds it, in words ---------------------------------------------------------------- */

char *gs_trace_model_owner_label(const gs_trace_model *m, const gs_replay *state,
                                 const gs_replay_object *o) {
  (void)m;
  char h[32];
  g_autoptr(GString) s = g_string_new(NULL);
  gs_format_handle(o->owner, h, sizeof h);
  switch (o->holder) {
  case GS_TRACE_HELD_BY_SCOPE: {
    const gs_replay_scope *scope = gs_trace_model_scope_in(m, state, o->owner);
    /* Names clipped: the label goes to a widget, and Pango shapes all of a 64 KB name. */
    g_autofree char *name = gs_text_clip(scope ? scope->name : "?", GS_TEXT_SHOWN_MAX);
    /* TRANSLATORS: a dispose scope and its handle, e.g. "scope step #12.1" */
    g_string_printf(s, _("scope %s %s"), name, h);
    break;
  }
  case GS_TRACE_HELD_BY_MODULE: {
    const gs_replay_module *mod = gs_replay_module_get(state, o->owner);
    g_autofree char *type = gs_text_clip(mod && *mod->type ? mod->type : "?", GS_TEXT_SHOWN_MAX);
    /* TRANSLATORS: a module's type and handle, e.g. "module Linear #3.1" */
    g_string_printf(s, _("module %s %s"), type, h);
    break;
  }
  case GS_TRACE_HELD_BY_OPTIMIZER: {
    const gs_replay_optimizer *opt = gs_replay_optimizer_get(state, o->owner);
    g_autofree char *type = gs_text_clip(opt ? opt->type : "?", GS_TEXT_SHOWN_MAX);
    /* TRANSLATORS: an optimizer's type and handle, e.g. "optimizer Adam #1" */
    g_string_printf(s, _("optimizer %s %s"), type, h);
    break;
  }
  case GS_TRACE_HELD_BY_COMPOSITE: {
    const gs_replay_object *c = gs_replay_object_find(state, o->owner);
    if (c && c->object_kind == GS_OBJECT_PACKED_SEQUENCE)
      g_string_printf(s, _("packed sequence %s"), h);
    else if (c && c->object_kind == GS_OBJECT_BATCH)
      /* TRANSLATORS: a DataLoader batch and its handle, e.g. "batch #3.1" */
      g_string_printf(s, _("batch %s"), h);
    else
      g_string_printf(s, _("composite %s"), h);
    break;
  }
  case GS_TRACE_HELD_BY_TENSOR:
    g_string_printf(s, _("gradient of tensor %s"), h);
    break;
  case GS_TRACE_HELD_BY_ENGINE: g_string_assign(s, _("the engine")); break;
  case GS_TRACE_HELD_BY_CALLER: g_string_assign(s, _("the program")); break;
  default: g_string_printf(s, _("holder %u"), o->holder); break;
  }
  if (o->saved_refs > 0) { /* the oldest runnable node that still holds it */
    const gs_replay_node *best = NULL;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, state->nodes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
      const gs_replay_node *n = value;
      if (n->saved_freed || !n->runnable || (best && best->id < n->id))
        continue;
      for (guint i = 0; i < n->n_saved; i++)
        if (n->saved[i] == o->id) {
          best = n;
          break;
        }
    }
    if (best)
      /* TRANSLATORS: added after the holder: "; saved by MulBackward #88 for backward" */
      g_string_append_printf(s, _("; saved by %s #%" PRIu64 " for backward"),
                             best->kind, best->id);
  }
  return g_string_free(g_steal_pointer(&s), FALSE);
}

/* ---- the series, kept as the head state advances ------------------------------------------- */

/* Each event takes the storages it may change out of the totals (with the values they were
 * counted at, kept in their tally), applies, and puts them back as they are now. Objects do
 * the same with their storage's per-category counts. All of it lives in the head state's own
 * records (gs_replay_tally, tally_category): no table of the model's. */
/* The ids an event touches (a handful): a plain array, as this runs for every event. */
typedef struct id_list {
  guint64 *ids;
  guint len, cap;
} id_list;

struct model_memory {
  id_list touched_objects, touched_storages; /* this event's */
  guint32 epoch;
  guint64 totals[GS_MEM_N_CATEGORIES];
  guint64 emitted[GS_MEM_N_CATEGORIES];
  guint64 emitted_total;
  guint64 emitted_outside;
};

model_memory *model_memory_new(void) {
  model_memory *mm = g_new0(model_memory, 1);
  return mm;
}

void model_memory_free(model_memory *mm) {
  if (!mm)
    return;
  g_free(mm->touched_objects.ids);
  g_free(mm->touched_storages.ids);
  g_free(mm);
}

static inline void touch(id_list *list, guint64 id) {
  if (!id)
    return;
  if (list->len == list->cap) {
    list->cap = list->cap ? list->cap * 2 : 64;
    list->ids = g_renew(guint64, list->ids, list->cap);
  }
  list->ids[list->len++] = id;
}

/* Takes the storage's bytes out of the totals, once per event. */
static void retract_storage(model_memory *mm, gs_replay_tally *t) {
  if (!t || t->epoch == mm->epoch)
    return;
  t->epoch = mm->epoch;
  mm->totals[t->category] -= t->bytes;
  t->bytes = 0;
}

static void retract_object(gs_trace_model *m, gs_replay_object *o) {
  if (!o || !o->tally_category)
    return;
  gs_replay_tally *t = gs_replay_storage_tally(m->head, o->storage);
  if (t) {
    t->counts[o->tally_category - 1]--;
    retract_storage(m->memory, t);
    touch(&m->memory->touched_storages, o->storage);
  }
  o->tally_category = 0;
  gs_replay_mark_object(m->head, o->id); /* the keyframes' records keep tally_category */
}

static void assert_tally(gs_trace_model *m, gs_replay_tally *t);

/* After the event (records the replay just made or took out come from its memo). */
static void assert_object(gs_trace_model *m, gs_replay_object *o) {
  /* Every touched object was taken out before the event: one still counted was put back
   * already (an event may name a tensor twice, as a node's output and a saved tensor). */
  if (!o || o->composite || !o->storage || o->tally_category)
    return;
  gs_replay_tally *t = gs_replay_storage_tally_after(m->head, o->storage);
  if (!t)
    return;
  gs_mem_category cat = object_category(m->head, o);
  o->tally_category = cat + 1;
  gs_replay_mark_object(m->head, o->id);
  t->counts[cat]++;
  retract_storage(m->memory, t);
  assert_tally(m, t);
}

static void assert_tally(gs_trace_model *m, gs_replay_tally *t) {
  if (!t || t->epoch != m->memory->epoch)
    return; /* gone, or put back already */
  guint64 bytes = 0;
  guint saved = 0;
  gs_replay_tally_storage(t, &bytes, &saved);
  gs_mem_category by_objects = GS_MEM_OTHER;
  for (int c = 0; c < GS_MEM_OTHER; c++)
    if (t->counts[c]) {
      by_objects = c;
      break;
    }
  t->category = storage_category(by_objects, saved);
  t->bytes = bytes;
  t->epoch = 0;
  m->memory->totals[t->category] += bytes;
}

static gs_replay_object *head_object(gs_trace_model *m, guint64 id) {
  return gs_replay_object_get(m->head, id);
}

void model_memory_before(gs_trace_model *m, const gs_trace_event *e) {
  model_memory *mm = m->memory;
  mm->touched_objects.len = 0;
  mm->touched_storages.len = 0;
  if (++mm->epoch == 0)
    mm->epoch = 1; /* 0 means "counted" */
  /* Only these kinds change an object's category or a storage's own bytes: the rest (most
   * events) cost nothing here. A new storage or a shared one owns no counted bytes until an
   * object views it or it materialises. */
  _Static_assert(GS_TRACE_KIND_COUNT == 44,
                 "model-memory.c: a new event kind that makes, disposes, moves, re-owns or "
                 "saves an object, or changes a storage's bytes, needs a case here");
  switch (e->kind) {
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE:
    retract_storage(mm, gs_replay_storage_tally(m->head, e->storage));
    touch(&mm->touched_storages, e->storage);
    return;
  case GS_TRACE_TENSOR_CREATE:
  case GS_TRACE_TENSOR_MOVE:
  case GS_TRACE_TENSOR_SET_DATA:
  case GS_TRACE_MODULE_PARAMETER:
  case GS_TRACE_OWNER_CHANGE:
  case GS_TRACE_TENSOR_DISPOSE:
  case GS_TRACE_NODE_CREATE:
  case GS_TRACE_NODE_FREE_SAVED:
  case GS_TRACE_NODE_RELEASE:
  case GS_TRACE_COMPOSITE_CREATE: break;
  default: return;
  }
  touch(&mm->touched_objects, e->tensor);
  touch(&mm->touched_objects, e->target);
  touch(&mm->touched_objects, e->object);
  for (guint i = 0; i < e->n_parts; i++)
    touch(&mm->touched_objects, e->parts[i]);
  /* A composite that goes away takes the category of its parts with it. The disposed one is
   * looked up once, here and for the retraction below (touched first). */
  gs_replay_object *disposed =
      e->kind == GS_TRACE_TENSOR_DISPOSE ? head_object(m, e->tensor) : NULL;
  const gs_replay_object *c = disposed;
  if (c && c->composite) {
    gs_replay_iter it = {0};
    for (gs_replay_object *o; gs_replay_objects_next(m->head, &it, &o);)
      if (o->holder == GS_TRACE_HELD_BY_COMPOSITE && o->owner == c->id)
        touch(&mm->touched_objects, o->id);
  }
  for (guint i = 0; i < mm->touched_objects.len; i++) {
    guint64 id = mm->touched_objects.ids[i];
    retract_object(m, i == 0 && disposed ? disposed : head_object(m, id));
  }
}

static model_series *group_series(gs_trace_model *m, guint group) {
  while (m->group_series->len <= group) {
    model_series *s = g_new0(model_series, 1);
    model_series_init(s);
    g_ptr_array_add(m->group_series, s);
  }
  return m->group_series->pdata[group];
}

void model_memory_after(gs_trace_model *m, const gs_trace_event *e, guint64 index) {
  model_memory *mm = m->memory;
  /* The second of a pair writes over the first's points (model_event_closes_pair). */
  if (model_event_closes_pair(e) && index > 0)
    index--;
  if (m->head->heir_storage) { /* bytes passed to a storage no event named */
    retract_storage(mm, gs_replay_storage_tally(m->head, m->head->heir_storage));
    touch(&mm->touched_storages, m->head->heir_storage);
  }
  /* What a node's reach or a dataset changed, maybe far from the event's own ids (a loss
   * disposed leaves its whole graph unable to run): taken out now, by what each was counted
   * as, and put back below with the rest. */
  const GArray *objects = m->head->recounted_objects, *storages = m->head->recounted_storages;
  for (guint i = 0; i < objects->len; i++) {
    guint64 id = g_array_index(objects, guint64, i);
    gs_replay_object *o = head_object(m, id);
    if (o && o->tally_category) {
      retract_object(m, o);
      touch(&mm->touched_objects, id);
    }
  }
  for (guint i = 0; i < storages->len; i++) {
    guint64 id = g_array_index(storages, guint64, i);
    retract_storage(mm, gs_replay_storage_tally(m->head, id));
    touch(&mm->touched_storages, id);
  }
  if (!mm->touched_objects.len && !mm->touched_storages.len && !m->head->memory_changed &&
      !m->head->changed_groups->len)
    return;
  for (guint i = 0; i < mm->touched_objects.len; i++)
    assert_object(m, gs_replay_object_after(m->head, mm->touched_objects.ids[i]));
  for (guint i = 0; i < mm->touched_storages.len; i++)
    assert_tally(m, gs_replay_storage_tally_after(m->head, mm->touched_storages.ids[i]));
  guint64 counted = 0;
  for (int c = 0; c < GS_MEM_OTHER; c++) {
    counted += mm->totals[c];
    if (mm->totals[c] != mm->emitted[c]) {
      model_series_set(&m->categories[c], index, mm->totals[c]);
      mm->emitted[c] = mm->totals[c];
    }
  }
  guint64 live = m->head->live_bytes;
  guint64 other = live > counted ? live - counted : 0;
  if (other != mm->emitted[GS_MEM_OTHER]) {
    model_series_set(&m->categories[GS_MEM_OTHER], index, other);
    mm->emitted[GS_MEM_OTHER] = other;
  }
  if (live != mm->emitted_total) {
    model_series_set(&m->total, index, live);
    mm->emitted_total = live;
  }
  if (m->head->outside_bytes != mm->emitted_outside) {
    model_series_set(&m->outside, index, m->head->outside_bytes);
    mm->emitted_outside = m->head->outside_bytes;
  }
  gboolean rest_changed = FALSE;
  for (guint i = 0; i < m->head->changed_groups->len; i++) {
    const gs_replay_scope_name *g = m->head->changed_groups->pdata[i];
    if (g->index < MODEL_REST_GROUP) {
      model_series_set(group_series(m, g->index), index, g->bytes);
      continue;
    }
    if (m->rest_bytes_by_group->len <= g->index)
      g_array_set_size(m->rest_bytes_by_group, g->index + 1);
    guint64 *last = &g_array_index(m->rest_bytes_by_group, guint64, g->index);
    m->rest_bytes = m->rest_bytes - *last + g->bytes;
    *last = g->bytes;
    rest_changed = TRUE;
  }
  if (rest_changed)
    model_series_set(group_series(m, MODEL_REST_GROUP), index, m->rest_bytes);
}

/* ---- queries ------------------------------------------------------------------------------- */

guint64 gs_trace_model_bytes_at(const gs_trace_model *m, guint64 index) {
  return model_series_value(&m->total, index);
}

guint64 gs_trace_model_outside_bytes_at(const gs_trace_model *m, guint64 index) {
  return model_series_value(&m->outside, index);
}

guint gs_trace_model_n_stacks(const gs_trace_model *m, gboolean by_scope) {
  if (!by_scope)
    return GS_MEM_N_CATEGORIES;
  return MIN(1 + m->head->scope_group_list->len, GS_MEMORY_MAX_STACKS);
}

const char *gs_trace_model_stack_name(const gs_trace_model *m, gboolean by_scope, guint stack) {
  if (!by_scope)
    return stack < GS_MEM_N_CATEGORIES ? gs_mem_category_name(stack) : "";
  guint groups = m->head->scope_group_list->len;
  if (stack == 0)
    return _("outside any scope");
  if (stack >= gs_trace_model_n_stacks(m, TRUE))
    return "";
  if (stack == GS_MEMORY_MAX_STACKS - 1 && groups > GS_MEMORY_MAX_STACKS - 1)
    return _("other scopes");
  return ((const gs_replay_scope_name *)m->head->scope_group_list->pdata[stack - 1])->name;
}

static void stacks_at(const gs_trace_model *m, gboolean by_scope, guint64 index,
                      gs_memory_column *col) {
  col->n_stacks = gs_trace_model_n_stacks(m, by_scope);
  col->outside = model_series_value(&m->outside, index);
  if (!by_scope) {
    for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
      col->stack[c] = model_series_value(&m->categories[c], index);
    return;
  }
  guint64 in_scopes = 0;
  for (guint g = 0; g < m->group_series->len; g++) {
    guint64 v = model_series_value(m->group_series->pdata[g], index);
    in_scopes += v;
    col->stack[MIN(1 + g, GS_MEMORY_MAX_STACKS - 1)] += v;
  }
  guint64 total = model_series_value(&m->total, index);
  col->stack[0] = total > in_scopes ? total - in_scopes : 0;
}

guint64 gs_trace_model_clamp_range(const gs_trace_model *m, guint64 first, guint64 *last) {
  guint64 n = m->kinds->len;
  if (n == 0 || first >= n)
    return 0;
  *last = MIN(*last, n - 1);
  return *last >= first ? *last - first + 1 : 0;
}

void gs_trace_model_memory_columns(const gs_trace_model *m, guint64 first, guint64 last,
                                   guint columns, gboolean by_scope, gs_memory_column *out) {
  memset(out, 0, sizeof *out * columns);
  if (columns == 0)
    return;
  guint64 span = gs_trace_model_clamp_range(m, first, &last);
  const model_series *t = &m->total;
  for (guint col = 0; col < columns; col++) {
    gs_memory_column *c = &out[col];
    c->first = first + span * col / columns;
    guint64 end = first + span * (col + 1) / columns; /* exclusive */
    c->n_stacks = gs_trace_model_n_stacks(m, by_scope);
    if (end <= c->first) {
      c->first = 1;
      c->last = 0;
      continue;
    }
    c->last = end - 1;
    model_series_range(t, c->first, c->last, &c->min_total, &c->max_total, &c->max_index);
    stacks_at(m, by_scope, c->max_index, c);
  }
}
