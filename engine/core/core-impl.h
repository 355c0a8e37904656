/* core-impl.h: the engine's private model of buffers, storages and tensors.
 *
 * Three layers, so that views, detaches and copy-on-write clones each share the right thing:
 *   buffer   the bytes. Shared copy-on-write between storages after a clone; the first write
 *            through a storage whose buffer is shared copies it ("materialises").
 *   storage  what views and detaches share: a buffer plus the version counter that in-place
 *            writes bump. Refcounted by the tensors over it.
 *   tensor   dtype, shape, strides, offset over a storage. Lives in a slot of the tensor pool.
 * Ops work on gs__tensor pointers; public functions turn handles into pointers (checking the
 * generation) and register their results as new handles.
 */
#pragma once

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "pool.h"
#include "gradscope/gradscope.h"

/* Bytes per element, for valid dtypes only (hot paths: no range check). */
static inline size_t gs__elsize(gs_dtype dtype) {
  static const size_t sizes[GS_DTYPE_COUNT] = {4, 8, 8, 1, 4, 1, 1, 2};
  return sizes[dtype];
}

/* PyTorch's dtype categories (bool < integer < floating): what decides whether a 0-dim
 * operand widens a result, and whether an in-place write would lose information. */
static inline int gs__dtype_category(gs_dtype d) {
  return d == GS_BOOL ? 0 : gs_dtype_is_integer(d) ? 1 : 2;
}

/* ---- errors (error.c) ---------------------------------------------------------------- */

/* Formats the message, stores it as this thread's last error and calls the handler.
 * fn is the public operation's name ("matmul"); returns so the caller can return its error
 * value when the handler returns. */
