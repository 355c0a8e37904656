/* gradscope/trace-kinds.h: the one list of the log's event kinds.
 *
 * Each kind is one line of GS_TRACE_KINDS: X(KIND, kind, value, flags), with what it carries
 * beside it. What is per kind is generated from this list, as ggml generates its op tables: the
 * gs_trace_kind enum, gs_trace_kind_name (capture/schema.c) and gs_trace_kind_flags (which
 * kinds are table entries, change what is alive or change the bytes alive: the flight
 * recorder's snapshot keeps exactly the first two, engine/trace/flight-state.c). In the
 * inspector each kind has one function per job, in tables made from this list: what it does
 * to the replayed state (model/replay/replay.c, apply_<kind>), which tensor, node or storage
 * its life belongs to (model/index/model-life.c, life_<kind>), its sentence
 * (model/words/model-explain.c, say_<kind>), its event list summary
 * (app/events/gs-event-row.c, row_<kind>) and its line in a tensor's life
 * (app/tensor/gs-tensor-life.c, life_<kind>); a kind without one of them does not compile. The
 * fields each kind carries on disk are the format's own (capture/schema.c, keyed by the same
 * enum; doc/trace-format.md). A new kind is one line here, its schema, its writer
 * (engine/trace/events.c) and those functions; the compiler names what is missing.
 *
 * Values are the format's: never reuse or renumber one. */
#pragma once

/* What a reader needs to know of a kind without decoding it. */
enum {
  /* A table entry other events refer to (a string, a call site, a binary): it takes no event
   * number of its own and is not something that happened, so counts and lists leave it out. */
  GS_TRACE_KIND_TABLE = 1u << 0,
  /* It changes what is alive or how the living relate (objects, storages, owners, names,
   * scopes, nodes, modules), or says whose the log is (a distributed run's rank): what a
   * flight recorder's snapshot re-creates. (Writes, values and backward passes change what the
   * replay shows, not what is alive.) */
  GS_TRACE_KIND_STATE = 1u << 1,
  /* It changes the bytes alive (a storage's allocation, share, copy or free). */
  GS_TRACE_KIND_MEMORY = 1u << 2,
};

