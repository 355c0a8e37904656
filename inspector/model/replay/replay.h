/* replay.h: the state of a traced program, rebuilt by applying its events in order.
 *
 * What is alive after the last applied event: storages and the bytes they hold (with the
 * peak), tensors and composites with their owners, scopes with the engine's own accounting
 * (objects created and disposed while owned, bytes owned now and at most), graph nodes with
 * their inputs and saved tensors, the names user code gave to tensors, module trees (so a
 * parameter is named by its dotted path, "fc2.bias") and optimizers with their parameters (so
 * the trace model can file their state tensors as optimizer state). `gradscope stats`,
 * `export-dot` and `chrome-trace` are each a thin reading of this state; the inspector's model
 * builds its indices from the same transitions.
 *
 * Scope bytes follow the engine (engine/scope/ownership.c): a tensor counts its storage's
 * bytes if it made that storage (origin "new"), nothing if it is a view, clone or detach; a
 * composite counts its parts' storages. Memory counts buffers: a copy-on-write clone shares its
 * source's bytes (free) until it materialises its own. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

#include "id-table.h"
#include "replay-warnings.h"

G_BEGIN_DECLS

/* Every scope instance with the same name, summed: how `stats` and counter tracks group. */
typedef struct gs_replay_scope_name {
  const char *name;
  guint64 instances;
  guint64 created;    /* objects created in instances of it */
  guint64 disposed;   /* objects disposed while an instance owned them */
  guint64 peak_bytes; /* the largest peak of any one instance */
  guint64 bytes;      /* owned now by its instances, summed */
  guint64 total_ns;   /* time inside ended instances */
  gboolean changed;   /* bytes changed in the last applied event */
  guint index;        /* its place in scope_group_list (a scope's group) */
} gs_replay_scope_name;

/* Once ended, a scope record never changes again: the trace model shares ended records between
 * the states it rebuilds instead of copying them. */
typedef struct gs_replay_scope {
  guint64 id, outer;
  guint32 thread;
  const char *name;
  guint group;         /* index in scope_group_list */
  guint64 begin_seq, begin_ns, end_seq, end_ns;
  guint32 site;        /* where the program began it (a site id, 0 if not recorded) */
  gboolean ended;
  guint64 created, disposed, alive, bytes, peak_bytes;
  /* Objects that came to it by an ownership move from elsewhere (an inner scope's
   * move_to_outer, an attach, a move between scopes), and objects that left it alive (to an
   * outer scope, the caller, a module...): created + moved_in = disposed + moved_out + alive. */
  guint64 moved_in, moved_out;
} gs_replay_scope;

/* A tensor or a composite (PackedSequence...): the objects scopes own. */
typedef struct gs_replay_object {
  guint64 id;
  gboolean composite;
  guint32 thread;
  guint64 create_seq;
  guint32 site;        /* where the program made it (a site id, 0 if not recorded) */
  guint64 storage;
  guint64 bytes;       /* what it adds to its owning scope's bytes */
  const char *op;      /* the op that made it ("" if unknown) */
  const char *scope_at_create; /* name of the scope that owned it at creation, or NULL */
  guint32 holder;      /* gs_trace_holder */
  guint64 owner;
  guint32 dtype, origin;
  guint64 source;
  gboolean requires_grad;
  int ndim;
  gint64 shape[GS_MAX_DIMS];
  gint64 strides[GS_MAX_DIMS]; /* in elements, as the engine's gs_strides */
  gint64 offset;               /* in elements into its storage */
  gboolean before_recording;   /* re-created by a snapshot: made before the log began, at an
                                * event the log does not know (create_seq is the snapshot's) */
  guint32 object_kind; /* composites: gs_object_kind */
  gboolean parameter;  /* a parameter's handle (moved into one, or registered by a module) */
  guint saved_refs;    /* runnable graph nodes (see gs_replay_node) that saved it and have not
                        * freed their saved tensors */
  guint dataset_refs;  /* live datasets that read it (composites of kind dataset) */
  guint64 grad_fn;     /* the node that made it (its latest, after in-place writes), or 0 */
  guint tally_category; /* the trace model's bookkeeping (head state only): 0, or its memory
                         * category + 1 as counted in its storage's tally */
} gs_replay_object;

/* What the trace model counts per storage as the head state advances (its memory categories,
 * model-memory.c): kept with the storage so following a log needs no table of its own.
 * Copied with the state, meaningful in the model's head state only. */
typedef struct gs_replay_tally {
  guint32 counts[12];  /* alive objects on the storage, per category (model-memory.c) */
  guint32 category;    /* the category its bytes are counted under now */
  guint32 epoch;       /* the event that last took its bytes out of the totals */
  guint64 bytes;       /* the bytes counted */
} gs_replay_tally;

