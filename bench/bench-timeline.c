/* bench-timeline: how long the memory timeline takes to redraw on long runs. A training-like
 * loop (scoped steps: forward through two layers, backward, a parameter update, a mark every
 * 100 steps) is recorded with the engine's recorder until the log holds ~1 M and ~10 M
 * events; each log is loaded into the trace model, then the whole run is laid out and drawn
 * at 1600x400 as the inspector's view does (one gs_trace_model_memory_columns call, cairo into
 * an image surface), and a 10% zoomed viewport too. Reports the median of several redraws
 * (target: <= 16 ms at 10 M events) and splits it into the model's column query and the
 * drawing, so the bottleneck is visible. */
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

#include "bench-training-log.h"
#include "bench-util.h"
#include "timeline-draw.h"

#define WIDTH 1600
#define HEIGHT 400
#define REPEATS 9

typedef struct timing {
  double columns_ms, draw_ms, total_ms;
} timing;

/* One redraw as the view does it: the frame (the model's column query), then cairo. */
static timing redraw(gs_trace_model *m, gs_timeline_index *index, guint64 first, guint64 last,
                     cairo_surface_t *surface) {
  double best[3][REPEATS];
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_request req = {.first = first, .last = last, .width = WIDTH, .height = HEIGHT,
                             .by_scope = TRUE};
  for (int r = 0; r < REPEATS; r++) {
    req.by_scope = r % 2 == 0; /* both stackings, as a user toggling them */
    double t0 = bench_now_s();
    gs_timeline_frame_compute(frame, m, &req);
    double t1 = bench_now_s();
    cairo_t *cr = cairo_create(surface);
    gs_timeline_decor decor = {.position = (first + last) / 2, .hover_column = WIDTH / 3};
    gs_timeline_draw(cr, frame, m, index, &decor);
    cairo_destroy(cr);
    cairo_surface_flush(surface);
    double t2 = bench_now_s();
    best[0][r] = (t1 - t0) * 1e3;
    best[1][r] = (t2 - t1) * 1e3;
    best[2][r] = (t2 - t0) * 1e3;
  }
  bench_escape(cairo_image_surface_get_data(surface));
  return (timing){bench_median(best[0], REPEATS), bench_median(best[1], REPEATS),
                  bench_median(best[2], REPEATS)};
}

static void run(const char *dir, const char *name, guint64 target) {
  g_autofree char *path = g_strdup_printf("%s/%s.gstrace", dir, name);
  double t0 = bench_now_s();
  bench_record_training_log(path, target);
  double t1 = bench_now_s();
  g_autoptr(GError) error = NULL;
  g_autoptr(gs_trace_model) m = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  if (!m) {
    fprintf(stderr, "bench-timeline: %s\n", error->message);
    exit(1);
  }
  double t2 = bench_now_s();
  guint64 n = gs_trace_model_n_events(m);
  g_autoptr(gs_timeline_index) index = gs_timeline_index_new();
  gs_timeline_index_update(index, m);
  double t3 = bench_now_s();
  printf("# %s: %llu events, recorded in %.2f s, loaded in %.2f s, marks and spans indexed "
         "in %.1f ms\n",
         name, (unsigned long long)n, t1 - t0, t2 - t1, (t3 - t2) * 1e3);
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
  timing whole = redraw(m, index, 0, n - 1, surface);
  timing zoom = redraw(m, index, n / 2, n / 2 + n / 10, surface);
  cairo_surface_destroy(surface);
  char key[64];
  snprintf(key, sizeof key, "timeline_redraw_%s_ms", name);
  bench_result(key, whole.total_ms, "ms");
  snprintf(key, sizeof key, "timeline_columns_%s_ms", name);
  bench_result(key, whole.columns_ms, "ms");
  snprintf(key, sizeof key, "timeline_draw_%s_ms", name);
  bench_result(key, whole.draw_ms, "ms");
  snprintf(key, sizeof key, "timeline_redraw_zoomed_%s_ms", name);
  bench_result(key, zoom.total_ms, "ms");
  g_remove(path);
}

int main(int argc, char **argv) {
  /* --quick: the 1 M run only (CI smoke). */
  gboolean quick = argc > 1 && g_str_equal(argv[1], "--quick");
  g_autofree char *dir = g_dir_make_tmp("gradscope-bench-timeline-XXXXXX", NULL);
  run(dir, "1m", 1000 * 1000);
  if (!quick)
    run(dir, "10m", 10 * 1000 * 1000);
  g_rmdir(dir);
  return 0;
}
