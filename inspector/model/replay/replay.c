/* replay.c: the traced program's state, one event at a time (see replay.h). This file keeps
 * the state's lifetime (new, free, copy, compact) and its strings, and hands each event to
 * the file that keeps the records it changes (replay-private.h lists them). Each event kind
 * is one small transition there; ownership transitions mirror engine/scope/ownership.c so the
 * scope numbers equal the engine's own gs_scope_info. */
#include "replay-private.h"

#include <string.h>

#include "replay-records.h"

gboolean gs_id_equal(gconstpointer a, gconstpointer b) {
  return *(const guint64 *)a == *(const guint64 *)b;
}

/* Handles reuse slots (the low 32 bits) with new generations, so both halves must count:
 * g_int64_hash keeps only the low half, which put every instance of a scope in one bucket.
 * And ids come from the log: a fixed multiplier let a log pick ids that all share one hash. */
guint gs_id_hash(gconstpointer a) {
  return (guint)(gs_id_mix(*(const guint64 *)a) >> 32); /* keyed: see id-table.h */
}

/* Each record starts with its 64-bit id, which serves as its own key. */
GHashTable *replay_id_table(GDestroyNotify free_value) {
  return g_hash_table_new_full(gs_id_hash, gs_id_equal, NULL, free_value);
}

/* ---- strings -------------------------------------------------------------------------- */

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

const char *gs_replay_intern(gs_replay *r, const char *text) {
  return g_string_chunk_insert_const(r->pool->chunk, text ? text : "");
}

static const char *lookup_string(const replay_strings *st, guint32 id) {
  const char *text = id ? st->lookup(id, st->data) : "";
  return text ? text : "";
}

/* A string id may be redefined, so the cache is checked by text, not trusted by id. */
const char *replay_intern_id(gs_replay *r, const replay_strings *st, guint32 id) {
  const char *text = lookup_string(st, id);
  const char **slot = &r->intern_cache[id & 63];
  if (*slot && strcmp(*slot, text) == 0)
    return *slot;
  return *slot = gs_replay_intern(r, text);
}

void replay_set_u64_name(GHashTable *table, guint64 id, const char *name) {
  guint64 *key = g_new(guint64, 1);
  *key = id;
  g_hash_table_replace(table, key, (gpointer)name);
}

/* ---- lifetime ------------------------------------------------------------------------- */

static void array_free(gpointer p) { g_array_unref(p); }

gs_replay *gs_replay_new(void) {
  gs_replay *r = g_new0(gs_replay, 1);
  r->pool = g_new0(gs_replay_pool, 1);
  r->pool->chunk = g_string_chunk_new(4096);
  r->pool->refs = 1;
  r->storages = gs_id_table_new(replay_storage_free);
  r->object_table = gs_id_table_new(NULL); /* freed by gs_replay_free (GS_REPLAY_GONE too) */
  r->scopes = replay_id_table(NULL); /* owned by scope_store */
  r->scope_list = g_ptr_array_new();
  r->scope_store = g_ptr_array_new_with_free_func(g_free);
  r->scope_groups = g_hash_table_new(g_direct_hash, g_direct_equal);
  r->scope_group_list = g_ptr_array_new_with_free_func(g_free);
  r->thread_scopes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, array_free);
  r->thread_ranges = replay_thread_ranges_new();
  r->nodes = replay_id_table(replay_node_free);
  r->node_index = gs_id_table_new(NULL);
  r->names = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, NULL);
  r->modules = replay_id_table(replay_module_free);
  r->parameters = replay_id_table(g_free);
  r->optimizers = replay_id_table(replay_optimizer_free);
  r->datasets = g_hash_table_new_full(gs_id_hash, gs_id_equal, g_free, array_free);
  r->changed_groups = g_ptr_array_new();
  r->recounted_objects = g_array_new(FALSE, FALSE, sizeof(guint64));
  r->recounted_storages = g_array_new(FALSE, FALSE, sizeof(guint64));
  r->warnings = g_array_new(FALSE, FALSE, sizeof(gs_replay_warning));
  return r;
}

void gs_replay_free(gs_replay *r) {
  if (!r)
    return;
  gs_id_table_free(r->storages);
  gpointer value;
  for (guint at = 0; gs_id_table_next(r->object_table, &at, &value);)
    if (value != GS_REPLAY_GONE)
      g_free(value);
  gs_id_table_free(r->object_table);
  gs_replay_records_free(r->base);
  for (guint i = 0; i < r->n_spare_objects; i++)
    g_free(r->spare_objects[i]);
  g_free(r->spare_objects);
  for (guint i = 0; i < r->n_spare_storages; i++)
    g_free(r->spare_storages[i]);
  g_free(r->spare_storages);
  for (guint i = 0; i < r->n_spare_buffers; i++)
    g_free(r->spare_buffers[i]);
  g_free(r->spare_buffers);
  g_hash_table_destroy(r->scopes);
  g_ptr_array_free(r->scope_list, TRUE);
  g_ptr_array_free(r->scope_store, TRUE);
  g_hash_table_destroy(r->scope_groups);
  g_ptr_array_free(r->scope_group_list, TRUE);
  g_hash_table_destroy(r->thread_scopes);
  g_hash_table_destroy(r->thread_ranges);
  g_hash_table_destroy(r->nodes);
  gs_id_table_free(r->node_index);
  g_hash_table_destroy(r->names);
  g_hash_table_destroy(r->modules);
  g_hash_table_destroy(r->parameters);
  g_hash_table_destroy(r->optimizers);
  g_hash_table_destroy(r->datasets);
  g_ptr_array_free(r->changed_groups, TRUE);
  g_array_free(r->recounted_objects, TRUE);
  g_array_free(r->recounted_storages, TRUE);
  g_array_free(r->warnings, TRUE);
  gs_id_table_free(r->changed_objects);
  gs_id_table_free(r->changed_storages);
  pool_unref(r->pool);
  g_free(r);
}

