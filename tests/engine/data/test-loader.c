/* test-loader.c: datasets and the DataLoader (issue 6, Data): every sample once per epoch,
 * batch sizes, seeded shuffles, batch contents, and batches that survive the "collate" scope
 * and belong to the caller's scope, with the scope statistics of one batch counted exactly;
 * the prefetch thread (same order as without, every sample once, hand-over to the consumer's
 * scope, reset and free with batches in flight; the TSan build runs these too), batches
 * as one composite object, and the hint of the next batch a dataset is given. */
#include <pthread.h>

#include "test-util.h"

#define N_ROWS 10
#define N_COLS 3

/* x[i][j] = 10 i + j (f32), y[i] = i (i64). */
static void make_xy(int64_t rows, gs_tensor *x, gs_tensor *y) {
  float xs[64 * N_COLS];
  int64_t ys[64];
  g_assert_cmpint(rows, <=, 64);
  for (int64_t i = 0; i < rows; i++) {
    ys[i] = i;
    for (int j = 0; j < N_COLS; j++)
      xs[i * N_COLS + j] = (float)(10 * i + j);
  }
  *x = gs_from_data(GS_F32, (int64_t[]){rows, N_COLS}, 2, xs);
  *y = gs_from_data(GS_I64, (int64_t[]){rows}, 1, ys);
}

/* Checks one batch of the x/y dataset (rows are stacked copies of the right samples), records
 * the sample indices in seen (counting) and order (in batch order, from *pos). Returns its size. */
static int64_t check_xy_batch(const gs_tensor *batch, int *seen, int64_t *order, int64_t *pos) {
  g_assert_cmpint(gs_ndim(batch[0]), ==, 2);
  g_assert_cmpint(gs_ndim(batch[1]), ==, 1);
  int64_t b = gs_size(batch[1], 0);
  g_assert_cmpint(gs_size(batch[0], 0), ==, b);
  g_assert_cmpint(gs_size(batch[0], 1), ==, N_COLS);
  g_assert_cmpint(gs_dtype_of(batch[0]), ==, GS_F32);
  g_assert_cmpint(gs_dtype_of(batch[1]), ==, GS_I64);
  float xs[64 * N_COLS];
  int64_t ys[64];
  g_assert_cmpint(gs_copy_to(batch[0], xs, sizeof xs), ==, 0);
  g_assert_cmpint(gs_copy_to(batch[1], ys, sizeof ys), ==, 0);
  for (int64_t r = 0; r < b; r++) {
    int64_t i = ys[r];
    g_assert_cmpint(i, >=, 0);
    g_assert_cmpint(i, <, 64);
    for (int j = 0; j < N_COLS; j++)
      g_assert_cmpfloat(xs[r * N_COLS + j], ==, (float)(10 * i + j));
    seen[i]++;
    if (order)
      order[(*pos)++] = i;
  }
  return b;
}

/* Runs one epoch; writes batch sizes into sizes (returns their count) and the order. */
static int run_epoch(gs_data_loader *l, int64_t rows, int64_t *sizes, int64_t *order) {
  int seen[64] = {0};
  int64_t pos = 0;
  int n = 0;
  gs_tensor batch[2];
  while (gs_data_loader_next(l, batch)) {
    sizes[n++] = check_xy_batch(batch, seen, order, &pos);
    gs_dispose(batch[0]);
    gs_dispose(batch[1]);
  }
  /* Once at the end, always at the end. */
  g_assert_false(gs_data_loader_next(l, batch));
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    total += sizes[i];
  g_assert_cmpint(total, ==, pos);
  for (int64_t i = 0; i < rows; i++)
    g_assert_cmpint(seen[i], <=, 1);
  return n;
}

static void assert_permutation(const int64_t *order, int64_t n) {
  int seen[64] = {0};
  for (int64_t i = 0; i < n; i++)
    seen[order[i]]++;
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpint(seen[i], ==, 1);
}

static void test_sequential_epoch(void) {
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  g_assert_cmpint(ds.length, ==, N_ROWS);
  g_assert_cmpint(ds.n_fields, ==, 2);
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 3});
  g_assert_cmpint(gs_data_loader_epoch(l), ==, -1);
  g_assert_cmpint(gs_data_loader_num_batches(l), ==, 4);
  for (int epoch = 0; epoch < 2; epoch++) {
    if (epoch > 0)
      gs_data_loader_reset(l);
    int64_t sizes[16], order[64];
    int n = run_epoch(l, N_ROWS, sizes, order);
    g_assert_cmpint(gs_data_loader_epoch(l), ==, epoch);
    g_assert_cmpint(n, ==, 4);
    g_assert_cmpint(sizes[0], ==, 3);
    g_assert_cmpint(sizes[1], ==, 3);
    g_assert_cmpint(sizes[2], ==, 3);
    g_assert_cmpint(sizes[3], ==, 1);
    for (int64_t i = 0; i < N_ROWS; i++)
      g_assert_cmpint(order[i], ==, i);
  }
  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  g_assert_null(ds.user);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

