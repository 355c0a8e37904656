/* bench-trace: what recording costs. Runs two workloads side by side with the log off, on (to
 * a file in /tmp) and kept by a flight recorder (a 4 MiB ring, smaller than what each run
 * records, so chunks are pushed out and applied to its snapshot state as in a long run, by the
 * ring's own thread: micro_step_ring_cpu_vs_file counts that thread's CPU time too): the
 * autograd micro-step of bench-autograd (16-element tensors: almost
 * all bookkeeping) and a matmul-heavy loop (256x256 products: almost all arithmetic). Prints ns
 * per recorded event, bytes per event and per step, and each workload's slowdown. Events are
 * counted by the engine's event numbers; since format 1.2 the storage events folded into
 * tensor creation and disposal take none, so bytes per step compares logs of different
 * versions fairly.
 * Targets: <= 30 ns and <= 24 bytes per event; <= 1.02x on matmul work, <= 1.3x on the
 * micro-step.
 *
 * `bench-trace --only off|file|ring N` runs N micro-steps in one mode alone (after N/10 to warm
 * up) and prints the recording thread's and the process's CPU per step: the run to give
 * callgrind (--separate-threads=yes: instructions per thread, the ring's applier its own) or
 * perf on a machine too loaded for the wall-clock ratios above. It also prints how often the
 * recording thread waited or was preempted per 1,000 steps, which its CPU time leaves out. */
#include <gradscope/gradscope.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

#define REPS 5

static void micro_step(gs_tensor x, gs_tensor w, gs_tensor b) {
  gs_tensor xw = gs_mul(x, w), z = gs_add(xw, b), t = gs_tanh(z), y = gs_sum(t, NULL, 0, false);
  gs_backward(y);
  gs_zero_grad(x), gs_zero_grad(w), gs_zero_grad(b);
  gs_dispose(xw), gs_dispose(z), gs_dispose(t), gs_dispose(y);
}

static void matmul_step(gs_tensor a, gs_tensor m) {
  gs_tensor p = gs_matmul(a, m), q = gs_add(p, a), r = gs_relu(q);
  gs_dispose(p), gs_dispose(q), gs_dispose(r);
}

/* The recording thread's context switches: waits (it blocked, as on a full write-behind queue)
 * and preemptions (another thread took its core). Wall-clock time that its CPU time does not
 * show is one or the other. */
typedef struct thread_switches {
  long waits, preemptions;
} thread_switches;

static thread_switches thread_switches_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return (thread_switches){ru.ru_nvcsw, ru.ru_nivcsw};
}

typedef struct run {
  double seconds;
  uint64_t events;
  double cpu_seconds; /* the process's, all threads (the ring's applier included) */
  double preemptions_per_1k; /* the recording thread's, per 1,000 steps */
} run;

static double process_cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static run time_micro(gs_tensor x, gs_tensor w, gs_tensor b, int n) {
  uint64_t e0 = gs_event_counter();
  double c0 = process_cpu_s(), t0 = bench_now_s();
  thread_switches s0 = thread_switches_now();
  for (int i = 0; i < n; i++)
    micro_step(x, w, b);
  thread_switches s1 = thread_switches_now();
  return (run){(bench_now_s() - t0) / n, (gs_event_counter() - e0) / (uint64_t)n,
               (process_cpu_s() - c0) / n, (double)(s1.preemptions - s0.preemptions) * 1e3 / n};
}

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --only MODE N: one mode's micro-steps, for a profiler. */
static int run_only(const char *mode, int n, gs_tensor x, gs_tensor w, gs_tensor b) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/gradscope-bench-only-%d.gstrace", (int)getpid());
  bool file = strcmp(mode, "file") == 0, ring = strcmp(mode, "ring") == 0;
  if (!file && !ring && strcmp(mode, "off") != 0) {
    fprintf(stderr, "bench-trace: --only expects off, file or ring, not '%s'\n", mode);
    return 2;
  }
  if (file)
    gs_trace_open(path);
  else if (ring)
    gs_trace_open_ring(path, 4u << 20);
  for (int i = 0; i < n / 10; i++)
    micro_step(x, w, b);
  double t0 = thread_cpu_s(), p0 = process_cpu_s(), w0 = bench_now_s();
  thread_switches s0 = thread_switches_now();
  for (int i = 0; i < n; i++)
    micro_step(x, w, b);
  double t1 = thread_cpu_s(), p1 = process_cpu_s(), w1 = bench_now_s();
  thread_switches s1 = thread_switches_now();
  gs_trace_close();
  unlink(path);
  char name[64];
  snprintf(name, sizeof name, "micro_step_%s_thread_cpu_us", mode);
  bench_result(name, (t1 - t0) * 1e6 / n, "us");
  snprintf(name, sizeof name, "micro_step_%s_process_cpu_us", mode);
  bench_result(name, (p1 - p0) * 1e6 / n, "us");
  snprintf(name, sizeof name, "micro_step_%s_wall_us", mode);
  bench_result(name, (w1 - w0) * 1e6 / n, "us");
  snprintf(name, sizeof name, "micro_step_%s_waits_per_1k_steps", mode);
  bench_result(name, (double)(s1.waits - s0.waits) * 1e3 / n, "");
  snprintf(name, sizeof name, "micro_step_%s_preemptions_per_1k_steps", mode);
  bench_result(name, (double)(s1.preemptions - s0.preemptions) * 1e3 / n, "");
  return 0;
}