static gs_replay *copy(const gs_replay *src, gboolean open_scopes_only, gboolean records) {
  gs_replay *r = gs_replay_new();
  pool_unref(r->pool);
  r->pool = pool_ref(src->pool);
  r->events = src->events;
  r->last_seq = src->last_seq;
  r->last_ns = src->last_ns;
  r->live_storages = src->live_storages;
  r->live_bytes = src->live_bytes;
  r->outside_bytes = src->outside_bytes;
  r->peak_bytes = src->peak_bytes;
  r->peak_seq = src->peak_seq;
  r->peak_ns = src->peak_ns;
  r->memory_changed = src->memory_changed;
  r->n_warnings = src->n_warnings;
  r->in_snapshot = src->in_snapshot;
  /* The records' strings are the shared pool's: each file copies its records as they are. */
  if (records)
    replay_copy_storages(r, src);
  replay_copy_objects(r, src, records);
  replay_copy_scopes(r, src, open_scopes_only);
  replay_copy_nodes(r, src);
  replay_copy_ranges(r, src);
  replay_copy_modules(r, src);
  return r;
}

gs_replay *gs_replay_copy(const gs_replay *src, gboolean open_scopes_only) {
  return copy(src, open_scopes_only, TRUE);
}

gs_replay *gs_replay_copy_without_records(const gs_replay *src, gboolean open_scopes_only) {
  return copy(src, open_scopes_only, FALSE);
}

void gs_replay_track_changes(gs_replay *r, gboolean on) {
  g_clear_pointer(&r->changed_objects, gs_id_table_free);
  g_clear_pointer(&r->changed_storages, gs_id_table_free);
  if (on) {
    r->changed_objects = gs_id_table_new(NULL);
    r->changed_storages = gs_id_table_new(NULL);
  }
}

/* GLib's tables leave a tombstone per removal and only rebuild when tombstones nearly fill
 * them; with tensors created and disposed every step, lookups then probe long runs of them.
 * A fresh table holds only the alive records (a few hundred), so rebuilding is cheap. */
