/* bench-seek.c: seeking in a log whose state is huge (issue 32): a child records 200,000
 * tensors made and kept alive, then tensors made and disposed until the log holds EVENTS
 * events (10 M by default); the parent opens it with gs_trace_model_load_file and seeks as the
 * scrubber does: 50 random jumps, then 50 steps backwards from the middle. Prints the worst
 * jump and step in wall and CPU time (seek_huge_ms, seek_huge_cpu_ms: target every seek
 * <= 100 ms) and the median jump's CPU time, the keyframes the model holds and their bytes
 * (seek_keyframes, seek_keyframe_mb, and the most events a seek replays: seek_keyframe_gap_max),
 * the open's time, and the model's resident bytes per event.
 *
 * Usage: bench-seek [EVENTS [ALIVE]]. GS_BENCH_SEEK_LOG=path keeps (or reuses) the log. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

#include "bench-record.h"
#include "bench-seeks.h"
#include "bench-util.h"
#include "model-private.h"

static guint64 alive_wanted = 200000;

/* alive_wanted tensors kept (three events each: the storage, the tensor, a name every 100th),
 * then tensors made and disposed (four events each) until events. */
static void huge_state(uint64_t events) {
  const int64_t shape[] = {4};
  gs_tensor *kept = g_new(gs_tensor, alive_wanted);
  for (guint64 i = 0; i < alive_wanted; i++)
    kept[i] = gs_ones(GS_F32, shape, 1);
  /* The engine numbers a tensor made with its storage as one event, the reader two. */
  guint64 start = gs_event_counter();
  while (2 * (gs_event_counter() - start) < events)
    gs_dispose(gs_ones(GS_F32, shape, 1));
  for (guint64 i = 0; i < alive_wanted; i++)
    gs_dispose(kept[i]);
  g_free(kept);
}

int main(int argc, char **argv) {
  guint64 events = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 10000000;
  if (argc > 2)
    alive_wanted = g_ascii_strtoull(argv[2], NULL, 10);
  const char *keep = g_getenv("GS_BENCH_SEEK_LOG");
  g_autofree char *path =
      keep ? g_strdup(keep) : g_strdup_printf("/tmp/gradscope-bench-seek-%d.gst", (int)getpid());
  if (!keep || !g_file_test(path, G_FILE_TEST_EXISTS)) {
    double t0 = bench_now_s();
    bench_record_in_child(path, huge_state, events, "bench-seek");
    printf("# recorded in %.1f s\n", bench_now_s() - t0);
  }
  guint64 rss0 = (guint64)bench_proc_status_kib("VmRSS") * 1024;
  double t0 = bench_now_s(), c0 = bench_cpu_s();
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  if (!m) {
    fprintf(stderr, "bench-seek: %s\n", error->message);
    return 1;
  }
  double open_s = bench_now_s() - t0, open_cpu_s = bench_cpu_s() - c0;
  guint64 rss1 = (guint64)bench_proc_status_kib("VmRSS") * 1024;
  guint64 n = gs_trace_model_n_events(m);
  printf("# %" G_GUINT64_FORMAT " events, %u alive at the peak\n", n,
         gs_replay_n_objects(gs_trace_model_seek(m, n / 2)));

  GRand *rand = g_rand_new_with_seed(32);
  bench_seek_times t;
  bench_time_seeks(m, 50, 50, rand, &t);
  g_rand_free(rand);
  guint64 keyframe_bytes = 0, gap = 0;
  for (guint i = 0; i < m->keyframes->len; i++) {
    const model_keyframe *k = &g_array_index(m->keyframes, model_keyframe, i);
    keyframe_bytes += k->bytes;
    guint64 next = i + 1 < m->keyframes->len ? k[1].applied : n;
    gap = MAX(gap, next - k->applied);
  }
  bench_result("seek_events", (double)n, "");
  bench_result("seek_open_s", open_s, "s");
  bench_result("seek_open_cpu_s", open_cpu_s, "s");
  bench_result("seek_bytes_per_event", (double)(rss1 - rss0) / (double)n, "B");
  bench_result("seek_huge_ms", t.jump_ms, "ms");
  bench_result("seek_huge_cpu_ms", t.jump_cpu_ms, "ms");
  bench_result("seek_huge_median_cpu_ms", t.jump_median_cpu_ms, "ms");
  bench_result("seek_huge_back_ms", t.back_ms, "ms");
  bench_result("seek_huge_back_cpu_ms", t.back_cpu_ms, "ms");
  bench_result("seek_keyframes", m->keyframes->len, "");
  bench_result("seek_keyframe_mb", (double)keyframe_bytes / 1e6, "MB");
  bench_result("seek_keyframe_gap_max", (double)gap, "");
  gs_trace_model_free(m);
  if (!keep)
    g_unlink(path);
  return 0;
}
