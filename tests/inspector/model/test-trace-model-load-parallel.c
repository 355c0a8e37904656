/* test-trace-model-load-parallel.c: loading a file with the life index kept on a second thread
 * (model-life-feed.c) gives exactly the model the serial path gives: the same sealed segments
 * byte for byte, the same open segment, the same merge under way, every tensor's life and the
 * memory series; on a whole log with segments small enough to merge three levels up, on a
 * damaged one, and when the load is cancelled (the thread is joined, nothing leaks). In the
 * TSan build (scripts/run-tests.sh) it also checks the hand-over between the threads. */
#include <string.h>

#include <glib/gstdio.h>

#include "model-private.h"
#include "model-test-util.h"
#include "trace-writer-test.h"

/* Parameters in modules, views, clones, in-place writes, saved tensors, an optimizer's state:
 * events with extra keys and tensors to follow. */
static void train(int steps) {
  gs_rng rng;
  gs_rng_seed(&rng, 5);
  gs_module l1 = gs_linear_new(4, 8, true, &rng), l2 = gs_linear_new(8, 2, true, &rng);
  gs_tensor params[4];
  for (int i = 0; i < 2; i++) {
    params[i] = gs_module_parameter_at(l1, i, NULL);
    params[2 + i] = gs_module_parameter_at(l2, i, NULL);
  }
  gs_optimizer opt = gs_sgd_new(params, 4, &(gs_sgd_options){.lr = 0.01, .momentum = 0.9});
  const int64_t x_shape[] = {3, 4}, y_shape[] = {3, 2};
  for (int step = 0; step < steps; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng), y = gs_randn(GS_F32, y_shape, 2, &rng);
    gs_tensor c = gs_clone(gs_t(x));
    gs_add_scalar_(c, 1.0);
    gs_tensor out = gs_linear_forward(l2, gs_relu(gs_linear_forward(l1, x)));
    gs_backward(gs_mse_loss(out, y, GS_REDUCTION_MEAN));
    gs_optimizer_step(opt);
    gs_optimizer_zero_grad(opt);
    gs_scope_end(s);
    gs_trace_flush();
  }
  gs_optimizer_dispose(opt);
  gs_module_dispose(l1);
  gs_module_dispose(l2);
}

static void training_work(void) { train(300); }

static char *log_path;

static gs_trace_model *load(const char *path, guint segment, gboolean parallel) {
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_set_life_segment(m, segment);
  g_autoptr(GError) error = NULL;
  g_assert_true(model_load_file(m, path, NULL, NULL, NULL, parallel, &error));
  g_assert_no_error(error);
  g_assert_null(m->life_feed);
  return m;
}

static void assert_same_segment(const model_life_segment *a, const model_life_segment *b) {
  g_assert_cmpuint(a->first, ==, b->first);
  g_assert_cmpuint(a->events, ==, b->events);
  g_assert_cmpuint(a->level, ==, b->level);
  g_assert_cmpuint(a->n_groups, ==, b->n_groups);
  g_assert_cmpmem(a->bytes, a->len, b->bytes, b->len);
  g_assert_cmpmem(a->dir, a->n_dir * sizeof *a->dir, b->dir, b->n_dir * sizeof *b->dir);
}

/* Series a and b hold the same points, encoded the same. */
static void assert_same_series(const model_series *a, const model_series *b) {
  g_assert_cmpuint(a->n_encoded, ==, b->n_encoded);
  g_assert_cmpuint(a->n_blocks, ==, b->n_blocks);
  for (guint i = 0; i < a->n_blocks; i++) { /* field by field: a block has padding */
    const model_series_block *x = &a->blocks[i], *y = &b->blocks[i];
    g_assert_cmpuint(x->value, ==, y->value);
    g_assert_cmpuint(x->offset, ==, y->offset);
    g_assert_cmpuint(x->at, ==, y->at);
    g_assert_cmpuint(x->last_at, ==, y->last_at);
    g_assert_cmpuint(x->min, ==, y->min);
    g_assert_cmpuint(x->max, ==, y->max);
    g_assert_cmpuint(x->max_at, ==, y->max_at);
  }
  g_assert_cmpmem(a->data, a->data_len, b->data, b->data_len);
  g_assert_cmpint(a->has_tail, ==, b->has_tail);
  g_assert_cmpuint(a->tail_at, ==, b->tail_at);
  g_assert_cmpuint(a->tail_value, ==, b->tail_value);
}