/* A graph node is runnable while backward can still reach it: while a tensor it made is alive
 * and names it as its grad_fn, or a runnable node takes it as an input. A node does not keep
 * itself runnable through its own output when it saved that output (softmax, exp, sigmoid
 * save their result): that output's bytes are its holder's, not backward's, once no other
 * node leads to it. Only runnable nodes count their saved tensors as saved for backward. */
typedef struct gs_replay_node {
  guint64 id;
  const char *kind;    /* "MulBackward", "AccumulateGrad"... */
  guint64 tensor;      /* the output it made, or (AccumulateGrad) the leaf */
  guint64 create_seq;
  guint n_inputs, n_saved;
  guint64 *inputs;     /* input nodes, 0 for an input needing no gradient */
  guint64 *saved;      /* saved tensor ids */
  guint64 *saved_storages; /* the storage each saved tensor viewed when saved (0: unknown) */
  gboolean saved_freed;
  /* Saved-tensor hooks: how many of its saved tensors went to a pack hook (saved_pack), and
   * how many times an unpack hook gave one back (saved_unpack: each backward through it, each
   * access to a saved tensor). */
  guint n_packed, n_unpacked;
  guint holders;        /* runnable nodes that take it as an input, + 1 if output_holds */
  gboolean output_holds; /* its output is alive, names it, and is not one of its saved */
  gboolean runnable;     /* holders > 0, as last applied (its inputs hold it back) */
} gs_replay_node;

typedef struct gs_replay_pool gs_replay_pool;
/* Alive objects and storages kept apart from a state, shared between the states that read them
 * (replay-records.h: a trace model's keyframes, and the cursor a seek rebuilt from one). */
typedef struct gs_replay_records gs_replay_records;

/* A module: its type and its place in a tree. */
typedef struct gs_replay_module {
  guint64 id;
  const char *type;
  guint64 parent;     /* the first module holding it as a child (whose path names its
                         parameters, as named_parameters()), or 0 */
  const char *name;   /* its name in that parent ("fc2"), or NULL */
  guint n_parents;    /* how many child slots name it (more than 1: a shared module) */
  GArray *links;      /* gs_replay_module_link: every slot naming it, oldest first (or NULL) */
  GArray *slots;      /* gs_replay_module_link: its own child slots (parent = the child id) */
} gs_replay_module;

/* One child slot: a parent (or, in a parent's slots, the child) and the slot's name. */
typedef struct gs_replay_module_link {
  guint64 id;
  const char *name;
} gs_replay_module_link;

typedef struct gs_replay_optimizer {
  guint64 id;
  const char *type;   /* "SGD", "Adam", "AdamW" */
  GArray *params;     /* guint64 tensor ids of the parameters it updates */
} gs_replay_optimizer;

