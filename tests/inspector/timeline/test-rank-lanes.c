/* test-rank-lanes.c: a distributed run's stacked memory lanes (inspector/timeline/rank-lanes.c)
 * on examples/digits-ddp's logs (tests/common/with-ddp-logs.sh): over the whole run there is
 * one lane per rank, one line per collective both ranks ended and one shade per wait each
 * rank's log holds (counted again here from the events); a zoomed view keeps only what
 * touches it; the PNGs (light and dark, GS_SCREENSHOT_DIR) have the waits' strip colour in
 * each lane and the lines' colour between the lanes, and nothing drawn left of the plot but
 * the labels' text; the waits' colour is no category's. */
#include <glib/gstdio.h>
#include <gradscope/trace-reader.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank-lanes.h"
#include "timeline-palette.h"

static gs_rank_run *load_run(void) {
  const char *dir = g_getenv("GS_DDP_LOGS");
  g_assert_nonnull(dir);
  g_autofree char *a0 = g_build_filename(dir, "a-0.gstrace", NULL);
  g_autofree char *a1 = g_build_filename(dir, "a-1.gstrace", NULL);
  g_autoptr(GArray) logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  const char *paths[] = {a0, a1};
  gs_trace_model *models[2];
  for (guint i = 0; i < 2; i++) {
    gs_rank_log l;
    g_assert_true(gs_rank_log_read(paths[i], &l, NULL));
    g_array_append_val(logs, l);
  }
  g_assert_true(gs_rank_logs_one_run(logs, NULL));
  for (guint i = 0; i < 2; i++)
    models[i] =
        gs_trace_model_load_file(g_array_index(logs, gs_rank_log, i).path, NULL, NULL, NULL, NULL);
  return gs_rank_run_new(models, (const gs_rank_log *)logs->data, 2);
}

/* The wait_begin events of lane's log, counted from its events. */
static guint count_kind(gs_rank_run *run, guint lane, gs_trace_kind kind) {
  gs_trace_model *m = gs_rank_run_model(run, lane);
  guint n = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++)
    n += gs_trace_model_kind_at(m, i) == kind;
  return n;
}

/* What `gradscope stats` counts as lane's time waiting in collectives (their waited_ns), and how
 * many collectives blocked it outside DDP's waits (each a wait of its own on the lanes). */
static guint64 collective_waits(gs_rank_run *run, guint lane, guint *outside) {
  gs_trace_model *m = gs_rank_run_model(run, lane);
  guint64 sum = 0;
  gboolean in_wait = FALSE;
  *outside = 0;
  for (guint64 i = 0; i < gs_trace_model_n_events(m); i++) {
    gs_trace_kind kind = gs_trace_model_kind_at(m, i);
    in_wait = kind == GS_TRACE_WAIT_BEGIN || (in_wait && kind != GS_TRACE_WAIT_END);
    gs_trace_event e;
    if (kind != GS_TRACE_COLLECTIVE_END || !gs_trace_model_event(m, i, &e))
      continue;
    sum += e.waited_ns;
    *outside += !in_wait && e.waited_ns > 0;
  }
  return sum;
}

/* How a pixel (B, G, R, A in memory here: ARGB32, little-endian, opaque) relates to c. */
typedef enum { NOT_COLOR, NEAR_COLOR, BLUE } pixel_test;

static gboolean pixel_is(const guint8 *px, pixel_test test, gs_rgba c) {
  int dr = abs(px[2] - (int)(c.r * 255)), dg = abs(px[1] - (int)(c.g * 255));
  int db = abs(px[0] - (int)(c.b * 255));
  switch (test) {
  case NOT_COLOR: return dr + dg + db > 30;
  case NEAR_COLOR: return dr < 40 && dg < 40 && db < 40;
  case BLUE: return px[0] > px[2] + 60; /* the lines' colour in both palettes */
  }
  return FALSE;
}

/* Pixels of s in x0..x1, y0..y1 that pass test against c. */
static guint count_pixels(cairo_surface_t *s, double x0, double x1, double y0, double y1,
                          pixel_test test, gs_rgba c) {
  const guint8 *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  guint n = 0;
  for (int y = (int)y0; y < (int)y1; y++)
    for (int x = (int)x0; x < (int)x1; x++)
      n += pixel_is(data + y * stride + x * 4, test, c);
  return n;
}

/* The lanes drawn as v says, on an image of v's size. */
static cairo_surface_t *draw_view(const gs_rank_run *run, const gs_rank_lanes_view *v) {
  cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, v->width, v->height);
  cairo_t *cr = cairo_create(s);
  gs_rank_lanes_draw(cr, run, v);
  cairo_destroy(cr);
  cairo_surface_flush(s);
  return s;
}

/* The waits' strip along the lane's top, in full colour where the rank waited. How long the
 * ranks waited depends on the machine's load when the logs were made (on a quiet machine most
 * waits are narrower than a pixel over the whole run), so the view is the lane's longest wait
 * with as much time either side: the strip must cover most of the middle third. */