static run time_matmul(gs_tensor a, gs_tensor m, int n) {
  uint64_t e0 = gs_event_counter();
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++)
    matmul_step(a, m);
  return (run){(bench_now_s() - t0) / n, (gs_event_counter() - e0) / (uint64_t)n, 0.0, 0.0};
}

static double median_of(run *r, int n) {
  double s[REPS];
  for (int i = 0; i < n; i++)
    s[i] = r[i].seconds;
  return bench_median(s, n);
}

static double median_cpu_of(run *r, int n) {
  double s[REPS];
  for (int i = 0; i < n; i++)
    s[i] = r[i].cpu_seconds;
  return bench_median(s, n);
}

static double median_preemptions_of(run *r, int n) {
  double s[REPS];
  for (int i = 0; i < n; i++)
    s[i] = r[i].preemptions_per_1k;
  return bench_median(s, n);
}

int main(int argc, char **argv) {
  if (argc > 1 && (argc != 4 || strcmp(argv[1], "--only") != 0 || atoi(argv[3]) <= 0)) {
    fprintf(stderr, "usage: bench-trace [--only off|file|ring STEPS]\n");
    return 2;
  }
  char path[64];
  snprintf(path, sizeof path, "/tmp/gradscope-bench-%d.gstrace", (int)getpid());
  gs_rng rng;
  gs_rng_seed(&rng, 4);
  gs_tensor x = gs_randn(GS_F32, (int64_t[]){16}, 1, &rng), w = gs_randn(GS_F32, (int64_t[]){16}, 1, &rng),
            b = gs_randn(GS_F32, (int64_t[]){16}, 1, &rng);
  gs_set_requires_grad(x, true), gs_set_requires_grad(w, true), gs_set_requires_grad(b, true);
  if (argc == 4) {
    int status = run_only(argv[2], atoi(argv[3]), x, w, b);
    gs_dispose(x), gs_dispose(w), gs_dispose(b);
    return status;
  }
  gs_tensor a = gs_randn(GS_F32, (int64_t[]){256, 256}, 2, &rng),
            m = gs_randn(GS_F32, (int64_t[]){256, 256}, 2, &rng);

  char ring_path[64];
  snprintf(ring_path, sizeof ring_path, "/tmp/gradscope-bench-ring-%d.gstrace", (int)getpid());
  const uint64_t ring_bytes = 4u << 20;
  const int n_micro = 20000, n_matmul = 200;
  run micro_off[REPS], micro_on[REPS], mm_off[REPS], mm_on[REPS], micro_ring[REPS], mm_ring[REPS];
  double dump_s[REPS];
  time_micro(x, w, b, n_micro / 10);
  for (int r = 0; r < REPS; r++) { /* alternate off and on so both see the same machine */
    micro_off[r] = time_micro(x, w, b, n_micro);
    mm_off[r] = time_matmul(a, m, n_matmul);
    gs_trace_open(path);
    micro_on[r] = time_micro(x, w, b, n_micro);
    mm_on[r] = time_matmul(a, m, n_matmul);
    gs_trace_close();
    gs_trace_open_ring(ring_path, ring_bytes);
    micro_ring[r] = time_micro(x, w, b, n_micro);
    mm_ring[r] = time_matmul(a, m, n_matmul);
    double t0 = bench_now_s();
    gs_trace_dump(); /* what an error or a crash costs: the snapshot and the ring, written */
    dump_s[r] = bench_now_s() - t0;
    gs_trace_close();
  }
  struct stat ring_st;
  stat(ring_path, &ring_st);
  unlink(ring_path);
  /* Bytes: one more traced run of the micro-step alone, measured by the file's size. */
  gs_trace_open(path);
  uint64_t e0 = gs_event_counter();
  for (int i = 0; i < n_micro; i++)
    micro_step(x, w, b);
  uint64_t events = gs_event_counter() - e0;
  gs_trace_close();
  struct stat st;
  stat(path, &st);
  unlink(path);

  double micro_off_s = median_of(micro_off, REPS), micro_on_s = median_of(micro_on, REPS);
  double mm_off_s = median_of(mm_off, REPS), mm_on_s = median_of(mm_on, REPS);
  printf("# log off vs on, medians of %d alternating runs\n", REPS);
  bench_result("micro_step_off_us", micro_off_s * 1e6, "us");
  bench_result("micro_step_on_us", micro_on_s * 1e6, "us");
  bench_result("micro_events_per_step", (double)micro_on[0].events, "");
  bench_result("trace_ns_per_event", (micro_on_s - micro_off_s) * 1e9 / (double)micro_on[0].events, "ns");
  bench_result("trace_bytes_per_event", (double)(st.st_size - 64) / (double)events, "bytes");
  bench_result("trace_bytes_per_step", (double)(st.st_size - 64) / (double)n_micro, "bytes");
  bench_result("micro_step_slowdown", micro_on_s / micro_off_s, "x");
  /* Wall-clock time the recording thread's CPU time does not show: another thread (the
   * write-behind thread, OpenBLAS's workers spinning after the matmul runs, another
   * program) took its core. */
  bench_result("micro_step_off_preemptions_per_1k_steps", median_preemptions_of(micro_off, REPS),
               "");
  bench_result("micro_step_on_preemptions_per_1k_steps", median_preemptions_of(micro_on, REPS), "");
  bench_result("matmul_step_off_ms", mm_off_s * 1e3, "ms");
  bench_result("matmul_step_on_ms", mm_on_s * 1e3, "ms");
  bench_result("matmul_step_slowdown", mm_on_s / mm_off_s, "x");
  double micro_ring_s = median_of(micro_ring, REPS), mm_ring_s = median_of(mm_ring, REPS);
  printf("# flight recorder: a %u MiB ring, medians of the same alternating runs\n",
         (unsigned)(ring_bytes >> 20));
  bench_result("micro_step_ring_us", micro_ring_s * 1e6, "us");
  bench_result("trace_ring_ns_per_event",
               (micro_ring_s - micro_off_s) * 1e9 / (double)micro_on[0].events, "ns");
  bench_result("micro_step_ring_slowdown", micro_ring_s / micro_off_s, "x");
  bench_result("micro_step_ring_vs_file", micro_ring_s / micro_on_s, "x");
  bench_result("micro_step_ring_preemptions_per_1k_steps", median_preemptions_of(micro_ring, REPS),
               "");
  /* The ring's applier runs beside the program: the process's CPU time shows what it costs
   * in all, where the row above shows what the recording thread waits for. */
  bench_result("micro_step_ring_cpu_vs_file",
               median_cpu_of(micro_ring, REPS) / median_cpu_of(micro_on, REPS), "x");
  bench_result("matmul_step_ring_ms", mm_ring_s * 1e3, "ms");
  bench_result("matmul_step_ring_slowdown", mm_ring_s / mm_off_s, "x");
  bench_result("ring_dump_ms", bench_median(dump_s, REPS) * 1e3, "ms");
  bench_result("ring_dump_bytes", (double)ring_st.st_size, "bytes");
  gs_dispose(x), gs_dispose(w), gs_dispose(b), gs_dispose(a), gs_dispose(m);
  return 0;
}