typedef struct gs_replay {
  gs_replay_pool *pool; /* interned copies of every string the state keeps; copies share it */
  guint64 events;
  guint64 last_seq, last_ns;

  /* private: the alive objects and storages are base's (NULL: none) as this state's own
   * tables amend them. A table holds the records this state made or changed (a base record is
   * copied into it before its first change) and GS_REPLAY_GONE for a base record no longer
   * alive. A seek's cursor reads its keyframe's records this way: it starts with empty tables
   * over them, so a jump copies none of 200,000 tensors. The head's base is NULL. */
  gs_replay_records *base;
  gs_id_table *object_table; /* id -> gs_replay_object* (owned) or GS_REPLAY_GONE */
  guint n_objects;           /* alive ones, base's and own */

  /* memory */
  gs_id_table *storages; /* id -> storage record or GS_REPLAY_GONE (private, as object_table) */
  guint64 live_storages, live_bytes;
  /* Of live_bytes, those outside the engine's allocator (format 1.4's memory not 0): external
   * memory (a blob, a DLPack producer's, a mapped file) and shared memory (made here or
   * received from another process). */
  guint64 outside_bytes;
  guint64 peak_bytes, peak_seq, peak_ns;

  /* Alive objects: gs_replay_object_find, gs_replay_n_objects, gs_replay_objects_next. */
  GHashTable *scopes;   /* id -> gs_replay_scope*, every scope seen (ended ones too) */
  GPtrArray *scope_list;       /* gs_replay_scope*, in begin order (does not own them) */
  GPtrArray *scope_store;      /* the scope records this state allocated (owns them) */
  GHashTable *scope_groups;    /* interned name -> gs_replay_scope_name* */
  GPtrArray *scope_group_list; /* gs_replay_scope_name*, in order of first begin */
  GHashTable *thread_scopes;   /* thread -> GArray of open scope ids, innermost last */
  /* thread -> GPtrArray of the names (interned) of its open named ranges, innermost last: the
   * ranges the thread's events fall inside (replay-ranges.c) */
  GHashTable *thread_ranges;

  GHashTable *nodes;    /* id -> gs_replay_node*, alive ones */
  GHashTable *names;    /* tensor id -> name given by user code (interned) */
  GHashTable *modules;  /* module id -> gs_replay_module* */
  GHashTable *parameters; /* tensor id -> its module and name in it (private) */
  GHashTable *optimizers; /* optimizer id -> gs_replay_optimizer* */
  GHashTable *datasets;   /* dataset id -> GArray of the guint64 tensor ids it reads */

  gboolean in_snapshot; /* between a snapshot_begin and its snapshot_end */

  /* What did not add up (replay-warnings.h): every one counted, the first ones kept (a copy
   * keeps the count and starts its own list empty: the model reads its head state's). */
  guint64 n_warnings;
  GArray *warnings; /* gs_replay_warning */

  /* What the last gs_replay_apply changed, for writers that emit only changes. */
  gboolean memory_changed;
  GPtrArray *changed_groups; /* gs_replay_scope_name* whose bytes changed */
  guint64 heir_storage;      /* a storage that took over a shared buffer's bytes (or 0) */
  /* Objects whose saved_refs or dataset_refs changed, storages whose saved_refs did (guint64
   * ids, repeats possible): one event can make a whole graph unreachable. */
  GArray *recounted_objects, *recounted_storages;

  /* private: nodes by id again, for the lookups of every event (the GHashTable above stays
   * what readers iterate and look up; this owns nothing) */
  gs_id_table *node_index;
  /* private: object records disposed of, reused by the next creations (a training step
   * creates and disposes dozens: the allocator was a tenth of indexing a log) */
  gs_replay_object **spare_objects;
  guint n_spare_objects;
  /* private: the same for storage records and their buffers (replay-storages.c) */
  gpointer *spare_storages, *spare_buffers;
  guint n_spare_storages, n_spare_buffers;

  /* private: with changes tracked (gs_replay_track_changes), the ids of every object and
   * storage whose record may have changed since (made, disposed, or written: a superset, as
   * the replay marks every record it looks up to apply an event). The trace model's keyframes
   * and seeks copy only these instead of every alive record. NULL: not tracked. */
  gs_id_table *changed_objects, *changed_storages;

  /* private: the scopes last looked up (most objects belong to the current step's scope, and
   * the table of every scope seen grows to tens of thousands) */
  gs_replay_scope *scope_cache[16];
  /* private: the interned text last seen per string id slot (most events name an op or a
   * node kind: comparing with the last one is cheaper than hashing into the pool) */
  const char *intern_cache[64];
  /* private: the object and the storage record the last event applied made or took out
   * (NULL: gone), kept for gs_replay_object_after and gs_replay_storage_tally_after until the
   * next apply. The trace model's memory series asks for the event's records right after
   * applying it, and looking each up again was a good part of indexing a log (issue 32).
   * Only a state without a base keeps them (its records are its own to write). */
  gboolean memo_object_set, memo_storage_set;
  guint64 memo_object_id, memo_storage_id;
  gs_replay_object *memo_object;
  gs_replay_tally *memo_tally;
} gs_replay;

/* Starts tracking which objects' and storages' records change (forgetting what was tracked
 * before), or stops (on FALSE). */
void gs_replay_track_changes(gs_replay *replay, gboolean on);
/* Says that an alive object's or storage's record changed (or may have) outside the replay:
 * the trace model's own bookkeeping in the head state (tally_category, gs_replay_tally). */
static inline void gs_replay_mark_object(gs_replay *replay, guint64 id) {
  if (replay->changed_objects)
    gs_id_table_replace(replay->changed_objects, id, GUINT_TO_POINTER(1));
}
static inline void gs_replay_mark_storage(gs_replay *replay, guint64 id) {
  if (replay->changed_storages)
    gs_id_table_replace(replay->changed_storages, id, GUINT_TO_POINTER(1));
}

/* Hashing for tables keyed by a pointer to a 64-bit id (handles, storages, nodes). */
guint gs_id_hash(gconstpointer id);
gboolean gs_id_equal(gconstpointer a, gconstpointer b);

gs_replay *gs_replay_new(void);
void gs_replay_free(gs_replay *replay);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_replay, gs_replay_free)

