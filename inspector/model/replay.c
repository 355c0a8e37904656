/* replay.c: the traced program's state, one event at a time (see replay.h). Each event kind
 * is one small transition; ownership transitions mirror engine/scope/ownership.c so the
 * scope numbers here equal the engine's own gs_scope_info. */
#include "replay.h"

#include <string.h>

/* A storage points at the bytes it reads: its own buffer, or (copy-on-write) its source's
 * until it materialises. Bytes are alive while any storage points at them. */
typedef struct buffer {
  guint64 nbytes;
  guint refs;
  guint64 owner; /* the storage that allocated or materialised it; 0 once that one is gone */
} buffer;

/* A storage record: its own size, and the bytes it reads now. Keyed by its id. */
typedef struct storage_entry {
  guint64 id;
  guint64 nbytes;
  buffer *bytes;
  guint saved_refs; /* live nodes' saved tensors that view it */
  gs_replay_tally tally;
} storage_entry;

/* Interned strings, shared by a state and its copies (a model's keyframes). */
struct gs_replay_pool {
  GStringChunk *chunk;
  gint refs;
};

gboolean gs_id_equal(gconstpointer a, gconstpointer b) {
  return *(const guint64 *)a == *(const guint64 *)b;
}

/* Handles reuse slots (the low 32 bits) with new generations, so both halves must count:
 * g_int64_hash keeps only the low half, which put every instance of a scope in one bucket. */
guint gs_id_hash(gconstpointer a) {
  guint64 v = *(const guint64 *)a * 0x9e3779b97f4a7c15ull;
  return (guint)(v >> 32);
}
/* Each record starts with its 64-bit id, which serves as its own key. */
static GHashTable *id_table(GDestroyNotify free_value) {
  return g_hash_table_new_full(gs_id_hash, gs_id_equal, NULL, free_value);
}

static void node_free(gpointer p) {
  gs_replay_node *n = p;
  g_free(n->inputs);
  g_free(n->saved);
  g_free(n->saved_storages);
  g_free(n);
}

static void storage_entry_free(gpointer p) {
  storage_entry *e = p;
  if (e->bytes && --e->bytes->refs == 0)
    g_free(e->bytes);
  g_free(e);
}

static gs_replay_pool *pool_ref(gs_replay_pool *pool) {
  pool->refs++;
  return pool;
}

static void pool_unref(gs_replay_pool *pool) {
  if (--pool->refs == 0) {
    g_string_chunk_free(pool->chunk);
    g_free(pool);
  }
}

static void array_free(gpointer p) { g_array_unref(p); }

gs_replay *gs_replay_new(void) {
  gs_replay *r = g_new0(gs_replay, 1);
  r->pool = g_new0(gs_replay_pool, 1);
  r->pool->chunk = g_string_chunk_new(4096);
  r->pool->refs = 1;
  r->storages = id_table(storage_entry_free);
  r->objects = id_table(g_free);
  r->scopes = id_table(NULL); /* owned by scope_store */
  r->scope_list = g_ptr_array_new();
  r->scope_store = g_ptr_array_new_with_free_func(g_free);
  r->scope_groups = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->scope_group_list = g_ptr_array_new_with_free_func(g_free);
  r->thread_scopes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, array_free);
  r->nodes = id_table(node_free);
  r->names = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  r->modules = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  r->changed_groups = g_ptr_array_new();
  return r;
}

void gs_replay_free(gs_replay *r) {
  if (!r)
    return;
  g_hash_table_destroy(r->storages);
  g_hash_table_destroy(r->objects);
  g_hash_table_destroy(r->scopes);
  g_ptr_array_free(r->scope_list, TRUE);
  g_ptr_array_free(r->scope_store, TRUE);
  g_hash_table_destroy(r->scope_groups);
  g_ptr_array_free(r->scope_group_list, TRUE);
  g_hash_table_destroy(r->thread_scopes);
  g_hash_table_destroy(r->nodes);
  g_hash_table_destroy(r->names);
  g_hash_table_destroy(r->modules);
  g_ptr_array_free(r->changed_groups, TRUE);
  pool_unref(r->pool);
  g_free(r);
}