void gs__error(gs_error_code code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* How a kind of handle names itself in stale-handle errors: one message for every pool. */
typedef struct gs__handle_kind {
  gs__pool *pool;
  const char *noun;  /* "tensor", "packed sequence" */
  const char *nouns; /* "tensors", "packed sequences" */
  const char *it;    /* what the message calls the ended record: "it", "the module" */
  const char *ended; /* "disposed", "ended" */
  bool by_is_name;   /* the pool report's `by` is the record's own name (a scope's), not its ender */
} gs__handle_kind;

/* Reports why id names no live record of kind's pool (empty, ended, forged) as a
 * GS_ERR_STALE_HANDLE error of fn (stale.c): what ended it and at which event, and how many
 * records its slot has held since, while the pool remembers; plainly that it forgot after. */
void gs__report_stale(const gs__handle_kind *kind, uint64_t id, const char *fn);

/* "[3, 4]" into buf (at least GS__SHAPE_STR bytes). */
#define GS__SHAPE_STR 200
char *gs__shape_str(char *buf, const int64_t *shape, int ndim);
/* "(5 x 5)", PyTorch's form of spatial sizes, into buf (at least GS__SHAPE_STR bytes). */
char *gs__sizes_str(char *buf, const int64_t *sizes, int n);

/* How a tensor came to be, relative to another one (its source). */
typedef enum gs__origin {
  GS__ORIGIN_NEW = 0, /* fresh storage: a constructor or an op's result */
  GS__ORIGIN_VIEW,    /* shares its source's storage (view, transpose, slice, ...) */
  GS__ORIGIN_DETACH,  /* shares its source's storage and version counter, outside the graph */
  GS__ORIGIN_CLONE,   /* shares its source's bytes copy-on-write */
} gs__origin;

/* ---- buffers and storages (storage.c, allocator.c) ----------------------------------- */

typedef struct gs__buffer {
  atomic_int_fast64_t refcount; /* storages sharing these bytes (> 1: copy-on-write) */
  void *data;
  uint64_t nbytes;
  gs_release_fn release;        /* external memory: called on the last release */
  void *release_user_data;
  bool external;
  gs_memory_origin origin;      /* where the bytes come from (gs_storage_info) */
  /* Seen outside the engine (gs_storage_info.seen_outside): never shared copy-on-write, so a
   * storage over it is never moved to a private copy by a write. */
  bool seen_outside;
  bool writes_reach_file;       /* GS_MEMORY_MAPPED opened for writing */
  int fd;                       /* shared memory: its memfd (borrowed; release closes it); -1 */
  int64_t peer_pid;             /* GS_MEMORY_RECEIVED: the sender */
} gs__buffer;

typedef struct gs__storage {
  atomic_int_fast64_t refcount; /* tensors over this storage */
  atomic_int_fast64_t version;  /* bumped by every in-place write through any alias */
  uint64_t id;                  /* unique for the process's lifetime; names it in the log */
  gs__buffer *buffer;
  uint64_t nbytes;
  /* The last in-place write, for the autograd version-check message: which op, when, and
   * through which tensor (and how that tensor shares this storage). */
  const char *last_write_op;
  uint64_t last_write_event;
  uint64_t last_write_tensor;
  gs__origin last_write_origin;
  /* A base disposed after in-place writes rewrote its history, kept for the views of it that
   * live on (engine/autograd/view-history.c, which frees it through the lifecycle's
   * on_storage_free); NULL if none. */
  struct gs__view_root *orphan;
  /* Allocated while recording and not yet in the log: the first tensor made over it carries
   * the allocation in its creation event (format 1.2); anything else that names the storage
   * first writes the allocation on its own. */
  bool alloc_unlogged;
} gs__storage;

/* trace-snapshot.c: writes s's allocation (or copy-on-write share) into the snapshot being
 * written, once per snapshot; and whether graph node `node` is met for the first time in it
 * (the graph's walk, engine/autograd, writes each node once). */
void gs__snapshot_storage(const gs__storage *s);
bool gs__snapshot_first_node(uint64_t node);

/* Caching allocator: a block with a gs__buffer header followed by nbytes of data (64-byte
 * aligned). Returns NULL when the system is out of memory. */
gs__buffer *gs__alloc_buffer(uint64_t nbytes);
void gs__free_buffer(gs__buffer *buffer);
/* Counts external memory wrapped by gs_from_blob in the live-storage statistics. */
void gs__count_external_storage(int delta);

/* A new storage with fresh (uninitialised) bytes, refcount 1. NULL if out of memory. */
gs__storage *gs__storage_new(uint64_t nbytes);
/* Wraps memory the engine does not own; release(data, user) runs when the last storage over it
 * goes. origin says where it comes from (GS_MEMORY_BLOB, _DLPACK, ...). NULL if out of
 * memory (release is then not called: the caller still owns data). */
gs__storage *gs__storage_wrap(void *data, uint64_t nbytes, gs_release_fn release, void *user,
                              gs_memory_origin origin);
/* An external buffer record over data (refcount 1), for gs__storage_replace_buffer; NULL if out
 * of memory (release is then not called). */
gs__buffer *gs__buffer_wrap(void *data, uint64_t nbytes, gs_release_fn release, void *user,
                            gs_memory_origin origin);
/* A new storage over b, taking over b's reference; NULL if out of memory (b is then
 * released, calling its release callback). */
gs__storage *gs__storage_over_buffer(gs__buffer *b);
/* Moves s onto buffer b (same nbytes, its bytes already filled): every view of s sees b from
 * now on, and s's old buffer is released (shared copy-on-write, only s leaves it). Not
 * thread-safe against concurrent use of s, as torch's share_memory_. */
void gs__storage_replace_buffer(gs__storage *s, gs__buffer *b);
/* A new storage sharing src's bytes copy-on-write (the O(1) clone). for_clone: a clone's
 * tensor is registered over it next, and its creation event carries the share. */
gs__storage *gs__storage_share_cow(gs__storage *src, bool for_clone);
void gs__storage_retain(gs__storage *s);
void gs__storage_release(gs__storage *s);
/* Releases s for a tensor's disposal whose event says whether this freed it: true if it did
 * (the log then gets no storage_free of its own). */
bool gs__storage_release_for_dispose(gs__storage *s);
/* Writes s's allocation now if the log has not had it yet. */
void gs__storage_log_alloc(gs__storage *s);
/* If s is the clone's share this thread made last while recording and has not logged
 * (gs__storage_share_cow for_clone), hands its source storage's id to the clone's creation
 * event, which carries it (format 2.2), and returns true. */
bool gs__storage_take_share(const gs__storage *s, uint64_t *source);
/* Writes that share now if s is it (its clone's registration failed). */
void gs__storage_log_share(gs__storage *s);
/* Before writing: copies shared bytes so the write stays private. false if out of memory. */
bool gs__storage_materialise(gs__storage *s);
static inline bool gs__storage_is_cow(const gs__storage *s) {
  return atomic_load_explicit(&s->buffer->refcount, memory_order_acquire) > 1;
}

/* ---- tensors (handles.c, tensor.c) --------------------------------------------------- */

struct gs__node;

/* A tensor's place in the autograd graph (engine/autograd). Reset whenever a tensor record is
 * registered, so geometry copies never carry graph references. */
typedef struct gs__autograd_meta {
  bool requires_grad;
  bool retains_grad;        /* a non-leaf that keeps its grad (gs_retain_grad) */
  struct gs__node *grad_fn; /* the node that made this tensor (owned reference); NULL: leaf */
  struct gs__node *grad_accumulator; /* leaves that require grad (owned reference, lazy) */
  uint64_t grad;            /* handle of the accumulated gradient, owned by this tensor */
  /* Counts rewrites of this tensor's history by recorded in-place writes (into it or into one
   * of its views): a view made before the latest one has a stale grad_fn (engine/autograd/
   * view-history.c). */
  uint32_t history;
} gs__autograd_meta;

/* Whether tensors remember where the program made them (gs__tensor.created_at): set when the
 * leak report is asked for at exit, which groups leaks by it; off, it costs one branch. */
extern bool gs__remember_sites;

typedef struct gs__tensor {
  gs_dtype dtype;
  int ndim;
  int64_t numel;
  int64_t offset; /* in elements */
  int64_t shape[GS_MAX_DIMS];
  int64_t strides[GS_MAX_DIMS]; /* in elements; 0 for broadcast dims */
  gs__storage *storage;
  uint64_t id;            /* the handle, or 0 for an unregistered temporary */
  uint64_t created_event;
  gs__origin origin;
  uint64_t source;        /* the tensor this one was derived from (views, detach, clone) */
  /* Views: the tensor at the root of the chain of views (not a view itself), and its
   * ag.history when this view's grad_fn was made; 0 for other tensors. */
  uint64_t view_base;
  uint32_t base_history;
  bool counted_view;   /* views: counted in their base's live_views (or its kept record) */
  uint32_t live_views; /* bases: registered views of it alive now (atomic builtins: views are
                          made and disposed on any thread) */
  const char *created_by; /* the op that made it (static string), for leak reports */
  uintptr_t created_at;   /* where the program made it (a return address), when
                           * gs__remember_sites: leak reports group by it */
  const char *created_at_text; /* or an interpreter's line there (gs_trace_set_site_text,
                                * interned: equal text, equal pointer), else NULL */
  bool is_parameter;
  /* A language binding's object for this handle (gs_tensor_set_binding), never read by the
   * engine; reset when a handle is made or moved. */
  void *binding;
  gs__autograd_meta ag;
} gs__tensor;

/* Who holds an object (engine/scope): what decides whether disposing it is the user's call,
 * and which statistics it counts in. */
typedef enum gs__holder {
  GS__HELD_BY_CALLER = 0, /* created outside scopes, or detached: the caller disposes it */
  GS__HELD_BY_SCOPE,      /* owned by a dispose scope */
  GS__HELD_BY_MODULE,     /* a module's parameter, outside every scope */
  GS__HELD_BY_COMPOSITE,  /* one of a composite object's tensors (a packed sequence's data) */
  GS__HELD_BY_TENSOR,     /* a tensor's gradient */
  GS__HELD_BY_ENGINE,     /* the engine's own temporaries (backward): invisible to statistics */
  GS__HELD_BY_OPTIMIZER,  /* an optimizer's state tensor, outside every scope (as a parameter) */
} gs__holder;

struct gs__scope_rec;

/* An object's place in the ownership model: its holder and, for scoped objects, its links in
 * the scope's list (O(1) moves and disposal, no allocation). */
typedef struct gs__owned {
  gs__holder holder;
  int kind;                      /* gs_object_kind */
  uint64_t id;                   /* the object's handle */
  struct gs__scope_rec *scope;   /* holder == SCOPE */
  struct gs__owned *prev, *next; /* in that scope's list */
  uint64_t holder_id;            /* the scope, module, composite or tensor holding it */
  uint64_t bytes;                /* storage bytes charged to the owning scope */
  const char *last_scope;        /* interned name of the last scope that owned it */
} gs__owned;

/* The owner's id in the event log: the scope's handle, or the module, composite or tensor
 * holding it (0 for the caller and the engine). */
static inline uint64_t gs__owner_id(const gs__owned *o) { return o->holder_id; }

/* A tensor's record in the tensor pool (handles.c): the pool's header, its owner record (kept
 * by engine/scope) and the tensor. */
typedef struct gs__slot {
  gs__pool_slot pool;
  gs__owned own;
  gs__tensor tensor;
} gs__slot;

static inline gs__slot *gs__slot_of(gs__tensor *t) {
  return (gs__slot *)((char *)t - offsetof(gs__slot, tensor));
}

/* Disposes a tensor on the engine's behalf (a scope ending, a module, a composite, a cleared
 * gradient): no ownership checks; reason names the disposer in later stale-handle errors (a
 * static or interned string). */
void gs__dispose_as(gs_tensor h, const char *reason);
/* Moves h's tensor to a new handle (parameters): h becomes stale, naming reason; its owner
 * keeps the new handle in its place; no statistic changes. Returns the new handle. */
gs_tensor gs__move_handle(gs_tensor h, const char *reason);
/* Renames what disposed (or moved) a stale handle's tensor, once the name is known. */
void gs__rename_disposer(gs_tensor stale, const char *reason);

/* Announces a new tensor's values (GS_TRACE_VALUES) once its op has computed them
 * (trace-events.c). Only while tracing. */
void gs__trace_defer_values(uint64_t tensor);

/* The tensor pool: 64 Mi live tensors at most, in pages of 1,024. */
#define GS__TENSOR_PAGE_SHIFT 10
extern gs__pool gs__tensors;

/* The live slot a tensor handle names, or NULL: the pool's lookup with its layout folded in. */
static inline gs__slot *gs__tensor_slot(uint64_t id) {
  return gs__pool_get_as(&gs__tensors, id, GS__TENSOR_PAGE_SHIFT, sizeof(gs__slot), 0);
}

/* Reports why h does not name a live tensor (stale, forged or empty); returns NULL. */
gs__tensor *gs__lookup_failed(gs_tensor h, const char *fn);

/* The tensor a handle names, or NULL, without reporting anything. */
static inline gs__tensor *gs__lookup_quiet(uint64_t id) {
  gs__slot *s = gs__tensor_slot(id);
  return s ? &s->tensor : NULL;
}

/* The tensor a handle names, or NULL after reporting a stale or forged handle as an error
 * of operation fn. Inline: every public call starts here. */
static inline gs__tensor *gs__lookup(gs_tensor h, const char *fn) {
  gs__slot *s = gs__tensor_slot(h.id);
  return s ? &s->tensor : gs__lookup_failed(h, fn);
}

/* Registers a tensor in a free slot; takes over t's storage reference. On success returns the
 * handle; on failure (table full) releases the storage and returns GS_NO_TENSOR. */
gs_tensor gs__register(const gs__tensor *t, const char *fn);

/* Fills t (unregistered) with a fresh contiguous storage of dtype and shape. Reports errors
 * (numel overflow, out of memory) against fn and returns false. */
bool gs__tensor_init(gs__tensor *t, gs_dtype dtype, const int64_t *shape, int ndim,
                     const char *fn);
/* A new registered contiguous tensor; GS_NO_TENSOR after an error. *out receives the
 * registered pointer when out is non-NULL. */
gs_tensor gs__tensor_new(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn,
                         gs__tensor **out);
/* A view of base (same storage, retained) with new geometry, registered. */
gs_tensor gs__make_view(const gs__tensor *base, const int64_t *shape, const int64_t *strides,
                        int ndim, int64_t offset, const char *fn);
/* The same with another origin sharing the storage (GS__ORIGIN_DETACH). */
gs_tensor gs__make_view_as(const gs__tensor *base, const int64_t *shape, const int64_t *strides,
                           int ndim, int64_t offset, gs__origin origin, const char *fn);
/* Drops an unregistered tensor's storage reference. */
void gs__tensor_release(gs__tensor *t);

static inline char *gs__tensor_data(const gs__tensor *t) {
  return (char *)t->storage->buffer->data + t->offset * (int64_t)gs__elsize(t->dtype);
}

/* Row-major strides for shape. */
void gs__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides);
bool gs__is_contiguous(const gs__tensor *t);
/* A memory format's strides for shape (memory-format.c); false after reporting a rank the
 * format does not take. */