static GHashTable *rebuilt(GHashTable *old, GDestroyNotify free_value) {
  GHashTable *fresh = replay_id_table(free_value);
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

void gs_replay_compact(gs_replay *r) { r->nodes = rebuilt(r->nodes, replay_node_free); }

/* ---- applying events ------------------------------------------------------------------ */

static const char *reader_string(guint32 id, gpointer reader) {
  return gs_trace_reader_string(reader, id);
}

void gs_replay_apply(gs_replay *r, const gs_trace_event *e, const gs_trace_reader *reader) {
  gs_replay_apply_with(r, e, reader_string, (gpointer)reader);
}

/* One event's replay: the state, the event and how to read its strings. */
typedef struct {
  gs_replay *r;
  const gs_trace_event *e;
  const replay_strings *st;
} replay_step;

/* What each kind does to the state, one function per kind. The events between a snapshot's two
 * markers are ordinary creations, applied as such, of objects made before the log began. */
static void apply_storage_alloc(const replay_step *s) { replay_on_storage(s->r, s->e); }
static void apply_storage_share(const replay_step *s) { replay_on_storage(s->r, s->e); }
static void apply_storage_materialise(const replay_step *s) { replay_on_storage(s->r, s->e); }
static void apply_storage_free(const replay_step *s) { replay_on_storage(s->r, s->e); }
static void apply_tensor_create(const replay_step *s) {
  replay_on_tensor_create(s->r, s->e, s->st);
}
static void apply_tensor_dispose(const replay_step *s) { replay_on_tensor_dispose(s->r, s->e); }
static void apply_tensor_move(const replay_step *s) { replay_on_tensor_move(s->r, s->e); }
static void apply_tensor_name(const replay_step *s) { replay_on_tensor_name(s->r, s->e, s->st); }
static void apply_owner_change(const replay_step *s) { replay_on_owner_change(s->r, s->e); }
static void apply_scope_begin(const replay_step *s) { replay_on_scope_begin(s->r, s->e, s->st); }
static void apply_scope_end(const replay_step *s) { replay_on_scope_end(s->r, s->e); }
static void apply_node_create(const replay_step *s) { replay_on_node_create(s->r, s->e, s->st); }
static void apply_node_free_saved(const replay_step *s) { replay_on_node_free_saved(s->r, s->e); }
static void apply_node_release(const replay_step *s) { replay_on_node_release(s->r, s->e); }
static void apply_module_create(const replay_step *s) {
  replay_on_module_create(s->r, s->e, s->st);
}
static void apply_module_child(const replay_step *s) { replay_on_module_child(s->r, s->e, s->st); }
static void apply_composite_create(const replay_step *s) { replay_on_composite_create(s->r, s->e); }
static void apply_inplace_write(const replay_step *s) { replay_on_inplace_write(s->r, s->e); }
static void apply_values(const replay_step *s) { replay_on_values(s->r, s->e); }

static void apply_module_parameter(const replay_step *s) {
  replay_on_module_parameter(s->r, s->e, s->st);
}

static void apply_optimizer_create(const replay_step *s) {
  replay_on_optimizer_create(s->r, s->e, s->st);
}

static void apply_requires_grad(const replay_step *s) {
  gs_replay_object *o = replay_object_w(s->r, s->e->tensor);
  if (o)
    o->requires_grad = s->e->requires_grad;
}

static void apply_snapshot_begin(const replay_step *s) { s->r->in_snapshot = TRUE; }
static void apply_snapshot_end(const replay_step *s) { s->r->in_snapshot = FALSE; }

/* These change no state: the tables (string, site, binary), a backward pass's begin, end and
 * accumulations, marks and errors. */
static void no_change(const replay_step *s) { (void)s; }
static void apply_string(const replay_step *s) { no_change(s); }
static void apply_site(const replay_step *s) { no_change(s); }
static void apply_binary(const replay_step *s) { no_change(s); }
static void apply_backward_begin(const replay_step *s) { no_change(s); }
static void apply_backward_end(const replay_step *s) { no_change(s); }
static void apply_grad_accumulate(const replay_step *s) { no_change(s); }
static void apply_mark(const replay_step *s) { no_change(s); }
static void apply_error(const replay_step *s) { no_change(s); }
/* A distributed run's events: the rank and the collectives change no tensor's state. */
static void apply_dist_init(const replay_step *s) { no_change(s); }
static void apply_bucket_ready(const replay_step *s) { no_change(s); }
static void apply_collective_begin(const replay_step *s) { no_change(s); }
static void apply_collective_end(const replay_step *s) { no_change(s); }
static void apply_wait_begin(const replay_step *s) { no_change(s); }
static void apply_wait_end(const replay_step *s) { no_change(s); }
/* A user's named range (torch.profiler.record_function): the thread's open ranges. */
static void apply_range_begin(const replay_step *s) { replay_on_range_begin(s->r, s->e, s->st); }
static void apply_range_end(const replay_step *s) { replay_on_range_end(s->r, s->e, s->st); }
static void apply_tensor_set_data(const replay_step *s) { replay_on_tensor_set_data(s->r, s->e); }
/* What a node holds is what its node_create said (a pack hook's tensors are events of their
 * own); the node counts its packs and unpacks. */
static void apply_saved_pack(const replay_step *s) { replay_on_saved_hook(s->r, s->e); }
static void apply_saved_unpack(const replay_step *s) { replay_on_saved_hook(s->r, s->e); }

/* From the kinds list: a new kind without its apply_ function does not compile. */
typedef void (*kind_replay)(const replay_step *s);
#define KIND_REPLAY(KIND, kind, value, flags) [GS_TRACE_##KIND] = apply_##kind,
static const kind_replay replays[GS_TRACE_KIND_COUNT] = {GS_TRACE_KINDS(KIND_REPLAY)};
#undef KIND_REPLAY

void gs_replay_apply_with(gs_replay *r, const gs_trace_event *e, gs_replay_string_fn lookup,
                          gpointer user_data) {
  const replay_strings st = {lookup, user_data};
  for (guint i = 0; i < r->changed_groups->len; i++)
    ((gs_replay_scope_name *)r->changed_groups->pdata[i])->changed = FALSE;
  if (r->changed_groups->len) /* most events change no group: skip the call */
    g_ptr_array_set_size(r->changed_groups, 0);
  r->memory_changed = FALSE;
  r->heir_storage = 0;
  r->memo_object_set = r->memo_storage_set = FALSE;
  if (r->recounted_objects->len) /* (as changed_groups: most events recount nothing) */
    g_array_set_size(r->recounted_objects, 0);
  if (r->recounted_storages->len)
    g_array_set_size(r->recounted_storages, 0);
  r->events++;
  r->last_seq = MAX(r->last_seq, e->seq);
  r->last_ns = MAX(r->last_ns, e->time_ns);

  const replay_step step = {r, e, &st};
  if (e->kind > 0 && e->kind < GS_TRACE_KIND_COUNT) /* a newer kind changes nothing we know */
    replays[e->kind](&step);
}