static void test_shuffled_epochs(void) {
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  gs_loader_options opt = {.batch_size = 4, .shuffle = true, .seed = 42};
  gs_data_loader *a = gs_data_loader_new(&ds, &opt);
  gs_data_loader *b = gs_data_loader_new(&ds, &opt);
  int64_t sizes[16], order_a[2][64], order_b[2][64];
  for (int epoch = 0; epoch < 2; epoch++) {
    gs_data_loader_reset(a);
    gs_data_loader_reset(b);
    g_assert_cmpint(run_epoch(a, N_ROWS, sizes, order_a[epoch]), ==, 3);
    g_assert_cmpint(sizes[0], ==, 4);
    g_assert_cmpint(sizes[1], ==, 4);
    g_assert_cmpint(sizes[2], ==, 2);
    g_assert_cmpint(run_epoch(b, N_ROWS, sizes, order_b[epoch]), ==, 3);
    assert_permutation(order_a[epoch], N_ROWS);
    /* Same seed, same order. */
    g_assert_cmpmem(order_a[epoch], N_ROWS * sizeof(int64_t), order_b[epoch],
                    N_ROWS * sizeof(int64_t));
  }
  /* Different epochs, different orders; shuffled at all. */
  g_assert_true(memcmp(order_a[0], order_a[1], N_ROWS * sizeof(int64_t)) != 0);
  bool identity = true;
  for (int64_t i = 0; i < N_ROWS; i++)
    identity = identity && order_a[0][i] == i;
  g_assert_false(identity);

  /* Epoch e uses seed + e: epoch 1 of seed 42 is epoch 0 of seed 43. */
  gs_data_loader *c = gs_data_loader_new(&ds, &(gs_loader_options){4, true, 43, false});
  int64_t order_c[64];
  run_epoch(c, N_ROWS, sizes, order_c); /* next() starts epoch 0 itself */
  g_assert_cmpint(gs_data_loader_epoch(c), ==, 0);
  g_assert_cmpmem(order_c, N_ROWS * sizeof(int64_t), order_a[1], N_ROWS * sizeof(int64_t));
  /* A different seed, a different order. */
  gs_data_loader *d = gs_data_loader_new(&ds, &(gs_loader_options){4, true, 7, false});
  int64_t order_d[64];
  run_epoch(d, N_ROWS, sizes, order_d);
  g_assert_true(memcmp(order_d, order_a[0], N_ROWS * sizeof(int64_t)) != 0);

  gs_data_loader_free(a);
  gs_data_loader_free(b);
  gs_data_loader_free(c);
  gs_data_loader_free(d);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

static void test_drop_last(void) {
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  for (int shuffle = 0; shuffle < 2; shuffle++) {
    gs_data_loader *l = gs_data_loader_new(
        &ds, &(gs_loader_options){.batch_size = 3, .shuffle = shuffle, .seed = 5,
                                  .drop_last = true});
    g_assert_cmpint(gs_data_loader_num_batches(l), ==, 3);
    int64_t sizes[16], order[64];
    g_assert_cmpint(run_epoch(l, N_ROWS, sizes, order), ==, 3);
    for (int i = 0; i < 3; i++)
      g_assert_cmpint(sizes[i], ==, 3);
    gs_data_loader_free(l);
  }
  /* An exact multiple keeps every batch either way; a batch larger than the dataset. */
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 5,
                                                                    .drop_last = true});
  int64_t sizes[16], order[64];
  g_assert_cmpint(run_epoch(l, N_ROWS, sizes, order), ==, 2);
  assert_permutation(order, N_ROWS);
  gs_data_loader_free(l);
  l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 64});
  g_assert_cmpint(run_epoch(l, N_ROWS, sizes, order), ==, 1);
  g_assert_cmpint(sizes[0], ==, N_ROWS);
  gs_data_loader_free(l);
  l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 64, .drop_last = true});
  g_assert_cmpint(gs_data_loader_num_batches(l), ==, 0);
  g_assert_cmpint(run_epoch(l, N_ROWS, sizes, order), ==, 0);
  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

#define assert_stats(co, dout, ci, di, att, det, lv)                                          \
  do {                                                                                       \
    gs_scope_stats s_ = gs_thread_scope_stats(GS_OBJECT_TENSOR);                             \
    g_assert_cmpuint(s_.created_outside_scope, ==, co);                                      \
    g_assert_cmpuint(s_.disposed_outside_scope, ==, dout);                                   \
    g_assert_cmpuint(s_.created_in_scope, ==, ci);                                           \
    g_assert_cmpuint(s_.disposed_in_scope, ==, di);                                          \
    g_assert_cmpuint(s_.attached_to_scope, ==, att);                                         \
    g_assert_cmpuint(s_.detached_from_scope, ==, det);                                       \
    g_assert_cmpint(s_.live, ==, lv);                                                        \
  } while (0)

