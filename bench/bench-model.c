/* bench-model: the inspector's trace model on a long log (issue 7's budgets). A child process
 * records a small MLP training loop (two Linear layers, ReLU, MSE, SGD with momentum, a scope
 * per step and one around each update, a mark every 100 steps) until the log holds at least
 * GS_BENCH_MODEL_EVENTS events (10 M by default); the parent then opens it with
 * gs_trace_model_load_file and measures:
 *   model_open_s           time to open (parse, index, keyframes, memory series)  target <= 3 s
 *   (each time is printed as wall time and, as *_cpu_*, as this process's CPU time)
 *   model_bytes_per_event  growth of the process's RSS over the open, per event    target <= 32
 *   model_seek_ms          worst of 100 random seeks                               target <= 20 ms
 *   model_step_back_ms     worst of 100 one-event steps backwards
 *   model_life_ms          worst tensor life (a parameter's, and 20 random tensors') target <= 50
 *   model_life_first_ms    the parameter's life, the model's first query (its minor page
 *                          faults: model_life_first_faults); model_life_again_ms: the worst
 *                          of four more
 *   model_columns_ms       2,000 timeline columns over the whole log, by category and by scope
 *   model_feed_64k_ms      worst time to index one 64 KiB piece fed from memory (its share of
 *                          the live latency from an event written to it being in the model)
 * The log is recorded in a child so the engine's own memory does not blur the RSS numbers.
 * GS_BENCH_MODEL_LOG=path reuses (or keeps) a log there instead of a temporary one, and
 * GS_BENCH_MODEL_LIVES_ONLY=1 measures only the open and the lives (a 164 M-event log takes
 * minutes to open, and as long again to feed). */
#include <gradscope/gradscope.h>
#include <stdint.h>
#include <string.h>
#include <glib/gstdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-seeks.h"
#include "bench-util.h"
#include "trace-model.h"

static guint64 rss_bytes(void) {
  g_autofree char *status = NULL;
  if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
    return 0;
  const char *line = strstr(status, "VmRSS:");
  return line ? g_ascii_strtoull(line + 6, NULL, 10) * 1024 : 0;
}

/* Trains until the engine has numbered `events` events, recording to path. */
static void record_training(const char *path, guint64 events) {
  gs_rng rng;
  gs_rng_seed(&rng, 1);
  if (gs_trace_open(path) != 0)
    _exit(1);
  gs_module l1 = gs_linear_new(8, 16, true, &rng), l2 = gs_linear_new(16, 4, true, &rng);
  gs_tensor params[4];
  for (int i = 0; i < 2; i++) {
    params[i] = gs_module_parameter_at(l1, i, NULL);
    params[2 + i] = gs_module_parameter_at(l2, i, NULL);
  }
  gs_optimizer opt = gs_sgd_new(params, 4, &(gs_sgd_options){.lr = 0.01, .momentum = 0.9});
  const int64_t x_shape[] = {4, 8}, y_shape[] = {4, 4};
  /* The engine numbers a few events it does not record (about 5%): aim a little higher. */
  guint64 start = gs_event_counter(), until = events + events / 16;
  for (long step = 0; gs_event_counter() - start < until; step++) {
    if (step % 100 == 0) {
      char label[32];
      g_snprintf(label, sizeof label, "step %ld", step);
      gs_trace_mark(label);
    }
    gs_scope s = gs_scope_begin("train step");
    gs_tensor x = gs_randn(GS_F32, x_shape, 2, &rng), y = gs_randn(GS_F32, y_shape, 2, &rng);
    gs_tensor out = gs_linear_forward(l2, gs_relu(gs_linear_forward(l1, x)));
    gs_tensor loss = gs_mse_loss(out, y, GS_REDUCTION_MEAN);
    gs_backward(loss);
    gs_scope u = gs_scope_begin("update");
    gs_optimizer_step(opt);
    gs_scope_end(u);
    gs_optimizer_zero_grad(opt);
    gs_scope_end(s);
  }
  gs_optimizer_dispose(opt);
  gs_module_dispose(l1);
  gs_module_dispose(l2);
  gs_trace_close();
}

static long minor_faults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

static double ms_since(double t0) { return (bench_now_s() - t0) * 1e3; }

static double cpu_ms_since(double c0) { return (bench_cpu_s() - c0) * 1e3; }

