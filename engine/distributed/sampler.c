/* sampler.c: DistributedSampler, as torch.utils.data.DistributedSampler: one seeded order of
 * the whole dataset per epoch (the same on every rank), padded by repeating its start up to a
 * multiple of the world size, and every world-th entry from the rank's own offset. The shard
 * is handed to the DataLoader as a dataset, so the loader needs no notion of ranks. */
#include <stdlib.h>

#include "dist-impl.h"

struct gs_dist_sampler {
  gs_dataset inner;
  int rank, world;
  bool shuffle, drop_last;
  uint64_t seed;
  int64_t epoch;
  int64_t num_samples; /* ceil(N / world), floor with drop_last */
  int64_t *indices;    /* this rank's, for the current epoch */
};

static void fill(gs_dist_sampler *s, int64_t epoch) {
  s->epoch = epoch;
  int64_t n = s->inner.length, total = s->num_samples * s->world;
  int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  if (!order)
    abort();
  if (s->shuffle) { /* torch's: randperm(n) from a generator seeded with seed + epoch */
    gs_rng rng;
    gs_rng_seed(&rng, s->seed + (uint64_t)epoch);
    gs_rng_permutation(&rng, order, n);
  } else {
    for (int64_t i = 0; i < n; i++)
      order[i] = i;
  }
  /* Entry k of the padded order is order[k mod n] (PyTorch repeats the list as often as the
   * padding needs); the rank takes k = rank, rank + world, ... */
  for (int64_t i = 0; i < s->num_samples; i++) {
    int64_t k = (int64_t)s->rank + i * s->world;
    s->indices[i] = k < total && n > 0 ? order[k % n] : 0;
  }
  free(order);
}

gs_dist_sampler *gs_dist_sampler_new(const gs_dataset *ds, int rank, int world_size, bool shuffle,
                                     uint64_t seed) {
  const char *fn = "dist_sampler_new";
  if (!ds || !ds->get_item || ds->length <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a dataset with get_item and length > 0, got %s",
              !ds ? "NULL" : !ds->get_item ? "one without get_item" : "an empty one");
    return NULL;
  }
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected 0 <= rank < world_size, got rank %d of %d", rank,
              world_size);
    return NULL;
  }
  gs_dist_sampler *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  s->inner = *ds;
  s->rank = rank;
  s->world = world_size;
  s->shuffle = shuffle;
  s->seed = seed;
  s->num_samples = (ds->length + world_size - 1) / world_size;
  s->indices = malloc((size_t)s->num_samples * sizeof *s->indices);
  if (!s->indices) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate %lld indices",
              (long long)s->num_samples);
    free(s);
    return NULL;
  }
  fill(s, 0);
  return s;
}

void gs_dist_sampler_free(gs_dist_sampler *s) {
  if (!s)
    return;
  free(s->indices);
  free(s);
}

void gs_dist_sampler_set_epoch(gs_dist_sampler *s, int64_t epoch) {
  if (!s) {
    gs__error(GS_ERR_ARGUMENT, "dist_sampler_set_epoch", "expected a sampler, got NULL");
    return;
  }
  fill(s, epoch);
}

void gs_dist_sampler_set_drop_last(gs_dist_sampler *s, bool drop_last) {
  if (!s) {
    gs__error(GS_ERR_ARGUMENT, "dist_sampler_set_drop_last", "expected a sampler, got NULL");
    return;
  }
  /* The indices' array was sized for the padded count, never smaller than the cut one. */
  s->drop_last = drop_last;
  int64_t n = s->inner.length;
  s->num_samples = drop_last ? n / s->world : (n + s->world - 1) / s->world;
  fill(s, s->epoch);
}

int64_t gs_dist_sampler_length(const gs_dist_sampler *s) { return s ? s->num_samples : 0; }

int64_t gs_dist_sampler_index(const gs_dist_sampler *s, int64_t i) {
  return s && i >= 0 && i < s->num_samples ? s->indices[i] : -1;
}

static bool shard_get(void *user, int64_t i, gs_tensor *fields_out) {
  gs_dist_sampler *s = user;
  return s->inner.get_item(s->inner.user, s->indices[i], fields_out);
}

gs_dataset gs_dist_sampler_dataset(gs_dist_sampler *s) {
  if (!s) {
    gs__error(GS_ERR_ARGUMENT, "dist_sampler_dataset", "expected a sampler, got NULL");
    return (gs_dataset){0};
  }
  return (gs_dataset){.length = s->num_samples, .n_fields = s->inner.n_fields,
                      .get_item = shard_get, .user = s, .release = NULL};
}