bool gs__memory_format_strides(gs_memory_format format, const int64_t *shape, int ndim,
                               int64_t *strides, const char *fn);
/* Whether t's strides are format's (a size-1 dim's stride never matters). */
bool gs__is_contiguous_as(const gs__tensor *t, gs_memory_format format);
/* The strides of an elementwise result of shape laid out as its operands are (torch's
 * TensorIterator order: the first operand whose strides tell two dims apart orders them;
 * row-major where none does); NULL operands and broadcast dims tell nothing. */
void gs__result_strides(const int64_t *shape, int ndim, const gs__tensor *const *ops, int nops,
                        int64_t *strides);
/* gs__tensor_new with those strides: a new registered dense tensor laid out as ops are. */
gs_tensor gs__tensor_new_like(gs_dtype dtype, const int64_t *shape, int ndim,
                              const gs__tensor *const *ops, int nops, const char *fn,
                              gs__tensor **out);
/* gs__tensor_init with format's strides (the storage is the same size). */
bool gs__tensor_init_format(gs__tensor *t, gs_dtype dtype, const int64_t *shape, int ndim,
                            gs_memory_format format, const char *fn);
/* numel with overflow check; -1 (after reporting) on overflow or negative size. */
int64_t gs__checked_numel(const int64_t *shape, int ndim, const char *fn);
/* Normalises a possibly negative dim against ndim; -1 after reporting. */
int gs__wrap_dim(int dim, int ndim, const char *fn);

