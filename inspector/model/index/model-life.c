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

#include <stdlib.h>
#include <sys/mman.h>

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

/* One key's events (its primary or its extra ones), ascending. */
typedef struct life_run {
  guint64 *v;
  gsize n;
} life_run;

/* An array of n event indices (and one more) for a query's runs, scratch and answer. A
 * parameter's life on a long log is megabytes written once into fresh memory: on huge pages
 * where the kernel has them, since 4 KiB page faults were most of a first query. g_free it. */
static guint64 *big_array(gsize n) {
  enum { HUGE_PAGE = 2u << 20 };
  gsize bytes = (n + 1) * sizeof(guint64);
  void *p = NULL;
  if (bytes < HUGE_PAGE)
    return g_new(guint64, n + 1);
  gsize size = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  if (posix_memalign(&p, HUGE_PAGE, size) != 0)
    return g_new(guint64, n + 1);
  madvise(p, size, MADV_HUGEPAGE); /* advice only: 4 KiB pages otherwise */
  return p;
}

/* Adds key k's two runs to runs: every event whose own key is k, and those where k is an
 * extra key. Sealed segments answer from their sorted postings, then the open one is scanned;
 * everything is counted first, so each run is sized once. Returns the primary run. */
static life_run scan(const gs_trace_model *m, guint32 k, GArray *runs) {
  g_autoptr(GArray) groups = g_array_new(FALSE, FALSE, sizeof(model_life_group));
  model_life_find(m, k, groups);
  const guint32 *keys = (const guint32 *)m->life_keys->data;
  const model_posting *extra = (const model_posting *)m->life_extra->data;
  guint64 n_keys = m->life_keys->len;
  gsize n_primary = 0, n_extra = 0;
  for (guint g = 0; g < groups->len; g++) {
    n_primary += g_array_index(groups, model_life_group, g).primaries;
    n_extra += g_array_index(groups, model_life_group, g).extras;
  }
  for (guint64 i = 0; i < n_keys; i++)
    n_primary += keys[i] == k;
  for (guint i = 0; i < m->life_extra->len; i++)
    n_extra += extra[i].key == k;
  life_run primary = {big_array(n_primary), n_primary}, extras = {big_array(n_extra), n_extra};
  guint64 *p = primary.v, *e = extras.v;
  for (guint g = 0; g < groups->len; g++) {
    p = model_life_take(&g_array_index(groups, model_life_group, g), FALSE, p);
    e = model_life_take(&g_array_index(groups, model_life_group, g), TRUE, e);
  }
  for (guint64 i = 0; i < n_keys; i++)
    if (G_UNLIKELY(keys[i] == k))
      *p++ = m->life_open_first + i;
  for (guint i = 0; i < m->life_extra->len; i++)
    if (G_UNLIKELY(extra[i].key == k))
      *e++ = extra[i].index;
  g_array_append_val(runs, primary);
  g_array_append_val(runs, extras);
  return primary;
}

static void run_clear(gpointer run) { g_free(((life_run *)run)->v); }

static GArray *runs_new(void) {
  GArray *runs = g_array_new(FALSE, FALSE, sizeof(life_run));
  g_array_set_clear_func(runs, run_clear);
  return runs;
}

/* a and b ascending (repeats allowed) into out, ascending without repeats; returns its
 * length. */
static gsize merge_unique(const guint64 *a, gsize na, const guint64 *b, gsize nb, guint64 *out) {
  gsize i = 0, j = 0, n = 0;
  guint64 last = G_MAXUINT64; /* event indices are below 2^32 */
  while (i < na && j < nb) {
    guint64 x = a[i] <= b[j] ? a[i++] : b[j++];
    if (x != last)
      out[n++] = last = x;
  }
  for (; i < na; i++)
    if (a[i] != last)
      out[n++] = last = a[i];
  for (; j < nb; j++)
    if (b[j] != last)
      out[n++] = last = b[j];
  return n;
}

static gint by_length(gconstpointer a, gconstpointer b) {
  gsize x = ((const life_run *)a)->n, y = ((const life_run *)b)->n;
  return x < y ? -1 : x > y;
}

/* The union of the runs, ascending and without repeats (an event may be found by two keys),
 * in a new array of *n. Shortest runs first, so a parameter's long run is copied once, in the
 * last merge, straight into the answer: a merge, not a sort of everything found (a third of a
 * query at 2 M events). */
static guint64 *merge_runs(GArray *runs, guint *n) {
  g_array_sort(runs, by_length);
  gsize total = 0;
  for (guint r = 0; r < runs->len; r++)
    total += g_array_index(runs, life_run, r).n;
  life_run longest = runs->len ? g_array_index(runs, life_run, runs->len - 1) : (life_run){0};
  g_autofree guint64 *acc = big_array(total - longest.n), *next = big_array(total - longest.n);
  gsize acc_n = 0;
  for (guint r = 0; r + 1 < runs->len; r++) {
    const life_run *run = &g_array_index(runs, life_run, r);
    acc_n = merge_unique(acc, acc_n, run->v, run->n, next);
    guint64 *t = acc;
    acc = next;
    next = t;
  }
  guint64 *out = big_array(total);
  *n = (guint)merge_unique(acc, acc_n, longest.v, longest.n, out);
  return out;
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
  g_autoptr(GArray) runs = runs_new();
  g_autoptr(GArray) handles = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_append_val(handles, tensor_id);
  guint64 storage = 0;
  /* Each handle the tensor had (a parameter takes over its handle), and its storage. */
  for (guint h = 0; h < handles->len && h < 64; h++) {
    guint64 id = g_array_index(handles, guint64, h);
    life_run own = scan(m, life_key(id, KEY_TENSOR), runs);
    /* Only events about the tensor itself carry what to follow: its creation (the storage)
     * and its moves. Views made from it are extras: never decoded. */
    for (gsize i = 0; i < own.n; i++) {
      guint64 at = own.v[i];
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
        scan(m, life_key(e.storage, KEY_STORAGE), runs);
      }
    }
  }
  guint out = 0;
  guint64 *hits = merge_runs(runs, &out);
  /* Keys are 32-bit hashes: another tensor may share one (about once in a thousand queries
   * on a log of millions of tensors). A short life (most are: a step's temporaries, in one
   * or two chunks) is checked event by event; a long one (a parameter's) is left as found. */
  if (out <= VERIFY_LIMIT) {
    guint kept = 0;
    for (guint i = 0; i < out; i++) {
      gs_trace_event e;
      if (model_decode(m, &m->query_decoder, hits[i], &e) &&
          concerns(m, &e, (const guint64 *)handles->data, handles->len, storage))
        hits[kept++] = hits[i];
    }
    out = kept;
  }
  /* The merged array itself is the answer: a parameter's life is megabytes, and fresh pages
   * cost. */
  *n = out;
  *indices = hits;
}

GArray *model_storage_writes(gs_trace_model *m, guint64 storage) {
  g_autoptr(GArray) runs = runs_new();
  scan(m, life_key(storage, KEY_STORAGE), runs);
  guint n = 0;
  g_autofree guint64 *hits = merge_runs(runs, &n);
  GArray *writes = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint i = 0; i < n; i++)
    if (gs_trace_model_kind_at(m, hits[i]) == GS_TRACE_INPLACE_WRITE)
      g_array_append_val(writes, hits[i]);
  return writes;
}
