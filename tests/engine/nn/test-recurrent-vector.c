/* test-recurrent-vector.c: the AVX-512 gate math of the fused recurrence
 * (engine/ops/recurrent-rows-avx512.c) gives the f32 numbers of the portable loops bit for
 * bit: every output, final state and gradient of LSTM, GRU and RNN layers, whole vectors and
 * a tail (hidden 128 and 21), with pre-activations small (the tanh series), ordinary, and
 * large enough that expf overflows and underflows, far past where its table still works (lanes
 * glibc handles apart).
 *
 * The portable code runs in a child (this program with --dump under GS_CPU_FEATURES=none,
 * engine/ops/cpu-features.c): the level is chosen once per process. */
#include <inttypes.h>

#include "ops-impl.h"
#include "test-util.h"

/* One layer's forward and backward in f32, every result appended to out as hex words. */
static void dump_case(GString *out, gs_rnn_mode mode, int64_t hidden, double scale) {
  enum { T = 4, B = 3, IN = 5 };
  gs_rng rng;
  gs_rng_seed(&rng, 7);
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.rng = &rng;
  gs_module m = gs_rnn_new(mode, IN, hidden, &o);
  gs_tensor x0 = gs_randn(GS_F32, (int64_t[]){T, B, IN}, 3, &rng);
  gs_tensor x = gs_mul_scalar(x0, scale);
  gs_set_requires_grad(x, true);
  gs_tensor h_n, c_n = GS_NO_TENSOR;
  gs_tensor y =
      gs_rnn_forward(m, x, GS_NO_TENSOR, GS_NO_TENSOR, &h_n, mode == GS_RNN_LSTM ? &c_n : NULL);
  /* Weighted sums, so every output and the final c get a gradient of their own. */
  gs_tensor wy = gs_randn(GS_F32, (int64_t[]){T, B, hidden}, 3, &rng);
  gs_tensor py = gs_mul(y, wy), loss = gs_sum(py, NULL, 0, false);
  gs_tensor wc = GS_NO_TENSOR, pc = GS_NO_TENSOR, lc = GS_NO_TENSOR, total = loss;
  if (c_n.id) {
    wc = gs_randn(GS_F32, (int64_t[]){1, B, hidden}, 3, &rng);
    pc = gs_mul(c_n, wc), lc = gs_sum(pc, NULL, 0, false);
    total = gs_add(loss, lc);
  }
  gs_backward(total);
  gs_tensor results[12] = {y, h_n, c_n, gs_grad(x)};
  int count = 4;
  count += gs_module_named_parameters(m, NULL, NULL, 0);
  gs_tensor params[8];
  gs_module_named_parameters(m, params, NULL, 8);
  for (int i = 4; i < count; i++)
    results[i] = gs_grad(params[i - 4]);
  g_string_append_printf(out, "mode %d hidden %" PRId64 " scale %g:", (int)mode, hidden, scale);
  for (int i = 0; i < count; i++) {
    if (!results[i].id)
      continue;
    gs_tensor c = gs_contiguous(results[i]);
    const uint32_t *bits = gs_data(c);
    for (int64_t k = 0; k < gs_numel(c); k++)
      g_string_append_printf(out, " %08" PRIx32, bits[k]);
    g_string_append_c(out, ';');
    gs_dispose(c);
  }
  g_string_append_c(out, '\n');
  gs_tensor made[] = {x0, x, y, h_n, c_n, wy, py, loss, wc, pc, lc};
  test_dispose_n(made, G_N_ELEMENTS(made));
  if (total.id != loss.id)
    gs_dispose(total);
  gs_module_dispose(m);
}

static char *dump_all(void) {
  GString *out = g_string_new(NULL);
  const gs_rnn_mode modes[] = {GS_RNN_LSTM, GS_RNN_GRU, GS_RNN_TANH};
  const int64_t hiddens[] = {128, 21};
  const double scales[] = {0.05, 1.0, 400.0, 1e5};
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(hiddens); j++)
      for (size_t k = 0; k < G_N_ELEMENTS(scales); k++)
        dump_case(out, modes[i], hiddens[j], scales[k]);
  return g_string_free(out, FALSE);
}

static void test_vector_rows_match_portable_bits(void) {
  if (gs__cpu_level_get() < GS__CPU_AVX512) {
    g_test_skip("this CPU (or GS_CPU_FEATURES) runs the portable rows only");
    return;
  }
  char *here = dump_all();
  char **envp = g_environ_setenv(g_get_environ(), "GS_CPU_FEATURES", "none", TRUE);
  char *argv[] = {"/proc/self/exe", "--dump", NULL}; /* this program */
  char *child = NULL;
  int status = 0;
  GError *error = NULL;
  g_assert_true(
      g_spawn_sync(NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &child, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  /* Line by line, so a failure names the case. */
  char **mine = g_strsplit(here, "\n", -1), **theirs = g_strsplit(child, "\n", -1);
  g_assert_cmpuint(g_strv_length(mine), ==, g_strv_length(theirs));
  for (int i = 0; mine[i]; i++)
    g_assert_cmpstr(mine[i], ==, theirs[i]);
  g_strfreev(mine), g_strfreev(theirs), g_strfreev(envp);
  g_free(here), g_free(child);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--dump") == 0) {
    char *all = dump_all();
    fputs(all, stdout);
    g_free(all);
    return 0;
  }
  test_init(&argc, &argv);
  test_add_leak_checked("/recurrent/vector-rows-match-portable-bits",
                        test_vector_rows_match_portable_bits);
  return g_test_run();
}