#include "lifecycle.h"

/* Prepares t's storage for an in-place write by op: refuses writes autograd cannot record
 * (a leaf that requires grad; operand_requires_grad says whether another operand does),
 * materialises copy-on-write bytes and bumps the version (taking an event number). false,
 * with nothing changed, after reporting. */
bool gs__begin_write(gs__tensor *t, bool operand_requires_grad, const char *op);
/* gs_data_mut for a write the log names op ("in-place op: ... version"): the engine's own
 * raw writes (DDP's averages, its broadcast parameters) say why the tensor changed. NULL
 * after reporting. */
static inline void *gs__data_mut_as(gs_tensor h, const char *op) {
  gs__tensor *t = gs__lookup(h, op);
  return t && gs__begin_write(t, false, op) ? gs__tensor_data(t) : NULL;
}
/* The storage's version goes up by op's in-place change of t, logged as a write: what
 * gs__begin_write does after its checks, alone for a change of t's geometry. values_changed:
 * with values recorded, t's new values follow (false for a geometry change: the bytes are as
 * they were, and read in the new layout before it is logged they would be misplaced). */
void gs__bump_version(gs__tensor *t, const char *op, bool values_changed);
/* Whether sizes and strides from storage_offset stay inside t's storage, as torch's
 * setStorage checks them (as_strided and its in-place form); false after reporting as fn. */
