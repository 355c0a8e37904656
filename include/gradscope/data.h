/* gradscope/data.h: datasets and a DataLoader (PyTorch's torch.utils.data, in C).
 *
 * A dataset is a length and a callback that produces one sample's tensors (features, label,
 * ...). A loader walks a dataset in batches: optionally shuffled by a seeded generator, the
 * last short batch kept or dropped. Each batch is collated (the samples' tensors stacked along
 * a new first dimension) inside its own dispose scope named "collate": the per-sample tensors
 * die with that scope and the finished batch is handed to the scope that is current when
 * gs_data_loader_next (or _next_batch) returns it (or to the caller when none is).
 *
 * With opt.prefetch > 0 a background thread collates up to that many batches ahead, each in
 * its own "collate" scope on that thread; the batches wait owned by no scope and are handed
 * over the same way. The order is the same with and without prefetch. The dataset's get_item
 * is then called on the worker thread (one call at a time), so it must not rely on the
 * calling thread's state. gs_data_loader_reset and _free stop the worker and dispose the
 * batches it made that nobody took.
 *
 * Worker processes (opt.num_workers = N > 0, PyTorch's num_workers): each epoch forks N
 * processes that call get_item and collate, batch b in worker b % N, stacking each field
 * straight into a memfd shared-memory segment and sending it over a Unix socket
 * (gs_tensor_send): the batch arrives over the same pages, no byte copied after collate, in
 * the same order and with the same contents as without workers, as the same tensors or
 * composite in the caller's current scope. The storages say where they came from
 * (gs_storage_info_of: GS_MEMORY_RECEIVED, peer_pid the worker). Workers are forked, not
 * spawned, because get_item is a C callback over the caller's memory, which a fresh program
 * could not run; the fork takes every engine lock first (no thread's critical section is cut
 * in half) and the child uses one OpenBLAS thread. The child starts with the state of the
 * dataset and the program at gs_data_loader_reset: changes made later in the main process are
 * not seen, and what get_item changes stays in the worker. Each worker seeds the engine's
 * default generator with the epoch's base seed plus its id (gs_data_worker_info), so random
 * augmentation is reproducible for a given num_workers (but differs from num_workers = 0, as
 * in PyTorch). A failed get_item or collate, a worker that dies (a crash, abort, exit) or one
 * that gives no batch within opt.timeout_ms is an error naming the worker, its pid and the
 * batch's index; the epoch ends there. Reset, free and the end of an epoch shut the workers
 * down: nothing is left behind (no process: each is waited for; no segment: a memfd goes with
 * its last descriptor and mapping). While the log is recording to a file, each worker writes
 * its own log next to it: "run.gstrace" gives "run.worker-0.gstrace", ... (a path without an
 * extension gets ".worker-N" appended). Recording to a socket or an inherited descriptor,
 * workers do not record (the inspector's listening source takes one program per socket).
 * With opt.persistent_workers (PyTorch's persistent_workers), the workers forked for the
 * first epoch stay for the next ones: reset tells them the new epoch (each shuffles the order
 * itself, from the same seed) instead of forking again, which saves the fork and lets each
 * worker write every batch into shared segments it already has mapped. They then keep the
 * dataset and program state of the first reset for the loader's life; free shuts them down.
 *
 * A batch can also come as one object (gs_data_loader_next_batch): a composite, like a packed
 * sequence, whose fields are its parts. Moving, detaching or disposing it does that to all its
 * tensors, and the event log and the statistics (kind GS_OBJECT_BATCH) count it once.
 */
#pragma once

#include "scope.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_DATASET_MAX_FIELDS 4

/* A dataset: a length and a get-item callback returning one sample's tensors. */
typedef struct gs_dataset {
  int64_t length;
  int n_fields; /* tensors per sample, 1..GS_DATASET_MAX_FIELDS */
  /* Writes n_fields new tensors (the caller disposes them; the loader lets its collate scope
   * do it) for sample index (0 <= index < length) into fields_out; false on failure. */
  bool (*get_item)(void *user, int64_t index, gs_tensor *fields_out);
  void *user;
  /* Optional: frees user; called by gs_dataset_release. NULL for a caller-managed user. */
  void (*release)(void *user);
  /* Optional, as PyTorch's __getitems__: writes n_fields new tensors for the count samples
   * indices[0..count) (the caller disposes them), each field's samples stacked along a new
   * first dim as gs_stack of get_item's tensors would be; anything else it makes it disposes
   * itself; false on failure. A loader collating in this process calls it once per batch
   * instead of get_item per sample and a stack per field (worker processes, which stack into
   * shared memory, still call get_item). NULL: get_item for every sample. */
  bool (*get_items)(void *user, const int64_t *indices, int64_t count, gs_tensor *fields_out);
  /* Optional: a hint that the samples indices[0..count) are asked for next. A loader
   * collating in this process gives it the next batch's indices, in the epoch's order, right
   * after collating a batch, so the dataset can start reading them while the program trains
   * on this one (the tensor dataset prefetches their rows into the cache: a shuffled epoch
   * reads each row once, long after the last epoch did, and a step of a small model waited
   * on those loads). It changes nothing the dataset gives. NULL: no hint. */
  void (*will_need)(void *user, const int64_t *indices, int64_t count);
} gs_dataset;

