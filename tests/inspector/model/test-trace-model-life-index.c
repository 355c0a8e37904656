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
static void train(int steps) {
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
  for (int step = 0; step < steps; step++) {
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

static void training_work(void) { train(40); }

/* Ten times as long: enough events for segments of 4 to merge three levels up. */
static void long_training_work(void) { train(400); }

/* Longer still: a parameter's life spans two 65,536-event ranges of its answer. */
static void ranges_training_work(void) { train(440); }

/* training_work's log, recorded once for every test, long_training_work's and
 * ranges_training_work's. */
static GBytes *training_log, *long_log, *ranges_log;

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
      want = life_indices(a, tensor, &n_want);
      got = life_indices(b, tensor, &n_got);
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

/* Events the sealed segments cover. */
static guint64 sealed_events(const gs_trace_model *m) {
  guint64 events = 0;
  for (guint s = 0; s < m->life_segments->len; s++)
    events += g_array_index(m->life_segments, model_life_segment, s).events;
  return events;
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
    g_assert_cmpuint(sealed_events(m), ==, (n - 1) / segments[s] * segments[s]);
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
    g_assert_cmpuint(sealed_events(m), >, 10 * 64);
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

/* Tensor id's life found by brute force: every event decoded and tested against the tensor's
 * handles (its own, and those it was moved to, followed until no new one turns up) and the
 * storage its creation made. */
static GArray *brute_life(gs_trace_model *m, guint64 id) {
  g_autoptr(GArray) handles = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_array_append_val(handles, id);
  guint64 n = gs_trace_model_n_events(m), storage = 0;
  for (guint found = 1; found;) {
    found = 0;
    for (guint64 i = 0; i < n; i++) {
      gs_trace_event e;
      g_assert_true(gs_trace_model_event(m, i, &e));
      if (e.kind == GS_TRACE_TENSOR_CREATE && e.tensor == id && e.storage)
        storage = e.storage;
      if (e.kind != GS_TRACE_TENSOR_MOVE || !e.target)
        continue;
      gboolean from = FALSE, seen = FALSE;
      for (guint h = 0; h < handles->len; h++) {
        from = from || g_array_index(handles, guint64, h) == e.tensor;
        seen = seen || g_array_index(handles, guint64, h) == e.target;
      }
      if (from && !seen) {
        g_array_append_val(handles, e.target);
        found++;
      }
    }
  }
  GArray *life = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 i = 0; i < n; i++) {
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    if (model_life_concerns(m, &e, (const guint64 *)handles->data, handles->len, storage))
      g_array_append_val(life, i);
  }
  return life;
}

/* life's count_upto and contains at every index up to past its last event, against want (its
 * events, ascending), found by a plain walk. */
static void assert_life_lookups(const gs_tensor_life *life, const guint64 *want, guint n,
                                guint64 until) {
  g_assert_cmpuint(gs_tensor_life_len(life), ==, n);
  guint upto = 0;
  for (guint64 index = 0; index <= until; index++) {
    while (upto < n && want[upto] <= index)
      upto++;
    g_assert_cmpuint(gs_tensor_life_count_upto(life, index), ==, upto);
    g_assert_cmpint(gs_tensor_life_contains(life, index), ==, upto > 0 && want[upto - 1] == index);
  }
}

/* The highest level of m's sealed segments. */
static guint top_level(const gs_trace_model *m) {
  guint top = 0;
  for (guint s = 0; s < m->life_segments->len; s++)
    top = MAX(top, g_array_index(m->life_segments, model_life_segment, s).level);
  return top;
}

/* A long log in segments of 4 events, so they merge three levels up (16, 256 and 4096
 * segments of 4): the lives of the first tensors (the parameters, whose lives span every
 * segment) and of every 97th tensor made are what a brute-force scan of the events finds.
 * Fed in pieces, the lives so far are checked against the unsealed model's scan at each
 * piece, some of them while a merge is under way. */
static void test_merged_segments_answer_as_brute_force(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(long_log, &len);
  g_autoptr(gs_trace_model) m = gs_trace_model_new();
  g_autoptr(gs_trace_model) scan = gs_trace_model_new();
  gs_trace_model_set_life_segment(m, 4);
  gs_trace_model_set_life_segment(scan, G_MAXUINT);
  gsize piece = len / 29 + 1;
  guint mid_merge = 0;
  for (gsize at = 0; at < len; at += piece) {
    gs_trace_model_feed(m, data + at, MIN(piece, len - at));
    gs_trace_model_feed(scan, data + at, MIN(piece, len - at));
    mid_merge += m->life_merge != NULL;
    guint64 n = gs_trace_model_n_events(m), created = 0;
    for (guint64 i = 0; i < n; i++) {
      if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_CREATE || created++ % 211)
        continue;
      gs_trace_event e;
      g_assert_true(gs_trace_model_event(m, i, &e));
      g_autofree guint64 *want = NULL, *got = NULL;
      guint n_want = 0, n_got = 0;
      want = life_indices(scan, e.tensor, &n_want);
      got = life_indices(m, e.tensor, &n_got);
      g_assert_cmpmem(got, sizeof(guint64) * n_got, want, sizeof(guint64) * n_want);
    }
  }
  gs_trace_model_finish(m);
  g_assert_null(gs_trace_model_problem(m));
  guint64 n = gs_trace_model_n_events(m);
  g_assert_cmpuint(n, >, 4 * 4096 * 2);
  g_assert_cmpuint(top_level(m), >=, 3);
  g_assert_cmpuint(m->life_segments->len, <, 3 * MODEL_LIFE_FANOUT);
  g_assert_cmpuint(sealed_events(m), ==, (n - 1) / 4 * 4);
  g_assert_cmpuint(mid_merge, >, 0);

  guint64 created = 0;
  guint checked = 0;
  guint64 widest = 0;
  for (guint64 i = 0; i < n; i++) {
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_CREATE)
      continue;
    if (created++ >= 4 && created % 97)
      continue;
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    guint64 tensor = e.tensor;
    g_autoptr(GArray) want = brute_life(m, tensor);
    g_autofree guint64 *got = NULL;
    guint n_got = 0;
    got = life_indices(m, tensor, &n_got);
    g_assert_cmpmem(got, sizeof(guint64) * n_got, want->data, sizeof(guint64) * want->len);
    g_assert_cmpuint(n_got, >, 0);

    widest = MAX(widest, got[n_got - 1] - got[0]);
    checked++;
  }
  g_assert_cmpuint(checked, >, 20);
  /* A parameter's life crosses segments of every level (a level-3 one is 4 * 4096 events). */
  g_assert_cmpuint(widest, >, 2 * 4 * 4096);
}