/* One batch of B samples and F fields in a "step" scope, from a dataset of samples only (no
 * get_items): the collate scope creates B*F sample views and F stacked batches, disposes the
 * B*F views when it ends, and the F batches move to "step" (a move between scopes changes no
 * counter) and die with it. */
static void test_batch_survives_collate_scope(void) {
  const int64_t B = 4, F = 2;
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  ds.get_items = NULL; /* one sample at a time, as a dataset with get_item only */
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = B,
                                                                    .shuffle = true});
  uint64_t live = gs_live_tensor_count();
  gs_thread_scope_stats_reset();

  gs_scope step = gs_scope_begin("step");
  gs_tensor batch[2];
  g_assert_true(gs_data_loader_next(l, batch));
  g_assert_cmpuint(gs_scope_current().id, ==, step.id); /* collate is gone */
  for (int f = 0; f < F; f++) {
    g_assert_true(gs_is_alive(batch[f]));
    g_assert_cmpuint(gs_owner_scope(batch[f]).id, ==, step.id);
    g_assert_cmpint(gs_size(batch[f], 0), ==, B);
  }
  assert_stats(0, 0, B * F + F, B * F, 0, 0, F);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live + F);
  gs_scope_info info = gs_scope_get_info(step);
  g_assert_cmpuint(info.alive, ==, F);
  g_assert_cmpuint(info.bytes, ==, B * N_COLS * 4 + B * 8);
  /* Usable after the collate scope ended. */
  int seen[64] = {0};
  int64_t pos = 0;
  check_xy_batch(batch, seen, NULL, &pos);
  gs_scope_end(step);
  for (int f = 0; f < F; f++)
    g_assert_false(gs_is_alive(batch[f]));
  assert_stats(0, 0, B * F + F, B * F + F, 0, 0, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);

  /* With no scope open the batch is caller-owned: the move out of "collate" is a detach. */
  gs_thread_scope_stats_reset();
  g_assert_true(gs_data_loader_next(l, batch));
  g_assert_cmpuint(gs_owner_scope(batch[0]).id, ==, 0);
  g_assert_cmpuint(gs_owner_scope(batch[1]).id, ==, 0);
  assert_stats(0, 0, B * F + F, B * F, 0, F, F);
  gs_dispose(batch[0]);
  gs_dispose(batch[1]);
  assert_stats(0, F, B * F + F, B * F, 0, F, 0);

  /* Nested: the batch goes to the innermost scope current at the call. */
  gs_scope outer = gs_scope_begin("epoch");
  gs_scope inner = gs_scope_begin("step");
  g_assert_true(gs_data_loader_next(l, batch));
  g_assert_cmpuint(gs_owner_scope(batch[0]).id, ==, inner.id);
  gs_scope_end(inner);
  g_assert_false(gs_is_alive(batch[0]));
  gs_scope_end(outer);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);

  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

/* The whole batch's field values as bytes (x then y), for comparing two loaders' batches. */
static GBytes *batch_bytes(const gs_tensor *batch) {
  int64_t b = gs_size(batch[0], 0);
  size_t nx = sizeof(float) * (size_t)(b * N_COLS), ny = sizeof(int64_t) * (size_t)b;
  char *buf = g_malloc(nx + ny);
  g_assert_cmpint(gs_copy_to(batch[0], buf, nx), ==, 0);
  g_assert_cmpint(gs_copy_to(batch[1], buf + nx, ny), ==, 0);
  return g_bytes_new_take(buf, nx + ny);
}

/* A tensor dataset gives each batch through get_items: the collate scope creates only the F
 * batch tensors (no view per sample, none disposed), and the batches are the ones collating
 * sample by sample gives, in the same seeded order, with and without the prefetch thread. */