/* A deep copy that shares src's string pool. With open_scopes_only, ended scopes are left
 * out (scope_list and scopes hold copies of the open ones only): the trace model's keyframes,
 * which borrow ended scope records from its head state instead (they never change). */
gs_replay *gs_replay_copy(const gs_replay *src, gboolean open_scopes_only);
/* The same without alive objects and storages, which the caller keeps apart
 * (replay-records.h): everything else (names, scopes, nodes, modules...) is copied. */
gs_replay *gs_replay_copy_without_records(const gs_replay *src, gboolean open_scopes_only);

/* Rebuilds the table of alive nodes (a GHashTable; objects and storages are in id tables,
 * which need none), which long runs of creations and disposals slow down; for a state applied
 * for millions of events. */
void gs_replay_compact(gs_replay *replay);

/* Applies one event; reader resolves its string ids. */
void gs_replay_apply(gs_replay *replay, const gs_trace_event *event,
                     const gs_trace_reader *reader);
/* Resolves a string id ("" when undefined). */
typedef const char *(*gs_replay_string_fn)(guint32 id, gpointer user_data);
/* Applies one event; lookup resolves its string ids (a log decoded again out of order). */
void gs_replay_apply_with(gs_replay *replay, const gs_trace_event *event,
                          gs_replay_string_fn lookup, gpointer user_data);

/* One alive storage: its id, the bytes it owns (of the buffer it allocated or materialised;
 * 0 while it shares another storage's bytes copy-on-write, and 0 once the storage that made a
 * shared buffer is gone: those bytes then belong to no storage), and how many live nodes'
 * saved tensors viewed it. */
typedef void (*gs_replay_storage_fn)(guint64 id, guint64 own_bytes, guint saved_refs,
                                     gpointer user_data);
void gs_replay_foreach_storage(const gs_replay *replay, gs_replay_storage_fn fn,
                               gpointer user_data);
/* The tally kept with an alive storage, or NULL; _full also gives what gs_replay_storage does
 * (one lookup for both). */
gs_replay_tally *gs_replay_storage_tally(gs_replay *replay, guint64 id);
gs_replay_tally *gs_replay_storage_full(gs_replay *replay, guint64 id, guint64 *own_bytes,
                                        guint *saved_refs);
/* What gs_replay_storage says of the storage that keeps tally (no lookup). */
void gs_replay_tally_storage(const gs_replay_tally *tally, guint64 *own_bytes, guint *saved_refs);
/* The same for one storage id; FALSE if it is not alive. */
gboolean gs_replay_storage(const gs_replay *replay, guint64 id, guint64 *own_bytes,
                           guint *saved_refs);
/* Where an alive storage's bytes come from: format 1.4's memory (a gs_memory_origin; 0, the
 * engine's allocator, in older logs) and, for bytes received from another process, its pid.
 * FALSE if the storage is not alive. */
gboolean gs_replay_storage_memory(const gs_replay *replay, guint64 id, guint *memory,
                                  guint *peer);

/* A storage's version counter as the log left it; FALSE if the storage is not alive or its
 * counter is not known (a storage re-created by a snapshot before any write since). */
gboolean gs_replay_storage_version(const gs_replay *replay, guint64 id, guint64 *version);
/* Whether an alive storage's bytes are shared copy-on-write with another storage (a clone's
 * and its source's, until either writes), and with which: the storage that made the bytes, or
 * for that one the oldest other sharer. 0 when not shared (or not alive). */
guint64 gs_replay_storage_shares_bytes_with(const gs_replay *replay, guint64 id);
/* A tensor's element count (the product of its shape). */
static inline guint64 gs_replay_object_numel(const gs_replay_object *o) {
  guint64 n = 1;
  for (int d = 0; d < o->ndim; d++)
    n *= (guint64)MAX(o->shape[d], 0);
  return n;
}
/* The values the log says a tensor (an alive object of replay) holds now, in logical order:
 * how many of its leading elements are known (at most max, written to out). Writes through
 * any alias of its bytes are followed: a write makes what it wrote unknown until the log
 * records the writer's new values, and a copy-on-write share reads its source's. */
guint gs_replay_tensor_values(const gs_replay *replay, const gs_replay_object *tensor,
                              double *out, guint max);

/* The name user code gave tensor id with tensor_name or, failing that, its name as a module's
 * parameter: the dotted path from the root of its module tree ("encoder.layers.0.weight"), or
 * "Type.name" ("Linear.weight") for a module that is no one's child. NULL if it has neither. */
