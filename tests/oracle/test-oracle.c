/* test-oracle.c: the differential oracle over random programs and scenario programs: after
 * every public call, what the engine reports equals what the replayed log says at that event,
 * and every sentence's facts hold (oracle.h). meson runs a fast slice; a long run is
 *   test-oracle --programs 1000000 [--seed S] [--steps K]
 * which prints oracle_programs=, oracle_seconds= and oracle_disagreements= lines and exits
 * non-zero on the first program that disagrees (its seed is printed, to run it again). */
#include <gradscope/gradscope.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oracle.h"
#include "random-program.h"

#define VALUES 16

static guint programs_fast(void) {
  const char *n = g_getenv("GS_ORACLE_PROGRAMS");
  return n ? (guint)atoi(n) : 300;
}

/* One program under the oracle; fails with the report when it disagrees. */
static guint run_one(void (*body)(gpointer), gpointer data, const char *what, gboolean fatal) {
  oracle *o = oracle_begin(VALUES);
  body(data);
  g_autoptr(GString) report = g_string_new(NULL);
  g_autofree char *log = NULL;
  guint n = oracle_end(o, report, TRUE, &log);
  if (n && fatal)
    g_error("%s: %u disagreements between the engine and the model (log kept: %s)\n%s", what, n,
            log, report->str);
  if (n)
    g_printerr("%s: %u disagreements (log kept: %s)\n%s", what, n, log, report->str);
  else {
    g_autofree char *dir = g_path_get_dirname(log);
    remove(log);
    rmdir(dir);
  }
  g_assert_cmpuint(gs_live_tensor_count(), ==, 0);
  return n;
}

typedef struct random_args {
  guint32 seed;
  guint steps;
} random_args;

static void random_body(gpointer data) {
  const random_args *a = data;
  random_program_run(a->seed, a->steps);
}

static void test_random(void) {
  guint n = programs_fast();
  for (guint i = 0; i < n; i++) {
    random_args a = {0x5eed0000u + i, 10 + i % 50};
    g_autofree char *what = g_strdup_printf("random program %u (seed %u, %u steps)", i, a.seed,
                                            a.steps);
    run_one(random_body, &a, what, TRUE);
  }
  oracle_totals t = oracle_get_totals();
  g_test_message("%" G_GUINT64_FORMAT " programs, %" G_GUINT64_FORMAT " probes, %" G_GUINT64_FORMAT
                 " tensors, %" G_GUINT64_FORMAT " sentences, %" G_GUINT64_FORMAT
                 " facts, %" G_GUINT64_FORMAT " open ranges, %" G_GUINT64_FORMAT
                 " packs, %" G_GUINT64_FORMAT " unpacks, %" G_GUINT64_FORMAT " in-place reshapes",
                 t.programs, t.probes, t.tensors, t.sentences, t.facts, t.ranges, t.packs,
                 t.unpacks, t.reshapes);
  g_assert_cmpuint(t.tensors, >, 0);
  g_assert_cmpuint(t.facts, >, 0);
  /* The programs push saved-tensor hooks and open ranges: the slice compares them too. */
  g_assert_cmpuint(t.ranges, >, 0);
  g_assert_cmpuint(t.packs, >, 0);
  g_assert_cmpuint(t.unpacks, >, 0);
  g_assert_cmpuint(t.reshapes, >, 0); /* unsqueeze_ / t_ (gs_as_strided_) and their sentences */
}

/* The program: h = 2x, a clone and a detach of it, both written in place, then
 * backward through c * c. */