static void test_tensor_dataset_batches_without_sample_tensors(void) {
  const int64_t B = 4, F = 2;
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  g_assert_nonnull(ds.get_items);
  gs_dataset per_sample = ds;
  per_sample.get_items = NULL;
  per_sample.release = NULL; /* ds releases the shared user */
  for (int prefetch = 0; prefetch <= 2; prefetch += 2) {
    gs_loader_options opt = {.batch_size = B, .shuffle = true, .seed = 7, .prefetch = prefetch};
    gs_data_loader *batched = gs_data_loader_new(&ds, &opt);
    gs_data_loader *samples = gs_data_loader_new(&per_sample, &opt);
    uint64_t live = gs_live_tensor_count();
    int seen[64] = {0}, batches = 0;
    int64_t pos = 0;
    for (;;) {
      gs_thread_scope_stats_reset();
      gs_scope step = gs_scope_begin("step");
      gs_tensor got[2], want[2];
      bool more = gs_data_loader_next(batched, got);
      g_assert_true(more == gs_data_loader_next(samples, want));
      if (!more) {
        gs_scope_end(step);
        break;
      }
      gs_scope_stats st = gs_thread_scope_stats(GS_OBJECT_TENSOR);
      if (prefetch == 0) { /* counted in "collate"; with prefetch, where handed over */
        g_assert_cmpuint(st.created_in_scope, ==, F + F * gs_size(want[0], 0) + F);
        g_assert_cmpuint(st.disposed_in_scope, ==, F * gs_size(want[0], 0));
      }
      check_xy_batch(got, seen, NULL, &pos);
      GBytes *a = batch_bytes(got), *b = batch_bytes(want);
      g_assert_true(g_bytes_equal(a, b));
      g_bytes_unref(a), g_bytes_unref(b);
      gs_scope_end(step);
      batches++;
    }
    g_assert_cmpint(batches, ==, (N_ROWS + B - 1) / B);
    for (int i = 0; i < N_ROWS; i++)
      g_assert_cmpint(seen[i], ==, 1);
    g_assert_cmpuint(gs_live_tensor_count(), ==, live);
    gs_data_loader_free(batched);
    gs_data_loader_free(samples);
  }
  gs_dataset_release(&ds);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

/* ---- a custom dataset: sample i is (i*i as a f64 scalar, [i, -i] as f32) --------------- */

typedef struct {
  int calls;
  int64_t fail_at; /* -1: never */
} custom_user;

static bool custom_get(void *user, int64_t index, gs_tensor *out) {
  custom_user *u = user;
  u->calls++;
  if (index == u->fail_at)
    return false;
  out[0] = gs_scalar(GS_F64, (double)(index * index));
  out[1] = gs_from_data(GS_F32, (int64_t[]){2}, 1, (float[]){(float)index, (float)-index});
  return true;
}

/* get_items for the error cases: mode 0 fails, mode 1 gives a tensor one sample short. */
static bool bad_get_items(void *user, const int64_t *indices, int64_t count, gs_tensor *out) {
  (void)indices;
  if (*(int *)user == 0)
    return false;
  out[0] = gs_zeros(GS_F32, (int64_t[]){count - 1, 2}, 2);
  return true;
}

static bool unused_get_item(void *user, int64_t index, gs_tensor *out) {
  (void)user, (void)index, (void)out;
  g_assert_not_reached();
  return false;
}

/* A failing get_items, or one whose tensor is not the batch asked for: an error that says so,
 * no batch, and nothing left alive (what get_items made dies with the collate scope). */
static void test_get_items_errors(void) {
  uint64_t live = gs_live_tensor_count();
  for (int mode = 0; mode < 2; mode++) {
    gs_dataset ds = {.length = 8,
                     .n_fields = 1,
                     .get_item = unused_get_item,
                     .user = &mode,
                     .get_items = bad_get_items};
    gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4});
    gs_tensor batch[1];
    bool got = true;
    EXPECT_ERROR(got = gs_data_loader_next(l, batch),
                 mode == 0
                     ? "the dataset's get_items failed for a batch of 4 samples"
                     : "the dataset's get_items gave no live tensor of 4 samples for field 0");
    g_assert_false(got);
    g_assert_cmpuint(gs_live_tensor_count(), ==, live);
    gs_data_loader_free(l);
  }
}

/* A tensor dataset behind a recorder of what the loader asks of it and hints to it. */
typedef struct hint_recorder {
  gs_dataset inner;
  int64_t hinted[N_ROWS], n_hinted; /* the last will_need's indices */
  int hints;
} hint_recorder;

static bool recorded_get_item(void *user, int64_t index, gs_tensor *out) {
  hint_recorder *r = user;
  return r->inner.get_item(r->inner.user, index, out);
}

/* Each batch asked for is the one the last hint named (none before the epoch's first). */
static bool recorded_get_items(void *user, const int64_t *indices, int64_t count, gs_tensor *out) {
  hint_recorder *r = user;
  if (r->n_hinted) {
    g_assert_cmpint(count, ==, r->n_hinted);
    for (int64_t i = 0; i < count; i++)
      g_assert_cmpint(indices[i], ==, r->hinted[i]);
  }
  r->n_hinted = 0;
  return r->inner.get_items(r->inner.user, indices, count, out);
}

static void recorded_will_need(void *user, const int64_t *indices, int64_t count) {
  hint_recorder *r = user;
  g_assert_cmpint(count, <=, N_ROWS);
  memcpy(r->hinted, indices, (size_t)count * sizeof *indices);
  r->n_hinted = count;
  r->hints++;
  r->inner.will_need(r->inner.user, indices, count); /* the prefetch itself, which must not fail */
}

/* A loader collating in this process hints the next batch of the epoch to the dataset right
 * after each batch (gs_dataset's will_need): the hint names exactly the samples the next
 * get_items asks for, in order, through gs_data_loader_next and _next_batch, and the last
 * batch of an epoch hints nothing (the next epoch's order is not drawn yet). */
