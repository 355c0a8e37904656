/* loader-impl.h: the DataLoader's record and its parts: loader.c (datasets, epochs,
 * collation, hand-over to the caller), prefetch.c (the optional thread that collates batches
 * ahead) and workers.c (the optional worker processes that collate into shared memory). */
#pragma once

#include "core-impl.h"
#include "gradscope/data.h"

typedef struct gs__prefetch gs__prefetch;
typedef struct gs__workers gs__workers;

struct gs_data_loader {
  gs_dataset ds;
  gs_loader_options opt;
  int64_t *order;     /* this epoch's sample order */
  int64_t pos;        /* next position in order (collating on the calling thread) */
  int64_t epoch;      /* -1 before the first epoch */
  gs_tensor *samples; /* batch_size * n_fields, scratch for collation (one collating thread) */
  gs_tensor *column;  /* batch_size, one field of every sample */
  gs__prefetch *prefetch; /* the running worker of this epoch, or NULL */
  gs__workers *workers;   /* this epoch's worker processes, or NULL */
  /* What GS__COLLATE_SHARED stacks into (a worker's segment pool); NULL: fresh segments. */
  gs_tensor (*shared_maker)(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn);
};

/* Fills order with epoch's sample order (shuffled from opt.seed + epoch, or in turn). */
void gs__loader_order(gs_data_loader *l, int64_t epoch);

/* How many samples the batch starting at pos holds: 0 at the end of the epoch (or a short
 * last batch with drop_last). */
int64_t gs__loader_batch_count(const gs_data_loader *l, int64_t pos);

/* Where a collated batch goes. */
typedef enum gs__collate_into {
  /* moved to the scope outside "collate" (gs_data_loader_next, nothing ahead) */
  GS__COLLATE_MOVED_OUT,
  /* built while ownership is suspended: they belong to no one yet, and the caller hands
   * them over (gs__own_adopt, a composite) or disposes them (prefetch) */
  GS__COLLATE_ENGINE_HELD,
  /* the same, each field stacked straight into a shared-memory segment (a worker process,
   * which sends them) */
  GS__COLLATE_SHARED,
} gs__collate_into;

/* Collates the count samples at order[pos..] on the calling thread inside a "collate" scope,
 * under no_grad: the samples die with the scope. false after reporting. */
bool gs__loader_collate(gs_data_loader *l, int64_t pos, int64_t count, gs__collate_into into,
                        gs_tensor *out, const char *fn);

/* Starts a worker that collates the current epoch's batches ahead (opt.prefetch of them at
 * most waiting); NULL after reporting. */
gs__prefetch *gs__prefetch_start(gs_data_loader *l);
/* Stops the worker, waits for it, and disposes the batches it collated that nobody took. */
void gs__prefetch_stop(gs__prefetch *p);
/* The next batch of the epoch, in order (engine-held parts, as gs__loader_collate with
 * engine_held): 1, or 0 at the end of the epoch, or -1 after reporting the worker's error. */
int gs__prefetch_take(gs__prefetch *p, gs_tensor *parts, const char *fn);

/* Forks opt.num_workers processes that collate the current epoch's batches (batch b in worker
 * b % num_workers) into shared memory and send them here; NULL after reporting. */
gs__workers *gs__workers_start(gs_data_loader *l);
/* Persistent workers: moves them on to the loader's current epoch (already in l->epoch and
 * l->order), disposing what they had sent of the old one. false if they cannot go on (one
 * failed or died, the epoch ended in a failure, or the loader's seed changed since they were
 * forked): stop them and start new ones. */
bool gs__workers_next_epoch(gs__workers *w);
/* Shuts the workers down (their sockets closed, then SIGKILL after a grace period), waits for
 * every one, and frees what was sent and not taken. */
void gs__workers_stop(gs__workers *w);
/* The next batch of the epoch, in order, received from its worker (engine-held parts, as
 * GS__COLLATE_ENGINE_HELD): 1, 0 at the end of the epoch, -1 after reporting a worker's
 * failure (which ends the epoch). */
int gs__workers_take(gs__workers *w, gs_tensor *parts, const char *fn);