/* The life index of a and b is the same, bytes and all, and the memory series; returns how
 * many lives were compared through the query (every 61st tensor's, and the series at every
 * 17th event: the bytes compared hold them all, and queries are slow under TSan). */
static guint assert_same_model(gs_trace_model *a, gs_trace_model *b) {
  guint64 n = gs_trace_model_n_events(a);
  g_assert_cmpuint(n, ==, gs_trace_model_n_events(b));
  g_assert_cmpstr(gs_trace_model_problem(a), ==, gs_trace_model_problem(b));
  /* The per-event columns (the life thread appends them in a parallel load). */
  g_assert_cmpmem(a->kinds->data, a->kinds->len, b->kinds->data, b->kinds->len);
  g_assert_cmpmem(a->seq_off->data, a->seq_off->len * sizeof(guint16), b->seq_off->data,
                  b->seq_off->len * sizeof(guint16));
  g_assert_cmpmem(a->seq_wide->data, a->seq_wide->len * sizeof(guint32), b->seq_wide->data,
                  b->seq_wide->len * sizeof(guint32));
  g_assert_cmpmem(a->time_off->data, a->time_off->len * sizeof(guint32), b->time_off->data,
                  b->time_off->len * sizeof(guint32));
  g_assert_cmpuint(g_hash_table_size(a->seq_big), ==, g_hash_table_size(b->seq_big));
  g_assert_cmpuint(g_hash_table_size(a->time_big), ==, g_hash_table_size(b->time_big));
  g_assert_cmpmem(a->chunks->data, a->chunks->len * sizeof(model_chunk), b->chunks->data,
                  b->chunks->len * sizeof(model_chunk));
  g_assert_cmpuint(a->life_segments->len, ==, b->life_segments->len);
  for (guint s = 0; s < a->life_segments->len; s++)
    assert_same_segment(&g_array_index(a->life_segments, model_life_segment, s),
                        &g_array_index(b->life_segments, model_life_segment, s));
  g_assert_cmpuint(a->life_open_first, ==, b->life_open_first);
  g_assert_cmpmem(a->life_keys->data, a->life_keys->len * sizeof(guint32), b->life_keys->data,
                  b->life_keys->len * sizeof(guint32));
  g_assert_cmpmem(a->life_extra->data, a->life_extra->len * sizeof(model_posting),
                  b->life_extra->data, b->life_extra->len * sizeof(model_posting));
  g_assert_true((a->life_follow == NULL) == (b->life_follow == NULL));
  if (a->life_follow && a->life_segment_events != G_MAXUINT)
    g_assert_cmpmem(a->life_follow, (a->life_segment_events + 7) / 8, b->life_follow,
                    (b->life_segment_events + 7) / 8);
  g_assert_true((a->life_merge == NULL) == (b->life_merge == NULL));
  g_assert_cmpuint(a->life_merge_credit, ==, b->life_merge_credit);
  g_assert_cmpuint(model_life_index_bytes(a), ==, model_life_index_bytes(b));

  /* The memory series, encoded whole. */
  assert_same_series(&a->total, &b->total);
  assert_same_series(&a->outside, &b->outside);
  for (int c = 0; c < GS_MEM_N_CATEGORIES; c++)
    assert_same_series(&a->categories[c], &b->categories[c]);
  g_assert_cmpuint(a->group_series->len, ==, b->group_series->len);
  for (guint g = 0; g < a->group_series->len; g++)
    assert_same_series(a->group_series->pdata[g], b->group_series->pdata[g]);
  g_assert_cmpuint(model_series_len(&a->total), >, 100);

  guint compared = 0;
  guint64 created = 0;
  for (guint64 i = 0; i < n; i++) {
    if (i % 17 == 0)
      g_assert_cmpuint(model_series_value(&a->total, i), ==, model_series_value(&b->total, i));
    if (gs_trace_model_kind_at(a, i) != GS_TRACE_TENSOR_CREATE || created++ % 61)
      continue;
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(a, i, &e));
    g_autofree guint64 *want = NULL, *got = NULL;
    guint n_want = 0, n_got = 0;
    want = life_indices(a, e.tensor, &n_want);
    got = life_indices(b, e.tensor, &n_got);
    g_assert_cmpuint(n_want, >, 0);
    g_assert_cmpmem(got, sizeof(guint64) * n_got, want, sizeof(guint64) * n_want);
    compared++;
  }
  return compared;
}

