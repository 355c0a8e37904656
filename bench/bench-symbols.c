/* bench-symbols.c: what call sites cost a reader. A child process records a 1 M-event log
 * whose events come from 64 lines of this file (and leaves 64 tensors alive, one per line);
 * the parent loads it into the trace model and then turns every site into `function
 * (file:line)` with libdw, as the inspector and `gradscope stats` do, and groups what is alive
 * at the end. Prints the load time (symbols_load_s), the time to symbolise every site of the
 * log (symbols_resolve_ms, target: loading plus resolving <= 1 s per 1 M events) and checks
 * that each site came out as a line of this file. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <string.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "object-groups.h"
#include "trace-model.h"

#define SITES 64

/* Eight lines, each making and disposing a tensor. */
static void eight_lines(const int64_t *shape) {
  gs_dispose(gs_ones(GS_F32, shape, 1));
  gs_dispose(gs_zeros(GS_F32, shape, 1));
  gs_dispose(gs_full(GS_F32, shape, 1, 2.0));
  gs_dispose(gs_randn(GS_F32, shape, 1, NULL));
  gs_dispose(gs_rand(GS_F32, shape, 1, NULL));
  gs_dispose(gs_arange(GS_F32, 0, 4, 1));
  gs_dispose(gs_ones(GS_F64, shape, 1));
  gs_dispose(gs_zeros(GS_F64, shape, 1));
}

static void make_at_64_lines(uint64_t events) {
  const int64_t shape[] = {4};
  /* 8 lines here plus the 56 below: the loop goes round them until the log is big enough. */
  for (uint64_t n = 0; n < events;) {
    eight_lines(shape);
    gs_tensor kept[56];
    int k = 0;
    kept[k++] = gs_ones(GS_F32, shape, 1);
    kept[k++] = gs_zeros(GS_F32, shape, 1);
    kept[k++] = gs_full(GS_F32, shape, 1, 1.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 2.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 3.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 4.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 5.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 6.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 7.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 8.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 9.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 10.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 11.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 12.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 13.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 14.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 15.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 16.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 17.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 18.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 19.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 20.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 21.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 22.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 23.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 24.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 25.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 26.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 27.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 28.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 29.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 30.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 31.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 32.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 33.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 34.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 35.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 36.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 37.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 38.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 39.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 40.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 41.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 42.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 43.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 44.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 45.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 46.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 47.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 48.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 49.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 50.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 51.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 52.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 53.0);
    kept[k++] = gs_full(GS_F32, shape, 1, 54.0);
    n += (8 + 56) * 4; /* each tensor: its storage alloc, create, dispose, free */
    /* The last round leaves its 56 alive: leaks, one per line, to be grouped. */
    if (n < events)
      for (int i = 0; i < k; i++)
        gs_dispose(kept[i]);
  }
}

int main(int argc, char **argv) {
  guint64 wanted = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 1000000;
  g_autofree char *dir = g_dir_make_tmp("bench-symbols-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "sites.gstrace", NULL);
  bench_record_in_child(path, make_at_64_lines, wanted, "bench-symbols");

  double t0 = bench_now_s();
  g_autoptr(GError) error = NULL;
  gs_trace_model *m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  if (!m) {
    fprintf(stderr, "bench-symbols: %s\n", error->message);
    return 1;
  }
  double load_s = bench_now_s() - t0;

  /* Every site, as the event list's Where column would show them all. */
  gs_site_table *sites = gs_trace_model_sites(m);
  double t1 = bench_now_s();
  guint resolved = 0, here = 0;
  for (guint32 id = 1; id <= gs_site_table_size(sites); id++) {
    const char *where = gs_site_table_where(sites, id);
    resolved += where != NULL;
    here += where && strstr(where, "bench-symbols.c:") != NULL;
  }
  /* And the leaks, grouped by site, as `gradscope stats` prints them. */
  const gs_replay *end = gs_trace_model_seek(m, gs_trace_model_n_events(m) - 1);
  g_autoptr(GPtrArray) alive = gs_replay_alive_objects(end);
  g_autoptr(GPtrArray) groups = gs_object_groups(end, alive, sites);
  for (guint i = 0; i < groups->len; i++)
    g_free(gs_object_group_text(groups->pdata[i], sites));
  double resolve_ms = (bench_now_s() - t1) * 1e3;

  printf("# %" G_GUINT64_FORMAT " events, %u sites (%u at a line of bench-symbols.c), %u live "
         "objects in %u groups\n",
         gs_trace_model_n_events(m), gs_site_table_size(sites), here, alive->len, groups->len);
  bench_result("symbols_load_s", load_s, "s");
  bench_result("symbols_resolve_ms", resolve_ms, "ms");
  bench_result("symbols_total_per_1m_events_s",
               (load_s + resolve_ms / 1e3) * 1e6 / (double)gs_trace_model_n_events(m), "s");
  int ok = resolved == gs_site_table_size(sites) && here >= SITES - 8;
  gs_trace_model_free(m);
  g_unlink(path);
  g_rmdir(dir);
  return ok ? 0 : 1;
}
