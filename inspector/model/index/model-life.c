/* model-life.c: a tensor's whole life, found fast on huge logs without an object per tensor.
 *
 * While indexing, each event gets one 32-bit key (the thing it is mainly about: a tensor, a
 * node or a storage, hashed with its kind of id) and a few events get extra (key, event)
 * pairs for the other tensors they concern (a view's source, a move's target, a node's saved
 * tensors, a composite's parts, a grad, an optimizer's parameters, the parameters a module's
 * joining a tree renames). Full segments of those are sealed into postings sorted by key
 * (model-life-index.c), so a query looks each key up per segment, scans only the newest
 * segment, and decodes only the events whose fields it must follow: the tensor's creation
 * (for its storage) and its moves into parameters (for the new handle). The answer is merged
 * straight from the segments' varints. */
#include "model-private.h"

#include <string.h>

#include "tensor-life.h"

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

/* One event being indexed: the model (its head state answers module_child), where its extra
 * keys go (the open segment's, or a batch for the life thread: model-life-feed.c), the event
 * and its index. */
typedef struct {
  gs_trace_model *m;
  GArray *extra;
  const gs_trace_event *e;
  guint64 index;
} life_event;

static void extra(const life_event *l, guint64 id, guint domain) {
  model_posting p = {life_key(id, domain), (guint32)l->index};
  if (p.key)
    g_array_append_val(l->extra, p);
}

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
  extra(l, l->e->source, KEY_STORAGE);
  return keyed_by_storage(l);
}

static guint32 life_tensor_create(const life_event *l) {
  if (l->e->origin != 0)
    extra(l, l->e->source, KEY_TENSOR);
  return keyed_by_tensor(l);
}

/* A write through any view of the storage is a new version. */
static guint32 life_inplace_write(const life_event *l) {
  extra(l, l->e->storage, KEY_STORAGE);
  return keyed_by_tensor(l);
}

static guint32 with_target(const life_event *l) {
  extra(l, l->e->target, KEY_TENSOR);
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

/* A saved tensor packed or unpacked: the node's event, and in the tensor's life too. */
static guint32 life_saved_pack(const life_event *l) {
  extra(l, l->e->tensor, KEY_TENSOR);
  return keyed_by_node(l);
}

static guint32 life_saved_unpack(const life_event *l) { return life_saved_pack(l); }

static guint32 life_node_create(const life_event *l) {
  extra(l, l->e->tensor, KEY_TENSOR);
  for (guint i = 0; i < l->e->n_saved; i++)
    extra(l, l->e->saved[i], KEY_TENSOR);
  return keyed_by_node(l);
}

static guint32 life_composite_create(const life_event *l) {
  for (guint i = 0; i < l->e->n_parts; i++)
    extra(l, l->e->parts[i], KEY_TENSOR);
  return keyed_by_object(l);
}

/* From here on the optimizer updates (and keeps state for) its parameters. */
static guint32 life_optimizer_create(const life_event *l) {
  for (guint i = 0; i < l->e->n_params; i++)
    extra(l, l->e->params[i], KEY_TENSOR);
  return 0;
}

/* Renames the parameters already in the child's tree. */
static guint32 life_module_child(const life_event *l) {
  g_autoptr(GArray) renamed = g_array_new(FALSE, FALSE, sizeof(guint64));
  gs_replay_subtree_parameters(l->m->head, l->e->child, renamed);
  for (guint i = 0; i < renamed->len; i++)
    extra(l, g_array_index(renamed, guint64, i), KEY_TENSOR);
  return 0;
}

/* A DDP bucket took the parameters' final gradients. */
static guint32 life_bucket_ready(const life_event *l) {
  for (guint i = 0; i < l->e->n_params; i++)
    extra(l, l->e->params[i], KEY_TENSOR);
  return 0;
}

/* A distributed run's rank, collectives and waits concern no one tensor. */
static guint32 life_dist_init(const life_event *l) { return no_key(l); }
static guint32 life_collective_begin(const life_event *l) { return no_key(l); }
static guint32 life_collective_end(const life_event *l) { return no_key(l); }
static guint32 life_wait_begin(const life_event *l) { return no_key(l); }
static guint32 life_wait_end(const life_event *l) { return no_key(l); }
static guint32 life_range_begin(const life_event *l) { return no_key(l); }
static guint32 life_range_end(const life_event *l) { return no_key(l); }
static guint32 life_tensor_set_data(const life_event *l) { return keyed_by_tensor(l); }

/* From the kinds list: a new kind without its life_ function does not compile. */
typedef guint32 (*kind_life)(const life_event *l);
#define KIND_LIFE(KIND, kind, value, flags) [GS_TRACE_##KIND] = life_##kind,
static const kind_life lives[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_LIFE)};
#undef KIND_LIFE