const char *gs_replay_intern(gs_replay *r, const char *text) {
  return g_string_chunk_insert_const(r->pool->chunk, text ? text : "");
}

/* How the event being applied resolves string ids. */
typedef struct strings {
  gs_replay_string_fn lookup;
  gpointer data;
} strings;

static const char *lookup_string(const strings *st, guint32 id) {
  const char *text = id ? st->lookup(id, st->data) : "";
  return text ? text : "";
}

static const char *intern_id(gs_replay *r, const strings *st, guint32 id) {
  return gs_replay_intern(r, lookup_string(st, id));
}

static void set_u64_name(GHashTable *table, guint64 id, const char *name) {
  guint64 *key = g_new(guint64, 1);
  *key = id;
  g_hash_table_replace(table, key, (gpointer)name);
}

const char *gs_replay_tensor_name(const gs_replay *r, guint64 tensor) {
  return g_hash_table_lookup(r->names, &tensor);
}

/* ---- memory -------------------------------------------------------------------------- */

static void memory_add(gs_replay *r, const gs_trace_event *e, gint64 delta) {
  if (!delta)
    return;
  r->live_bytes = (guint64)((gint64)r->live_bytes + delta);
  r->memory_changed = TRUE;
  if (r->live_bytes > r->peak_bytes) {
    r->peak_bytes = r->live_bytes;
    r->peak_seq = e->seq;
    r->peak_ns = e->time_ns;
  }
}

/* storage lets go of b. If it owned b and others still share it (a clone outliving the
 * tensor it was cloned from, as every accumulated gradient does), the bytes pass to one of
 * them: they are alive, and someone's. */
static void buffer_drop(gs_replay *r, const gs_trace_event *e, buffer *b, guint64 storage) {
  if (!b)
    return;
  if (--b->refs == 0) {
    memory_add(r, e, -(gint64)b->nbytes);
    g_free(b);
    return;
  }
  if (b->owner != storage)
    return;
  b->owner = 0;
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->storages);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const storage_entry *heir = value;
    if (heir->bytes == b && heir->id != storage && (!b->owner || heir->id < b->owner))
      b->owner = heir->id; /* the oldest sharer, so any copy of the state picks the same */
  }
  r->heir_storage = b->owner;
}

static buffer *buffer_new(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  buffer *b = g_new(buffer, 1);
  b->nbytes = nbytes;
  b->refs = 1;
  b->owner = e->storage;
  memory_add(r, e, (gint64)nbytes);
  return b;
}

static storage_entry *storage_get(gs_replay *r, guint64 id) {
  return g_hash_table_lookup(r->storages, &id);
}

static storage_entry *storage_add(gs_replay *r, const gs_trace_event *e, guint64 nbytes) {
  storage_entry *old = storage_get(r, e->storage);
  if (old) { /* a reused id without a free: the old one is gone now */
    buffer_drop(r, e, old->bytes, old->id);
    old->bytes = NULL;
    g_hash_table_remove(r->storages, &e->storage);
    r->live_storages--;
  }
  storage_entry *s = g_new0(storage_entry, 1);
  s->id = e->storage;
  s->nbytes = nbytes;
  g_hash_table_insert(r->storages, &s->id, s);
  r->live_storages++;
  return s;
}