static void clone_detach_body(gpointer data) {
  (void)data;
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_set_requires_grad(x, true);
  gs_tensor h = gs_mul_scalar(x, 2.0);
  gs_tensor c = gs_clone(h);
  gs_tensor d = gs_detach(h);
  gs_add_scalar_(c, 100.0);
  gs_mul_scalar_(d, 10.0);
  gs_tensor cc = gs_mul(c, c);
  gs_tensor loss = gs_sum(cc, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {x, h, c, d, cc, loss};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* A write through an alias shows in the base and every other alias (the version tour, step
 * 5: a[0] is 2 after alias += 1). */
static void alias_write_body(gpointer data) {
  (void)data;
  gs_tensor a = gs_from_data(GS_F64, (int64_t[]){2, 3}, 2, (double[]){1, 2, 3, 4, 5, 6});
  gs_tensor alias = gs_detach(a);
  gs_tensor row = gs_select(a, 0, 1);
  gs_tensor col = gs_select(a, 1, 2);
  gs_tensor t = gs_t(a);
  gs_add_scalar_(alias, 1.0);
  gs_mul_scalar_(col, 10.0);
  gs_fill_(row, 7.0);
  gs_tensor c = gs_clone(t);
  gs_add_scalar_(t, 1.0); /* t's storage is shared copy-on-write with c's: c keeps its values */
  gs_tensor all[] = {a, alias, row, col, t, c};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

/* A backward nested in another (reentrant checkpointing): the function's backward recomputes
 * its segment with grad mode on and runs a backward through it, from inside the outer pass;
 * every call inside is probed too, while both passes are open. */
static bool recompute_backward(const gs_function_call *call) {
  gs_tensor w = *(const gs_tensor *)call->user_data;
  bool was = gs_set_grad_enabled(true);
  gs_tensor x = gs_detach(call->saved[0]);
  gs_set_requires_grad(x, true);
  gs_tensor xw = gs_mul(x, w);
  gs_tensor y = gs_tanh(xw);
  gs_backward_with(y, call->grad_output, false);
  call->grad_inputs[0] = gs_clone(gs_grad(x));
  gs_tensor made[] = {y, xw, x};
  for (guint i = 0; i < G_N_ELEMENTS(made); i++)
    gs_dispose(made[i]);
  gs_set_grad_enabled(was);
  return true;
}

static void reentrant_body(gpointer data) {
  (void)data;
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){0.5, -1, 2});
  gs_tensor w = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1.5, 0.25, -0.5});
  gs_set_requires_grad(x, true);
  gs_set_requires_grad(w, true);
  gs_tensor h = gs_mul_scalar(x, 3.0);
  gs_no_grad_begin();
  gs_tensor xw = gs_mul(h, w);
  gs_tensor y = gs_tanh(xw);
  gs_no_grad_end();
  gs_function fn = {.name = "CheckpointBackward",
                    .backward = recompute_backward,
                    .saved = &h,
                    .n_saved = 1,
                    .user_data = &w};
  gs_function_record(y, &h, 1, &fn);
  gs_tensor yy = gs_mul(y, y);
  gs_tensor loss = gs_sum(yy, NULL, 0, false);
  gs_backward(loss);
  gs_tensor all[] = {loss, yy, y, xw, h, w, x};
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    gs_dispose(all[i]);
}

static void test_scenario(gconstpointer data) {
  void (*body)(gpointer) = (void (*)(gpointer))data;
  run_one(body, NULL, g_test_get_path(), TRUE);
}

/* ---- the flight recorder ---------------------------------------------------------------- */

static void dump_and_exit(gpointer data) {
  (void)data;
  _exit(gs_trace_dump() == 0 ? 0 : 3);
}

/* The same program from the same engine state, recorded whole by this process and by forked
 * children through a 64 KiB flight recorder dumped after step `at`: each dump's state at its
 * last event equals the full log's there (oracle_compare_ring). */