/* A dataset over whole tensors: sample i is row i of each (views, from gs_select), and all
 * must have the same first size. A batch is the rows copied straight into one new tensor per
 * field (get_items), with no view per sample. It keeps the handles only: the tensors must outlive
 * it and are not disposed by it. n is 1..GS_DATASET_MAX_FIELDS. Free it with gs_dataset_release. On
 * error it returns a dataset with n_fields 0 and get_item NULL. */
GS_API gs_dataset gs_tensor_dataset(const gs_tensor *tensors, int n);
/* Calls ds->release(ds->user) if set and clears the dataset. NULL does nothing. */
GS_API void gs_dataset_release(gs_dataset *ds);

typedef struct gs_loader_options {
  int64_t batch_size; /* > 0 */
  bool shuffle;
  uint64_t seed;      /* epoch e shuffles as torch.randperm(n, generator=g) with g seeded
                         with seed + e */
  bool drop_last;     /* drop the last batch when it is smaller than batch_size */
  int prefetch;       /* batches collated ahead on a background thread (0: none, on demand);
                         at most GS_LOADER_MAX_PREFETCH. With workers: batches each worker
                         may have ready or in hand (0: 2, PyTorch's prefetch_factor) */
  int num_workers;    /* worker processes that read and collate (0: this process); at most
                         GS_LOADER_MAX_WORKERS. See "Worker processes" above */
  int timeout_ms;     /* with workers: how long to wait for one batch before stopping its
                         worker and reporting (0: no limit; a worker that dies is reported
                         at once either way) */
  bool persistent_workers; /* with workers: keep them from one epoch to the next (see
                              "Worker processes" above) instead of forking each epoch */
} gs_loader_options;

#define GS_LOADER_MAX_PREFETCH 64
#define GS_LOADER_MAX_WORKERS 64

/* In a DataLoader worker process: which worker this is, of how many, and the seed its
 * engine's default generator was given: the epoch's base seed, opt.seed + epoch *
 * GS_LOADER_MAX_WORKERS (so no two epochs share one), plus the worker's id, as PyTorch's
 * base_seed + worker_id. */
typedef struct gs_worker_info {
  int id;          /* 0 .. num_workers - 1 */
  int num_workers;
  uint64_t seed;
} gs_worker_info;

/* Fills *info and returns true in a DataLoader worker process; false elsewhere (the main
 * process, or NULL info). For datasets that draw random numbers of their own. */
GS_API bool gs_data_worker_info(gs_worker_info *info);

typedef struct gs_data_loader gs_data_loader;

/* A loader over ds (copied: ds->user must outlive the loader). NULL on invalid arguments. */
GS_API gs_data_loader *gs_data_loader_new(const gs_dataset *ds, const gs_loader_options *opt);
GS_API void gs_data_loader_free(gs_data_loader *l);
/* Starts the next epoch (the first call starts epoch 0; gs_data_loader_next starts epoch 0
 * itself if no epoch was started). With shuffle, epoch e's order is a permutation drawn from
 * a generator seeded with seed + e; without, it is 0, 1, ..., length - 1. */
GS_API void gs_data_loader_reset(gs_data_loader *l);
/* The next batch: writes n_fields stacked tensors (batch dimension first) into out and
 * returns true; returns false (out untouched) at the end of the epoch or on error. The batch
 * tensors belong to the scope current at the call (caller-owned with no scope open). Without
 * prefetch they are made in "collate" and moved out (counted as created in scope, then a move
 * to the outer scope, or a detach with none); with prefetch they count as created where they
 * are handed over. */
GS_API bool gs_data_loader_next(gs_data_loader *l, gs_tensor *out);
/* The next batch as one object owned by the scope current at the call (or the caller); its
 * fields are borrowed handles (gs_batch_field). GS_NO_BATCH at the end of the epoch or on
 * error. */
typedef struct gs_batch {
  uint64_t id; /* never equal to a tensor's id */
} gs_batch;

#define GS_NO_BATCH ((gs_batch){0})

GS_API gs_batch gs_data_loader_next_batch(gs_data_loader *l);
/* Field i's stacked tensor (borrowed: valid while the batch lives; dispose the batch, not
 * it), the number of fields, and the number of samples (the first size). */
GS_API gs_tensor gs_batch_field(gs_batch b, int i);
GS_API int gs_batch_field_count(gs_batch b);
GS_API int64_t gs_batch_size(gs_batch b);
GS_API bool gs_batch_is_alive(gs_batch b);
GS_API void gs_batch_dispose(gs_batch b);
/* Scope operations on a batch, as for tensors (see scope.h). */
GS_API gs_scope gs_batch_owner_scope(gs_batch b);
GS_API gs_batch gs_batch_move_to_outer(gs_batch b);
GS_API gs_batch gs_batch_detach_from_scopes(gs_batch b);
GS_API gs_batch gs_scope_attach_batch(gs_scope scope, gs_batch b);

/* Epochs started from now on shuffle from seed + epoch (as gs_loader_options.seed). */
GS_API void gs_data_loader_set_seed(gs_data_loader *l, uint64_t seed);

/* The current epoch number (-1 before the first), and batches per epoch. */
GS_API int64_t gs_data_loader_epoch(const gs_data_loader *l);
GS_API int64_t gs_data_loader_num_batches(const gs_data_loader *l);

#ifdef __cplusplus
}
#endif
