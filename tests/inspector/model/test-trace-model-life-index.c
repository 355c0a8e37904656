/* test-trace-model-life-index.c: the life index (model-life-index.c) answers exactly what the
 * scan of every event's key answered before it, on logs the engine records here: whole, cut
 * mid-chunk, damaged mid-log, and fed in pieces with queries in between. The reference is the
 * same model with no segment ever sealed (gs_trace_model_set_life_segment(G_MAXUINT)), whose
 * queries scan every event's key as the model always did. */
#include <string.h>

#include "model-private.h"
#include "model-test-util.h"

/* A small training loop: parameters moved into a module, views, clones, detaches, in-place
 * writes, saved tensors, an optimizer's state, a scope per step. */
static void training_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_module l1 = gs_linear_new(4, 8, true, &rng), l2 = gs_linear_new(8, 2, true, &rng);
  gs_tensor params[4];
  for (int i = 0; i < 2; i++) {
    params[i] = gs_module_parameter_at(l1, i, NULL);
    params[2 + i] = gs_module_parameter_at(l2, i, NULL);
  }
  gs_optimizer opt = gs_sgd_new(params, 4, &(gs_sgd_options){.lr = 0.01, .momentum = 0.9});
  const int64_t x_shape[] = {3, 4}, y_shape[] = {3, 2};
  for (int step = 0; step < 40; step++) {
    gs_scope s = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng), y = gs_randn(GS_F32, y_shape, 2, &rng);
    gs_tensor v = gs_t(x);
    gs_tensor c = gs_clone(v);
    gs_tensor d = gs_detach(x);
    gs_mul_scalar_(d, 0.5);
    gs_add_scalar_(c, 1.0);
    gs_tensor out = gs_linear_forward(l2, gs_relu(gs_linear_forward(l1, x)));
    gs_backward(gs_mse_loss(out, y, GS_REDUCTION_MEAN));
    gs_optimizer_step(opt);
    gs_optimizer_zero_grad(opt);
    gs_scope_end(s);
    gs_trace_flush(); /* a chunk per step: a cut or a damaged byte leaves most steps */
  }
  gs_optimizer_dispose(opt);
  gs_module_dispose(l1);
  gs_module_dispose(l2);
}

/* training_work's log, recorded once for every test. */
static GBytes *training_log;

static gs_trace_model *model_of(const guint8 *data, gsize len, guint segment, gsize piece) {
  gs_trace_model *m = gs_trace_model_new();
  gs_trace_model_set_life_segment(m, segment);
  for (gsize at = 0; at < len; at += piece)
    gs_trace_model_feed(m, data + at, MIN(piece, len - at));
  gs_trace_model_finish(m);
  return m;
}

/* Every tensor's life and every storage's writes in a and b are the same; returns how many
 * lives were compared. */
static guint assert_same_lives(gs_trace_model *a, gs_trace_model *b) {
  guint64 n = gs_trace_model_n_events(a);
  g_assert_cmpuint(n, ==, gs_trace_model_n_events(b));
  guint compared = 0;
  for (guint64 i = 0; i < n; i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(a, i);
    gs_trace_event e;
    if (kind == GS_TRACE_TENSOR_CREATE) {
      g_assert_true(gs_trace_model_event(a, i, &e));
      guint64 tensor = e.tensor;
      g_autofree guint64 *want = NULL, *got = NULL;
      guint n_want = 0, n_got = 0;
      gs_trace_model_tensor_life(a, tensor, &want, &n_want);
      gs_trace_model_tensor_life(b, tensor, &got, &n_got);
      g_assert_cmpuint(n_got, ==, n_want);
      g_assert_cmpmem(got, sizeof(guint64) * n_got, want, sizeof(guint64) * n_want);
      g_assert_cmpuint(n_want, >, 0);
      compared++;
    } else if (kind == GS_TRACE_STORAGE_ALLOC) {
      g_assert_true(gs_trace_model_event(a, i, &e));
      guint64 storage = e.storage;
      g_autoptr(GArray) want = model_storage_writes(a, storage);
      g_autoptr(GArray) got = model_storage_writes(b, storage);
      g_assert_cmpmem(got->data, sizeof(guint64) * got->len, want->data,
                      sizeof(guint64) * want->len);
    }
  }
  return compared;
}

