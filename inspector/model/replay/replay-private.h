/* replay-private.h: what the replay's files share, and no reader of the state needs (replay.h
 * is theirs). One file per kind of record, each applying the events that change it:
 *   replay.c          the state's lifetime (new, free, copy, compact), strings, and the
 *                     dispatch of each event to the file that applies it
 *   replay-storages.c storages and the buffers they share copy-on-write: live and peak bytes
 *   replay-objects.c  tensors and composites: creation, disposal, moves, user names, and
 *                     the tensors datasets read
 *   replay-scopes.c   scopes and what they own (as engine/scope/ownership.c counts it)
 *   replay-graph.c    graph nodes and the tensors they save
 *   replay-modules.c  module trees, parameters' places and optimizers */
#pragma once

#include "replay.h"

/* ---- replay.c ------------------------------------------------------------------------- */

/* Interned strings, shared by a state and its copies (a model's keyframes). */
struct gs_replay_pool {
  GStringChunk *chunk;
  gint refs;
};

/* How the event being applied resolves string ids. */
typedef struct replay_strings {
  gs_replay_string_fn lookup;
  gpointer data;
} replay_strings;

/* The interned text of string id (through the per-slot cache). */
const char *replay_intern_id(gs_replay *r, const replay_strings *st, guint32 id);
/* A GHashTable keyed by the 64-bit id each record starts with. */
GHashTable *replay_id_table(GDestroyNotify free_value);
/* Sets a tensor id's name in table (a copy of the id is the key). */
void replay_set_u64_name(GHashTable *table, guint64 id, const char *name);

/* Counts an inconsistency met at event seq (replay-warnings.c). */
void replay_warn(gs_replay *r, guint64 seq, gs_replay_warning_kind kind, guint64 id);

/* An object's or a storage's count of what holds it changed in this event (replay.h). */
static inline void replay_recounted(GArray *ids, guint64 id) { g_array_append_val(ids, id); }

/* ---- replay-storages.c ---------------------------------------------------------------- */

/* A storage points at the bytes it reads: its own buffer, or (copy-on-write) its source's
 * until it materialises. Bytes are alive while any storage points at them. */
typedef struct replay_buffer {
  guint64 nbytes;
  guint refs;
  guint64 owner; /* the storage that allocated or materialised it; 0 once that one is gone */
  guint memory;  /* where the bytes come from (format 1.4's memory: gs_memory_origin) */
  guint peer;    /* received bytes: the sending process */
  struct replay_values *values; /* what the log says its elements hold (replay-values.c), or
                                 * NULL while it says nothing */
} replay_buffer;

/* A storage record: its own size, and the bytes it reads now. Keyed by its id. */
typedef struct replay_storage {
  guint64 id;
  guint64 nbytes;
  replay_buffer *bytes;
  guint saved_refs; /* live nodes' saved tensors that view it */
  /* Its version counter, as the last in-place write through it left it (views and detaches
   * share it). A storage re-created by a snapshot had a counter the log does not give. */
  guint64 version;
  gboolean version_unknown;
  gs_replay_tally tally;
} replay_storage;

/* A base's storage by id, or NULL (replay-records.c). */
replay_storage *replay_base_storage(const gs_replay_records *base, guint64 id);
/* An alive storage (NULL if none), to read only (a base's is shared). */
static inline replay_storage *replay_storage_get(const gs_replay *r, guint64 id) {
  gpointer own = gs_id_table_lookup(r->storages, id);
  if (own)
    return own == GS_REPLAY_GONE ? NULL : (replay_storage *)own;
  return r->base ? replay_base_storage(r->base, id) : NULL;
}
/* Notes the records an event made or took out (NULL: gone) for gs_replay_object_after and
 * gs_replay_storage_tally_after; a state with a base notes none. */
static inline void replay_memo_object(gs_replay *r, guint64 id, gs_replay_object *o) {
  r->memo_object_set = !r->base;
  r->memo_object_id = id;
  r->memo_object = o;
}
static inline void replay_memo_storage(gs_replay *r, guint64 id, replay_storage *s) {
  r->memo_storage_set = !r->base;
  r->memo_storage_id = id;
  r->memo_tally = s ? &s->tally : NULL;
}
/* The state's own copy of a base record, made now (replay-records.c; NULL if base has none). */
replay_storage *replay_storage_own(gs_replay *r, guint64 id);
gs_replay_object *replay_object_own(gs_replay *r, guint64 id);
/* Records looked up to apply an event (which may write them): the state's own (a base record
 * is copied first), and marked as changed when changes are tracked (gs_replay_track_changes).
 * Every lookup the replay writes through is one of these, so the marks cover every change and
 * no write reaches a base record that other states share. */
