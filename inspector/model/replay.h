/* replay.h: the state of a traced program, rebuilt by applying its events in order.
 *
 * What is alive after the last applied event: storages and the bytes they hold (with the
 * peak), tensors and composites with their owners, scopes with the engine's own accounting
 * (objects created and disposed while owned, bytes owned now and at most), graph nodes with
 * their inputs and saved tensors, the names user code gave to tensors, module trees (so a
 * parameter is named by its dotted path, "fc2.bias") and optimizers (so their state tensors
 * read as "held by optimizer Adam #0" and fall in the optimizer-state category). `gradscope stats`,
 * `export-dot` and `chrome-trace` are each a thin reading of this state; the inspector's model
 * builds its indices from the same transitions.
 *
 * Scope bytes follow the engine (engine/scope/ownership.c): a tensor counts its storage's
 * bytes if it made that storage (origin "new"), nothing if it is a view, clone or detach; a
 * composite counts its parts' storages. Memory counts buffers: a copy-on-write clone shares its
 * source's bytes (free) until it materialises its own. */
#pragma once

#include <glib.h>
#include <gradscope/trace.h>

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
} gs_replay_scope_name;

typedef struct gs_replay_scope {
  guint64 id, outer;
  guint32 thread;
  const char *name;
  gs_replay_scope_name *group;
  guint64 begin_seq, begin_ns, end_seq, end_ns;
  gboolean ended;
  guint64 created, disposed, alive, bytes, peak_bytes;
} gs_replay_scope;

/* A tensor or a composite (PackedSequence...): the objects scopes own. */
typedef struct gs_replay_object {
  guint64 id;
  gboolean composite;
  guint32 object_kind; /* gs_object_kind of a composite (packed sequence, batch) */
  guint32 thread;
  guint64 create_seq;
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
} gs_replay_object;

typedef struct gs_replay_node {
  guint64 id;
  const char *kind;    /* "MulBackward", "AccumulateGrad"... */
  guint64 tensor;      /* the output it made, or (AccumulateGrad) the leaf */
  guint64 create_seq;
  guint n_inputs, n_saved;
  guint64 *inputs;     /* input nodes, 0 for an input needing no gradient */
  guint64 *saved;      /* saved tensor ids */
  gboolean saved_freed;
} gs_replay_node;

/* A module: its type and its place in a tree. */
typedef struct gs_replay_module {
  guint64 id;
  const char *type;
  guint64 parent;     /* the module holding it as a child, or 0 */
  const char *name;   /* its name in that parent ("fc2"), or NULL */
} gs_replay_module;

typedef struct gs_replay_optimizer {
  guint64 id;
  const char *type;   /* "SGD", "Adam", "AdamW" */
  GArray *params;     /* guint64 tensor ids of the parameters it updates */
} gs_replay_optimizer;

/* What an object is for, from who holds it: the categories of the memory timeline that the
 * log can tell apart by ownership alone. */
typedef enum gs_replay_category {
  GS_REPLAY_CATEGORY_OTHER = 0,   /* activations and temporaries, or unknown */
  GS_REPLAY_CATEGORY_PARAMETER,   /* held by a module */
  GS_REPLAY_CATEGORY_GRADIENT,    /* held by its tensor */
  GS_REPLAY_CATEGORY_OPTIMIZER_STATE,
  GS_REPLAY_CATEGORY_BATCH_DATA,  /* a DataLoader batch, or one of its tensors */
} gs_replay_category;

typedef struct gs_replay {
  GStringChunk *strings; /* interned copies of every string the state keeps */
  guint64 events;
  guint64 last_seq, last_ns;

  /* memory */
  GHashTable *storages; /* id -> storage record (private) */
  guint64 live_storages, live_bytes;
  guint64 peak_bytes, peak_seq, peak_ns;

  GHashTable *objects;  /* id -> gs_replay_object*, alive ones */
  GHashTable *scopes;   /* id -> gs_replay_scope*, every scope seen (ended ones too) */
  GPtrArray *scope_list;       /* gs_replay_scope*, in begin order */
  GHashTable *scope_groups;    /* interned name -> gs_replay_scope_name* */
  GPtrArray *scope_group_list; /* gs_replay_scope_name*, in order of first begin */
  GHashTable *thread_scopes;   /* thread -> GArray of open scope ids, innermost last */

  GHashTable *nodes;    /* id -> gs_replay_node*, alive ones */
  GHashTable *names;    /* tensor id -> name given by user code (interned) */
  GHashTable *modules;  /* module id -> gs_replay_module* */
  GHashTable *parameters; /* tensor id -> its module and name in it (private) */
  GHashTable *optimizers; /* optimizer id -> gs_replay_optimizer* */

  /* What the last gs_replay_apply changed, for writers that emit only changes. */
  gboolean memory_changed;
  GPtrArray *changed_groups; /* gs_replay_scope_name* whose bytes changed */
} gs_replay;

gs_replay *gs_replay_new(void);
void gs_replay_free(gs_replay *replay);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_replay, gs_replay_free)

/* Applies one event; reader resolves its string ids. */
void gs_replay_apply(gs_replay *replay, const gs_trace_event *event,
                     const gs_trace_reader *reader);

/* The name user code gave tensor id with tensor_name or, failing that, its name as a module's
 * parameter: the dotted path from the root of its module tree ("encoder.layers.0.weight"), or
 * "Type.name" ("Linear.weight") for a module that is no one's child. NULL if it has neither. */
const char *gs_replay_tensor_name(const gs_replay *replay, guint64 tensor);
/* Copies text into the replay's string storage (stable until the replay is freed). */
const char *gs_replay_intern(gs_replay *replay, const char *text);
/* Who holds o, in words: "scope 'train step'", "module Linear #0", "optimizer Adam #0",
 * "batch #3.1", "tensor #5.1" (a gradient), "the caller", "the engine". g_free the result. */
char *gs_replay_describe_owner(const gs_replay *replay, const gs_replay_object *o);
gs_replay_category gs_replay_object_category(const gs_replay *replay, const gs_replay_object *o);
const char *gs_replay_category_name(gs_replay_category category);
/* Alive objects sorted by creation (caller frees the array, not the objects). */
GPtrArray *gs_replay_alive_objects(const gs_replay *replay);

G_END_DECLS