static void on_storage(gs_replay *r, const gs_trace_event *e) {
  storage_entry *s;
  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
    s = storage_add(r, e, e->nbytes);
    s->bytes = buffer_new(r, e, e->nbytes);
    break;
  case GS_TRACE_STORAGE_SHARE: {
    storage_entry *src = storage_get(r, e->source);
    s = storage_add(r, e, e->nbytes);
    if (src && src->bytes) {
      s->bytes = src->bytes;
      s->bytes->refs++;
    } else { /* its source is unknown to us: count the bytes as its own */
      s->bytes = buffer_new(r, e, e->nbytes);
    }
    break;
  }
  case GS_TRACE_STORAGE_MATERIALISE:
    s = storage_get(r, e->storage);
    if (!s)
      s = storage_add(r, e, e->nbytes);
    buffer_drop(r, e, s->bytes, s->id);
    s->nbytes = e->nbytes;
    s->bytes = buffer_new(r, e, e->nbytes);
    break;
  case GS_TRACE_STORAGE_FREE:
    s = storage_get(r, e->storage);
    if (s) {
      buffer_drop(r, e, s->bytes, s->id);
      s->bytes = NULL;
      g_hash_table_remove(r->storages, &e->storage);
      r->live_storages--;
    }
    break;
  default:
    break;
  }
}

/* ---- ownership (as engine/scope/ownership.c) ------------------------------------------ */

static gs_replay_scope *scope_get(gs_replay *r, guint64 id) {
  if (!id)
    return NULL;
  gs_replay_scope **slot = &r->scope_cache[(id ^ (id >> 32)) & 15];
  if (*slot && (*slot)->id == id)
    return *slot;
  gs_replay_scope *s = g_hash_table_lookup(r->scopes, &id);
  if (s)
    *slot = s;
  return s;
}

static gs_replay_scope_name *group_of(gs_replay *r, const gs_replay_scope *s) {
  return r->scope_group_list->pdata[s->group];
}

/* The open scope that accounts for o, if any. An ended scope's record is final (the engine
 * disposes what a scope owns before it records its end), so nothing is counted against it. */
static gs_replay_scope *owning_scope(gs_replay *r, const gs_replay_object *o) {
  gs_replay_scope *s = o->holder == GS_TRACE_HELD_BY_SCOPE ? scope_get(r, o->owner) : NULL;
  return s && !s->ended ? s : NULL;
}

static void group_bytes_changed(gs_replay *r, gs_replay_scope_name *g) {
  if (!g->changed) {
    g->changed = TRUE;
    g_ptr_array_add(r->changed_groups, g);
  }
}

static void unlink_from_scope(gs_replay *r, gs_replay_object *o) {
  gs_replay_scope *s = owning_scope(r, o);
  if (!s)
    return;
  gs_replay_scope_name *g = group_of(r, s);
  s->alive--;
  s->bytes -= MIN(s->bytes, o->bytes);
  g->bytes -= MIN(g->bytes, o->bytes);
  if (o->bytes)
    group_bytes_changed(r, g);
}

static void link_into_scope(gs_replay *r, gs_replay_object *o) {
  gs_replay_scope *s = owning_scope(r, o);
  if (!s)
    return;
  gs_replay_scope_name *g = group_of(r, s);
  s->alive++;
  s->bytes += o->bytes;
  s->peak_bytes = MAX(s->peak_bytes, s->bytes);
  g->bytes += o->bytes;
  g->peak_bytes = MAX(g->peak_bytes, s->peak_bytes);
  if (o->bytes)
    group_bytes_changed(r, g);
}

static void set_holder(gs_replay *r, gs_replay_object *o, guint32 holder, guint64 owner) {
  if (o->holder == holder && o->owner == owner)
    return;
  unlink_from_scope(r, o);
  o->holder = holder;
  o->owner = owner;
  link_into_scope(r, o);
}

static gs_replay_object *object_get(gs_replay *r, guint64 id) {
  return id ? g_hash_table_lookup(r->objects, &id) : NULL;
}

/* A new object counts as created in the scope that owns it from the start. */
static void object_add(gs_replay *r, gs_replay_object *o) {
  gs_replay_object *old = object_get(r, o->id);
  gboolean replaced = old != NULL;
  if (old) { /* recorded twice (or a reused id without a dispose): replace, count once */
    unlink_from_scope(r, old);
    g_hash_table_remove(r->objects, &o->id);
  }
  g_hash_table_insert(r->objects, &o->id, o);
  gs_replay_scope *s = owning_scope(r, o);
  if (s && !replaced) {
    s->created++;
    group_of(r, s)->created++;
    o->scope_at_create = s->name;
  }
  link_into_scope(r, o);
}

