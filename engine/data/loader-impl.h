/* loader-impl.h: the DataLoader's record and its two halves: loader.c (datasets, epochs,
 * collation, hand-over to the caller) and prefetch.c (the optional thread that collates
 * batches ahead). */
#pragma once

#include "core-impl.h"
#include "gradscope/data.h"

typedef struct gs__prefetch gs__prefetch;

struct gs_data_loader {
  gs_dataset ds;
  gs_loader_options opt;
  int64_t *order;     /* this epoch's sample order */
  int64_t pos;        /* next position in order (collating on the calling thread) */
  int64_t epoch;      /* -1 before the first epoch */
  gs_tensor *samples; /* batch_size * n_fields, scratch for collation (one collating thread) */
  gs_tensor *column;  /* batch_size, one field of every sample */
  gs__prefetch *prefetch; /* the running worker of this epoch, or NULL */
};

/* How many samples the batch starting at pos holds: 0 at the end of the epoch (or a short
 * last batch with drop_last). */
int64_t gs__loader_batch_count(const gs_data_loader *l, int64_t pos);

/* Collates the count samples at order[pos..] on the calling thread inside a "collate" scope,
 * under no_grad: the samples die with the scope. engine_held false: the stacked tensors are
 * moved to the scope outside "collate" (gs_data_loader_next without prefetch). engine_held
 * true: they are built while ownership is suspended, belong to no one yet, and the caller
 * hands them over (gs__loader_hand_over) or disposes them. false after reporting. */
bool gs__loader_collate(gs_data_loader *l, int64_t pos, int64_t count, bool engine_held,
                        gs_tensor *out, const char *fn);

/* Starts a worker that collates the current epoch's batches ahead (opt.prefetch of them at
 * most waiting); NULL after reporting. */
gs__prefetch *gs__prefetch_start(gs_data_loader *l);
/* Stops the worker, waits for it, and disposes the batches it collated that nobody took. */
void gs__prefetch_stop(gs__prefetch *p);
/* The next batch of the epoch, in order (engine-held parts, as gs__loader_collate with
 * engine_held): 1, or 0 at the end of the epoch, or -1 after reporting the worker's error. */
int gs__prefetch_take(gs__prefetch *p, gs_tensor *parts, const char *fn);