static void test_flight_recorder(void) {
  const guint steps = 3000, checkpoints[] = {400, 1800, 3000};
  g_autofree char *dir = g_dir_make_tmp("gradscope-ring-XXXXXX", NULL);
  guint compared = 0;
  for (guint32 seed = 1; seed <= 6; seed++) {
    char *rings[G_N_ELEMENTS(checkpoints)];
    for (guint k = 0; k < G_N_ELEMENTS(checkpoints); k++) {
      rings[k] = g_strdup_printf("%s/ring-%u-%u.gstrace", dir, seed, k);
      pid_t child = fork();
      g_assert_cmpint(child, >=, 0);
      if (child == 0) {
        if (gs_trace_open_ring(rings[k], 64 * 1024) != 0)
          _exit(2);
        random_program_run_with(seed, steps, checkpoints[k], dump_and_exit, NULL);
        _exit(4); /* the checkpoint was not reached */
      }
      int status = 0;
      g_assert_cmpint(waitpid(child, &status, 0), ==, child);
      g_assert_true(WIFEXITED(status));
      g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    }
    g_autofree char *full = g_strdup_printf("%s/full-%u.gstrace", dir, seed);
    g_assert_cmpint(gs_trace_open(full), ==, 0);
    random_program_run(seed, steps);
    gs_trace_close();
    for (guint k = 0; k < G_N_ELEMENTS(checkpoints); k++) {
      g_autoptr(GString) report = g_string_new(NULL);
      guint n = oracle_compare_ring(full, rings[k], report);
      if (n)
        g_error("seed %u, dump after step %u: %u disagreements between the flight recorder's "
                "log and the full log (kept in %s):\n%s", seed, checkpoints[k], n, dir,
                report->str);
      remove(rings[k]);
      g_free(rings[k]);
      compared++;
    }
    remove(full);
  }
  rmdir(dir);
  g_assert_cmpuint(compared, ==, 18);
  g_assert_cmpuint(oracle_get_totals().snapshots, >=, 6); /* most dumps lost their start */
}

/* The long run: --programs N [--seed S] [--steps K]. */
static int long_run(int argc, char **argv) {
  guint64 programs = 1000, seed = 1, steps = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--programs"))
      programs = g_ascii_strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--seed"))
      seed = g_ascii_strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--steps"))
      steps = g_ascii_strtoull(argv[i + 1], NULL, 10);
  }
  gint64 start = g_get_monotonic_time();
  guint64 bad = 0, done = 0;
  for (; done < programs && !bad; done++) {
    random_args a = {(guint32)(seed * 1000003u + done), steps ? (guint)steps : 10 + done % 50};
    g_autofree char *what = g_strdup_printf("random program (seed %u, %u steps)", a.seed, a.steps);
    bad += run_one(random_body, &a, what, FALSE);
    if (done % 10000 == 9999)
      g_printerr("oracle: %" G_GUINT64_FORMAT " programs, %.0f s\n", done + 1,
                 (g_get_monotonic_time() - start) / 1e6);
  }
  oracle_totals t = oracle_get_totals();
  printf("oracle_programs=%" G_GUINT64_FORMAT "\noracle_probes=%" G_GUINT64_FORMAT
         "\noracle_tensors_compared=%" G_GUINT64_FORMAT "\noracle_sentences=%" G_GUINT64_FORMAT
         "\noracle_facts=%" G_GUINT64_FORMAT "\noracle_unknown_values=%" G_GUINT64_FORMAT
         "\noracle_ranges=%" G_GUINT64_FORMAT "\noracle_packs=%" G_GUINT64_FORMAT
         "\noracle_unpacks=%" G_GUINT64_FORMAT "\noracle_reshapes=%" G_GUINT64_FORMAT
         "\noracle_seconds=%.1f\noracle_disagreements=%" G_GUINT64_FORMAT "\n",
         done, t.probes, t.tensors, t.sentences, t.facts, t.unknown_values, t.ranges, t.packs,
         t.unpacks, t.reshapes, (g_get_monotonic_time() - start) / 1e6, bad);
  return bad ? 1 : 0;
}

int main(int argc, char **argv) {
  /* Values are recorded only when the library loads with GS_TRACE_VALUES set. */
  if (!g_getenv("GS_TRACE_VALUES")) {
    g_setenv("GS_TRACE_VALUES", G_STRINGIFY(VALUES), TRUE);
    execv("/proc/self/exe", argv);
    g_error("cannot run again with GS_TRACE_VALUES set");
  }
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  if (argc > 1 && !strcmp(argv[1], "--programs"))
    return long_run(argc, argv);
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/oracle/clone-detach", (gconstpointer)clone_detach_body, test_scenario);
  g_test_add_data_func("/oracle/alias-write", (gconstpointer)alias_write_body, test_scenario);
  g_test_add_data_func("/oracle/reentrant-backward", (gconstpointer)reentrant_body, test_scenario);
  g_test_add_func("/oracle/random", test_random);
  g_test_add_func("/oracle/flight-recorder", test_flight_recorder);
  return g_test_run();
}