static guint64 storage_bytes(gs_replay *r, guint64 storage) {
  storage_entry *s = storage_get(r, storage);
  return s ? s->nbytes : 0;
}

static void on_tensor_create(gs_replay *r, const gs_trace_event *e, const strings *reader) {
  gs_replay_object *o = g_new0(gs_replay_object, 1);
  o->id = e->tensor;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->storage = e->storage;
  o->bytes = e->origin == 0 ? storage_bytes(r, e->storage) : 0;
  o->op = intern_id(r, reader, e->op);
  o->holder = e->holder;
  o->owner = e->owner;
  o->dtype = e->dtype;
  o->origin = e->origin;
  o->source = e->source;
  o->requires_grad = e->requires_grad;
  o->ndim = CLAMP(e->ndim, 0, GS_MAX_DIMS);
  memcpy(o->shape, e->shape, sizeof o->shape);
  object_add(r, o);
}

static guint64 current_scope(gs_replay *r, guint32 thread) {
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(thread));
  return open && open->len ? g_array_index(open, guint64, open->len - 1) : 0;
}

/* A composite has no owner field: the engine gives it to the thread's current scope, and any
 * later change arrives as an owner_change. */
static void on_composite_create(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = g_new0(gs_replay_object, 1);
  o->id = e->object;
  o->composite = TRUE;
  o->object_kind = e->object_kind;
  o->thread = e->thread;
  o->create_seq = e->seq;
  o->op = gs_replay_intern(r, "composite");
  for (guint32 i = 0; i < e->n_parts; i++) {
    gs_replay_object *part = object_get(r, e->parts[i]);
    if (part)
      o->bytes += storage_bytes(r, part->storage);
  }
  guint64 scope = current_scope(r, e->thread);
  o->holder = scope ? GS_TRACE_HELD_BY_SCOPE : GS_TRACE_HELD_BY_CALLER;
  o->owner = scope;
  object_add(r, o);
}

static void on_dispose(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = object_get(r, e->tensor);
  if (!o)
    return;
  gs_replay_scope *s = owning_scope(r, o);
  if (s) {
    s->disposed++;
    group_of(r, s)->disposed++;
  }
  unlink_from_scope(r, o);
  g_hash_table_remove(r->objects, &e->tensor);
}

/* A parameter takes over a tensor's handle: the same object under a new id, counted once. */
static void on_tensor_move(gs_replay *r, const gs_trace_event *e) {
  gs_replay_object *o = object_get(r, e->tensor);
  if (o && e->target && e->target != e->tensor) {
    g_hash_table_steal(r->objects, &e->tensor);
    gs_replay_object *existing = object_get(r, e->target);
    if (existing) { /* the new handle was recorded too: keep that record, drop this one */
      unlink_from_scope(r, o);
      g_free(o);
    } else {
      o->id = e->target;
      o->parameter = TRUE;
      g_hash_table_insert(r->objects, &o->id, o);
    }
  }
  const char *name = gs_replay_tensor_name(r, e->tensor);
  if (name && !gs_replay_tensor_name(r, e->target))
    set_u64_name(r->names, e->target, name);
  /* The leaf's AccumulateGrad node follows the handle, as in engine/core/handles.c, and so
   * do the saved tensors that named the old handle. */
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_node *n = value;
    if (n->tensor == e->tensor)
      n->tensor = e->target;
    for (guint i = 0; i < n->n_saved; i++)
      if (n->saved[i] == e->tensor)
        n->saved[i] = e->target;
  }
}

/* ---- scopes --------------------------------------------------------------------------- */