static void test_will_need_names_the_next_batch(void) {
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  hint_recorder r = {.inner = gs_tensor_dataset(xy, 2)};
  g_assert_nonnull(r.inner.will_need);
  gs_dataset ds = {.length = N_ROWS,
                   .n_fields = 2,
                   .get_item = recorded_get_item,
                   .user = &r,
                   .get_items = recorded_get_items,
                   .will_need = recorded_will_need};
  gs_data_loader *l =
      gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4, .shuffle = true, .seed = 3});
  for (int epoch = 0; epoch < 2; epoch++) {
    r.hints = 0;
    r.n_hinted = 0;
    gs_data_loader_reset(l);
    int batches = 0;
    gs_scope step = gs_scope_begin("step");
    if (epoch == 0) {
      gs_tensor batch[2];
      while (gs_data_loader_next(l, batch))
        batches++;
    } else {
      for (gs_batch b; (b = gs_data_loader_next_batch(l)).id;)
        batches++;
    }
    gs_scope_end(step);
    g_assert_cmpint(batches, ==, 3); /* 4, 4 and 2 samples */
    g_assert_cmpint(r.hints, ==, 2);
    g_assert_cmpint(r.n_hinted, ==, 0); /* the last batch asked for what was hinted */
  }
  gs_data_loader_free(l);
  gs_dataset_release(&r.inner);
  gs_dispose(xy[0]);
  gs_dispose(xy[1]);
}

static void test_custom_dataset(void) {
  uint64_t live = gs_live_tensor_count();
  custom_user u = {0, -1};
  gs_dataset ds = {.length = 7, .n_fields = 2, .get_item = custom_get, .user = &u};
  gs_data_loader *l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 3,
                                                                    .shuffle = true,
                                                                    .seed = 1});
  int seen[7] = {0};
  int64_t total = 0;
  gs_scope step = gs_scope_begin("step");
  gs_tensor batch[2];
  while (gs_data_loader_next(l, batch)) {
    int64_t b = gs_size(batch[0], 0);
    g_assert_cmpint(gs_ndim(batch[0]), ==, 1);
    g_assert_cmpint(gs_dtype_of(batch[0]), ==, GS_F64);
    g_assert_cmpint(gs_ndim(batch[1]), ==, 2);
    g_assert_cmpint(gs_size(batch[1], 0), ==, b);
    g_assert_cmpint(gs_size(batch[1], 1), ==, 2);
    for (int64_t r = 0; r < b; r++) {
      double sq = gs_get(batch[0], (int64_t[]){r});
      double i = gs_get(batch[1], (int64_t[]){r, 0});
      g_assert_cmpfloat(gs_get(batch[1], (int64_t[]){r, 1}), ==, -i);
      g_assert_cmpfloat(sq, ==, i * i);
      seen[(int)i]++;
    }
    total += b;
    g_assert_cmpuint(gs_owner_scope(batch[0]).id, ==, step.id);
  }
  gs_scope_end(step);
  g_assert_cmpint(total, ==, 7);
  g_assert_cmpint(u.calls, ==, 7);
  for (int i = 0; i < 7; i++)
    g_assert_cmpint(seen[i], ==, 1);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);

  /* A failing get_item: an error naming the sample, no batch, nothing leaked. */
  gs_data_loader_reset(l);
  u.fail_at = 2;
  bool got = true;
  gs_data_loader *seq = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4});
  EXPECT_ERROR(got = gs_data_loader_next(seq, batch), "get_item failed for sample 2");
  g_assert_false(got);
  g_assert_cmpuint(gs_scope_current().id, ==, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  gs_data_loader_free(seq);
  gs_data_loader_free(l);
  gs_dataset_release(&ds); /* no release callback: only clears */
}

/* ---- prefetch ------------------------------------------------------------------------------ */

/* Three shuffled epochs with and without prefetch (several depths, batch sizes that do and do
 * not divide the length): the same batches in the same order, every sample once an epoch. */