/* Before event index's keys are kept: a full open segment is sealed, and the merge under way
 * moves on by what indexing has earned. */
static void life_before(gs_trace_model *m, guint64 index) {
  if (index - m->life_open_first >= m->life_segment_events)
    model_life_seal(m);
  if (m->life_merge) {
    m->life_merge_credit +=
        MODEL_LIFE_MERGE_RATE * (1 + m->life_segments->len / MODEL_LIFE_MERGE_BACKLOG);
    if (m->life_merge_credit >= (guint64)MODEL_LIFE_MERGE_RATE * MODEL_LIFE_MERGE_STEP)
      model_life_merge_step(m);
  }
}

/* Keeps event index's own key (its extras are in life_extra already). */
static void life_keep(gs_trace_model *m, guint64 index, guint32 key, gboolean follow) {
  g_array_append_val(m->life_keys, key);
  if (follow) {
    if (!m->life_follow)
      m->life_follow = g_malloc0((m->life_segment_events + 7) / 8);
    guint64 place = index - m->life_open_first;
    m->life_follow[place >> 3] |= (guint8)(1u << (place & 7));
  }
}

guint32 model_life_key(gs_trace_model *m, const gs_trace_event *e, guint64 index, GArray *extras,
                       gboolean *follow) {
  const life_event l = {m, extras, e, index};
  guint32 key = e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT ? lives[e->kind](&l) : 0;
  *follow = key && MODEL_LIFE_FOLLOW(e->kind) && m->life_segment_events != G_MAXUINT;
  return key;
}

void model_life_add(gs_trace_model *m, const gs_trace_event *e, guint64 index) {
  life_before(m, index);
  gboolean follow;
  guint32 key = model_life_key(m, e, index, m->life_extra, &follow);
  life_keep(m, index, key, follow);
}

void model_life_keep(gs_trace_model *m, guint64 index, guint32 key, gboolean follow,
                     const model_posting *extras, guint n_extras) {
  life_before(m, index);
  if (n_extras)
    g_array_append_vals(m->life_extra, extras, n_extras);
  life_keep(m, index, key, follow);
}

/* Where the index keeps one key's events: its group in each sealed segment that has it, oldest
 * first, and the open segment's events (whose own key it is, and where it is an extra key). */
typedef struct life_found {
  GArray *groups;                    /* model_life_group */
  GArray *open_primary, *open_extra; /* guint64 event indices, ascending */
  guint64 n;                         /* all of them */
} life_found;

static void found_clear(gpointer p) {
  life_found *f = p;
  g_array_unref(f->groups);
  g_array_unref(f->open_primary);
  g_array_unref(f->open_extra);
}

static GArray *founds_new(void) {
  GArray *founds = g_array_new(FALSE, FALSE, sizeof(life_found));
  g_array_set_clear_func(founds, found_clear);
  return founds;
}

/* Looks key k up: sealed segments answer from their sorted postings (counts only, nothing
 * decoded), the open segment is scanned. Appends to founds and returns it. */
static const life_found *find(const gs_trace_model *m, guint32 k, GArray *founds) {
  life_found f = {g_array_new(FALSE, FALSE, sizeof(model_life_group)),
                  g_array_new(FALSE, FALSE, sizeof(guint64)),
                  g_array_new(FALSE, FALSE, sizeof(guint64)), 0};
  model_life_find(m, k, f.groups);
  for (guint g = 0; g < f.groups->len; g++) {
    const model_life_group *group = &g_array_index(f.groups, model_life_group, g);
    f.n += (guint64)group->primaries + group->extras;
  }
  const guint32 *keys = (const guint32 *)m->life_keys->data;
  for (guint64 i = 0; i < m->life_keys->len; i++)
    if (G_UNLIKELY(keys[i] == k)) {
      guint64 at = m->life_open_first + i;
      g_array_append_val(f.open_primary, at);
    }
  const model_posting *extra = (const model_posting *)m->life_extra->data;
  for (guint i = 0; i < m->life_extra->len; i++)
    if (G_UNLIKELY(extra[i].key == k)) {
      guint64 at = extra[i].index;
      g_array_append_val(f.open_extra, at);
    }
  f.n += f.open_primary->len + f.open_extra->len;
  g_array_append_val(founds, f);
  return &g_array_index(founds, life_found, founds->len - 1);
}

/* One list of a key's events in one segment, read as it is merged: varint steps from `at`
 * (a sealed group's), or event indices (the open segment's). */
typedef struct life_cursor {
  const guint8 *p;
  const guint64 *v;
  guint64 left, at;
  guint64 first; /* its segment's first event: lists of one segment are merged together */
} life_cursor;

