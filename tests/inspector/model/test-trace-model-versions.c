/* test-trace-model-versions.c: the trace model over logs of each 1.x version. The committed
 * 1.1 log (tests/data/trace-1.1.gstrace) indexes as before; in a 1.2 log, the storage events
 * the reader unfolds from tensor events are indexed like any other and decoded again the same,
 * while the engine event number they share with their tensor event still finds the tensor
 * event; and seqs spread far apart within a chunk keep their values. 1.2 logs are built with the format's encoder (trace-writer-test.c), so this test
 * links the codec objects beside the library the model uses. */
#include "model-test-util.h"
#include "trace-writer-test.h"

static void test_folded_storage_events(void) {
  gs_trace_event events[] = {
      {.kind = GS_TRACE_TENSOR_CREATE, .seq = 3, .tensor = 1, .storage = 1, .alloc = 64,
       .ndim = 2, .shape = {4, 4}, .strides = {4, 1}},
      {.kind = GS_TRACE_TENSOR_CREATE, .seq = 4, .tensor = 2, .storage = 1, .origin = 1,
       .source = 1, .ndim = 1, .shape = {16}, .strides = {1}},
      {.kind = GS_TRACE_TENSOR_DISPOSE, .seq = 5, .tensor = 2},
      {.kind = GS_TRACE_TENSOR_DISPOSE, .seq = 6, .tensor = 1, .freed = 1},
      {.kind = GS_TRACE_MARK, .seq = 7},
  };
  for (guint i = 0; i < G_N_ELEMENTS(events); i++)
    events[i].thread = 1, events[i].time_ns = 100 * events[i].seq;
  tw_log log = {0};
  tw_header(&log, 1, 2, 0, 1);
  tw_chunk(&log, 1, events, G_N_ELEMENTS(events));
  g_autoptr(GBytes) bytes = g_bytes_new_static(log.data, log.len);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));

  /* As a 1.1 log had them: alloc, create, create (a view), dispose, dispose, free, mark. */
  static const gs_trace_kind kinds[] = {
      GS_TRACE_STORAGE_ALLOC,   GS_TRACE_TENSOR_CREATE,  GS_TRACE_TENSOR_CREATE,
      GS_TRACE_TENSOR_DISPOSE,  GS_TRACE_TENSOR_DISPOSE, GS_TRACE_STORAGE_FREE,
      GS_TRACE_MARK,
  };
  static const guint64 seqs[] = {3, 3, 4, 5, 6, 6, 7};
  static const guint64 storages[] = {1, 1, 1, 0, 0, 1, 0}; /* disposals name no storage */
  /* Bytes after each: the dispose and the free unfolded from it are one step, its result
   * shown at both. */
  static const guint64 alive[] = {64, 64, 64, 64, 0, 0, 0};
  g_assert_cmpuint(gs_trace_model_n_events(m), ==, G_N_ELEMENTS(kinds));
  for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_assert_cmpint(gs_trace_model_kind_at(m, i), ==, kinds[i]);
    g_assert_cmpuint(gs_trace_model_seq_at(m, i), ==, seqs[i]);
    g_assert_cmpuint(gs_trace_model_time_at(m, i), ==, 100 * seqs[i]);
    g_assert_cmpuint(gs_trace_model_bytes_at(m, i), ==, alive[i]);
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, i, &e));
    g_assert_cmpint(e.kind, ==, kinds[i]);
    g_assert_cmpint(e.derived, ==, i == 0 || i == 5);
    g_assert_cmpuint(e.storage, ==, storages[i]);
  }
  /* Each seq names the event the log holds, not the one derived from it. */
  g_assert_cmpuint(gs_trace_model_find_seq(m, 3), ==, 1);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 4), ==, 2);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 6), ==, 4);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 7), ==, 6);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 8), ==, G_MAXUINT64);
  /* The first tensor's life starts at its storage's allocation and ends at its release. */
  g_autofree guint64 *life = NULL;
  guint n = 0;
  life = life_indices(m, 1, &n);
  g_assert_cmpuint(n, >=, 2);
  g_assert_cmpuint(life[0], ==, 0);
  g_assert_cmpuint(life[n - 1], ==, 5);
  tw_free(&log);
}