/* The answer keeps a 65,536-event range once and each event's low 16 bits: events at the
 * ranges' edges, ranges skipped, one event alone in its range and ranges near 2^32 come back
 * as they went in, and lookups find them; a prefix is one only if its ranges start where the
 * longer life's do. */
static void test_life_answer_ranges(void) {
  const guint64 events[] = {0,      1,      65535,  65536,  65537,  131071, 400000,
                            400001, 524288, 589823, 589824, 655359, 655360, 700000};
  guint n = G_N_ELEMENTS(events);
  g_autoptr(gs_tensor_life) life = model_life_answer_new(n, 700001);
  for (guint i = 0; i < n; i++)
    model_life_answer_add(life, events[i]);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint(gs_tensor_life_at(life, i), ==, events[i]);
  assert_life_lookups(life, events, n, 800000);
  /* Cursors from every position, both ways, cross the ranges as _at does. */
  for (guint from = 0; from <= n + 1; from++) {
    gs_tensor_life_cursor c;
    guint64 at;
    gs_tensor_life_cursor_init(&c, life, from);
    for (guint i = MIN(from, n); i < n; i++) {
      g_assert_true(gs_tensor_life_cursor_next(&c, &at));
      g_assert_cmpuint(at, ==, events[i]);
    }
    g_assert_false(gs_tensor_life_cursor_next(&c, &at));
    for (guint i = n; i-- > 0;) { /* then all the way back */
      g_assert_true(gs_tensor_life_cursor_prev(&c, &at));
      g_assert_cmpuint(at, ==, events[i]);
    }
    g_assert_false(gs_tensor_life_cursor_prev(&c, &at));
    gs_tensor_life_cursor_init(&c, life, from);
    for (guint i = MIN(from, n); i-- > 0;) {
      g_assert_true(gs_tensor_life_cursor_prev(&c, &at));
      g_assert_cmpuint(at, ==, events[i]);
    }
    g_assert_false(gs_tensor_life_cursor_prev(&c, &at));
  }
  for (guint cut = 0; cut <= n; cut++) {
    g_autoptr(gs_tensor_life) prefix = model_life_answer_new(cut, 700001);
    for (guint i = 0; i < cut; i++)
      model_life_answer_add(prefix, events[i]);
    g_assert_true(gs_tensor_life_starts_with(life, prefix));
    g_assert_cmpint(gs_tensor_life_starts_with(prefix, life), ==, cut == n);
  }
  /* The same low 16 bits in another range is another event. */
  const guint64 moved[] = {0, 1, 65535, 131072};
  g_autoptr(gs_tensor_life) other = model_life_answer_new(4, 700001);
  for (guint i = 0; i < G_N_ELEMENTS(moved); i++)
    model_life_answer_add(other, moved[i]);
  g_autoptr(gs_tensor_life) head = model_life_answer_new(4, 700001);
  for (guint i = 0; i < 4; i++)
    model_life_answer_add(head, events[i]);
  g_assert_false(gs_tensor_life_starts_with(other, head));
  g_assert_false(gs_tensor_life_starts_with(head, other));
  /* Ranges near the 2^32 events a model holds: the high part is kept whole. */
  const guint64 far[] = {G_GUINT64_CONSTANT(0xfffe0000), G_GUINT64_CONSTANT(0xfffeffff),
                         G_GUINT64_CONSTANT(0xffffffff)};
  g_autoptr(gs_tensor_life) top = model_life_answer_new(3, G_GUINT64_CONSTANT(0x100000000));
  for (guint i = 0; i < G_N_ELEMENTS(far); i++)
    model_life_answer_add(top, far[i]);
  for (guint i = 0; i < G_N_ELEMENTS(far); i++) {
    g_assert_cmpuint(gs_tensor_life_at(top, i), ==, far[i]);
    g_assert_true(gs_tensor_life_contains(top, far[i]));
    g_assert_false(gs_tensor_life_contains(top, far[i] & 0xffff));
  }
  g_assert_cmpuint(gs_tensor_life_count_upto(top, G_GUINT64_CONSTANT(0xfffeffff)), ==, 2);
  g_assert_cmpuint(gs_tensor_life_len(NULL), ==, 0);
  g_assert_cmpuint(gs_tensor_life_count_upto(NULL, 5), ==, 0);
  gs_tensor_life_cursor none;
  guint64 at;
  gs_tensor_life_cursor_init(&none, NULL, 3);
  g_assert_false(gs_tensor_life_cursor_next(&none, &at));
  g_assert_false(gs_tensor_life_cursor_prev(&none, &at));
}