/* Segments of 64 merge two levels up (a seal's radix sort costs the same whatever the segment's
 * size, so smaller ones are slow under TSan), the default seals a few; the serial and the
 * parallel load agree on each. */
static void test_parallel_load_is_the_serial_one(void) {
  const guint segments[] = {64, MODEL_LIFE_SEGMENT};
  guint merges = 0;
  for (guint s = 0; s < G_N_ELEMENTS(segments); s++) {
    g_autoptr(gs_trace_model) serial = load(log_path, segments[s], FALSE);
    g_autoptr(gs_trace_model) parallel = load(log_path, segments[s], TRUE);
    g_assert_null(gs_trace_model_problem(serial));
    /* Batches of the life thread (8,192 events) are handed over several times. */
    g_assert_cmpuint(gs_trace_model_n_events(serial), >, 4 * 8192);
    g_assert_cmpuint(assert_same_model(serial, parallel), >, 40);
    for (guint i = 0; i < serial->life_segments->len; i++)
      merges += g_array_index(serial->life_segments, model_life_segment, i).level > 1;
  }
  g_assert_cmpuint(merges, >, 0); /* the merged segments were compared too */
}

/* A chunk whose seqs spread past 16 bits after 20,000 events (other threads wrote meanwhile):
 * its earlier offsets, some already with the life thread, move to the wide column, and the
 * parallel load's columns are the serial one's, every seq and time as written. */
static void test_parallel_load_of_wide_seqs(void) {
  enum { FIRST = 20000, MORE = 3 };
  g_autofree gs_trace_event *a = g_new0(gs_trace_event, FIRST + MORE);
  for (guint i = 0; i < FIRST; i++)
    a[i].seq = 10 + i;
  for (guint i = 0; i < MORE; i++)
    a[FIRST + i].seq = 200000 + (1ull << 33) * i;
  gs_trace_event b[10] = {{0}};
  for (guint i = 0; i < G_N_ELEMENTS(b); i++)
    b[i].seq = FIRST + 10 + i;
  gs_trace_event *chunks[] = {a, b};
  const guint sizes[] = {FIRST + MORE, G_N_ELEMENTS(b)};
  g_autoptr(GArray) seqs = g_array_new(FALSE, FALSE, sizeof(guint64));
  tw_log log = {0};
  tw_header(&log, 1, 2, 0, 1);
  for (guint k = 0; k < G_N_ELEMENTS(chunks); k++) {
    for (guint i = 0; i < sizes[k]; i++) {
      chunks[k][i].kind = GS_TRACE_MARK;
      chunks[k][i].thread = k + 1;
      chunks[k][i].time_ns = chunks[k][i].seq;
      g_array_append_val(seqs, chunks[k][i].seq);
    }
    tw_chunk(&log, k + 1, chunks[k], sizes[k]);
  }
  g_autofree char *path = g_strconcat(log_path, ".wide", NULL);
  g_assert_true(g_file_set_contents(path, (const char *)log.data, (gssize)log.len, NULL));
  tw_free(&log);
  g_autoptr(gs_trace_model) serial = load(path, 64, FALSE);
  g_autoptr(gs_trace_model) parallel = load(path, 64, TRUE);
  g_unlink(path);
  g_assert_null(gs_trace_model_problem(parallel));
  g_assert_cmpuint(gs_trace_model_n_events(parallel), ==, seqs->len);
  g_assert_cmpuint(parallel->seq_wide->len, ==, FIRST + MORE);
  for (guint i = 0; i < seqs->len; i++) {
    guint64 seq = g_array_index(seqs, guint64, i);
    g_assert_cmpuint(gs_trace_model_seq_at(parallel, i), ==, seq);
    g_assert_cmpuint(gs_trace_model_time_at(parallel, i), ==, seq);
  }
  g_assert_cmpmem(serial->kinds->data, serial->kinds->len, parallel->kinds->data,
                  parallel->kinds->len);
  g_assert_cmpmem(serial->seq_off->data, serial->seq_off->len * sizeof(guint16),
                  parallel->seq_off->data, parallel->seq_off->len * sizeof(guint16));
  g_assert_cmpmem(serial->seq_wide->data, serial->seq_wide->len * sizeof(guint32),
                  parallel->seq_wide->data, parallel->seq_wide->len * sizeof(guint32));
  g_assert_cmpmem(serial->time_off->data, serial->time_off->len * sizeof(guint32),
                  parallel->time_off->data, parallel->time_off->len * sizeof(guint32));
}