int main(void) {
  const char *env_events = g_getenv("GS_BENCH_MODEL_EVENTS");
  guint64 events = env_events ? g_ascii_strtoull(env_events, NULL, 10) : 10000000;
  const char *keep = g_getenv("GS_BENCH_MODEL_LOG");
  g_autofree char *path = keep ? g_strdup(keep)
                               : g_strdup_printf("/tmp/gradscope-bench-model-%d.gstrace",
                                                 (int)getpid());
  if (!keep || !g_file_test(path, G_FILE_TEST_EXISTS)) {
    double t0 = bench_now_s();
    pid_t child = fork();
    if (child == 0) {
      record_training(path, events);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "bench-model: recording the training run to %s failed\n", path);
      return 1;
    }
    printf("# recorded in %.1f s\n", bench_now_s() - t0);
  }

  guint64 rss0 = rss_bytes();
  double t0 = bench_now_s(), cpu0 = bench_cpu_s();
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  double open_s = bench_now_s() - t0, open_cpu_s = bench_cpu_s() - cpu0;
  if (!m) {
    fprintf(stderr, "bench-model: %s\n", error->message);
    return 1;
  }
  guint64 rss1 = rss_bytes();
  guint64 n = gs_trace_model_n_events(m);
  if (gs_trace_model_problem(m))
    printf("# problem: %s\n", gs_trace_model_problem(m));
  printf("# %" G_GUINT64_FORMAT " events, %u scopes\n", n, gs_trace_model_n_scopes(m));
  bench_result("model_events", (double)n, "");
  bench_result("model_open_s", open_s, "s");
  bench_result("model_open_cpu_s", open_cpu_s, "s");
  bench_result("model_bytes_per_event", (double)(rss1 - rss0) / (double)n, "B");

  GRand *rand = g_rand_new_with_seed(9);
  gboolean lives_only = g_strcmp0(g_getenv("GS_BENCH_MODEL_LIVES_ONLY"), "1") == 0;
  if (!lives_only) {
    bench_seek_times seeks;
    bench_time_seeks(m, 100, 100, rand, &seeks);
    bench_result("model_seek_ms", seeks.jump_ms, "ms");
    bench_result("model_seek_cpu_ms", seeks.jump_cpu_ms, "ms");
    bench_result("model_step_back_ms", seeks.back_ms, "ms");
    bench_result("model_step_back_cpu_ms", seeks.back_cpu_ms, "ms");
  }

  /* The first tensor created (a parameter: alive all run long) and random ones. */
  double worst_life = 0, worst_life_cpu = 0, again = 0, again_cpu = 0;
  guint max_len = 0;
  guint64 parameter = 0;
  for (int i = 0; i < 25; i++) {
    guint64 from = i == 0 ? 0 : (guint64)g_rand_double_range(rand, 0, (double)n);
    guint64 tensor = i > 20 ? parameter : 0; /* then the parameter again, four times */
    for (guint64 k = from; k < n && !tensor; k++) {
      gs_trace_event e;
      if (gs_trace_model_kind_at(m, k) == GS_TRACE_TENSOR_CREATE &&
          gs_trace_model_event(m, k, &e))
        tensor = e.tensor;
    }
    long f0 = minor_faults();
    double s0 = bench_now_s(), c0 = bench_cpu_s();
    g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, tensor);
    double ms = ms_since(s0), cpu_ms = cpu_ms_since(c0);
    if (i == 0) {
      parameter = tensor;
      bench_result("model_life_first_ms", ms, "ms");
      bench_result("model_life_first_cpu_ms", cpu_ms, "ms");
      bench_result("model_life_first_faults", (double)(minor_faults() - f0), "");
    }
    if (i > 20) {
      again = MAX(again, ms);
      again_cpu = MAX(again_cpu, cpu_ms);
      continue;
    }
    worst_life = MAX(worst_life, ms);
    worst_life_cpu = MAX(worst_life_cpu, cpu_ms);
    max_len = MAX(max_len, gs_tensor_life_len(life));
  }
  g_rand_free(rand);
  printf("# longest life: %u events\n", max_len);
  bench_result("model_life_ms", worst_life, "ms");
  bench_result("model_life_cpu_ms", worst_life_cpu, "ms");
  bench_result("model_life_again_ms", again, "ms");
  bench_result("model_life_again_cpu_ms", again_cpu, "ms");
  if (lives_only) {
    gs_trace_model_free(m);
    if (!keep)
      g_unlink(path);
    return 0;
  }

  g_autofree gs_memory_column *cols = g_new(gs_memory_column, 2000);
  double w0 = bench_now_s(), cc0 = bench_cpu_s();
  gs_trace_model_memory_columns(m, 0, n - 1, 2000, FALSE, cols);
  gs_trace_model_memory_columns(m, 0, n - 1, 2000, TRUE, cols);
  bench_result("model_columns_ms", ms_since(w0) / 2, "ms");
  bench_result("model_columns_cpu_ms", cpu_ms_since(cc0) / 2, "ms");
  gs_trace_model_free(m);

  /* Fed from memory in 64 KiB pieces, as a socket delivers them. */
  g_autofree char *data = NULL;
  gsize len = 0;
  if (g_file_get_contents(path, &data, &len, NULL)) {
    gs_trace_model *live = gs_trace_model_new();
    double worst_feed = 0, worst_feed_cpu = 0;
    for (gsize off = 0; off < len; off += 65536) {
      double f0 = bench_now_s(), c0 = bench_cpu_s();
      gs_trace_model_feed(live, data + off, MIN(65536, len - off));
      worst_feed = MAX(worst_feed, ms_since(f0));
      worst_feed_cpu = MAX(worst_feed_cpu, cpu_ms_since(c0));
    }
    gs_trace_model_free(live);
    bench_result("model_feed_64k_ms", worst_feed, "ms");
    bench_result("model_feed_64k_cpu_ms", worst_feed_cpu, "ms");
  }
  if (!keep)
    g_unlink(path);
  return 0;
}