/* The log whole, with segments of several sizes (64 and 1000 split lives across many
 * segments; the default seals whole segments of a longer log), fed at once and in pieces. */
static void test_index_answers_as_the_scan(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(training_log, &len);
  g_autoptr(gs_trace_model) scan = model_of(data, len, G_MAXUINT, len);
  g_assert_null(gs_trace_model_problem(scan));
  guint64 n = gs_trace_model_n_events(scan);
  g_assert_cmpuint(n, >, 4000);
  const guint segments[] = {64, 1000, MODEL_LIFE_SEGMENT};
  for (guint s = 0; s < G_N_ELEMENTS(segments); s++) {
    g_autoptr(gs_trace_model) m = model_of(data, len, segments[s], s == 1 ? 4096 : len);
    /* Sealed: every full segment but the open one. */
    g_assert_cmpuint(m->life_segments->len, ==, (n - 1) / segments[s]);
    g_assert_cmpuint(assert_same_lives(scan, m), >, 500);
  }
}

/* A model queried while its log arrives: each query between pieces sees sealed segments and
 * the open one, and answers as a scan of the events so far. */
static void test_index_while_feeding(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(training_log, &len);
  g_autoptr(gs_trace_model) live = gs_trace_model_new();
  g_autoptr(gs_trace_model) scan = gs_trace_model_new();
  gs_trace_model_set_life_segment(live, 100);
  gs_trace_model_set_life_segment(scan, G_MAXUINT);
  gsize piece = len / 5 + 1;
  for (gsize at = 0; at < len; at += piece) {
    gs_trace_model_feed(live, data + at, MIN(piece, len - at));
    gs_trace_model_feed(scan, data + at, MIN(piece, len - at));
    assert_same_lives(scan, live);
  }
}

/* Cut mid-chunk and damaged mid-log: the index holds what was read before, and answers as
 * the scan does (the open segment is where the log stopped). */
static void test_index_on_cut_and_damaged_logs(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(training_log, &len);
  g_autofree guint8 *damaged = g_memdup2(data, len);
  damaged[len / 2] ^= 0x5a; /* a chunk's CRC no longer matches */
  const struct {
    const guint8 *data;
    gsize len;
  } logs[] = {{data, len * 3 / 5 + 3}, {damaged, len}};
  for (guint l = 0; l < G_N_ELEMENTS(logs); l++) {
    g_autoptr(gs_trace_model) scan = model_of(logs[l].data, logs[l].len, G_MAXUINT, 65536);
    g_autoptr(gs_trace_model) m = model_of(logs[l].data, logs[l].len, 64, 65536);
    g_assert_nonnull(gs_trace_model_problem(m));
    g_assert_cmpuint(gs_trace_model_n_events(m), >, 1000);
    g_assert_cmpuint(m->life_segments->len, >, 10);
    assert_same_lives(scan, m);
  }
}

/* The postings cost what the per-event keys did: at most 6 bytes per event with the
 * directory, the segments' records and the open segment (4 bytes of key per event and 8 per
 * extra pair before). */
static void test_index_memory(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(training_log, &len);
  g_autoptr(gs_trace_model) m = model_of(data, len, 1000, len);
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(model_life_index_bytes(m), <=, 6 * n);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  char *path = record_log(training_work);
  training_log = read_log_bytes(path);
  remove_log(path);
  g_test_add_func("/trace-model/life-index/answers-as-the-scan", test_index_answers_as_the_scan);
  g_test_add_func("/trace-model/life-index/while-feeding", test_index_while_feeding);
  g_test_add_func("/trace-model/life-index/cut-and-damaged", test_index_on_cut_and_damaged_logs);
  g_test_add_func("/trace-model/life-index/memory", test_index_memory);
  int status = g_test_run();
  g_bytes_unref(training_log);
  return status;
}