static inline guint64 cursor_next(life_cursor *c) {
  c->left--;
  if (c->p) {
    guint64 step;
    c->p = model_get_varint(c->p, &step);
    c->at += step;
  } else {
    c->at = *c->v++;
  }
  return c->at;
}

/* Skips n steps. A parameter's group holds millions, and its extras start after them: their
 * last bytes (top bit clear) are counted eight at a time while eight or more steps are left,
 * which also means eight bytes are. */
static void skip_steps(life_cursor *c, guint64 n) {
  const guint8 *p = c->p;
  while (n >= 8) {
    guint64 word;
    memcpy(&word, p, sizeof word);
    /* A 1 in each last byte's low bit, summed into the top byte by the multiply (a popcount
     * here is a library call: the build targets x86-64 without POPCNT). */
    guint64 last = (~word & G_GUINT64_CONSTANT(0x8080808080808080)) >> 7;
    guint ends = (guint)((last * G_GUINT64_CONSTANT(0x0101010101010101)) >> 56);
    if (ends >= n)
      break;
    n -= ends;
    p += sizeof word;
  }
  guint64 step;
  for (guint64 i = 0; i < n; i++)
    p = model_get_varint(p, &step);
  c->p = p;
}

/* A key's primary (or extra) lists, oldest first, appended to cursors. */
static void add_cursors(const life_found *f, gboolean extras, GArray *cursors) {
  for (guint g = 0; g < f->groups->len; g++) {
    const model_life_group *group = &g_array_index(f->groups, model_life_group, g);
    life_cursor c = {
        .p = group->events, .left = group->primaries, .at = group->first, .first = group->first};
    if (extras) {
      skip_steps(&c, group->primaries);
      c.left = group->extras;
    }
    if (c.left)
      g_array_append_val(cursors, c);
  }
  GArray *open = extras ? f->open_extra : f->open_primary;
  if (open->len) {
    life_cursor c = {.v = (const guint64 *)open->data, .left = open->len, .first = G_MAXUINT64};
    g_array_append_val(cursors, c);
  }
}

/* Merges the lists c[0, n) (one segment's) into out, ascending and without repeats (an event
 * may be found by two keys, and one list may name an event twice: a node saving a tensor
 * twice; *last is the one written last). A few lists, so the smallest head is found by looking
 * at each, and its list is copied on up to the next smallest head in a tight loop: a
 * parameter's own events rarely interleave with the rest. */
static void merge_segment(life_cursor *c, guint n, gs_tensor_life *out, guint64 *last) {
  guint64 few[16];
  g_autofree guint64 *many = n > G_N_ELEMENTS(few) ? g_new(guint64, n) : NULL;
  guint64 *head = many ? many : few;
  for (guint k = 0; k < n; k++)
    head[k] = cursor_next(&c[k]);
  while (n > 0) {
    guint min = 0;
    guint64 second = G_MAXUINT64;
    for (guint k = 1; k < n; k++) {
      if (head[k] < head[min]) {
        second = head[min];
        min = k;
      } else if (head[k] < second) {
        second = head[k];
      }
    }
    guint64 at = head[min], prev = *last;
    for (;;) {
      if (at != prev)
        model_life_answer_add(out, prev = at);
      if (!c[min].left) {
        n--;
        c[min] = c[n];
        head[min] = head[n];
        break;
      }
      at = cursor_next(&c[min]);
      if (at > second) {
        head[min] = at;
        break;
      }
    }
    *last = prev;
  }
}

static gint by_segment(gconstpointer a, gconstpointer b) {
  guint64 x = ((const life_cursor *)a)->first, y = ((const life_cursor *)b)->first;
  return x < y ? -1 : x > y;
}

/* Every event the founds hold, ascending and without repeats: the segments' varints are merged
 * straight into the answer, a segment at a time (segments cover the log in order), with no
 * intermediate runs. */
static gs_tensor_life *merge_founds(const gs_trace_model *m, GArray *founds) {
  g_autoptr(GArray) cursors = g_array_new(FALSE, FALSE, sizeof(life_cursor));
  guint64 total = 0;
  for (guint f = 0; f < founds->len; f++) {
    const life_found *found = &g_array_index(founds, life_found, f);
    add_cursors(found, FALSE, cursors);
    add_cursors(found, TRUE, cursors);
    total += found->n;
  }
  g_array_sort(cursors, by_segment);
  /* Every event the index holds is before the end of its open segment. */
  gs_tensor_life *out = model_life_answer_new(total, m->life_open_first + m->life_keys->len);
  guint64 last = G_MAXUINT64;
  life_cursor *c = (life_cursor *)cursors->data;
  for (guint i = 0; i < cursors->len;) {
    guint j = i + 1;
    while (j < cursors->len && c[j].first == c[i].first)
      j++;
    merge_segment(c + i, j - i, out, &last);
    i = j;
  }
  return out;
}

