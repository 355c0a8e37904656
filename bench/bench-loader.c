/* bench-loader: the DataLoader with 0, 1 and 2 worker processes over a deliberately costly
 * dataset: each of the 1,797 digits (8x8) is resampled to 64x64 with a random sub-pixel shift
 * and blurred, so reading and collating a batch costs far more than using it. The main
 * process only sums each batch. Each run is one loader over EPOCHS epochs, as in training.
 * Prints batches per second for each worker count, with workers forked each epoch and with
 * persistent ones (median of ROUNDS rounds, the settings alternating within a round so that
 * the machine's load hits them alike), the speed-up from 0 to 2 workers of each (target
 * >= 1.7 on 2 free cores), and the bytes the
 * main process copied or allocated per batch after collate (the batch arrives over the
 * worker's shared pages: 0), and the CPU time per batch of the main process and of the
 * workers (where the work went, whatever the machine's load). The shifts are drawn from a generator seeded with the sample's
 * index, so every worker count gives the same batches; the checksum lines show it.
 *
 * Usage: bench-loader [path/to/digits.csv]. Ends with `loader_batches_per_s_w0=...` lines. */
#include <gradscope/gradscope.h>
#include <math.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench-util.h"

#ifndef DIGITS_CSV
#define DIGITS_CSV "data/digits.csv"
#endif

enum { ROWS = 1797, PIXELS = 64, SIDE = 64, BATCH = 64, ROUNDS = 5, BLUR_PASSES = 4,
       EPOCHS = 3 };

static float digits[ROWS * PIXELS];

static bool load_digits(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "bench-loader: cannot open %s (pass the path to digits.csv)\n", path);
    return false;
  }
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c <= PIXELS; c++) {
      int v;
      if (fscanf(f, "%d,", &v) != 1) {
        fprintf(stderr, "bench-loader: %s: row %d is short\n", path, r + 1);
        fclose(f);
        return false;
      }
      if (c < PIXELS)
        digits[r * PIXELS + c] = (float)v / 16.0f;
    }
  fclose(f);
  return true;
}

/* Pixel (x, y) of the 8x8 digit, 0 outside. */
static float digit_at(const float *d, int x, int y) {
  return x < 0 || y < 0 || x >= 8 || y >= 8 ? 0.0f : d[y * 8 + x];
}

/* Sample i: its digit resampled bilinearly to SIDE x SIDE, shifted by up to 1.5 source pixels
 * each way, then box-blurred BLUR_PASSES times; and its index as the label. */
static bool get_augmented(void *user, int64_t i, gs_tensor *out) {
  (void)user;
  gs_rng rng;
  gs_rng_seed(&rng, 0x5eed + (uint64_t)i);
  double dx = 3.0 * gs_rng_uniform(&rng) - 1.5, dy = 3.0 * gs_rng_uniform(&rng) - 1.5;
  const float *d = &digits[i * PIXELS];
  static _Thread_local float a[SIDE * SIDE], b[SIDE * SIDE];
  for (int y = 0; y < SIDE; y++)
    for (int x = 0; x < SIDE; x++) {
      double sx = (x + 0.5) * 8.0 / SIDE - 0.5 - dx, sy = (y + 0.5) * 8.0 / SIDE - 0.5 - dy;
      int x0 = (int)floor(sx), y0 = (int)floor(sy);
      float fx = (float)(sx - x0), fy = (float)(sy - y0);
      a[y * SIDE + x] = (1 - fy) * ((1 - fx) * digit_at(d, x0, y0) + fx * digit_at(d, x0 + 1, y0)) +
                        fy * ((1 - fx) * digit_at(d, x0, y0 + 1) + fx * digit_at(d, x0 + 1, y0 + 1));
    }
  for (int p = 0; p < BLUR_PASSES; p++) {
    for (int y = 0; y < SIDE; y++)
      for (int x = 0; x < SIDE; x++) {
        float s = 0;
        for (int v = -1; v <= 1; v++)
          for (int u = -1; u <= 1; u++) {
            int xx = x + u, yy = y + v;
            if (xx >= 0 && yy >= 0 && xx < SIDE && yy < SIDE)
              s += a[yy * SIDE + xx];
          }
        b[y * SIDE + x] = s / 9.0f;
      }
    memcpy(a, b, sizeof a);
  }
  out[0] = gs_from_data(GS_F32, (int64_t[]){1, SIDE, SIDE}, 3, a);
  out[1] = gs_scalar(GS_I64, (double)i);
  return out[0].id && out[1].id;
}

typedef struct run_result {
  double batches_per_s;
  double checksum;
  uint64_t engine_bytes_per_batch; /* allocated by the main process while taking a batch */
  int received;                    /* batches whose storages came from a worker */
  int batches;
  double main_cpu_s, workers_cpu_s; /* CPU time of this process and of its (waited) workers */
} run_result;