/* On a log of more than 65,536 events, in segments of 64 (merged two levels up) and of the
 * default size: the lives of the first tensors made (the parameters', which span two ranges
 * of the answer, among them) are what a brute-force scan finds, and looking an index up in
 * them (count_upto, contains) answers as a walk of the scan's events at every index. */
static void test_life_across_ranges_as_brute_force(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(ranges_log, &len);
  const guint segments[] = {64, MODEL_LIFE_SEGMENT};
  for (guint s = 0; s < G_N_ELEMENTS(segments); s++) {
    g_autoptr(gs_trace_model) m = model_of(data, len, segments[s], len);
    g_assert_null(gs_trace_model_problem(m));
    guint64 n = gs_trace_model_n_events(m), created = 0;
    g_assert_cmpuint(n, >, 65536);
    guint spanning = 0;
    for (guint64 i = 0; i < n && created < 12; i++) {
      if (gs_trace_model_kind_at(m, i) != GS_TRACE_TENSOR_CREATE)
        continue;
      created++;
      gs_trace_event e;
      g_assert_true(gs_trace_model_event(m, i, &e));
      g_autoptr(GArray) want = brute_life(m, e.tensor);
      g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, e.tensor);
      g_assert_cmpuint(gs_tensor_life_len(life), ==, want->len);
      for (guint k = 0; k < want->len; k++)
        g_assert_cmpuint(gs_tensor_life_at(life, k), ==, g_array_index(want, guint64, k));
      assert_life_lookups(life, (const guint64 *)want->data, want->len, n);
      spanning += life->n_chunks > 1;
    }
    g_assert_cmpuint(spanning, >=, 4); /* the four parameters */
  }
}