static void test_prefetch_same_order_as_without(void) {
  gs_tensor xy[2];
  make_xy(37, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  static const int depths[] = {1, 2, 5};
  static const int64_t batch_sizes[] = {4, 37, 1};
  for (size_t k = 0; k < G_N_ELEMENTS(depths); k++) {
    gs_loader_options plain = {.batch_size = batch_sizes[k], .shuffle = true, .seed = 9};
    gs_loader_options ahead = plain;
    ahead.prefetch = depths[k];
    gs_data_loader *a = gs_data_loader_new(&ds, &plain), *b = gs_data_loader_new(&ds, &ahead);
    for (int epoch = 0; epoch < 3; epoch++) {
      int64_t sizes_a[64], sizes_b[64], order_a[64], order_b[64];
      int na = run_epoch(a, 37, sizes_a, order_a), nb = run_epoch(b, 37, sizes_b, order_b);
      g_assert_cmpint(na, ==, nb);
      g_assert_cmpmem(sizes_a, na * sizeof *sizes_a, sizes_b, nb * sizeof *sizes_b);
      g_assert_cmpmem(order_a, 37 * sizeof *order_a, order_b, 37 * sizeof *order_b);
      assert_permutation(order_b, 37);
      g_assert_cmpint(gs_data_loader_epoch(b), ==, epoch);
      gs_data_loader_reset(a);
      gs_data_loader_reset(b);
    }
    gs_data_loader_free(a);
    gs_data_loader_free(b);
  }
  gs_dataset_release(&ds);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
}

/* A prefetched batch was collated in the worker's "collate" scope; it arrives in the consumer's
 * current scope, where this thread counts exactly the batch's tensors as created (the samples
 * were counted on the worker's thread, and died there). */
static void test_prefetch_hands_batches_to_the_consumer_scope(void) {
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  gs_data_loader *l =
      gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 4, .prefetch = 2});
  gs_data_loader_reset(l); /* starts the worker */
  gs_thread_scope_stats_reset();
  gs_scope step = gs_scope_begin("step");
  gs_tensor batch[2];
  g_assert_true(gs_data_loader_next(l, batch));
  g_assert_cmpuint(gs_scope_current().id, ==, step.id);
  g_assert_cmpuint(gs_owner_scope(batch[0]).id, ==, step.id);
  g_assert_cmpuint(gs_owner_scope(batch[1]).id, ==, step.id);
  gs_scope_stats s = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  g_assert_cmpuint(s.created_in_scope, ==, 2);
  g_assert_cmpuint(s.created_outside_scope + s.disposed_in_scope + s.attached_to_scope +
                   s.detached_from_scope, ==, 0);
  gs_scope_info info = gs_scope_get_info(step);
  g_assert_cmpuint(info.alive, ==, 2);
  g_assert_cmpuint(info.bytes, ==, 4 * N_COLS * 4 + 4 * 8);
  /* Usable, then gone with the step. */
  int seen[64] = {0};
  int64_t pos = 0;
  g_assert_cmpint(check_xy_batch(batch, seen, NULL, &pos), ==, 4);
  gs_scope_end(step);
  g_assert_false(gs_is_alive(batch[0]));
  /* With no scope open the caller owns it. */
  g_assert_true(gs_data_loader_next(l, batch));
  g_assert_cmpuint(gs_owner_scope(batch[0]).id, ==, 0);
  gs_dispose(batch[0]), gs_dispose(batch[1]);
  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
}

/* Reset and free while the worker has batches waiting (or is collating one) dispose them all
 * and never race: nothing leaks, the next epoch starts clean. */
static void test_prefetch_reset_and_free_in_flight(void) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor xy[2];
  make_xy(40, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  for (int round = 0; round < 20; round++) {
    gs_data_loader *l = gs_data_loader_new(
        &ds, &(gs_loader_options){.batch_size = 3, .shuffle = true, .seed = 2, .prefetch = 4});
    gs_tensor batch[2];
    if (round % 2) { /* take some, leave the rest in flight, start over */
      for (int i = 0; i < round % 5; i++) {
        g_assert_true(gs_data_loader_next(l, batch));
        gs_dispose(batch[0]), gs_dispose(batch[1]);
      }
      gs_data_loader_reset(l);
      int64_t sizes[64], order[64];
      g_assert_cmpint(run_epoch(l, 40, sizes, order), ==, 14);
      assert_permutation(order, 40);
      gs_data_loader_reset(l);
    } else if (round % 4 == 0) {
      gs_data_loader_reset(l); /* free right after the worker starts */
    }
    gs_data_loader_free(l);
    g_assert_cmpuint(gs_live_tensor_count(), ==, live + 2);
  }
  gs_dataset_release(&ds);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* Errors raised on the worker: counted, not asserted per thread (the test handler expects one
 * error at a time on the calling thread). */
static pthread_mutex_t worker_errors_lock = PTHREAD_MUTEX_INITIALIZER;
static int worker_errors;
static char first_worker_error[512];

static void collect_error(const gs_error *error, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&worker_errors_lock);
  if (!worker_errors++)
    g_strlcpy(first_worker_error, error->message, sizeof first_worker_error);
  pthread_mutex_unlock(&worker_errors_lock);
}

static void test_prefetch_worker_error(void) {
  custom_user u = {0, 5};
  gs_dataset ds = {.length = 9, .n_fields = 2, .get_item = custom_get, .user = &u};
  gs_data_loader *l =
      gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 2, .prefetch = 3});
  void *old_data;
  gs_error_handler old = gs_set_error_handler(collect_error, NULL, &old_data);
  worker_errors = 0;
  gs_tensor batch[2];
  int got = 0;
  while (gs_data_loader_next(l, batch)) {
    got++;
    gs_dispose(batch[0]), gs_dispose(batch[1]);
  }
  gs_set_error_handler(old, old_data, NULL);
  g_assert_cmpint(got, ==, 2); /* samples 0-3; the batch holding sample 5 failed */
  g_assert_cmpint(worker_errors, ==, 2); /* on the worker, then reported to the consumer */
  g_assert_nonnull(strstr(first_worker_error, "get_item failed for sample 5"));
  g_assert_nonnull(strstr(gs_last_error(), "the prefetch thread could not collate a batch: "
                                           "data_loader_next: the dataset's get_item failed"));
  gs_data_loader_free(l);
}