/* Lives up to this many events are checked against the decoded events. */
#define VERIFY_LIMIT 512

/* Does e concern one of the tensor's handles, or (storage events, in-place writes) its
 * storage? The same reading of "concerns" the keys were made with. A module's tree is read
 * from the head state: child links never change once recorded. */
gboolean model_life_concerns(const gs_trace_model *m, const gs_trace_event *e, const guint64 *ids,
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

gs_tensor_life *gs_trace_model_tensor_life(const gs_trace_model *cm, guint64 tensor_id) {
  gs_trace_model *m = (gs_trace_model *)cm; /* decoding moves a private decoder only */
  g_autoptr(GArray) founds = founds_new();
  g_autoptr(GArray) handles = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_append_val(handles, tensor_id);
  guint64 storage = 0;
  /* Each handle the tensor had (a parameter takes over its handle), and its storage. */
  for (guint h = 0; h < handles->len && h < 64; h++) {
    guint64 id = g_array_index(handles, guint64, h);
    const life_found *own = find(m, life_key(id, KEY_TENSOR), founds);
    /* Only events about the tensor itself carry what to follow: its creation (the storage)
     * and its moves. Views made from it are extras: never decoded. Only groups flagged as
     * holding one are read, event by event. */
    g_autoptr(GArray) follow = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint g = 0; g < own->groups->len; g++) {
      const model_life_group *group = &g_array_index(own->groups, model_life_group, g);
      if (!group->follow) /* most: no creation or move among them */
        continue;
      life_cursor c = {.p = group->events, .left = group->primaries, .at = group->first};
      while (c.left) {
        guint64 at = cursor_next(&c);
        if (G_UNLIKELY(MODEL_LIFE_FOLLOW(gs_trace_model_kind_at(m, at))))
          g_array_append_val(follow, at);
      }
    }
    for (guint i = 0; i < own->open_primary->len; i++) {
      guint64 at = g_array_index(own->open_primary, guint64, i);
      if (MODEL_LIFE_FOLLOW(gs_trace_model_kind_at(m, at)))
        g_array_append_val(follow, at);
    }
    for (guint i = 0; i < follow->len; i++) {
      guint64 at = g_array_index(follow, guint64, i);
      gs_trace_event e;
      if (!model_decode(m, &m->query_decoder, at, &e) || e.tensor != id)
        continue;
      if (e.kind == GS_TRACE_TENSOR_MOVE && e.target && e.target != id) {
        gboolean seen = FALSE;
        for (guint k = 0; k < handles->len; k++)
          seen = seen || g_array_index(handles, guint64, k) == e.target;
        if (!seen)
          g_array_append_val(handles, e.target);
      } else if (e.kind == GS_TRACE_TENSOR_CREATE && e.storage && h == 0) {
        storage = e.storage;
        find(m, life_key(e.storage, KEY_STORAGE), founds);
      }
    }
  }
  gs_tensor_life *life = merge_founds(m, founds);
  /* Keys are 32-bit hashes: another tensor may share one (about once in a thousand queries
   * on a log of millions of tensors). A short life (most are: a step's temporaries, in one
   * or two chunks) is checked event by event; a long one (a parameter's) is left as found. */
  if (life->n <= VERIFY_LIMIT) {
    guint64 hits[VERIFY_LIMIT];
    guint found = life->n, kept = 0;
    for (guint i = 0; i < found; i++)
      hits[i] = gs_tensor_life_at(life, i);
    life->n = life->n_chunks = 0;
    for (guint i = 0; i < found; i++) {
      gs_trace_event e;
      if (model_decode(m, &m->query_decoder, hits[i], &e) &&
          model_life_concerns(m, &e, (const guint64 *)handles->data, handles->len, storage))
        hits[kept++] = hits[i];
    }
    for (guint i = 0; i < kept; i++)
      model_life_answer_add(life, hits[i]);
  }
  return life;
}

GArray *model_storage_writes(gs_trace_model *m, guint64 storage) {
  g_autoptr(GArray) founds = founds_new();
  find(m, life_key(storage, KEY_STORAGE), founds);
  g_autoptr(gs_tensor_life) hits = merge_founds(m, founds);
  GArray *writes = g_array_new(FALSE, FALSE, sizeof(guint64));
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, hits, 0);
  guint64 at;
  while (gs_tensor_life_cursor_next(&c, &at))
    if (gs_trace_model_kind_at(m, at) == GS_TRACE_INPLACE_WRITE)
      g_array_append_val(writes, at);
  return writes;
}