const char *gs_replay_tensor_name(const gs_replay *replay, guint64 tensor);
/* Copies text into the replay's string storage (stable until the replay is freed). */
const char *gs_replay_intern(gs_replay *replay, const char *text);
/* A module (NULL if the log never named it) and an optimizer (NULL if unknown). What an
 * object is for and who holds it, in words, is the trace model's to say
 * (gs_trace_model_category, gs_trace_model_owner_label): it reads these. */
const gs_replay_module *gs_replay_module_get(const gs_replay *replay, guint64 module);
const gs_replay_optimizer *gs_replay_optimizer_get(const gs_replay *replay, guint64 optimizer);
/* Whether tensor was registered as a parameter of module or of a module below it in its tree
 * (whose dotted name therefore starts with module's place). */
gboolean gs_replay_parameter_under(const gs_replay *replay, guint64 tensor, guint64 module);
/* Appends (guint64) every tensor registered as a parameter of module or below it. */
void gs_replay_subtree_parameters(const gs_replay *replay, guint64 module, GArray *out);
/* What a state's own table holds for a base record taken out (see gs_replay's base). */
extern const char gs_replay_gone_mark;
#define GS_REPLAY_GONE ((gpointer)&gs_replay_gone_mark)
/* A base's object by id, or NULL (replay-records.c). */
gs_replay_object *gs_replay_base_object(const gs_replay_records *base, guint64 id);
/* An alive object by id, id 0 too (a log may name one so), or NULL: its own record if the
 * state has one, else its base's. Readers only: the replay writes through replay_object_w. */
static inline gs_replay_object *gs_replay_object_find(const gs_replay *replay, guint64 id) {
  gpointer own = gs_id_table_lookup(replay->object_table, id);
  if (own)
    return own == GS_REPLAY_GONE ? NULL : (gs_replay_object *)own;
  return replay->base ? gs_replay_base_object(replay->base, id) : NULL;
}
/* An alive object by id (NULL if none, and for id 0, which names none). */
static inline gs_replay_object *gs_replay_object_get(const gs_replay *replay, guint64 id) {
  return id ? gs_replay_object_find(replay, id) : NULL;
}
/* As gs_replay_object_get and gs_replay_storage_tally, right after an apply and before any
 * other change to the state: the records that apply made or took out come without a lookup. */
static inline gs_replay_object *gs_replay_object_after(const gs_replay *replay, guint64 id) {
  if (id && replay->memo_object_set && id == replay->memo_object_id)
    return replay->memo_object;
  return gs_replay_object_get(replay, id);
}
static inline gs_replay_tally *gs_replay_storage_tally_after(gs_replay *replay, guint64 id) {
  if (replay->memo_storage_set && id == replay->memo_storage_id) {
    gs_replay_mark_storage(replay, id); /* as gs_replay_storage_tally: the caller writes it */
    return replay->memo_tally;
  }
  return gs_replay_storage_tally(replay, id);
}
/* How many objects are alive. */
static inline guint gs_replay_n_objects(const gs_replay *replay) { return replay->n_objects; }
/* Iterates the alive objects (base's the state did not change, then its own), in no order:
 *   gs_replay_iter it = {0};
 *   for (gs_replay_object *o; gs_replay_objects_next(replay, &it, &o);) ...
 * No changes to the state meanwhile. */
typedef struct gs_replay_iter {
  guint bucket, at;
  gboolean own; /* past base's records, into the state's own table */
} gs_replay_iter;
gboolean gs_replay_objects_next(const gs_replay *replay, gs_replay_iter *it,
                                gs_replay_object **object);
/* An alive graph node by id (NULL if none): one probe of the replay's own index, cheaper than
 * looking up the nodes table. */
static inline gs_replay_node *gs_replay_node_get(const gs_replay *replay, guint64 id) {
  return (gs_replay_node *)gs_id_table_lookup(replay->node_index, id);
}
/* How many named ranges thread has open, and the name of open range i (0: the outermost), or
 * NULL (replay-ranges.c). */
guint gs_replay_ranges_open(const gs_replay *replay, guint32 thread);
const char *gs_replay_range_name(const gs_replay *replay, guint32 thread, guint i);
/* The alive tensors viewing storage (views, detaches and what they were made from: every
 * tensor an in-place write into it shows in), but except, by creation; guint64 ids (unref). */
GArray *gs_replay_tensors_on_storage(const gs_replay *replay, guint64 storage, guint64 except);
/* The tensor ids a live dataset reads (NULL for an id that names none). */
const GArray *gs_replay_dataset_parts(const gs_replay *replay, guint64 dataset);
/* Alive objects sorted by creation (caller frees the array, not the objects). */
GPtrArray *gs_replay_alive_objects(const gs_replay *replay);

G_END_DECLS