static inline replay_storage *replay_storage_w(gs_replay *r, guint64 id) {
  gs_replay_mark_storage(r, id);
  gpointer own = gs_id_table_lookup(r->storages, id);
  if (own)
    return own == GS_REPLAY_GONE ? NULL : (replay_storage *)own;
  return r->base ? replay_storage_own(r, id) : NULL;
}
static inline gs_replay_object *replay_object_w(gs_replay *r, guint64 id) {
  gs_replay_mark_object(r, id);
  if (!id) /* (as gs_replay_object_get) */
    return NULL;
  gpointer own = gs_id_table_lookup(r->object_table, id);
  if (own)
    return own == GS_REPLAY_GONE ? NULL : (gs_replay_object *)own;
  return r->base ? replay_object_own(r, id) : NULL;
}
/* Iterates the alive storages as gs_replay_objects_next does objects. */
gboolean replay_storages_next(const gs_replay *r, gs_replay_iter *it, replay_storage **s);
/* A storage's own size (0 if it is not alive): what a tensor that made it adds to its scope. */
static inline guint64 replay_storage_nbytes(const gs_replay *r, guint64 id) {
  const replay_storage *s = replay_storage_get(r, id);
  return s ? s->nbytes : 0;
}
void replay_storage_free(gpointer storage); /* (nothing for GS_REPLAY_GONE) */
/* storage_alloc, storage_share, storage_materialise and storage_free. */
void replay_on_storage(gs_replay *r, const gs_trace_event *e);
void replay_copy_storages(gs_replay *r, const gs_replay *src);

/* ---- replay-values.c ------------------------------------------------------------------ */

/* Element values the log recorded, by their place in the buffer (in elements of the dtype of
 * the tensor that recorded them). */
typedef struct replay_values replay_values;
void replay_values_free(replay_values *v);
replay_values *replay_values_copy(const replay_values *v);
/* A values event: the first elements of a tensor, in logical order, placed into its buffer. */
void replay_on_values(gs_replay *r, const gs_trace_event *e);
/* An in-place write: the storage's version, and every value the writer's elements held is
 * unknown until the values event that follows it. */
void replay_on_inplace_write(gs_replay *r, const gs_trace_event *e);

/* ---- replay-objects.c ----------------------------------------------------------------- */

void replay_on_tensor_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_composite_create(gs_replay *r, const gs_trace_event *e);
void replay_on_tensor_dispose(gs_replay *r, const gs_trace_event *e);
void replay_on_tensor_move(gs_replay *r, const gs_trace_event *e);
void replay_on_tensor_set_data(gs_replay *r, const gs_trace_event *e);
void replay_on_tensor_name(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
/* Objects (unless not objects), the names user code gave tensors, and what datasets read. */
void replay_copy_objects(gs_replay *r, const gs_replay *src, gboolean objects);
/* A zeroed object record (a recycled one if the state has one), for the state's own table. */
gs_replay_object *replay_object_new(gs_replay *r);

/* ---- replay-scopes.c ------------------------------------------------------------------ */

/* The open scope that accounts for o, if any. */
gs_replay_scope *replay_owning_scope(gs_replay *r, const gs_replay_object *o);
/* Counts o as created in s (and s's name group), where o first belonged. */
void replay_scope_count_created(gs_replay *r, gs_replay_scope *s, gs_replay_object *o);
/* Counts an object leaving from alive and arriving in to (either may be NULL; nothing if
 * they are the same scope). */
void replay_scope_count_moved(gs_replay_scope *from, gs_replay_scope *to);
/* Counts o as disposed by the scope that owns it, if one does. */
void replay_scope_count_disposed(gs_replay *r, const gs_replay_object *o);
/* Adds o to, or takes it out of, its owning scope's alive objects and bytes. */
void replay_scope_link(gs_replay *r, const gs_replay_object *o);
void replay_scope_unlink(gs_replay *r, const gs_replay_object *o);
/* The innermost open scope on thread, or 0. */
guint64 replay_current_scope(gs_replay *r, guint32 thread);
void replay_on_owner_change(gs_replay *r, const gs_trace_event *e);
void replay_on_scope_begin(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_scope_end(gs_replay *r, const gs_trace_event *e);
/* Scope name groups, scopes (all, or the open ones only) and the threads' open stacks. */
void replay_copy_scopes(gs_replay *r, const gs_replay *src, gboolean open_scopes_only);

/* ---- replay-graph.c ------------------------------------------------------------------- */

void replay_node_free(gpointer node);
void replay_on_node_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_node_free_saved(gs_replay *r, const gs_trace_event *e);
void replay_on_node_release(gs_replay *r, const gs_trace_event *e);
/* A tensor is going away: the node it made is no longer held by it. */
void replay_nodes_on_dispose(gs_replay *r, const gs_replay_object *o);
/* A tensor's handle moved: nodes that named the old one (as output or saved) name the new. */
void replay_nodes_follow_move(gs_replay *r, guint64 from, guint64 to);
void replay_copy_nodes(gs_replay *r, const gs_replay *src);
/* saved_pack and saved_unpack: the node's counts. */
void replay_on_saved_hook(gs_replay *r, const gs_trace_event *e);

/* ---- replay-ranges.c ------------------------------------------------------------------ */

GHashTable *replay_thread_ranges_new(void);
void replay_on_range_begin(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_range_end(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_copy_ranges(gs_replay *r, const gs_replay *src);

/* ---- replay-modules.c ----------------------------------------------------------------- */

void replay_optimizer_free(gpointer optimizer);
/* A parameter's dotted name from the root of its module tree, or NULL if tensor is none. */
const char *replay_parameter_path(const gs_replay *r, guint64 tensor);
void replay_on_module_create(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_module_parameter(gs_replay *r, const gs_trace_event *e,
                                const replay_strings *st);
void replay_on_module_child(gs_replay *r, const gs_trace_event *e, const replay_strings *st);
void replay_on_optimizer_create(gs_replay *r, const gs_trace_event *e,
                                const replay_strings *st);
/* Modules, parameters' places and optimizers. */
void replay_copy_modules(gs_replay *r, const gs_replay *src);
void replay_module_free(gpointer p);
