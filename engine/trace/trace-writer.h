/* trace-writer.h: how the layers above record events. Plain values in, bytes out: the writer
 * knows nothing of tensors, scopes or nodes, only of the event kinds and their fields
 * (doc/trace-format.md); each layer builds its own events from the records it owns.
 *
 * Each site is one guarded call, `if (gs__trace_on()) gs__trace_X(...)`: with the log off that
 * is one predictable branch. seq is the engine's event number where it took one (a tensor's
 * creation, a disposal, an in-place write), so the log and error messages agree; 0 takes the
 * next number.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "gradscope/trace.h"

extern atomic_bool gs__tracing;

static inline bool gs__trace_on(void) {
  return __builtin_expect(atomic_load_explicit(&gs__tracing, memory_order_relaxed), 0);
}

/* With the log off, takes the number the event not written would have taken: every event but
 * the table entries (strings, sites, binaries) and GS_TRACE_VALUES takes one whether or not
 * the log is on, so that error messages cite the same event numbers either way. Each site is
 * `if (gs__trace_on()) gs__trace_X(...); else gs__trace_skip(1);`. */
static inline void gs__trace_skip(uint64_t n) { gs__skip_events(n); }

/* writer.c ---------------------------------------------------------------------------- */

/* The id of s in the string table, defining it in this thread's stream first if needed. s
 * must live forever (a literal or gs__intern'ed). */
uint32_t gs__trace_string(const char *s);
/* dest with every "%r" replaced by this process's rank as its MPI launcher (mpirun) gives it
 * in the environment, 0 without one: one log per rank from one GS_TRACE=run-%r.gstrace. The
 * result is dest itself or out (size bytes). The starts below expand their paths so. */
const char *gs__trace_expand_rank(const char *dest, char *out, size_t size);
/* Starts recording to dest (a path, unix:SOCKET or fd:N); 0, or an errno value. */
int gs__trace_start(const char *dest);
/* Starts a flight recorder (flight-recorder.c): the newest `bytes` of chunks kept in memory,
 * written to path by gs_trace_dump, at errors, fatal signals and gs_trace_close. 0, or an
 * errno value (the path cannot be written, no memory). */
int gs__trace_start_ring(const char *path, uint64_t bytes);
/* Closes the log at exit (once, however often it is asked): a ring is dumped then. */
void gs__trace_dump_at_exit(void);
/* "64M", "512K", "1G", "64MiB", "64" (MiB) in bytes; 0 if it is not such a size. */
uint64_t gs__trace_parse_size(const char *text);
/* What the error path does after recording an error: a flight recorder dumps itself (the
 * error is what it is for), a log is flushed (the default handler aborts next). */
void gs__trace_error_flush(void);
/* Writes this thread's buffered events now. A thread that hands objects to another (the
 * DataLoader's prefetch worker) calls it first, so the objects' creation precedes, in file
 * order, whatever the receiving thread logs about them. */
void gs__trace_flush_this_thread(void);
/* Where the log goes, as given to gs_trace_open or GS_TRACE ("path", "unix:SOCKET", "fd:N"),
 * or NULL when recording is off. */
const char *gs__trace_dest(void);
/* In a process just forked (single-threaded): stops recording without writing anything the
 * parent buffered, forgets the other threads' buffers and closes this process's copy of the
 * parent's sink. The child may then gs_trace_open a log of its own. */
void gs__trace_forget_inherited(void);
/* How many values GS_TRACE_VALUES asks to record per new tensor (0: none). Inline: every
 * recorded tensor_create asks (a call each was 1% of what recording cost the micro-step). */
extern int gs__tw_values_limit;
static inline int gs__trace_values_limit(void) { return gs__tw_values_limit; }

/* An event written later, with a number taken now: a graph node is announced once its op has
 * saved its tensors, a tensor's values once its op has computed them. emit(ctx, seq) runs
 * before this thread's next event (or flush) and writes the event. One at a time per thread:
 * deferring another first emits the pending one. */
typedef void (*gs__trace_deferred_fn)(void *ctx, uint64_t seq);
void gs__trace_defer(gs__trace_deferred_fn emit, void *ctx);
/* The same, for an event of the public call that created tensor (a graph node announced by
 * the op that made its output): if that creation is this thread's last event, the deferred
 * event shares its time instead of reading the clock when it is written, which may be in the
 * program's next call. */