/* How many of a's segments of level `level` are, byte for byte, one of b's (the same events,
 * groups, directory and bytes). */
static guint same_segments(const gs_trace_model *a, const gs_trace_model *b, guint level) {
  guint same = 0;
  for (guint i = 0; i < a->life_segments->len; i++) {
    const model_life_segment *x = &g_array_index(a->life_segments, model_life_segment, i);
    for (guint j = 0; j < b->life_segments->len && x->level == level; j++) {
      const model_life_segment *y = &g_array_index(b->life_segments, model_life_segment, j);
      if (y->first != x->first || y->events != x->events)
        continue;
      g_assert_cmpuint(y->n_groups, ==, x->n_groups);
      g_assert_cmpmem(y->dir, y->n_dir * sizeof *y->dir, x->dir, x->n_dir * sizeof *x->dir);
      g_assert_cmpmem(y->bytes, y->len, x->bytes, x->len);
      same++;
    }
  }
  return same;
}

/* A merge writes what sealing its events at once would: segments of 4 merged one, two and
 * three levels up are the segments of 64, 1,024 and 16,384 events (level 0) of the same log. */
static void test_merged_segments_are_sealed_ones(void) {
  gsize len = 0;
  const guint8 *data = g_bytes_get_data(long_log, &len);
  g_autoptr(gs_trace_model) small = model_of(data, len, 4, len);
  guint64 base = 4;
  for (guint level = 1; level <= 3; level++) {
    base *= MODEL_LIFE_FANOUT;
    g_autoptr(gs_trace_model) big = model_of(data, len, (guint)base, len);
    g_assert_cmpuint(same_segments(small, big, level), >, 0);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  char *path = record_log(training_work);
  training_log = read_log_bytes(path);
  remove_log(path);
  path = record_log(long_training_work);
  long_log = read_log_bytes(path);
  remove_log(path);
  path = record_log(ranges_training_work);
  ranges_log = read_log_bytes(path);
  remove_log(path);
  g_test_add_func("/trace-model/life-index/answers-as-the-scan", test_index_answers_as_the_scan);
  g_test_add_func("/trace-model/life-index/while-feeding", test_index_while_feeding);
  g_test_add_func("/trace-model/life-index/cut-and-damaged", test_index_on_cut_and_damaged_logs);
  g_test_add_func("/trace-model/life-index/memory", test_index_memory);
  g_test_add_func("/trace-model/life-index/merged-as-brute-force",
                  test_merged_segments_answer_as_brute_force);
  g_test_add_func("/trace-model/life-index/merged-as-sealed", test_merged_segments_are_sealed_ones);
  g_test_add_func("/trace-model/life-index/answer-ranges", test_life_answer_ranges);
  g_test_add_func("/trace-model/life-index/across-ranges-as-brute-force",
                  test_life_across_ranges_as_brute_force);
  int status = g_test_run();
  g_bytes_unref(training_log);
  g_bytes_unref(long_log);
  g_bytes_unref(ranges_log);
  return status;
}
