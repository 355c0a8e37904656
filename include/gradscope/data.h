/* gradscope/data.h: datasets and a DataLoader (PyTorch's torch.utils.data, in C).
 *
 * A dataset is a length and a callback that produces one sample's tensors (features, label,
 * ...). A loader walks a dataset in batches: optionally shuffled by a seeded generator, the
 * last short batch kept or dropped. Each batch is collated (the samples' tensors stacked along
 * a new first dimension) inside its own dispose scope named "collate": the per-sample tensors
 * die with that scope and the finished batch tensors are moved out to the scope that was
 * current when gs_data_loader_next was called (or become caller-owned when none was).
 *
 * There is no prefetch thread: batches are collated on the calling thread, on demand.
 */
#pragma once

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
} gs_dataset;

/* A dataset over whole tensors: sample i is row i of each (views, from gs_select), and all
 * must have the same first size. It keeps the handles only: the tensors must outlive it and
 * are not disposed by it. n is 1..GS_DATASET_MAX_FIELDS. Free it with gs_dataset_release.
 * On error it returns a dataset with n_fields 0 and get_item NULL. */
GS_API gs_dataset gs_tensor_dataset(const gs_tensor *tensors, int n);
/* Calls ds->release(ds->user) if set and clears the dataset. NULL does nothing. */
GS_API void gs_dataset_release(gs_dataset *ds);

typedef struct gs_loader_options {
  int64_t batch_size; /* > 0 */
  bool shuffle;
  uint64_t seed;      /* epoch e shuffles with a generator seeded with seed + e */
  bool drop_last;     /* drop the last batch when it is smaller than batch_size */
} gs_loader_options;

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
 * tensors belong to the scope current at the call (caller-owned with no scope open). */
GS_API bool gs_data_loader_next(gs_data_loader *l, gs_tensor *out);
/* The current epoch number (-1 before the first), and batches per epoch. */
GS_API int64_t gs_data_loader_epoch(const gs_data_loader *l);
GS_API int64_t gs_data_loader_num_batches(const gs_data_loader *l);

#ifdef __cplusplus
}
#endif