void gs__trace_defer_after_create(gs__trace_deferred_fn emit, void *ctx, uint64_t tensor);

/* The public call an event belongs to: around a call that makes several events (a disposal
 * with the nodes it releases, backward, the end of a scope, an optimizer step), its events
 * share one call site (one stack walk at entry instead of one per event: a backward's tensors
 * are a dozen frames deep) and one time, read at the call's first event, where each event
 * would read the clock (rdtsc, a third of an event's cost). An event's time is so its public
 * call's (doc/design.md). Nested calls belong to the outermost; leave takes what enter gave,
 * so a log switched on or off meanwhile leaves the thread as it was. */
typedef struct gs__trace_call {
  uintptr_t outer_site; /* the thread's charged site before (gs__trace_thread_site) */
  bool entered;         /* this call opened the context: leave closes it */
} gs__trace_call;
gs__trace_call gs__trace_call_open(void);
void gs__trace_call_close(gs__trace_call call);
static inline gs__trace_call gs__trace_call_enter(void) {
  return gs__trace_on() ? gs__trace_call_open() : (gs__trace_call){0, false};
}
static inline void gs__trace_call_leave(gs__trace_call call) {
  if (call.entered)
    gs__trace_call_close(call);
}
/* Inside a long call, where one time would hide where it went (each node of a backward pass,
 * each parameter of an optimizer step): the call's next event reads the clock again, and the
 * events after it share that time. */
void gs__trace_call_retime(void);

/* snapshot.c: what is alive when recording starts late ------------------------------- */

/* Writes the records a layer owns as the events that would have made them, each through
 * gs__trace_snapshot_event; returns how many tensors and composites it wrote. */
typedef uint64_t (*gs__trace_snapshot_fn)(void);
/* Registers a layer's walk (at start-up); walks run by ascending order: scopes 10, storages
 * and tensors 20, composites 40, modules 50, optimizers 60, graph nodes 70. */
void gs__trace_add_snapshot_hook(int order, gs__trace_snapshot_fn fn);
/* Writes e into this thread's stream as part of the snapshot being written (its number is
 * the snapshot's; e's seq and time are ignored). */
void gs__trace_snapshot_event(const gs_trace_event *e);
/* The most ids a snapshot event's array carries: longer lists (an optimizer's parameters) are
 * split over several events, as the writer splits them (its buffer bounds one event). */
#define GS__TRACE_SNAPSHOT_PARAMS 2048
/* If the program has done work already, writes the snapshot of what is alive: called when a
 * log starts. */
void gs__trace_write_snapshot(void);

/* sites.c: where the program called the engine --------------------------------------- */

/* The id of the current call site (the first return address outside the engine), defining it
 * in this thread's stream first if new; 0 if it cannot be told. Encoders of the kinds that
 * carry a site call it before opening their event. */
uint32_t gs__trace_site(void);
/* Finds the library's code (once); recording calls it before the first event. */
void gs__trace_sites_init(void);
/* The current call site's address (0 if it cannot be told), for a thread to adopt. */
uintptr_t gs__trace_caller(void);
/* The interpreter's line this thread's events are charged to (gs_trace_set_site_text), or
 * NULL: interned, it lives as long as the process. */
const char *gs__trace_site_text_current(void);
/* Charges this thread's events to address (gs__trace_caller of whoever it works for), as its
 * own stack leads back to no program code; 0 stops. */
void gs__trace_thread_site(uintptr_t address);

/* events.c: one writer per kind ------------------------------------------------------- */

/* A tensor's creation: its geometry, the op that made it and its owner. */
typedef struct gs__trace_tensor {
  uint64_t seq, tensor, storage, source, owner;
  uint64_t alloc_nbytes; /* its storage was allocated for it just before, with these bytes */
  uint64_t shared, shared_nbytes; /* a clone's: the storage its own shares, and the bytes */
  int64_t offset;
  const int64_t *shape, *strides;
  const char *op;
  uint32_t dtype, origin, holder;
  int ndim;
  bool requires_grad;
} gs__trace_tensor;

void gs__trace_tensor_create(const gs__trace_tensor *t);
/* freed_storage: the storage this disposal freed (its last reference), or 0. */
void gs__trace_tensor_dispose(uint64_t seq, uint64_t tensor, const char *reason,
                              uint64_t freed_storage);