static void on_scope_begin(gs_replay *r, const gs_trace_event *e, const strings *reader) {
  gs_replay_scope *s = g_new0(gs_replay_scope, 1);
  s->id = e->scope;
  s->outer = e->outer;
  s->thread = e->thread;
  s->name = intern_id(r, reader, e->name);
  s->begin_seq = e->seq;
  s->begin_ns = e->time_ns;
  gs_replay_scope_name *g = g_hash_table_lookup(r->scope_groups, s->name);
  if (!g) {
    g = g_new0(gs_replay_scope_name, 1);
    g->name = s->name;
    g_hash_table_insert(r->scope_groups, (gpointer)s->name, g);
    g_ptr_array_add(r->scope_group_list, g);
  }
  g->instances++;
  for (s->group = 0; r->scope_group_list->pdata[s->group] != g; s->group++)
    ;
  g_ptr_array_add(r->scope_list, s);
  g_ptr_array_add(r->scope_store, s);
  g_hash_table_replace(r->scopes, &s->id, s);
  r->scope_cache[(s->id ^ (s->id >> 32)) & 15] = s;
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(e->thread));
  if (!open) {
    open = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_insert(r->thread_scopes, GUINT_TO_POINTER(e->thread), open);
  }
  g_array_append_val(open, s->id);
}

static void on_scope_end(gs_replay *r, const gs_trace_event *e) {
  gs_replay_scope *s = scope_get(r, e->scope);
  if (!s || s->ended)
    return;
  s->ended = TRUE;
  s->end_seq = e->seq;
  s->end_ns = e->time_ns;
  group_of(r, s)->total_ns += e->time_ns >= s->begin_ns ? e->time_ns - s->begin_ns : 0;
  /* A scope in the middle of the stack may end: remove it wherever it is. */
  GArray *open = g_hash_table_lookup(r->thread_scopes, GUINT_TO_POINTER(s->thread));
  for (guint i = open ? open->len : 0; i-- > 0;)
    if (g_array_index(open, guint64, i) == s->id) {
      g_array_remove_index(open, i);
      break;
    }
}

/* ---- graph ---------------------------------------------------------------------------- */

/* A live node's saved tensors keep them (and their storages) alive for backward. */
static void node_saved_refs(gs_replay *r, gs_replay_node *n, int delta) {
  for (guint i = 0; i < n->n_saved; i++) {
    gs_replay_object *o = object_get(r, n->saved[i]);
    if (o && (delta > 0 || o->saved_refs > 0))
      o->saved_refs += delta;
    storage_entry *st = n->saved_storages[i] ? storage_get(r, n->saved_storages[i]) : NULL;
    if (st && (delta > 0 || st->saved_refs > 0))
      st->saved_refs += delta;
  }
}

static void on_node_create(gs_replay *r, const gs_trace_event *e, const strings *reader) {
  gs_replay_node *n = g_new0(gs_replay_node, 1);
  n->id = e->node;
  n->kind = intern_id(r, reader, e->name);
  n->tensor = e->tensor;
  n->create_seq = e->seq;
  n->n_inputs = e->n_inputs;
  n->n_saved = e->n_saved;
  n->inputs = g_memdup2(e->inputs, sizeof(guint64) * e->n_inputs);
  n->saved = g_memdup2(e->saved, sizeof(guint64) * e->n_saved);
  n->saved_storages = g_new0(guint64, e->n_saved);
  for (guint i = 0; i < e->n_saved; i++) {
    gs_replay_object *o = object_get(r, e->saved[i]);
    n->saved_storages[i] = o ? o->storage : 0;
  }
  gs_replay_node *old = g_hash_table_lookup(r->nodes, &n->id);
  if (old && !old->saved_freed)
    node_saved_refs(r, old, -1);
  g_hash_table_replace(r->nodes, &n->id, n);
  node_saved_refs(r, n, +1);
}

static void on_node_free_saved(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = g_hash_table_lookup(r->nodes, &e->node);
  if (n && !n->saved_freed) {
    n->saved_freed = TRUE;
    node_saved_refs(r, n, -1);
  }
}