static void check_strip_on_longest_wait(const gs_rank_run *run, guint lane, gboolean dark) {
  const GArray *waits = gs_rank_run_waits(run, lane);
  const gs_rank_wait *longest = NULL;
  for (guint i = 0; i < waits->len; i++) {
    const gs_rank_wait *w = &g_array_index(waits, gs_rank_wait, i);
    if (w->ended && (!longest || w->end - w->begin > longest->end - longest->begin))
      longest = w;
  }
  g_assert_nonnull(longest);
  guint64 span = longest->end - longest->begin;
  g_assert_cmpuint(span, >, 0);
  gs_rank_lanes_view v = {.t0 = longest->begin > span ? longest->begin - span : 0,
                          .t1 = longest->end + span,
                          .width = 1200,
                          .height = 520,
                          .hover_x = -1,
                          .dark = dark};
  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, &v, &g);
  cairo_surface_t *s = draw_view(run, &v);
  const gs_timeline_palette *p = gs_timeline_palette_get(dark);
  double top = g.lanes_y + lane * (g.lane_height + g.lane_gap);
  double x0 = g.plot_x + g.plot_width * (double)(longest->begin - v.t0) / (double)(v.t1 - v.t0);
  double x1 = g.plot_x + g.plot_width * (double)(longest->end - v.t0) / (double)(v.t1 - v.t0);
  guint strip = count_pixels(s, x0 + 1, x1 - 1, top, top + 4, NEAR_COLOR, p->wait);
  guint room = (guint)((x1 - x0 - 2) * 4);
  g_test_message("lane %u: %u of %u pixels of the longest wait's strip (%.3f ms)", lane, strip,
                 room, span / 1e6);
  g_assert_cmpuint(strip, >=, room * 3 / 4); /* collective lines may cross it */
  cairo_surface_destroy(s);
}

/* The waits' colour is told apart from every memory category's and from the collectives'
 * lines in both palettes (it was the peak's red, 0.13 from "saved for backward" in RGB). */
static void test_wait_colour_apart(void) {
  for (int dark = 0; dark < 2; dark++) {
    const gs_timeline_palette *p = gs_timeline_palette_get(dark);
    double nearest = INFINITY;
    for (guint c = 0; c <= GS_MEM_N_CATEGORIES; c++) {
      gs_rgba o = c < GS_MEM_N_CATEGORIES ? gs_timeline_stack_color(dark, FALSE, c) : p->mark;
      nearest = MIN(nearest, sqrt((p->wait.r - o.r) * (p->wait.r - o.r) +
                                  (p->wait.g - o.g) * (p->wait.g - o.g) +
                                  (p->wait.b - o.b) * (p->wait.b - o.b)));
    }
    g_test_message("%s: the waits' colour is %.3f from the nearest other", dark ? "dark" : "light",
                   nearest);
    g_assert_cmpfloat(nearest, >=, 0.25);
  }
}

