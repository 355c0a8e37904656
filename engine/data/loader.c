/* loader.c: datasets and the DataLoader (include/gradscope/data.h).
 *
 * Collation follows the scope pattern of the seeds: open a "collate" scope, fetch the
 * samples (their tensors are owned by it), stack each field, move the stacked tensors out, end
 * the collate scope (disposing the samples). A dataset with get_items (a tensor dataset) gives
 * each field's stacked batch in one call instead, with no tensor per sample: for the digits
 * example's batches of 16 that was 32 views made and disposed, and two stacks, per step. Without
 * prefetch this runs on the calling thread at each call; with it, prefetch.c runs it ahead on a
 * thread, and with num_workers workers.c runs it in worker processes (into shared memory); either
 * way the batches are handed over here. A batch composite (gs_data_loader_next_batch) is assembled
 * at the hand-over. Datasets over tensors are dataset.c's. */
#include <stdlib.h>
#include <string.h>

#include "gradscope/data.h"
#include "interop-impl.h"
#include "loader-impl.h"
#include "ops-impl.h"
#include "scope-impl.h"

_Static_assert(GS_DATASET_MAX_FIELDS <= GS__COMPOSITE_MAX_PARTS,
               "a batch holds one composite part per field");

/* ---- loader ---------------------------------------------------------------------------- */

gs_data_loader *gs_data_loader_new(const gs_dataset *ds, const gs_loader_options *opt) {
  const char *fn = "data_loader_new";
  if (!ds || !opt) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dataset and options, got %s and %s",
              ds ? "a dataset" : "NULL", opt ? "options" : "NULL");
    return NULL;
  }
  if (!ds->get_item) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dataset with a get_item callback, got NULL");
    return NULL;
  }
  if (ds->n_fields < 1 || ds->n_fields > GS_DATASET_MAX_FIELDS) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dataset of 1 to %d fields per sample, got %d",
              GS_DATASET_MAX_FIELDS, ds->n_fields);
    return NULL;
  }
  if (ds->length < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dataset length >= 0, got %lld",
              (long long)ds->length);
    return NULL;
  }
  if (opt->batch_size <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected batch_size > 0, got %lld",
              (long long)opt->batch_size);
    return NULL;
  }
  if ((uint64_t)opt->batch_size > SIZE_MAX / sizeof(gs_tensor) / GS_DATASET_MAX_FIELDS ||
      (uint64_t)ds->length > SIZE_MAX / sizeof(int64_t)) {
    gs__error(GS_ERR_OVERFLOW, fn, "batch_size %lld or length %lld is too large",
              (long long)opt->batch_size, (long long)ds->length);
    return NULL;
  }
  if (opt->prefetch < 0 || opt->prefetch > GS_LOADER_MAX_PREFETCH) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected prefetch in 0..%d (batches collated ahead), got %d",
              GS_LOADER_MAX_PREFETCH, opt->prefetch);
    return NULL;
  }
  if (opt->num_workers < 0 || opt->num_workers > GS_LOADER_MAX_WORKERS) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected num_workers in 0..%d (worker processes), got %d",
              GS_LOADER_MAX_WORKERS, opt->num_workers);
    return NULL;
  }
  if (opt->timeout_ms < 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected timeout_ms >= 0 (0: no limit), got %d",
              opt->timeout_ms);
    return NULL;
  }
  /* A batch never holds more samples than the dataset. */
  int64_t cap = opt->batch_size < ds->length ? opt->batch_size : ds->length;
  if (cap < 1)
    cap = 1;
  gs_data_loader *l = calloc(1, sizeof *l);
  if (l) {
    l->order = malloc((size_t)(ds->length > 0 ? ds->length : 1) * sizeof *l->order);
    l->samples = malloc((size_t)cap * (size_t)ds->n_fields * sizeof *l->samples);
    l->column = malloc((size_t)cap * sizeof *l->column);
  }
  if (!l || !l->order || !l->samples || !l->column) {
    gs_data_loader_free(l);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot allocate a loader over %lld samples",
              (long long)ds->length);
    return NULL;
  }
  l->ds = *ds;
  l->opt = *opt;
  l->epoch = -1;
  l->pos = ds->length; /* no epoch started */
  return l;
}

void gs_data_loader_free(gs_data_loader *l) {
  if (!l)
    return;
  gs__prefetch_stop(l->prefetch); /* batches in flight are disposed */
  gs__workers_stop(l->workers);   /* no process or segment is left behind */
  free(l->order);
  free(l->samples);
  free(l->column);
  free(l);
}