static void on_node_release(gs_replay *r, const gs_trace_event *e) {
  gs_replay_node *n = g_hash_table_lookup(r->nodes, &e->node);
  if (n && !n->saved_freed)
    node_saved_refs(r, n, -1);
  g_hash_table_remove(r->nodes, &e->node);
}

/* A parameter's name as its module knows it, unless user code named the tensor itself. */
static void on_module_parameter(gs_replay *r, const gs_trace_event *e, const strings *reader) {
  gs_replay_object *o = object_get(r, e->tensor);
  if (o)
    o->parameter = TRUE;
  if (gs_replay_tensor_name(r, e->tensor))
    return;
  const char *type = g_hash_table_lookup(r->modules, &e->module);
  const char *param = lookup_string(reader, e->name);
  g_autofree char *full = type && *type ? g_strdup_printf("%s.%s", type, param) : g_strdup(param);
  set_u64_name(r->names, e->tensor, gs_replay_intern(r, full));
}

static const char *reader_string(guint32 id, gpointer reader) {
  return gs_trace_reader_string(reader, id);
}

void gs_replay_apply(gs_replay *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  gs_replay_apply_with(r, e, reader_string, (gpointer)reader);
}

void gs_replay_apply_with(gs_replay *r, const gs_trace_event *e, gs_replay_string_fn lookup,
                          gpointer user_data) {
  const strings st = {lookup, user_data}, *reader = &st;
  for (guint i = 0; i < r->changed_groups->len; i++)
    ((gs_replay_scope_name *)r->changed_groups->pdata[i])->changed = FALSE;
  g_ptr_array_set_size(r->changed_groups, 0);
  r->memory_changed = FALSE;
  r->heir_storage = 0;
  r->events++;
  r->last_seq = MAX(r->last_seq, e->seq);
  r->last_ns = MAX(r->last_ns, e->time_ns);

  switch (e->kind) {
  case GS_TRACE_STORAGE_ALLOC:
  case GS_TRACE_STORAGE_SHARE:
  case GS_TRACE_STORAGE_MATERIALISE:
  case GS_TRACE_STORAGE_FREE: on_storage(r, e); break;
  case GS_TRACE_TENSOR_CREATE: on_tensor_create(r, e, reader); break;
  case GS_TRACE_TENSOR_DISPOSE: on_dispose(r, e); break;
  case GS_TRACE_TENSOR_MOVE: on_tensor_move(r, e); break;
  case GS_TRACE_TENSOR_NAME:
    set_u64_name(r->names, e->tensor, intern_id(r, reader, e->name));
    break;
  case GS_TRACE_OWNER_CHANGE: {
    gs_replay_object *o = object_get(r, e->object);
    if (o)
      set_holder(r, o, e->holder, e->owner);
    break;
  }
  case GS_TRACE_SCOPE_BEGIN: on_scope_begin(r, e, reader); break;
  case GS_TRACE_SCOPE_END: on_scope_end(r, e); break;
  case GS_TRACE_NODE_CREATE: on_node_create(r, e, reader); break;
  case GS_TRACE_NODE_FREE_SAVED: on_node_free_saved(r, e); break;
  case GS_TRACE_NODE_RELEASE: on_node_release(r, e); break;
  case GS_TRACE_MODULE_CREATE:
    set_u64_name(r->modules, e->module, intern_id(r, reader, e->name));
    break;
  case GS_TRACE_MODULE_PARAMETER: on_module_parameter(r, e, reader); break;
  case GS_TRACE_COMPOSITE_CREATE: on_composite_create(r, e); break;
  default: break;
  }
}

static gint by_create_seq(gconstpointer a, gconstpointer b) {
  const gs_replay_object *x = *(gs_replay_object *const *)a, *y = *(gs_replay_object *const *)b;
  return x->create_seq < y->create_seq ? -1 : x->create_seq > y->create_seq;
}