void gs__trace_tensor_move(uint64_t tensor, uint64_t target);
/* A leaf's requires_grad changed after it was made. */
void gs__trace_requires_grad(uint64_t tensor, bool requires_grad);
/* A saved tensor of node packed (GS_TRACE_SAVED_PACK: tensor is the handle it was saved from,
 * storage the one the node no longer holds) or unpacked (GS_TRACE_SAVED_UNPACK: what the
 * unpack hook gave back). */
void gs__trace_saved(gs_trace_kind kind, uint64_t node, uint64_t tensor, uint64_t storage);
/* A tensor's data was replaced (gs_tensor_set_data): it now views storage as dtype with this
 * layout; op (interned) says why. */
void gs__trace_tensor_set_data(uint64_t tensor, uint64_t storage, uint32_t dtype, const char *op,
                               int64_t offset, const int64_t *shape, const int64_t *strides,
                               int ndim);
void gs__trace_tensor_name(uint64_t tensor, const char *interned_name);
void gs__trace_storage(gs_trace_kind kind, uint64_t storage, uint64_t source, uint64_t nbytes);
/* A storage_alloc or storage_materialise whose bytes are not the engine's allocator's: memory
 * is a gs_memory_origin, peer the sending process of received bytes (alloc only). */
void gs__trace_storage_memory(gs_trace_kind kind, uint64_t storage, uint64_t nbytes,
                              uint32_t memory, uint32_t peer);
void gs__trace_inplace_write(uint64_t seq, uint64_t tensor, uint64_t storage, uint64_t version,
                             const char *op);
void gs__trace_values(uint64_t seq, uint64_t tensor, const double *values, uint32_t n);
void gs__trace_owner_change(uint64_t object, int previous_holder, uint64_t previous_owner,
                            int holder, uint64_t owner);
void gs__trace_scope_begin(uint64_t scope, uint64_t outer, const char *interned_name);
void gs__trace_scope_end(uint64_t scope, uint64_t seq);
void gs__trace_node_create(uint64_t seq, uint64_t node, const char *kind_name, uint64_t tensor,
                           const uint64_t *inputs, uint32_t n_inputs, const uint64_t *saved,
                           uint32_t n_saved);
void gs__trace_node(gs_trace_kind kind, uint64_t node);
void gs__trace_backward(gs_trace_kind kind, uint64_t tensor, uint64_t node);
/* holder non-zero: grad's owner_change to holder (owner tensor) from previous_holder and
 * previous_owner is folded in (format 2.2), numbered just before this event. */
void gs__trace_grad_accumulate(uint64_t tensor, uint64_t grad, int holder, int previous_holder,
                               uint64_t previous_owner);
void gs__trace_module_create(uint64_t module, const char *interned_type);
void gs__trace_module_parameter(uint64_t module, const char *interned_name, uint64_t tensor);
void gs__trace_module_child(uint64_t module, uint64_t child, const char *interned_name);
void gs__trace_optimizer_create(uint64_t optimizer, const char *type_name,
                                const gs_tensor *params, int n);
/* How many events gs__trace_optimizer_create writes for n parameters (for gs__trace_skip). */
uint64_t gs__trace_optimizer_events(int n);
void gs__trace_composite_create(uint64_t object, int kind, const gs_tensor *parts, int n);
/* The distributed layer's events (engine/distributed): this process joined a run; a DDP
 * bucket's gradients are final (params: its parameters' tensor ids; in_place: the bytes of
 * them backward wrote into the bucket itself; events as gs__trace_optimizer_events(n)); a
 * collective began or ended (collective_begin/_end: op a literal, bucket -1 for none, waited_ns for
 * the end only); a wait began or ended (wait_begin/ _end; what: a literal). */
void gs__trace_dist_init(uint32_t rank, uint32_t world, uint64_t run);
void gs__trace_bucket_ready(int bucket, uint64_t nbytes, uint64_t in_place, const uint64_t *params,
                            int n);
void gs__trace_collective(gs_trace_kind kind, const char *op, uint64_t collective, uint64_t nbytes,
                          int bucket, uint64_t waited_ns);
void gs__trace_wait(gs_trace_kind kind, const char *what, uint64_t waited_ns);
void gs__trace_mark(const char *interned_label);
/* A user's named range began or ended (kind: range_begin or range_end). */
void gs__trace_range(gs_trace_kind kind, const char *interned_label);
void gs__trace_error(int code, const char *message);