/* Seqs keep their values however far a chunk's spread (a long chunk of one thread while
 * others wrote): past 16 bits from the chunk's first seq (after thousands of events that fit,
 * so the switch happens with some already put away), past 32 bits, and in the chunks after. */
static void test_seqs_spread_wide(void) {
  enum { FIRST = 5000 };
  const guint64 far = 1ull << 33;
  g_autofree gs_trace_event *a = g_new0(gs_trace_event, FIRST + 3);
  for (guint i = 0; i < FIRST; i++)
    a[i].seq = 10 + i;
  a[FIRST].seq = 80000;
  a[FIRST + 1].seq = 80001;
  a[FIRST + 2].seq = far + 10;
  gs_trace_event b[10] = {{0}}, c[6] = {{0}};
  for (guint i = 0; i < G_N_ELEMENTS(b); i++)
    b[i].seq = 5010 + i;
  for (guint i = 0; i < G_N_ELEMENTS(c); i++)
    c[i].seq = far + 20 + i;
  gs_trace_event *chunks[] = {a, b, c};
  const guint sizes[] = {FIRST + 3, G_N_ELEMENTS(b), G_N_ELEMENTS(c)};
  const guint32 threads[] = {1, 2, 1};
  g_autoptr(GArray) seqs = g_array_new(FALSE, FALSE, sizeof(guint64));
  tw_log log = {0};
  tw_header(&log, 1, 2, 0, 1);
  for (guint k = 0; k < G_N_ELEMENTS(chunks); k++) {
    for (guint i = 0; i < sizes[k]; i++) {
      chunks[k][i].kind = GS_TRACE_MARK;
      chunks[k][i].thread = threads[k];
      chunks[k][i].time_ns = chunks[k][i].seq;
      g_array_append_val(seqs, chunks[k][i].seq);
    }
    tw_chunk(&log, threads[k], chunks[k], sizes[k]);
  }
  g_autoptr(GBytes) bytes = g_bytes_new_static(log.data, log.len);
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));
  g_assert_cmpuint(gs_trace_model_n_events(m), ==, seqs->len);
  for (guint i = 0; i < seqs->len; i++) {
    guint64 seq = g_array_index(seqs, guint64, i);
    g_assert_cmpuint(gs_trace_model_seq_at(m, i), ==, seq);
    g_assert_cmpuint(gs_trace_model_time_at(m, i), ==, seq);
    g_assert_cmpuint(gs_trace_model_find_seq(m, seq), ==, i);
  }
  tw_free(&log);
}

/* The 1.1 fixture: what the model indexes from it (string entries are not events). */
static void test_version_1_1_log(void) {
  g_autoptr(GBytes) bytes =
      read_log_bytes(g_test_get_filename(G_TEST_DIST, "data", "trace-1.1.gstrace", NULL));
  g_autoptr(gs_trace_model) m = model_from_bytes(bytes, 0);
  g_assert_null(gs_trace_model_problem(m));
  g_assert_cmpuint(gs_trace_model_n_events(m), ==, 969 - 32);
  g_assert_cmpint(gs_trace_model_kind_at(m, 0), ==, GS_TRACE_STORAGE_ALLOC);
  g_assert_cmpint(gs_trace_model_kind_at(m, 1), ==, GS_TRACE_TENSOR_CREATE);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 1), ==, 0);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 2), ==, 1);
  guint64 last = gs_trace_model_n_events(m) - 1;
  g_assert_cmpint(gs_trace_model_kind_at(m, last), ==, GS_TRACE_STORAGE_FREE);
  g_assert_cmpuint(gs_trace_model_find_seq(m, 941), ==, last);
  g_assert_cmpuint(gs_trace_model_bytes_at(m, last), ==, 0); /* the tour frees everything */
  g_assert_cmpuint(gs_trace_model_bytes_at(m, 0), ==, 24);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace-model-versions/1.2/folded-storage-events", test_folded_storage_events);
  g_test_add_func("/trace-model-versions/1.1-log", test_version_1_1_log);
  g_test_add_func("/trace-model-versions/seqs-spread-wide", test_seqs_spread_wide);
  return g_test_run();
}