/* A byte flipped mid-log: both loads stop at the damage, with the same index. */
static void test_parallel_load_of_a_damaged_log(void) {
  g_autofree guint8 *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(log_path, (char **)&data, &len, NULL));
  data[len / 2] ^= 0x5a;
  g_autofree char *damaged = g_strconcat(log_path, ".damaged", NULL);
  g_assert_true(g_file_set_contents(damaged, (const char *)data, (gssize)len, NULL));
  g_autoptr(gs_trace_model) serial = load(damaged, 64, FALSE);
  g_autoptr(gs_trace_model) parallel = load(damaged, 64, TRUE);
  g_assert_nonnull(gs_trace_model_problem(serial));
  g_assert_cmpuint(gs_trace_model_n_events(serial), >, 1000);
  assert_same_model(serial, parallel);
  g_unlink(damaged);
}

static void cancel_on_progress(guint64 done, guint64 total, gpointer data) {
  (void)done, (void)total;
  g_cancellable_cancel(data);
}

/* Cancelled after the first piece: the load says so, the life thread is joined (the model
 * can be freed at once: ASan and TSan watch), and it never waits for the whole log. */
static void test_cancelled_parallel_load(void) {
  g_autoptr(GCancellable) cancel = g_cancellable_new();
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_set_life_segment(m, 64);
  g_autoptr(GError) error = NULL;
  g_assert_false(model_load_file(m, log_path, cancel_on_progress, cancel, cancel, TRUE, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null(m->life_feed);
  gs_trace_model_free(m);
  /* And through the public call. */
  g_clear_error(&error);
  g_cancellable_reset(cancel);
  g_assert_null(gs_trace_model_load_file(log_path, cancel_on_progress, cancel, cancel, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* A model freed while its life thread runs (a caller giving up mid-load) joins it first. */
static void test_free_while_the_thread_runs(void) {
  g_autofree guint8 *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(log_path, (char **)&data, &len, NULL));
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_set_life_segment(m, 64);
  model_life_feed_start(m);
  gs_trace_model_feed(m, data, len);
  g_assert_nonnull(m->life_feed);
  gs_trace_model_free(m);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  log_path = record_log(training_work);
  g_test_add_func("/trace-model/load-parallel/same-as-serial",
                  test_parallel_load_is_the_serial_one);
  g_test_add_func("/trace-model/load-parallel/damaged", test_parallel_load_of_a_damaged_log);
  g_test_add_func("/trace-model/load-parallel/wide-seqs", test_parallel_load_of_wide_seqs);
  g_test_add_func("/trace-model/load-parallel/cancelled", test_cancelled_parallel_load);
  g_test_add_func("/trace-model/load-parallel/free-mid-load", test_free_while_the_thread_runs);
  int status = g_test_run();
  remove_log(log_path);
  return status;
}