static double cpu_s(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static run_result run_epochs(int workers, bool persistent) {
  gs_dataset ds = {.length = ROWS, .n_fields = 2, .get_item = get_augmented};
  gs_loader_options opt = {.batch_size = BATCH, .shuffle = true, .seed = 7,
                           .num_workers = workers, .persistent_workers = persistent};
  gs_data_loader *l = gs_data_loader_new(&ds, &opt);
  run_result r = {0};
  uint64_t engine_bytes = 0;
  double cpu0 = cpu_s(RUSAGE_SELF), children0 = cpu_s(RUSAGE_CHILDREN);
  double t0 = bench_now_s();
  for (int epoch = 0; epoch < EPOCHS; epoch++) {
    gs_data_loader_reset(l); /* the workers' start counts too */
    for (;;) {
      gs_memory_stats before, after;
      gs_memory_get_stats(&before);
      gs_scope step = gs_scope_begin("step");
      gs_batch b = gs_data_loader_next_batch(l);
      gs_memory_get_stats(&after);
      if (!b.id) {
        gs_scope_end(step);
        break;
      }
      engine_bytes += after.bytes_requested - before.bytes_requested;
      gs_storage_info info;
      if (gs_storage_info_of(gs_batch_field(b, 0), &info) == 0 &&
          info.origin == GS_MEMORY_RECEIVED)
        r.received++;
      gs_tensor s = gs_sum(gs_batch_field(b, 0), NULL, 0, false); /* the "training step" */
      r.checksum += gs_item(s);
      r.batches++;
      gs_scope_end(step);
    }
  }
  gs_data_loader_free(l); /* persistent workers are waited for here: their end counts */
  double dt = bench_now_s() - t0;
  r.main_cpu_s = cpu_s(RUSAGE_SELF) - cpu0;
  r.workers_cpu_s = cpu_s(RUSAGE_CHILDREN) - children0;
  r.batches_per_s = r.batches / dt;
  r.engine_bytes_per_batch = r.batches ? engine_bytes / (uint64_t)r.batches : 0;
  return r;
}

int main(int argc, char **argv) {
  if (!load_digits(argc > 1 ? argv[1] : DIGITS_CSV))
    return 1;
  bench_print_setup();
  printf("# %d digits resampled to %dx%d with a random shift and %d blurs, batches of %d\n",
         ROWS, SIDE, SIDE, BLUR_PASSES, BATCH);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  double load[3] = {0};
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
      load[0] = -1;
    fclose(la);
  }
  printf("# %ld cores online, load average %.2f before the run\n", cores, load[0]);
  /* Settings: 0, 1 and 2 workers forked each epoch, then 1 and 2 persistent workers. */
  enum { COUNTS = 5 };
  static const int n_workers[COUNTS] = {0, 1, 2, 1, 2};
  static const bool persistent[COUNTS] = {false, false, false, true, true};
  double rate[COUNTS][ROUNDS];
  run_result last[COUNTS];
  for (int round = 0; round < ROUNDS; round++)
    for (int w = 0; w < COUNTS; w++) {
      last[w] = run_epochs(n_workers[w], persistent[w]);
      rate[w][round] = last[w].batches_per_s;
      printf("# round %d, %d workers%s: %.2f batches/s (%d batches, checksum %.6g; CPU ms per "
             "batch: main %.2f, workers %.2f)\n", round, n_workers[w],
             persistent[w] ? " (persistent)" : "", last[w].batches_per_s, last[w].batches,
             last[w].checksum, 1e3 * last[w].main_cpu_s / last[w].batches,
             1e3 * last[w].workers_cpu_s / last[w].batches);
    }
  double median[COUNTS];
  for (int w = 0; w < COUNTS; w++)
    median[w] = bench_median(rate[w], ROUNDS);
  bool same = true;
  for (int w = 1; w < COUNTS; w++)
    same = same && last[w].checksum == last[0].checksum;
  printf("# same batches with 0, 1 and 2 workers, forked or persistent: %s\n",
         same ? "yes" : "NO");
  printf("# batches received from a worker with 2 workers: %d of %d\n", last[2].received,
         last[2].batches);
  bench_result("loader_batches_per_s_w0", median[0], "batches/s");
  bench_result("loader_batches_per_s_w1", median[1], "batches/s");
  bench_result("loader_batches_per_s_w2", median[2], "batches/s");
  bench_result("loader_batches_per_s_w1_persistent", median[3], "batches/s");
  bench_result("loader_batches_per_s_w2_persistent", median[4], "batches/s");
  bench_result("loader_speedup_w2_over_w0", median[2] / median[0], "x");
  bench_result("loader_speedup_w2_persistent_over_w0", median[4] / median[0], "x");
  /* The row of issue 32: two persistent workers over none, by batches per second. */
  bench_result("loader_speedup_w2", median[4] / median[0], "x");
  /* The same by CPU accounting, which the machine's load does not move: two cores each doing
   * a worker's CPU per batch, with the main process's share, against one core doing it all. */
  double cpu_w0 = last[0].main_cpu_s / last[0].batches;
  double cpu_w2 = (last[4].workers_cpu_s + last[4].main_cpu_s) / last[4].batches;
  bench_result("loader_speedup_w2_cpu", 2.0 * cpu_w0 / cpu_w2, "x");
  /* Where the work went: independent of how busy the machine is. */
  bench_result("loader_main_cpu_ms_per_batch_w0", 1e3 * last[0].main_cpu_s / last[0].batches,
               "ms");
  bench_result("loader_main_cpu_ms_per_batch_w2", 1e3 * last[2].main_cpu_s / last[2].batches,
               "ms");
  bench_result("loader_workers_cpu_ms_per_batch_w2",
               1e3 * last[2].workers_cpu_s / last[2].batches, "ms");
  bench_result("loader_workers_cpu_ms_per_batch_w2_persistent",
               1e3 * last[4].workers_cpu_s / last[4].batches, "ms");
  /* With workers, whatever the main process allocates while taking a batch is a copy made
   * after collate; without, it is the collate's own output (the batch's size), for scale. */
  bench_result("loader_bytes_copied_per_batch_w2", (double)last[2].engine_bytes_per_batch,
               "bytes");
  bench_result("loader_collated_bytes_per_batch_w0", (double)last[0].engine_bytes_per_batch,
               "bytes");
  return same ? 0 : 1;
}