void gs__loader_order(gs_data_loader *l, int64_t epoch) {
  int64_t n = l->ds.length;
  if (l->opt.shuffle) { /* torch.randperm(n) from a generator seeded with seed + epoch */
    gs_rng rng;
    gs_rng_seed(&rng, l->opt.seed + (uint64_t)epoch);
    gs_rng_permutation(&rng, l->order, n);
  } else {
    for (int64_t i = 0; i < n; i++)
      l->order[i] = i;
  }
}

void gs_data_loader_set_seed(gs_data_loader *l, uint64_t seed) {
  if (!l) {
    gs__error(GS_ERR_ARGUMENT, "data_loader_set_seed", "expected a loader, got NULL");
    return;
  }
  l->opt.seed = seed;
}

void gs_data_loader_reset(gs_data_loader *l) {
  if (!l) {
    gs__error(GS_ERR_ARGUMENT, "data_loader_reset", "expected a loader, got NULL");
    return;
  }
  gs__prefetch_stop(l->prefetch); /* the worker reads order: stop it before changing it */
  l->prefetch = NULL;
  if (!l->opt.persistent_workers) {
    gs__workers_stop(l->workers); /* they collate the old epoch's order */
    l->workers = NULL;
  }
  l->epoch++;
  gs__loader_order(l, l->epoch);
  l->pos = 0;
  int64_t n = l->ds.length;
  if (l->workers && !gs__workers_next_epoch(l->workers)) {
    gs__workers_stop(l->workers); /* one failed or died: the next epoch gets fresh ones */
    l->workers = NULL;
  }
  if (l->opt.num_workers > 0 && !l->workers) {
    /* NULL after an error: the epoch then has no batches (collating here instead would
     * quietly give up what the caller asked workers for). */
    l->workers = gs__workers_start(l);
    if (!l->workers)
      l->pos = n;
  } else if (l->opt.prefetch > 0) {
    l->prefetch = gs__prefetch_start(l); /* NULL after an error: next then collates itself */
  }
}

int64_t gs_data_loader_epoch(const gs_data_loader *l) {
  if (!l) {
    gs__error(GS_ERR_ARGUMENT, "data_loader_epoch", "expected a loader, got NULL");
    return -1;
  }
  return l->epoch;
}

int64_t gs_data_loader_num_batches(const gs_data_loader *l) {
  if (!l) {
    gs__error(GS_ERR_ARGUMENT, "data_loader_num_batches", "expected a loader, got NULL");
    return -1;
  }
  int64_t n = l->ds.length, b = l->opt.batch_size;
  return l->opt.drop_last ? n / b : (n + b - 1) / b;
}

int64_t gs__loader_batch_count(const gs_data_loader *l, int64_t pos) {
  int64_t remaining = l->ds.length - pos;
  if (remaining <= 0 || (l->opt.drop_last && remaining < l->opt.batch_size))
    return 0;
  return remaining < l->opt.batch_size ? remaining : l->opt.batch_size;
}

/* Stacks field f of the count samples, into shared memory if asked; NO_TENSOR on error
 * (reported by the stack). */
static gs_tensor stack_field(gs_data_loader *l, int f, int64_t count, bool shared,
                             const char *fn) {
  for (int64_t i = 0; i < count; i++)
    l->column[i] = l->samples[i * l->ds.n_fields + f];
  if (shared)
    return gs__stack_into(l->column, (int)count, 0,
                          l->shared_maker ? l->shared_maker : gs__empty_shared, fn);
  return gs_stack(l->column, (int)count, 0);
}