GPtrArray *gs_replay_alive_objects(const gs_replay *r) {
  GPtrArray *all = g_ptr_array_new();
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->objects);
  while (g_hash_table_iter_next(&it, NULL, &value))
    g_ptr_array_add(all, value);
  g_ptr_array_sort(all, by_create_seq);
  return all;
}

/* ---- copies and storage queries --------------------------------------------------------- */

static gs_replay_scope_name *copy_group(const gs_replay_scope_name *g) {
  return g_memdup2(g, sizeof *g);
}

static void copy_scope(gs_replay *r, const gs_replay_scope *from) {
  gs_replay_scope *s = g_memdup2(from, sizeof *from);
  g_ptr_array_add(r->scope_list, s);
  g_ptr_array_add(r->scope_store, s);
  g_hash_table_insert(r->scopes, &s->id, s);
}

static gint by_begin_seq(gconstpointer a, gconstpointer b) {
  const gs_replay_scope *x = *(gs_replay_scope *const *)a, *y = *(gs_replay_scope *const *)b;
  return x->begin_seq < y->begin_seq ? -1 : x->begin_seq > y->begin_seq;
}

gs_replay *gs_replay_copy(const gs_replay *src, gboolean open_scopes_only) {
  gs_replay *r = gs_replay_new();
  pool_unref(r->pool);
  r->pool = pool_ref(src->pool);
  r->events = src->events;
  r->last_seq = src->last_seq;
  r->last_ns = src->last_ns;
  r->live_storages = src->live_storages;
  r->live_bytes = src->live_bytes;
  r->peak_bytes = src->peak_bytes;
  r->peak_seq = src->peak_seq;
  r->peak_ns = src->peak_ns;
  r->memory_changed = src->memory_changed;

  /* Storages share buffers copy-on-write: copy each buffer once and re-point its sharers. */
  g_autoptr(GHashTable) buffers = g_hash_table_new(g_direct_hash, g_direct_equal);
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, src->storages);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const storage_entry *from = value;
    storage_entry *to = g_memdup2(from, sizeof *from);
    if (from->bytes) {
      to->bytes = g_hash_table_lookup(buffers, from->bytes);
      if (!to->bytes) {
        to->bytes = g_memdup2(from->bytes, sizeof *from->bytes);
        to->bytes->refs = 0;
        g_hash_table_insert(buffers, from->bytes, to->bytes);
      }
      to->bytes->refs++;
    }
    g_hash_table_insert(r->storages, &to->id, to);
  }
  g_hash_table_iter_init(&it, src->objects);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    gs_replay_object *o = g_memdup2(value, sizeof(gs_replay_object));
    g_hash_table_insert(r->objects, &o->id, o);
  }
  for (guint i = 0; i < src->scope_group_list->len; i++) {
    gs_replay_scope_name *g = copy_group(src->scope_group_list->pdata[i]);
    g->changed = FALSE;
    g_ptr_array_add(r->scope_group_list, g);
    g_hash_table_insert(r->scope_groups, (gpointer)g->name, g);
  }
  if (open_scopes_only) {
    /* The open scopes are the threads' stacks: a few, however many scopes the log had. Kept
     * in begin order, as scope_list is. */
    g_autoptr(GPtrArray) open = g_ptr_array_new();
    GHashTableIter st;
    gpointer stack;
    g_hash_table_iter_init(&st, src->thread_scopes);
    while (g_hash_table_iter_next(&st, NULL, &stack))
      for (guint i = 0; i < ((GArray *)stack)->len; i++) {
        guint64 id = g_array_index((GArray *)stack, guint64, i);
        gpointer s = g_hash_table_lookup(src->scopes, &id);
        if (s)
          g_ptr_array_add(open, s);
      }
    g_ptr_array_sort(open, by_begin_seq);
    for (guint i = 0; i < open->len; i++)
      copy_scope(r, open->pdata[i]);
  } else {
    for (guint i = 0; i < src->scope_list->len; i++)
      copy_scope(r, src->scope_list->pdata[i]);
  }
  g_hash_table_iter_init(&it, src->thread_scopes);
  gpointer key;
  while (g_hash_table_iter_next(&it, &key, &value)) {
    GArray *from = value, *to = g_array_sized_new(FALSE, FALSE, sizeof(guint64), from->len);
    g_array_append_vals(to, from->data, from->len);
    g_hash_table_insert(r->thread_scopes, key, to);
  }
  g_hash_table_iter_init(&it, src->nodes);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const gs_replay_node *from = value;
    gs_replay_node *n = g_memdup2(from, sizeof *from);
    n->inputs = g_memdup2(from->inputs, sizeof(guint64) * from->n_inputs);
    n->saved = g_memdup2(from->saved, sizeof(guint64) * from->n_saved);
    n->saved_storages = g_memdup2(from->saved_storages, sizeof(guint64) * from->n_saved);
    g_hash_table_insert(r->nodes, &n->id, n);
  }
  g_hash_table_iter_init(&it, src->names);
  while (g_hash_table_iter_next(&it, &key, &value))
    set_u64_name(r->names, *(guint64 *)key, value);
  g_hash_table_iter_init(&it, src->modules);
  while (g_hash_table_iter_next(&it, &key, &value))
    set_u64_name(r->modules, *(guint64 *)key, value);
  return r;
}

