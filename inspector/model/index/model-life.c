/* model-life.c: a tensor's whole life, found fast on huge logs without an object per tensor.
 *
 * While indexing, each event gets one 32-bit key (the thing it is mainly about: a tensor, a
 * node or a storage, hashed with its kind of id) and a few events get extra (key, event)
 * pairs for the other tensors they concern (a view's source, a move's target, a node's saved
 * tensors, a composite's parts, a grad, an optimizer's parameters, the parameters a module's
 * joining a tree renames). Full segments of those are sealed into postings sorted by key
 * (model-life-index.c), so a query looks each key up per segment, scans only the newest
 * segment, and decodes only the events whose fields it must follow: the tensor's creation
 * (for its storage) and its moves into parameters (for the new handle). */
#include "model-private.h"

enum { KEY_TENSOR = 1, KEY_NODE = 2, KEY_STORAGE = 3 };

static guint32 life_key(guint64 id, guint domain) {
  if (!id)
    return 0;
  guint64 h = (id + domain * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  guint32 k = (guint32)(h >> 32);
  return k ? k : 1;
}

static void extra(gs_trace_model *m, guint64 id, guint domain, guint64 index) {
  model_posting p = {life_key(id, domain), (guint32)index};
  if (p.key)
    g_array_append_val(m->life_extra, p);
}

/* One event being indexed: the model its extra keys go to, the event and its index. */
typedef struct {
  gs_trace_model *m;
  const gs_trace_event *e;
  guint64 index;
} life_event;

static guint32 keyed_by_tensor(const life_event *l) { return life_key(l->e->tensor, KEY_TENSOR); }
static guint32 keyed_by_node(const life_event *l) { return life_key(l->e->node, KEY_NODE); }
static guint32 keyed_by_object(const life_event *l) { return life_key(l->e->object, KEY_TENSOR); }
static guint32 keyed_by_storage(const life_event *l) {
  return life_key(l->e->storage, KEY_STORAGE);
}

/* About no tensor, node or storage. */
static guint32 no_key(const life_event *l) {
  (void)l;
  return 0;
}

/* What each kind is mainly about (its key; 0 for none), and the others it concerns (extra
 * keys): one function per kind. If a kind concerns a storage, concerns() says so too. */
static guint32 life_string(const life_event *l) { return no_key(l); }
static guint32 life_site(const life_event *l) { return no_key(l); }
static guint32 life_binary(const life_event *l) { return no_key(l); }
static guint32 life_scope_begin(const life_event *l) { return no_key(l); }
static guint32 life_scope_end(const life_event *l) { return no_key(l); }
static guint32 life_module_create(const life_event *l) { return no_key(l); }
static guint32 life_mark(const life_event *l) { return no_key(l); }
static guint32 life_error(const life_event *l) { return no_key(l); }
static guint32 life_snapshot_begin(const life_event *l) { return no_key(l); }
static guint32 life_snapshot_end(const life_event *l) { return no_key(l); }
static guint32 life_storage_alloc(const life_event *l) { return keyed_by_storage(l); }
static guint32 life_storage_materialise(const life_event *l) { return keyed_by_storage(l); }
static guint32 life_storage_free(const life_event *l) { return keyed_by_storage(l); }

static guint32 life_storage_share(const life_event *l) {
  extra(l->m, l->e->source, KEY_STORAGE, l->index);
  return keyed_by_storage(l);
}

static guint32 life_tensor_create(const life_event *l) {
  if (l->e->origin != 0)
    extra(l->m, l->e->source, KEY_TENSOR, l->index);
  return keyed_by_tensor(l);
}

/* A write through any view of the storage is a new version. */
static guint32 life_inplace_write(const life_event *l) {
  extra(l->m, l->e->storage, KEY_STORAGE, l->index);
  return keyed_by_tensor(l);
}

static guint32 with_target(const life_event *l) {
  extra(l->m, l->e->target, KEY_TENSOR, l->index);
  return keyed_by_tensor(l);
}

static guint32 life_tensor_move(const life_event *l) { return with_target(l); }
static guint32 life_grad_accumulate(const life_event *l) { return with_target(l); }
static guint32 life_tensor_dispose(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_tensor_name(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_requires_grad(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_values(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_backward_begin(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_backward_end(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_module_parameter(const life_event *l) { return keyed_by_tensor(l); }
static guint32 life_owner_change(const life_event *l) { return keyed_by_object(l); }
static guint32 life_node_free_saved(const life_event *l) { return keyed_by_node(l); }
static guint32 life_node_release(const life_event *l) { return keyed_by_node(l); }

static guint32 life_node_create(const life_event *l) {
  extra(l->m, l->e->tensor, KEY_TENSOR, l->index);
  for (guint i = 0; i < l->e->n_saved; i++)
    extra(l->m, l->e->saved[i], KEY_TENSOR, l->index);
  return keyed_by_node(l);
}

static guint32 life_composite_create(const life_event *l) {
  for (guint i = 0; i < l->e->n_parts; i++)
    extra(l->m, l->e->parts[i], KEY_TENSOR, l->index);
  return keyed_by_object(l);
}

/* From here on the optimizer updates (and keeps state for) its parameters. */
static guint32 life_optimizer_create(const life_event *l) {
  for (guint i = 0; i < l->e->n_params; i++)
    extra(l->m, l->e->params[i], KEY_TENSOR, l->index);
  return 0;
}

/* Renames the parameters already in the child's tree. */
static guint32 life_module_child(const life_event *l) {
  g_autoptr(GArray) renamed = g_array_new(FALSE, FALSE, sizeof(guint64));
  gs_replay_subtree_parameters(l->m->head, l->e->child, renamed);
  for (guint i = 0; i < renamed->len; i++)
    extra(l->m, g_array_index(renamed, guint64, i), KEY_TENSOR, l->index);
  return 0;
}

/* A DDP bucket took the parameters' final gradients. */
static guint32 life_bucket_ready(const life_event *l) {
  for (guint i = 0; i < l->e->n_params; i++)
    extra(l->m, l->e->params[i], KEY_TENSOR, l->index);
  return 0;
}

/* A distributed run's rank, collectives and waits concern no one tensor. */
static guint32 life_dist_init(const life_event *l) { return no_key(l); }
static guint32 life_collective_begin(const life_event *l) { return no_key(l); }
static guint32 life_collective_end(const life_event *l) { return no_key(l); }
static guint32 life_wait_begin(const life_event *l) { return no_key(l); }
static guint32 life_wait_end(const life_event *l) { return no_key(l); }
static guint32 life_tensor_set_data(const life_event *l) { return keyed_by_tensor(l); }

/* From the kinds list: a new kind without its life_ function does not compile. */
typedef guint32 (*kind_life)(const life_event *l);
#define KIND_LIFE(KIND, kind, value, flags) [GS_TRACE_##KIND] = life_##kind,
static const kind_life lives[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_LIFE)};
#undef KIND_LIFE

void model_life_add(gs_trace_model *m, const gs_trace_event *e, guint64 index) {
  if (index - m->life_open_first >= m->life_segment_events)
    model_life_seal(m);
  const life_event l = {m, e, index};
  guint32 key = e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT ? lives[e->kind](&l) : 0;
  g_array_append_val(m->life_keys, key);
}

/* Appends to hits every event index whose own (primary) key is k, then those where k is an
 * extra key; returns where the extras begin in hits. Sealed segments answer from their sorted
 * postings; the open one is scanned. */
static guint scan(const gs_trace_model *m, guint32 k, GArray *hits) {
  g_autoptr(GArray) sealed_extras = g_array_new(FALSE, FALSE, sizeof(guint64));
  model_life_lookup(m, k, hits, sealed_extras);
  const guint32 *keys = (const guint32 *)m->life_keys->data;
  guint64 n = m->life_keys->len;
  for (guint64 i = 0; i < n; i++)
    if (G_UNLIKELY(keys[i] == k)) {
      guint64 at = m->life_open_first + i;
      g_array_append_val(hits, at);
    }
  guint extras = hits->len;
  g_array_append_vals(hits, sealed_extras->data, sealed_extras->len);
  const model_posting *extra = (const model_posting *)m->life_extra->data;
  for (guint i = 0; i < m->life_extra->len; i++)
    if (G_UNLIKELY(extra[i].key == k)) {
      guint64 at = extra[i].index;
      g_array_append_val(hits, at);
    }
  return extras;
}

/* Lives up to this many events are checked against the decoded events. */
#define VERIFY_LIMIT 512

/* Does e concern one of the tensor's handles, or (storage events, in-place writes) its
 * storage? The same reading of "concerns" the keys were made with. A module's tree is read
 * from the head state: child links never change once recorded. */
static gboolean concerns(const gs_trace_model *m, const gs_trace_event *e, const guint64 *ids,
                         guint n, guint64 storage) {
  for (guint k = 0; k < n; k++) {
    guint64 id = ids[k];
    if (e->kind == GS_TRACE_MODULE_CHILD) {
      if (gs_replay_parameter_under(m->head, id, e->child))
        return TRUE;
      continue;
    }
    if (e->tensor == id || e->target == id || e->object == id)
      return TRUE;
    for (guint i = 0; i < e->n_params; i++)
      if (e->params[i] == id)
        return TRUE;
    if (e->kind == GS_TRACE_TENSOR_CREATE && e->origin != 0 && e->source == id)
      return TRUE;
    for (guint i = 0; i < e->n_saved; i++)
      if (e->saved[i] == id)
        return TRUE;
    for (guint i = 0; i < e->n_parts; i++)
      if (e->parts[i] == id)
        return TRUE;
  }
  if (!storage)
    return FALSE;
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE:
  case GS_TRACE_INPLACE_WRITE: return e->storage == storage;
  case GS_TRACE_STORAGE_SHARE: return e->storage == storage || e->source == storage;
  default: return FALSE;
  }
}

void gs_trace_model_tensor_life(const gs_trace_model *cm, guint64 tensor_id, guint64 **indices,
                                guint *n) {
  gs_trace_model *m = (gs_trace_model *)cm; /* decoding moves a private decoder only */
  g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autoptr(GArray) handles = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_append_val(handles, tensor_id);
  guint64 storage = 0;
  /* Each handle the tensor had (a parameter takes over its handle), and its storage. */
  for (guint h = 0; h < handles->len && h < 64; h++) {
    guint64 id = g_array_index(handles, guint64, h);
    guint from = hits->len;
    guint extras = scan(m, life_key(id, KEY_TENSOR), hits);
    /* Only events about the tensor itself carry what to follow: its creation (the storage)
     * and its moves. Views made from it are extras: never decoded. */
    for (guint i = from; i < extras; i++) {
      guint64 at = g_array_index(hits, guint64, i);
      gs_trace_kind kind = gs_trace_model_kind_at(m, at);
      if (kind != GS_TRACE_TENSOR_CREATE && kind != GS_TRACE_TENSOR_MOVE)
        continue;
      gs_trace_event e;
      if (!model_decode(m, &m->query_decoder, at, &e) || e.tensor != id)
        continue;
      if (kind == GS_TRACE_TENSOR_MOVE && e.target && e.target != id) {
        gboolean seen = FALSE;
        for (guint k = 0; k < handles->len; k++)
          seen = seen || g_array_index(handles, guint64, k) == e.target;
        if (!seen)
          g_array_append_val(handles, e.target);
      } else if (kind == GS_TRACE_TENSOR_CREATE && e.storage && h == 0) {
        storage = e.storage;
        scan(m, life_key(e.storage, KEY_STORAGE), hits);
      }
    }
  }
  model_sort_indices(hits);
  guint out = 0;
  for (guint i = 0; i < hits->len; i++) /* an event may be found by two keys */
    if (out == 0 || g_array_index(hits, guint64, out - 1) != g_array_index(hits, guint64, i))
      g_array_index(hits, guint64, out++) = g_array_index(hits, guint64, i);
  /* Keys are 32-bit hashes: another tensor may share one (about once in a thousand queries
   * on a log of millions of tensors). A short life (most are: a step's temporaries, in one
   * or two chunks) is checked event by event; a long one (a parameter's) is left as found. */
  if (out <= VERIFY_LIMIT) {
    guint kept = 0;
    for (guint i = 0; i < out; i++) {
      guint64 at = g_array_index(hits, guint64, i);
      gs_trace_event e;
      if (model_decode(m, &m->query_decoder, at, &e) &&
          concerns(m, &e, (const guint64 *)handles->data, handles->len, storage))
        g_array_index(hits, guint64, kept++) = at;
    }
    out = kept;
  }
  *n = out;
  /* The array itself is the answer: a parameter's life is megabytes, and fresh pages cost. */
  g_array_set_size(hits, out);
  *indices = (guint64 *)(void *)g_array_free(g_steal_pointer(&hits), FALSE);
}

GArray *model_storage_writes(gs_trace_model *m, guint64 storage) {
  g_autoptr(GArray) hits = g_array_new(FALSE, FALSE, sizeof(guint64));
  scan(m, life_key(storage, KEY_STORAGE), hits);
  model_sort_indices(hits);
  GArray *writes = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint i = 0; i < hits->len; i++) {
    guint64 at = g_array_index(hits, guint64, i);
    if (gs_trace_model_kind_at(m, at) == GS_TRACE_INPLACE_WRITE)
      g_array_append_val(writes, at);
  }
  return writes;
}