bool gs__geometry_fits(const gs__tensor *t, const int64_t *shape, const int64_t *strides, int ndim,
                       int64_t storage_offset, const char *fn);

/* ---- strided iteration (iter.c) ------------------------------------------------------ */

#define GS__MAX_OPERANDS 4

/* The inner loop: n elements; ptrs[i] points at operand i's first element and
 * byte_strides[i] is its step. Operand 0 is the output. */
typedef void (*gs__loop_fn)(char **ptrs, const int64_t *byte_strides, int64_t n, void *ctx);

/* Runs fn over every element of shape for nops operands whose strides are in elements
 * (already broadcast: 0 on broadcast dims). Dims are reordered and merged where every
 * operand allows, so a contiguous or transposed operand runs as one long inner loop. */
void gs__iter_run(int nops, char *const *data, const int64_t (*strides)[GS_MAX_DIMS],
                  const size_t *elem_sizes, const int64_t *shape, int ndim, gs__loop_fn fn,
                  void *ctx);

/* Strides of t viewed as broadcast to shape (ndim >= t->ndim); false if not broadcastable. */
bool gs__broadcast_strides(const gs__tensor *t, const int64_t *shape, int ndim,
                           int64_t *strides_out);
/* The broadcast shape of a and b into out; false (without reporting) if incompatible. */
bool gs__broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out,
                          int *nout);