static void test_whole_run(void) {
  g_autoptr(gs_rank_run) run = load_run();
  gs_rank_lanes_view v = {
      .t0 = 0, .t1 = gs_rank_run_duration(run), .width = 1200, .height = 520, .hover_x = -1};
  g_autoptr(gs_rank_lanes_shapes) shapes = gs_rank_lanes_shapes_new(run, &v);
  guint shared = gs_rank_run_n_shared_collectives(run);
  g_test_message("%u lines, %u shades", shapes->lines->len, shapes->shades->len);
  g_assert_cmpuint(shared, >, 1350);
  g_assert_cmpuint(shapes->lines->len, ==, shared);
  guint shades[2] = {0, 0};
  for (guint i = 0; i < shapes->shades->len; i++)
    shades[g_array_index(shapes->shades, gs_rank_lanes_shade, i).lane]++;
  for (guint lane = 0; lane < 2; lane++) {
    /* DDP's waits, and the collectives that blocked the rank outside them (the first ones,
     * while the other rank was still starting), which add up to what stats says it waited */
    guint outside;
    guint64 in_collectives = collective_waits(run, lane, &outside);
    g_assert_cmpuint(outside, >, 0);
    g_assert_cmpuint(count_kind(run, lane, GS_TRACE_WAIT_BEGIN), ==,
                     count_kind(run, lane, GS_TRACE_WAIT_END));
    g_assert_cmpuint(shades[lane], ==, count_kind(run, lane, GS_TRACE_WAIT_BEGIN) + outside);
    guint64 waited = gs_rank_run_waited(run, lane);
    g_test_message("lane %u waited %.3f ms; in collectives %.3f ms", lane, waited / 1e6,
                   in_collectives / 1e6);
    g_assert_cmpfloat(fabs((double)waited - (double)in_collectives), <=,
                      0.05 * (double)in_collectives);
  }
  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, &v, &g);
  g_assert_cmpuint(gs_rank_lanes_lane_at(run, &g, g.lanes_y + 1), ==, 0);
  g_assert_cmpuint(gs_rank_lanes_lane_at(run, &g, g.lanes_y + g.lane_height + g.lane_gap + 1), ==,
                   1);
  g_assert_cmpuint(gs_rank_lanes_lane_at(run, &g, g.lanes_y + g.lane_height + 1), ==,
                   G_MAXUINT); /* the gap */

  for (int dark = 0; dark < 2; dark++) {
    v.dark = dark;
    cairo_surface_t *s = draw_view(run, &v);
    const gs_timeline_palette *p = gs_timeline_palette_get(dark);
    for (guint lane = 0; lane < 2; lane++)
      check_strip_on_longest_wait(run, lane, dark);
    /* Lines cross the gap between the lanes (nothing else is drawn there); nothing blue
     * left of the plot, where the labels are. */
    double gap = g.lanes_y + g.lane_height + 2;
    g_assert_cmpuint(
        count_pixels(s, g.plot_x, g.plot_x + g.plot_width, gap, gap + 6, NOT_COLOR, p->background),
        >, 500);
    g_assert_cmpuint(count_pixels(s, 0, g.plot_x - 1, g.lanes_y, g.lanes_y + 2 * g.lane_height,
                                  BLUE, p->background),
                     ==, 0);
    const char *dir = g_getenv("GS_SCREENSHOT_DIR");
    g_autofree char *path = g_build_filename(
        dir && *dir ? dir : ".", dark ? "rank-lanes-run-dark.png" : "rank-lanes-run.png", NULL);
    g_mkdir_with_parents(dir && *dir ? dir : ".", 0755);
    g_assert_cmpint(cairo_surface_write_to_png(s, path), ==, CAIRO_STATUS_SUCCESS);
    g_test_message("screenshot: %s", path);
    cairo_surface_destroy(s);
  }
}

/* A view of a few steps: only the collectives ending in it and the waits touching it. */
static void test_zoomed(void) {
  g_autoptr(gs_rank_run) run = load_run();
  const GArray *waits = gs_rank_run_waits(run, 0);
  const gs_rank_wait *w = &g_array_index(waits, gs_rank_wait, waits->len / 2);
  /* A fiftieth of the run around the middle wait: a few steps however fast the machine ran
   * them (a fixed 20 ms took in every wait of a run recorded on a quiet machine). */
  const gs_rank_wait *first = &g_array_index(waits, gs_rank_wait, 0);
  const gs_rank_wait *last = &g_array_index(waits, gs_rank_wait, waits->len - 1);
  guint64 margin = (last->end - first->begin) / 50;
  gs_rank_lanes_view v = {
      .t0 = w->begin - margin, .t1 = w->end + margin, .width = 900, .height = 400, .hover_x = -1};
  g_autoptr(gs_rank_lanes_shapes) shapes = gs_rank_lanes_shapes_new(run, &v);
  guint lines = 0;
  const GArray *all = gs_rank_run_collectives(run);
  for (guint i = 0; i < all->len; i++) {
    const gs_rank_collective *c = &g_array_index(all, gs_rank_collective, i);
    gboolean in = FALSE;
    for (guint lane = 0; lane < 2; lane++)
      in |= c->end[lane] != G_MAXUINT64 && c->end[lane] >= v.t0 && c->end[lane] <= v.t1;
    lines += c->n_ended >= 2 && in;
  }
  g_assert_cmpuint(lines, >, 0);
  g_assert_cmpuint(shapes->lines->len, ==, lines);
  guint shades = 0;
  for (guint lane = 0; lane < 2; lane++)
    for (guint i = 0; i < gs_rank_run_waits(run, lane)->len; i++) {
      const gs_rank_wait *x = &g_array_index(gs_rank_run_waits(run, lane), gs_rank_wait, i);
      shades += x->end >= v.t0 && x->begin <= v.t1;
    }
  g_assert_cmpuint(shapes->shades->len, ==, shades);
  g_assert_cmpuint(shades, <, waits->len);
  /* The tooltip in the middle of the chosen wait, in rank 0's lane. */
  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, &v, &g);
  double x = g.plot_x + g.plot_width / 2;
  g_autofree char *said = gs_rank_lanes_describe(run, &v, x, g.lanes_y + g.lane_height / 2);
  g_test_message("%s", said);
  g_assert_nonnull(said);
  g_assert_nonnull(strstr(said, "waiting"));
  g_assert_null(gs_rank_lanes_describe(run, &v, 2, g.lanes_y + 2)); /* the labels */
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/rank-lanes/wait-colour-apart", test_wait_colour_apart);
  g_test_add_func("/rank-lanes/whole-run", test_whole_run);
  g_test_add_func("/rank-lanes/zoomed", test_zoomed);
  return g_test_run();
}