/* ---- batches as one object ------------------------------------------------------------------ */

static void check_batch_object(bool prefetch) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_dataset ds = gs_tensor_dataset(xy, 2);
  gs_data_loader *l = gs_data_loader_new(
      &ds, &(gs_loader_options){.batch_size = 4, .shuffle = true, .seed = 3,
                                .prefetch = prefetch ? 2 : 0});
  gs_data_loader_reset(l);
  gs_thread_scope_stats_reset();
  gs_scope epoch = gs_scope_begin("epoch");
  gs_scope step = gs_scope_begin("step");
  gs_batch b = gs_data_loader_next_batch(l);
  g_assert_true(gs_batch_is_alive(b));
  g_assert_cmpuint(gs_batch_owner_scope(b).id, ==, step.id);
  g_assert_cmpint(gs_batch_field_count(b), ==, 2);
  g_assert_cmpint(gs_batch_size(b), ==, 4);
  gs_tensor fields[2] = {gs_batch_field(b, 0), gs_batch_field(b, 1)};
  int seen[64] = {0};
  int64_t pos = 0;
  g_assert_cmpint(check_xy_batch(fields, seen, NULL, &pos), ==, 4);
  /* One object in this thread's statistics: the batch, in "step". Its tensors are its parts. */
  gs_scope_stats bs = gs_thread_scope_stats(GS_OBJECT_BATCH);
  g_assert_cmpuint(bs.created_in_scope, ==, 1);
  g_assert_cmpint(bs.live, ==, 1);
  g_assert_cmpuint(gs_scope_get_info(step).alive, ==, 1);
  g_assert_cmpuint(gs_owner_scope(fields[0]).id, ==, 0);
  EXPECT_ERROR(gs_dispose(fields[0]), "belongs to a composite");
  EXPECT_ERROR(gs_batch_field(b, 2), "field 2 is out of range for a batch of 2 fields");
  /* Moving the batch moves all its tensors: they outlive "step". */
  gs_batch_move_to_outer(b);
  g_assert_cmpuint(gs_batch_owner_scope(b).id, ==, epoch.id);
  gs_scope_end(step);
  g_assert_true(gs_is_alive(fields[0]) && gs_is_alive(fields[1]));
  /* Disposing it disposes them, and the handles say who did. */
  gs_scope_end(epoch);
  g_assert_false(gs_batch_is_alive(b));
  g_assert_false(gs_is_alive(fields[1]));
  EXPECT_ERROR(gs_batch_size(b), "batch #");
  EXPECT_ERROR(gs_batch_size(b), "disposed by the end of scope 'epoch'");
  bs = gs_thread_scope_stats(GS_OBJECT_BATCH);
  g_assert_cmpuint(bs.disposed_in_scope, ==, 1);
  g_assert_cmpint(bs.live, ==, 0);

  /* Detached, attached, disposed by hand; and the rest of the epoch. */
  b = gs_data_loader_next_batch(l);
  g_assert_cmpuint(gs_batch_owner_scope(b).id, ==, 0);
  gs_scope s = gs_scope_begin("s");
  gs_scope_attach_batch(s, b);
  g_assert_cmpuint(gs_batch_owner_scope(b).id, ==, s.id);
  gs_batch_detach_from_scopes(b);
  gs_scope_end(s);
  g_assert_true(gs_batch_is_alive(b));
  gs_batch_dispose(b);
  b = gs_data_loader_next_batch(l);
  g_assert_cmpint(gs_batch_size(b), ==, 2);
  gs_batch_dispose(b);
  g_assert_cmpuint(gs_data_loader_next_batch(l).id, ==, 0); /* the end of the epoch */
  EXPECT_ERROR(gs_batch_field(GS_NO_BATCH, 0), "expected a batch, got the empty handle");
  gs_data_loader_free(l);
  gs_dataset_release(&ds);
  gs_dispose(xy[0]), gs_dispose(xy[1]);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_batch_object(void) { check_batch_object(false); }
static void test_batch_object_prefetched(void) { check_batch_object(true); }