/* X(KIND, kind, value, flags): GS_TRACE_<KIND> = value, named "kind". */
#define GS_TRACE_KINDS(X)                                                                      \
  /* id, text: a string-table entry */                                                         \
  X(STRING, string, 1, GS_TRACE_KIND_TABLE)                                                    \
  /* storage, nbytes, memory, peer (see also gs_trace_event.alloc) */                          \
  X(STORAGE_ALLOC, storage_alloc, 2, GS_TRACE_KIND_STATE | GS_TRACE_KIND_MEMORY)               \
  /* storage shares source's bytes copy-on-write: storage, source, nbytes (since 2.2 a        \
   * clone's is folded into its tensor_create: see gs_trace_event.shared) */                   \
  X(STORAGE_SHARE, storage_share, 3, GS_TRACE_KIND_STATE | GS_TRACE_KIND_MEMORY)               \
  /* storage copied its bytes into a buffer of its own (before a write, or into shared         \
   * memory): storage, nbytes, memory */                                                       \
  X(STORAGE_MATERIALISE, storage_materialise, 4, GS_TRACE_KIND_STATE | GS_TRACE_KIND_MEMORY)   \
  /* storage (see also gs_trace_event.freed) */                                                \
  X(STORAGE_FREE, storage_free, 5, GS_TRACE_KIND_STATE | GS_TRACE_KIND_MEMORY)                 \
  /* see gs_trace_event (alloc, since 1.2, and shared, since 2.2: storage events folded in) */\
  X(TENSOR_CREATE, tensor_create, 6, GS_TRACE_KIND_STATE)                                      \
  /* tensor, reason (string), freed */                                                         \
  X(TENSOR_DISPOSE, tensor_dispose, 7, GS_TRACE_KIND_STATE)                                    \
  /* tensor moved to a new handle (a parameter): tensor, target */                             \
  X(TENSOR_MOVE, tensor_move, 8, GS_TRACE_KIND_STATE)                                          \
  /* tensor, name (string) */                                                                  \
  X(TENSOR_NAME, tensor_name, 9, GS_TRACE_KIND_STATE)                                          \
  /* tensor, storage, version (after), op (string) */                                          \
  X(INPLACE_WRITE, inplace_write, 10, 0)                                                       \
  /* object, holder, owner: see gs_trace_owner_change */                                       \
  X(OWNER_CHANGE, owner_change, 11, GS_TRACE_KIND_STATE)                                       \
  /* scope, outer, name (string) */                                                            \
  X(SCOPE_BEGIN, scope_begin, 12, GS_TRACE_KIND_STATE)                                         \
  /* scope */                                                                                  \
  X(SCOPE_END, scope_end, 13, GS_TRACE_KIND_STATE)                                             \
  /* see gs_trace_node_create */                                                               \
  X(NODE_CREATE, node_create, 14, GS_TRACE_KIND_STATE)                                         \
  /* node: backward freed its saved tensors */                                                 \
  X(NODE_FREE_SAVED, node_free_saved, 15, GS_TRACE_KIND_STATE)                                 \
  /* node: nothing refers to it any more */                                                    \
  X(NODE_RELEASE, node_release, 16, GS_TRACE_KIND_STATE)                                       \
  /* tensor (the root), node (its grad_fn) */                                                  \
  X(BACKWARD_BEGIN, backward_begin, 17, 0)                                                     \
  /* tensor */                                                                                 \
  X(BACKWARD_END, backward_end, 18, 0)                                                         \
  /* tensor (the leaf), target (its grad tensor); since 2.2 holder, previous_holder,         \
   * previous_owner, site: the owner_change that made target the leaf's, folded in */         \
  X(GRAD_ACCUMULATE, grad_accumulate, 19, 0)                                                   \
  /* module, name (its type) */                                                                \
  X(MODULE_CREATE, module_create, 20, GS_TRACE_KIND_STATE)                                     \
  /* module, name (the parameter's), tensor */                                                 \
  X(MODULE_PARAMETER, module_parameter, 21, GS_TRACE_KIND_STATE)                               \
  /* object, object_kind, parts (tensor ids) */                                                \
  X(COMPOSITE_CREATE, composite_create, 22, GS_TRACE_KIND_STATE)                               \
  /* name (the label) */                                                                       \
  X(MARK, mark, 23, 0)                                                                         \
  /* code, text (the message) */                                                               \
  X(ERROR, error, 24, 0)                                                                       \
  /* tensor, values (its first elements, as f64) */                                            \
  X(VALUES, values, 25, 0)                                                                     \
  /* since 1.1: module (the parent), child (a module), name (the child's) */                   \
  X(MODULE_CHILD, module_child, 26, GS_TRACE_KIND_STATE)                                       \
  /* since 1.1: optimizer, name (its type: "SGD", "Adam", "AdamW"), params */                  \
  X(OPTIMIZER_CREATE, optimizer_create, 27, GS_TRACE_KIND_STATE)                               \
  /* since 1.3: site (its id), frames: where the program called the engine; since 1.5 name:    \
   * an interpreter's site as text, "function (file:line)" (0 for an address site; frames is   \
   * then empty) */                                                                            \
  X(SITE, site, 28, GS_TRACE_KIND_TABLE)                                                       \
  /* since 1.3: a loaded binary: address (its load bias), offset (its code's address in the    \
   * file), nbytes (the code's size), name (path), text (GNU build id, hex; "" if none) */     \
  X(BINARY, binary, 29, GS_TRACE_KIND_TABLE)                                                   \
  /* since 1.5 (doc/trace-format.md, "Snapshots"): name (why: a string id), count (objects     \
   * alive): the events up to snapshot_end re-create what was alive when the log began */      \
  X(SNAPSHOT_BEGIN, snapshot_begin, 30, 0)                                                     \
  /* since 1.5: count: the snapshot is complete */                                             \
  X(SNAPSHOT_END, snapshot_end, 31, 0)                                                         \
  /* since 1.6: tensor, requires_grad: a leaf's flag changed after it was made                 \
   * (gs_set_requires_grad, gs_parameter_new); a tensor a graph node makes requires grad from  \
   * its node_create on */                                                                     \
  X(REQUIRES_GRAD, requires_grad, 32, GS_TRACE_KIND_STATE)                                   \
  /* since 1.7 (doc/trace-format.md, "Distributed runs"): rank, world, run: this process     \
   * joined an MPI job (gs_dist_init) as rank of world; run is the same on every rank */      \
  X(DIST_INIT, dist_init, 33, GS_TRACE_KIND_STATE)                                            \
  /* since 1.7: bucket, nbytes, params (tensor ids): every gradient in a DDP bucket is final  \
   * in this backward, copied into the bucket, whose allreduce can start */                   \
  X(BUCKET_READY, bucket_ready, 34, 0)                                                        \
  /* since 1.7: op (string: allreduce, broadcast, allgather, reduce_scatter, barrier),        \
   * collective (its number on this rank: the same on every rank), nbytes (this rank's data), \
   * bucket (a DDP bucket's index, -1 for none) */                                            \
  X(COLLECTIVE_BEGIN, collective_begin, 35, 0)                                                \
  /* since 1.7: op, collective, nbytes, bucket as its begin; waited (ns this rank was blocked \
   * waiting for it: from begin for a blocking call, in the wait for a DDP bucket) */         \
  X(COLLECTIVE_END, collective_end, 36, 0)                                                    \
  /* since 1.7: name (what is awaited): this rank blocks until collectives already begun     \
   * finish (DDP's wait for its buckets at backward's end) */                                 \
  X(WAIT_BEGIN, wait_begin, 37, 0)                                                            \
  /* since 1.7: name, waited (ns since its wait_begin) */                                     \
  X(WAIT_END, wait_end, 38, 0)                                                                \
  /* since 1.8: tensor, storage, dtype, op (string: why), offset, shape, strides: the tensor's \
   * data was replaced (gs_tensor_set_data: torch's `t.data = x`, a module's double() or       \
   * float()): it keeps its id, requires_grad, grad and place in a module, and now views      \
   * storage as dtype with this layout */                                                      \
  X(TENSOR_SET_DATA, tensor_set_data, 39, GS_TRACE_KIND_STATE)                                 \
  /* since 2.1: name (the range's label): a user's named range began on this thread            \
   * (gs_trace_range_begin: torch.profiler.record_function); ranges nest per thread */         \
  X(RANGE_BEGIN, range_begin, 40, 0)                                                           \
  /* since 2.1: name: the innermost open range of this thread ended (gs_trace_range_end) */    \
  X(RANGE_END, range_end, 41, 0)                                                               \
  /* since 2.1: node, tensor (the saved tensor's handle, 0 for one without), storage, site:   \
   * the node's saved tensor went to a saved-tensor pack hook (gs_saved_tensor_hooks_push),   \
   * and the node keeps what that returned instead of a reference to storage */               \
  X(SAVED_PACK, saved_pack, 42, 0)                                                             \
  /* since 2.1: node, tensor (what the unpack hook gave back), storage (its storage): a       \
   * packed saved tensor was unpacked for the node's backward formula (or an access) */       \
  X(SAVED_UNPACK, saved_unpack, 43, 0)
