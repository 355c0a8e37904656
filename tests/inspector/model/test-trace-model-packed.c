/* test-trace-model-packed.c: what the inspector tells of a fused recurrence over a packed
 * sequence (inspector/model/analysis/packed-steps.h), on a real engine run: an LSTM and a GRU
 * over four sequences of lengths 2, 4, 3, 1 (unsorted), and an LSTM over padded input. The steps, batch
 * and rows always; the sequences each step ran over only when GS_TRACE_VALUES recorded the
 * batch sizes (meson runs this test with GS_TRACE_VALUES=64 and without it): the graph label,
 * the per-step sentence and the node_create's explanation. */
#include <stdlib.h>
#include <string.h>

#include "model-test-util.h"
#include "packed-steps.h"

static gboolean values_recorded;

static void packed_work(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.rng = &rng;
  gs_module modules[2] = {gs_rnn_new(GS_RNN_LSTM, 3, 5, &o), gs_rnn_new(GS_RNN_GRU, 3, 5, &o)};
  for (int k = 0; k < 2; k++) {
    gs_scope step = gs_scope_begin("step");
    gs_tensor x = gs_randn(GS_F32, (int64_t[]){4, 4, 3}, 3, &rng);
    gs_tensor lengths = gs_from_data(GS_I64, (int64_t[]){4}, 1, (int64_t[]){2, 4, 3, 1});
    gs_packed_sequence ps = gs_pack_padded_sequence(x, lengths, false, false);
    gs_tensor h_n;
    gs_rnn_forward_packed(modules[k], ps, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, NULL);
    gs_backward(gs_sum(h_n, NULL, 0, false));
    gs_scope_end(step);
  }
  gs_scope step = gs_scope_begin("padded step");
  gs_tensor h_n;
  gs_rnn_forward(modules[0], gs_randn(GS_F32, (int64_t[]){4, 4, 3}, 3, &rng), GS_NO_TENSOR,
                 GS_NO_TENSOR, &h_n, NULL);
  gs_backward(gs_sum(h_n, NULL, 0, false));
  gs_scope_end(step);
  gs_module_dispose(modules[0]), gs_module_dispose(modules[1]);
}

typedef struct fixture {
  char *path;
  GBytes *bytes;
  gs_trace_model *m;
} fixture;

static void fixture_init(fixture *f) {
  f->path = record_log(packed_work);
  f->bytes = read_log_bytes(f->path);
  f->m = model_from_bytes(f->bytes, 0);
  g_assert_cmpstr(gs_trace_model_problem(f->m), ==, NULL);
}

static void fixture_clear(fixture *f) {
  gs_trace_model_free(f->m);
  g_bytes_unref(f->bytes);
  remove_log(f->path);
}

/* The packed LSTM and GRU nodes: steps 4, batch 4, rows 10, and 4 3 2 1 sequences a step when
 * recorded (lengths 2, 4, 3, 1: four run step 1, three step 2...). */
static void test_packed_nodes(void) {
  fixture f;
  fixture_init(&f);
  const char *kinds[] = {"LSTMRecurrenceBackward", "GRURecurrenceBackward"};
  const char *cells[] = {"LSTM", "GRU"};
  for (int k = 0; k < 2; k++) {
    guint64 at = find_event(f.m, 0, GS_TRACE_NODE_CREATE, kinds[k]);
    g_assert_cmpuint(at, !=, G_MAXUINT64);
    gs_packed_steps s;
    g_assert_true(gs_packed_steps_find(f.m, at, &s));
    g_assert_cmpstr(s.cell, ==, cells[k]);
    g_assert_cmpuint(s.steps, ==, 4);
    g_assert_cmpuint(s.batch, ==, 4);
    g_assert_cmpuint(s.rows, ==, 10);
    g_autofree char *label = gs_packed_steps_label(&s);
    g_autofree char *sentence = gs_packed_steps_sentence(&s);
    g_autofree char *explained = gs_trace_model_explain(f.m, at);
    g_autofree char *folded = g_strdup_printf("%s step \xc3\x97" "4\n", cells[k]);
    g_assert_true(g_str_has_prefix(label, folded));
    g_assert_nonnull(strstr(explained, "over 4 packed sequences in 4 time steps (10 rows)"));
    if (values_recorded) {
      g_assert_nonnull(s.active);
      for (guint64 t = 0; t < 4; t++)
        g_assert_cmpuint(s.active[t], ==, 4 - t);
      g_assert_true(g_str_has_suffix(label, "4 \xe2\x86\x92 1 sequences"));
      g_autofree char *step2 = g_strdup_printf("%s step 2 ran 3 of 4 sequences", cells[k]);
      g_autofree char *step4 = g_strdup_printf("%s step 4 ran 1 of 4 sequences", cells[k]);
      g_assert_nonnull(strstr(sentence, step2));
      g_assert_nonnull(strstr(sentence, step4));
      g_assert_nonnull(strstr(explained, step2));
    } else {
      g_assert_null(s.active);
      g_assert_null(sentence);
      g_assert_true(g_str_has_suffix(label, "\n4 sequences"));
      g_assert_nonnull(strstr(explained, "GS_TRACE_VALUES"));
    }
    gs_packed_steps_clear(&s);
  }
  fixture_clear(&f);
}

/* Over padded input there is no packed sequence of the node's geometry: nothing is claimed,
 * and other kinds are not recurrences. */
static void test_padded_and_other_nodes(void) {
  fixture f;
  fixture_init(&f);
  guint64 padded = find_event(f.m, 0, GS_TRACE_SCOPE_BEGIN, "padded step");
  g_assert_cmpuint(padded, !=, G_MAXUINT64);
  guint64 at = find_event(f.m, padded, GS_TRACE_NODE_CREATE, "LSTMRecurrenceBackward");
  g_assert_cmpuint(at, !=, G_MAXUINT64);
  gs_packed_steps s;
  g_assert_false(gs_packed_steps_find(f.m, at, &s));
  g_assert_null(s.active);
  guint64 sum = find_event(f.m, 0, GS_TRACE_NODE_CREATE, "SumBackward");
  g_assert_cmpuint(sum, !=, G_MAXUINT64);
  g_assert_false(gs_packed_steps_find(f.m, sum, &s));
  g_assert_null(gs_packed_steps_cell("MulBackward"));
  g_assert_cmpstr(gs_packed_steps_cell("RNNReluRecurrenceBackward"), ==, "RNN");
  fixture_clear(&f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  const char *values = getenv("GS_TRACE_VALUES");
  values_recorded = values && atoi(values) >= 4;
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  g_test_add_func("/trace-model-packed/packed-nodes", test_packed_nodes);
  g_test_add_func("/trace-model-packed/padded-and-other-nodes", test_padded_and_other_nodes);
  return g_test_run();
}