static void test_errors(void) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor xy[2];
  make_xy(N_ROWS, &xy[0], &xy[1]);
  gs_tensor short_y = gs_zeros(GS_I64, (int64_t[]){N_ROWS - 1}, 1);
  gs_tensor scalar = gs_scalar(GS_F32, 1.0);
  gs_dataset ds;

  EXPECT_ERROR(ds = gs_tensor_dataset(NULL, 1), "NULL");
  g_assert_null(ds.get_item);
  EXPECT_ERROR(ds = gs_tensor_dataset(xy, 0), "expected 1 to 4 tensors, got 0");
  g_assert_cmpint(ds.n_fields, ==, 0);
  EXPECT_ERROR(ds = gs_tensor_dataset((gs_tensor[5]){xy[0], xy[1], xy[0], xy[1], xy[0]}, 5),
               "got 5");
  EXPECT_ERROR(ds = gs_tensor_dataset((gs_tensor[]){xy[0], short_y}, 2),
               "same first size, got 10 (tensor 0) and 9 (tensor 1)");
  EXPECT_ERROR(ds = gs_tensor_dataset(&scalar, 1), "0-D");
  EXPECT_ERROR(ds = gs_tensor_dataset((gs_tensor[]){xy[0], GS_NO_TENSOR}, 2),
               "tensor 1 is not a live tensor");

  ds = gs_tensor_dataset(xy, 2);
  gs_data_loader *l;
  EXPECT_ERROR(l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 0}),
               "expected batch_size > 0, got 0");
  g_assert_null(l);
  EXPECT_ERROR(l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = -3}),
               "got -3");
  EXPECT_ERROR(l = gs_data_loader_new(NULL, &(gs_loader_options){.batch_size = 1}), "NULL");
  EXPECT_ERROR(l = gs_data_loader_new(&ds, NULL), "NULL");
  gs_dataset bad = ds;
  bad.n_fields = 5;
  EXPECT_ERROR(l = gs_data_loader_new(&bad, &(gs_loader_options){.batch_size = 1}),
               "1 to 4 fields per sample, got 5");
  bad.n_fields = 0;
  EXPECT_ERROR(l = gs_data_loader_new(&bad, &(gs_loader_options){.batch_size = 1}), "got 0");
  bad = ds;
  bad.get_item = NULL;
  EXPECT_ERROR(l = gs_data_loader_new(&bad, &(gs_loader_options){.batch_size = 1}),
               "get_item");
  bad = ds;
  bad.length = -1;
  EXPECT_ERROR(l = gs_data_loader_new(&bad, &(gs_loader_options){.batch_size = 1}),
               "length >= 0, got -1");

  l = gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 2});
  bool got = true;
  EXPECT_ERROR(got = gs_data_loader_next(l, NULL), "output array");
  g_assert_false(got);
  EXPECT_ERROR(got = gs_data_loader_next(NULL, xy), "NULL");
  EXPECT_ERROR(gs_data_loader_reset(NULL), "NULL");
  EXPECT_ERROR(gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 1, .prefetch = -1}),
               "expected prefetch in 0..64 (batches collated ahead), got -1");
  EXPECT_ERROR(gs_data_loader_new(&ds, &(gs_loader_options){.batch_size = 1, .prefetch = 65}),
               "got 65");
  EXPECT_ERROR(gs_data_loader_next_batch(NULL), "data_loader_next_batch: expected a loader, got NULL");
  gs_data_loader_free(l);
  gs_data_loader_free(NULL);

  /* An empty dataset is valid: epochs without batches. */
  gs_dataset empty = {.length = 0, .n_fields = 1, .get_item = custom_get, .user = NULL};
  l = gs_data_loader_new(&empty, &(gs_loader_options){.batch_size = 2, .shuffle = true});
  gs_tensor batch[1];
  g_assert_false(gs_data_loader_next(l, batch));
  gs_data_loader_free(l);

  gs_dataset_release(&ds);
  gs_dataset_release(NULL);
  DISPOSE_ALL(xy[0], xy[1], short_y, scalar);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  test_add_leak_checked("/loader/sequential-epoch", test_sequential_epoch);
  test_add_leak_checked("/loader/shuffled-epochs", test_shuffled_epochs);
  g_test_add_func("/loader/drop-last", test_drop_last);
  g_test_add_func("/loader/batch-survives-collate-scope", test_batch_survives_collate_scope);
  g_test_add_func("/loader/tensor-dataset-batches-without-sample-tensors",
                  test_tensor_dataset_batches_without_sample_tensors);
  g_test_add_func("/loader/custom-dataset", test_custom_dataset);
  g_test_add_func("/loader/get-items-errors", test_get_items_errors);
  test_add_leak_checked("/loader/will-need-names-the-next-batch",
                        test_will_need_names_the_next_batch);
  test_add_leak_checked("/loader/prefetch-same-order-as-without",
                        test_prefetch_same_order_as_without);
  test_add_leak_checked("/loader/prefetch-hands-batches-to-the-consumer-scope",
                        test_prefetch_hands_batches_to_the_consumer_scope);
  g_test_add_func("/loader/prefetch-reset-and-free-in-flight",
                  test_prefetch_reset_and_free_in_flight);
  test_add_leak_checked("/loader/prefetch-worker-error", test_prefetch_worker_error);
  g_test_add_func("/loader/batch-object", test_batch_object);
  g_test_add_func("/loader/batch-object-prefetched", test_batch_object_prefetched);
  g_test_add_func("/loader/errors", test_errors);
  return g_test_run();
}