static guint64 own_bytes(const storage_entry *s) {
  return s->bytes && s->bytes->owner == s->id ? s->bytes->nbytes : 0;
}

void gs_replay_foreach_storage(const gs_replay *r, gs_replay_storage_fn fn, gpointer user_data) {
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, r->storages);
  while (g_hash_table_iter_next(&it, NULL, &value)) {
    const storage_entry *s = value;
    fn(s->id, own_bytes(s), s->saved_refs, user_data);
  }
}

gboolean gs_replay_storage(const gs_replay *r, guint64 id, guint64 *bytes, guint *saved_refs) {
  const storage_entry *s = g_hash_table_lookup(r->storages, &id);
  if (!s)
    return FALSE;
  if (bytes)
    *bytes = own_bytes(s);
  if (saved_refs)
    *saved_refs = s->saved_refs;
  return TRUE;
}

gs_replay_tally *gs_replay_storage_tally(gs_replay *r, guint64 id) {
  storage_entry *s = g_hash_table_lookup(r->storages, &id);
  return s ? &s->tally : NULL;
}

gs_replay_tally *gs_replay_storage_full(gs_replay *r, guint64 id, guint64 *bytes,
                                        guint *saved_refs) {
  storage_entry *s = g_hash_table_lookup(r->storages, &id);
  if (!s)
    return NULL;
  *bytes = own_bytes(s);
  *saved_refs = s->saved_refs;
  return &s->tally;
}

/* GLib's tables leave a tombstone per removal and only rebuild when tombstones nearly fill
 * them; with tensors created and disposed every step, lookups then probe long runs of them.
 * A fresh table holds only the alive records (a few hundred), so rebuilding is cheap. */
static GHashTable *rebuilt(GHashTable *old, GDestroyNotify free_value) {
  GHashTable *fresh = id_table(free_value);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, old);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    g_hash_table_insert(fresh, key, value);
    g_hash_table_iter_steal(&it);
  }
  g_hash_table_destroy(old);
  return fresh;
}

void gs_replay_compact(gs_replay *r) {
  r->storages = rebuilt(r->storages, storage_entry_free);
  r->objects = rebuilt(r->objects, g_free);
  r->nodes = rebuilt(r->nodes, node_free);
}

void gs_replay_tally_storage(const gs_replay_tally *t, guint64 *bytes, guint *saved_refs) {
  const storage_entry *s =
      (const storage_entry *)((const char *)t - G_STRUCT_OFFSET(storage_entry, tally));
  *bytes = own_bytes(s);
  *saved_refs = s->saved_refs;
}