/* A 0-dim tensor on the caller's stack holding one value (a scalar operand): no allocation,
 * nothing to release. Never register or retain it past the box's lifetime. */
typedef struct gs__scalar_box {
  gs__tensor tensor;
  gs__storage storage;
  gs__buffer buffer;
  union {
    double f64;
    float f32;
    int64_t i64;
    int32_t i32;
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    bool b8;
  } value;
} gs__scalar_box;
const gs__tensor *gs__scalar_box_init(gs__scalar_box *box, gs_dtype dtype, double value);

/* Copies src (any strides, broadcast to dst's shape) into dst, converting dtype. */
void gs__copy_into(gs__tensor *dst, const gs__tensor *src);
/* A contiguous tensor of dtype with t's values; shares t's storage (retained) when t is
 * already contiguous in that dtype. false after reporting out of memory. */
bool gs__as_contiguous(const gs__tensor *t, gs_dtype dtype, gs__tensor *out, const char *fn);

/* Reads element i (row-major logical index) of a contiguous buffer of dtype as double. */
static inline double gs__load_f64(const void *p, gs_dtype dtype) {
  switch (dtype) {
  case GS_F32: return *(const float *)p;
  case GS_F64: return *(const double *)p;
  case GS_I64: return (double)*(const int64_t *)p;
  case GS_BOOL: return *(const bool *)p ? 1.0 : 0.0;
  case GS_I32: return (double)*(const int32_t *)p;
  case GS_U8: return (double)*(const uint8_t *)p;
  case GS_I8: return (double)*(const int8_t *)p;
  case GS_I16: return (double)*(const int16_t *)p;
  }
  return 0.0;
}
void gs__store_f64(void *p, gs_dtype dtype, double v);
/* double to i64 without undefined behaviour: NaN and out-of-range values give INT64_MIN,
 * as x86's conversion (and so PyTorch on x86) does. */
static inline int64_t gs__f64_to_i64(double v) {
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}
/* double to i32 likewise: NaN and values out of i32's range give INT32_MIN (x86's 32-bit
 * conversion). */
static inline int32_t gs__f64_to_i32(double v) {
  return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : INT32_MIN;
}
/* double to u8, i8 and i16: the low bits of the i32 conversion, as torch 1.13 on x86 (300.0
 * gives u8 44, -1.0 gives u8 255, 3e9 gives 0). */
static inline uint8_t gs__f64_to_u8(double v) { return (uint8_t)(uint32_t)gs__f64_to_i32(v); }
static inline int8_t gs__f64_to_i8(double v) {
  return (int8_t)(uint8_t)(uint32_t)gs__f64_to_i32(v);
}
static inline int16_t gs__f64_to_i16(double v) {
  return (int16_t)(uint16_t)(uint32_t)gs__f64_to_i32(v);
}

/* ---- random (random.c) --------------------------------------------------------------- */

/* rng, or the process-wide default generator (locked) when rng is NULL. */
gs_rng *gs__rng_acquire(gs_rng *rng);
void gs__rng_release(gs_rng *rng, gs_rng *acquired);
/* torch's normal_fill for n >= 16 values (random-normal.c): d is overwritten. */
void gs__normal_fill_f32(gs_rng *g, float *d, int64_t n, float mean, float std);
void gs__normal_fill_f64(gs_rng *g, double *d, int64_t n, double mean, double std);