bool gs__loader_collate(gs_data_loader *l, int64_t pos, int64_t count, gs__collate_into into,
                        gs_tensor *out, const char *fn) {
  if (count > INT32_MAX) {
    gs__error(GS_ERR_OVERFLOW, fn, "a batch of %lld samples is more than gs_stack takes",
              (long long)count);
    return false;
  }
  int nf = l->ds.n_fields;
  gs_scope collate = gs_scope_begin("collate");
  gs_no_grad_begin();
  /* Engine-held: built while ownership is suspended, so they count nowhere until handed over
   * (as a composite's parts must). */
  bool engine_held = into != GS__COLLATE_MOVED_OUT;
  gs_tensor batch[GS_DATASET_MAX_FIELDS] = {0};
  bool ok = true, batched = l->ds.get_items && into != GS__COLLATE_SHARED;
  if (batched) { /* the whole batch at once (PyTorch's __getitems__) */
    if (engine_held)
      gs__ownership_suspend();
    ok = l->ds.get_items(l->ds.user, &l->order[pos], count, batch);
    if (!ok)
      gs__error(GS_ERR_STATE, fn, "the dataset's get_items failed for a batch of %lld samples",
                (long long)count);
    for (int f = 0; f < nf && ok; f++) {
      ok = gs_is_alive(batch[f]) && gs_ndim(batch[f]) >= 1 && gs_size(batch[f], 0) == count;
      if (!ok)
        gs__error(GS_ERR_STATE, fn,
                  "the dataset's get_items gave no live tensor of %lld samples for field %d",
                  (long long)count, f);
    }
    if (engine_held)
      gs__ownership_resume();
  }
  for (int64_t i = 0; i < count && ok && !batched; i++) {
    int64_t index = l->order[pos + i];
    gs_tensor *fields = &l->samples[i * nf];
    for (int f = 0; f < nf; f++)
      fields[f] = GS_NO_TENSOR;
    if (!l->ds.get_item(l->ds.user, index, fields)) {
      gs__error(GS_ERR_STATE, fn, "the dataset's get_item failed for sample %lld",
                (long long)index);
      ok = false;
      break;
    }
    for (int f = 0; f < nf; f++) {
      if (!gs_is_alive(fields[f])) {
        gs__error(GS_ERR_STATE, fn,
                  "the dataset's get_item gave no live tensor for field %d of sample %lld", f,
                  (long long)index);
        ok = false;
        break;
      }
    }
  }
  if (engine_held)
    gs__ownership_suspend();
  for (int f = 0; f < nf && ok && !batched; f++) {
    batch[f] = stack_field(l, f, count, into == GS__COLLATE_SHARED, fn);
    ok = batch[f].id != 0;
  }
  if (engine_held) {
    gs__ownership_resume();
    if (!ok)
      for (int f = 0; f < nf; f++)
        if (batch[f].id)
          gs__dispose_as(batch[f], "a failed collation");
  } else if (ok) {
    for (int f = 0; f < nf; f++)
      gs_move_to_outer(batch[f]);
  }
  gs_no_grad_end();
  /* Disposes the samples (and, on error, whatever was stacked). Samples that get_item made
   * outside this scope (detached, or owned elsewhere) are the dataset's business. */
  gs_scope_end(collate);
  if (ok)
    memcpy(out, batch, (size_t)nf * sizeof *out);
  return ok;
}

/* Tells the dataset which samples the next batch of this epoch holds (gs_dataset's
 * will_need), once a batch was collated here. */
static void hint_next_batch(const gs_data_loader *l) {
  int64_t count = l->ds.will_need ? gs__loader_batch_count(l, l->pos) : 0;
  if (count > 0)
    l->ds.will_need(l->ds.user, &l->order[l->pos], count);
}

/* The next batch's engine-held parts, from the prefetch worker or collated here: 1, 0 at the
 * end of the epoch, -1 after an error. */
static int next_engine_held(gs_data_loader *l, gs_tensor *parts, const char *fn) {
  if (l->epoch < 0)
    gs_data_loader_reset(l);
  if (l->workers)
    return gs__workers_take(l->workers, parts, fn);
  if (l->prefetch)
    return gs__prefetch_take(l->prefetch, parts, fn);
  int64_t count = gs__loader_batch_count(l, l->pos);
  if (count == 0)
    return 0;
  if (!gs__loader_collate(l, l->pos, count, GS__COLLATE_ENGINE_HELD, parts, fn))
    return -1;
  l->pos += count;
  hint_next_batch(l);
  return 1;
}

bool gs_data_loader_next(gs_data_loader *l, gs_tensor *out) {
  const char *fn = "data_loader_next";
  if (!l || !out) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a loader and an output array, got %s and %s",
              l ? "a loader" : "NULL", out ? "an array" : "NULL");
    return false;
  }
  if (l->epoch < 0)
    gs_data_loader_reset(l);
  if (l->prefetch || l->workers) {
    /* Collated on the thread or in a worker process: the tensors become new objects of this
     * thread's scope. */
    gs_tensor parts[GS_DATASET_MAX_FIELDS] = {0};
    if (next_engine_held(l, parts, fn) != 1)
      return false;
    for (int f = 0; f < l->ds.n_fields; f++)
      gs__own_adopt(parts[f]);
    memcpy(out, parts, (size_t)l->ds.n_fields * sizeof *out);
    return true;
  }
  int64_t count = gs__loader_batch_count(l, l->pos);
  if (count == 0 || !gs__loader_collate(l, l->pos, count, GS__COLLATE_MOVED_OUT, out, fn))
    return false;
  l->pos += count;
  hint_next_batch(l);
  return true;
}

gs_batch gs_data_loader_next_batch(gs_data_loader *l) {
  const char *fn = "data_loader_next_batch";
  if (!l) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a loader, got NULL");
    return GS_NO_BATCH;
  }
  gs_tensor parts[GS_DATASET_MAX_FIELDS] = {0};
  if (next_engine_held(l, parts, fn) != 1)
    return GS_NO_BATCH;
  return (gs_batch){gs__composite_new(GS_OBJECT_BATCH, parts, l->ds.n_fields, fn)};
}
