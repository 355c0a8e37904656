/* test-cli-rank-lanes.c: `gradscope export-timeline A B -o lanes.png` on examples/digits-ddp's
 * two ranks' logs (tests/common/with-ddp-logs.sh): the PNG is the inspector's stacked lanes
 * (the same pixels gs_rank_lanes_draw gives in process, in whichever order the logs are
 * given), two lanes each with memory drawn and different from the other, lines across the gap;
 * logs of two runs, a rank given twice, a rank missing and --first with several logs are
 * refused with messages naming what was given.
 * Usage: test-cli-rank-lanes GRADSCOPE --tap (GS_DDP_LOGS set by with-ddp-logs.sh). */
#include <glib/gstdio.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank-lanes.h"
#include "timeline-palette.h"

#define WIDTH 1200
#define HEIGHT 520

static const char *cli;
static char *dir;

static char *log_path(const char *name) {
  return g_build_filename(g_getenv("GS_DDP_LOGS"), name, NULL);
}

/* Runs the CLI with args (NULL-terminated); its exit status, stderr in *err. */
static int run_cli(char **err, ...) {
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)cli);
  va_list ap;
  va_start(ap, err);
  for (const char *a; (a = va_arg(ap, const char *));)
    g_ptr_array_add(argv, (char *)a);
  va_end(ap);
  g_ptr_array_add(argv, NULL);
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                             NULL, NULL, err, &status, &error));
  g_assert_no_error(error);
  g_test_message("%s", *err);
  return g_spawn_check_wait_status(status, NULL) ? 0 : WEXITSTATUS(status);
}

static gs_rank_run *load_run(const char *p0, const char *p1) {
  g_autoptr(GArray) logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  const char *paths[] = {p0, p1};
  for (guint i = 0; i < 2; i++) {
    gs_rank_log l;
    g_assert_true(gs_rank_log_read(paths[i], &l, NULL));
    g_array_append_val(logs, l);
  }
  g_assert_true(gs_rank_logs_one_run(logs, NULL));
  gs_trace_model *models[2];
  for (guint i = 0; i < 2; i++)
    models[i] =
        gs_trace_model_load_file(g_array_index(logs, gs_rank_log, i).path, NULL, NULL, NULL, NULL);
  return gs_rank_run_new(models, (const gs_rank_log *)logs->data, 2);
}

/* Pixels of s in x0..x1, y0..y1 far from colour c. */
static guint count_not(cairo_surface_t *s, double x0, double x1, double y0, double y1, gs_rgba c) {
  const guint8 *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  guint n = 0;
  for (int y = (int)y0; y < (int)y1; y++)
    for (int x = (int)x0; x < (int)x1; x++) {
      const guint8 *px = data + y * stride + x * 4;
      n += abs(px[2] - (int)(c.r * 255)) + abs(px[1] - (int)(c.g * 255)) +
               abs(px[0] - (int)(c.b * 255)) >
           30;
    }
  return n;
}

/* Pixels that differ between two rows bands of s of the same height. */
static guint count_differing(cairo_surface_t *s, double x0, double x1, double y_a, double y_b,
                             double h) {
  const guint8 *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  guint n = 0;
  for (int dy = 0; dy < (int)h; dy++)
    for (int x = (int)x0; x < (int)x1; x++)
      n += memcmp(data + ((int)y_a + dy) * stride + x * 4, data + ((int)y_b + dy) * stride + x * 4,
                  4) != 0;
  return n;
}

static void test_two_lanes(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *a1 = log_path("a-1.gstrace");
  g_autofree char *png = g_build_filename(dir, "lanes.png", NULL);
  g_autofree char *png_reversed = g_build_filename(dir, "lanes-reversed.png", NULL);
  g_autofree char *err = NULL, *err2 = NULL;
  g_assert_cmpint(
      run_cli(&err, "export-timeline", a0, a1, "-o", png, "-W", "1200", "-H", "520", NULL), ==, 0);
  g_assert_cmpint(run_cli(&err2, "export-timeline", a1, a0, "-o", png_reversed, "-W", "1200", "-H",
                          "520", NULL),
                  ==, 0);

  cairo_surface_t *s = cairo_image_surface_create_from_png(png);
  cairo_surface_t *r = cairo_image_surface_create_from_png(png_reversed);
  g_assert_cmpint(cairo_surface_status(s), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint(cairo_surface_status(r), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint(cairo_image_surface_get_width(s), ==, WIDTH);
  g_assert_cmpint(cairo_image_surface_get_height(s), ==, HEIGHT);

  /* The same drawing as the inspector's view, drawn here in process: from the first event. */
  g_autoptr(gs_rank_run) run = load_run(a0, a1);
  gs_rank_lanes_view v = {.t0 = gs_rank_run_first_time(run),
                          .t1 = gs_rank_run_duration(run),
                          .width = WIDTH,
                          .height = HEIGHT,
                          .hover_x = -1};
  cairo_surface_t *own = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, WIDTH, HEIGHT);
  cairo_t *cr = cairo_create(own);
  gs_rank_lanes_draw(cr, run, &v);
  cairo_destroy(cr);
  cairo_surface_flush(own);
  guint n_bytes = cairo_image_surface_get_stride(s) * HEIGHT;
  g_assert_cmpint(cairo_image_surface_get_stride(own), ==, cairo_image_surface_get_stride(s));
  g_assert_true(
      memcmp(cairo_image_surface_get_data(s), cairo_image_surface_get_data(own), n_bytes) == 0);
  g_assert_true(memcmp(cairo_image_surface_get_data(s), cairo_image_surface_get_data(r), n_bytes) ==
                0);

  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, &v, &g);
  const gs_timeline_palette *p = gs_timeline_palette_get(FALSE);
  double x0 = g.plot_x, x1 = g.plot_x + g.plot_width;
  double lane_y[2] = {g.lanes_y, g.lanes_y + g.lane_height + g.lane_gap};
  double area = g.plot_width * g.lane_height;
  gs_rgba ground = {p->background.r * (1 - p->grid.a) + p->grid.r * p->grid.a,
                    p->background.g * (1 - p->grid.a) + p->grid.g * p->grid.a,
                    p->background.b * (1 - p->grid.a) + p->grid.b * p->grid.a, 1};
  for (guint lane = 0; lane < 2; lane++) {
    /* The lane's ground is the grid colour over the background; the rank's bytes alive,
     * waits and lines are drawn on it, and the run's start (setup before training) is bare,
     * as is the time before the rank's log began: counted from there (on a loaded machine one
     * rank once started so late that its lane was bare for 97% of the run). How much of the
     * lane the waits shade depends on how the two processes were scheduled when the logs were
     * recorded (90.4% once beside a loaded build): the upper bound only catches a lane
     * painted over entirely. */
    double from = g.plot_x + (double)(gs_rank_run_time(run, lane, 0) - v.t0) /
                                 (double)MAX(v.t1 - v.t0, 1) * g.plot_width;
    from = CLAMP(floor(from), x0, x1 - 1);
    double lane_area = (x1 - from) * g.lane_height;
    guint drawn = count_not(s, from, x1, lane_y[lane], lane_y[lane] + g.lane_height, ground);
    g_test_message("lane %u: %u of %.0f pixels drawn after x = %.0f", lane, drawn, lane_area,
                   from);
    g_assert_cmpuint(drawn, >, lane_area / 10);
    g_assert_cmpuint(drawn, <, area * 97 / 100);
    /* Its label, left of the plot. */
    g_assert_cmpuint(
        count_not(s, 0, x0 - 2, lane_y[lane], lane_y[lane] + g.lane_height, p->background), >, 20);
  }
  /* Two lanes, not one picture twice: the ranks' memory and waits differ. */
  guint differing = count_differing(s, x0, x1, lane_y[0], lane_y[1], g.lane_height);
  g_test_message("%u pixels differ between the lanes", differing);
  g_assert_cmpuint(differing, >, area / 100);
  /* The collectives' lines cross the gap between the lanes. */
  double gap = g.lanes_y + g.lane_height + 2;
  g_assert_cmpuint(count_not(s, x0, x1, gap, gap + MAX(g.lane_gap - 4, 1), p->background), >, 100);

  const char *shots = g_getenv("GS_SCREENSHOT_DIR");
  if (shots && *shots) {
    g_mkdir_with_parents(shots, 0755);
    g_autofree char *shot = g_build_filename(shots, "export-rank-lanes.png", NULL);
    g_assert_cmpint(cairo_surface_write_to_png(s, shot), ==, CAIRO_STATUS_SUCCESS);
    g_test_message("screenshot: %s", shot);
  }
  cairo_surface_destroy(own);
  cairo_surface_destroy(r);
  cairo_surface_destroy(s);
}

/* Whether s has a pixel of exactly colour c (to a rounding) in x0..x1, y0..y1. */
static gboolean has_colour(cairo_surface_t *s, double x0, double x1, double y0, double y1,
                           gs_rgba c) {
  const guint8 *data = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  for (int y = (int)y0; y < (int)y1; y++)
    for (int x = (int)x0; x < (int)x1; x++) {
      const guint8 *px = data + y * stride + x * 4;
      if (abs(px[2] - (int)lround(c.r * 255)) <= 1 && abs(px[1] - (int)lround(c.g * 255)) <= 1 &&
          abs(px[0] - (int)lround(c.b * 255)) <= 1)
        return TRUE;
    }
  return FALSE;
}

/* Every colour the lanes draw is named by the legend, however narrow the view: entries wrap
 * onto more rows (they were left out once the categories' row was full), each whole between
 * the plot's left edge and the right margin, none over another, all above the lanes. */
static void test_legend_names_every_colour(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *a1 = log_path("a-1.gstrace");
  g_autoptr(gs_rank_run) run = load_run(a0, a1);
  const int widths[] = {1200, 600, 420};
  guint wrapped_rows = 0;
  for (guint w = 0; w < G_N_ELEMENTS(widths); w++) {
    gs_rank_lanes_view v = {.t0 = gs_rank_run_first_time(run),
                            .t1 = gs_rank_run_duration(run),
                            .width = widths[w],
                            .height = HEIGHT,
                            .hover_x = -1};
    gs_rank_lanes_geometry g;
    gs_rank_lanes_geometry_get(run, &v, &g);
    gs_rank_lanes_legend_entry legend[GS_RANK_LANES_LEGEND_MAX];
    guint n = gs_rank_lanes_legend(run, &v, legend);
    gboolean named[GS_MEM_N_CATEGORIES] = {0};
    double last_row = 0;
    for (guint i = 0; i < n; i++) {
      const gs_rank_lanes_legend_entry *e = &legend[i];
      g_test_message("width %d: '%s' at (%.0f, %.0f), %.0f wide", widths[w], e->name, e->x, e->y,
                     e->width);
      g_assert_cmpfloat(e->x, >=, g.plot_x);
      g_assert_cmpfloat(e->x + e->width, <=, widths[w]);
      g_assert_cmpfloat(e->y + 14, <=, g.lanes_y);
      for (guint j = 0; j < i; j++)
        if (legend[j].y == e->y)
          g_assert_true(legend[j].x + legend[j].width <= e->x || e->x + e->width <= legend[j].x);
      if (e->category >= 0)
        named[e->category] = TRUE;
      last_row = MAX(last_row, e->y);
    }
    g_assert_cmpuint(n, >=, 2 + 5); /* the marks; parameters, gradients, state, data, batches */
    guint drawn_categories = 0;
    if (last_row > legend[0].y + 18)
      wrapped_rows++;
    cairo_surface_t *own = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, widths[w], HEIGHT);
    cairo_t *cr = cairo_create(own);
    gs_rank_lanes_draw(cr, run, &v);
    cairo_destroy(cr);
    cairo_surface_flush(own);
    double lanes_end = g.lanes_y + 2 * g.lane_height + g.lane_gap;
    const gs_timeline_palette *p = gs_timeline_palette_get(FALSE);
    gs_rgba ground = {p->background.r * (1 - p->grid.a) + p->grid.r * p->grid.a,
                      p->background.g * (1 - p->grid.a) + p->grid.g * p->grid.a,
                      p->background.b * (1 - p->grid.a) + p->grid.b * p->grid.a, 1};
    for (guint c = 0; c < GS_MEM_N_CATEGORIES; c++) {
      gs_rgba fill = gs_timeline_stack_color(FALSE, FALSE, c);
      gs_rgba colour = {fill.r * fill.a + ground.r * (1 - fill.a),
                        fill.g * fill.a + ground.g * (1 - fill.a),
                        fill.b * fill.a + ground.b * (1 - fill.a), 1}; /* over the lane's ground */
      gboolean drawn =
          has_colour(own, g.plot_x, g.plot_x + g.plot_width, g.lanes_y + 6, lanes_end, colour);
      g_test_message("width %d: %s drawn %d, named %d", widths[w],
                     gs_mem_category_name((gs_mem_category)c), drawn, named[c]);
      if (drawn)
        g_assert_true(named[c]);
      drawn_categories += drawn;
    }
    g_assert_cmpuint(drawn_categories, >=, 5); /* the check above sees the lanes' colours */
    cairo_surface_destroy(own);
  }
  g_assert_cmpuint(wrapped_rows, >, 0); /* the narrow views needed a third row */
}

static void test_two_runs_refused(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *b1 = log_path("b-1.gstrace");
  g_autofree char *png = g_build_filename(dir, "mixed.png", NULL);
  gs_rank_log la, lb;
  g_assert_true(gs_rank_log_read(a0, &la, NULL) && gs_rank_log_read(b1, &lb, NULL));
  g_assert_cmpuint(la.run, !=, lb.run);
  g_autofree char *err = NULL;
  g_assert_cmpint(run_cli(&err, "export-timeline", a0, b1, "-o", png, NULL), ==, 1);
  g_autofree char *run_a = g_strdup_printf("%016" PRIx64, la.run);
  g_autofree char *run_b = g_strdup_printf("%016" PRIx64, lb.run);
  g_assert_nonnull(strstr(err, "not logs of one run"));
  g_assert_nonnull(strstr(err, a0));
  g_assert_nonnull(strstr(err, b1));
  g_assert_nonnull(strstr(err, run_a));
  g_assert_nonnull(strstr(err, run_b));
  g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
}

static void test_rank_twice_refused(void) {
  g_autofree char *a0 = log_path("a-0.gstrace");
  g_autofree char *png = g_build_filename(dir, "twice.png", NULL);
  g_autofree char *err = NULL;
  g_assert_cmpint(run_cli(&err, "export-timeline", a0, a0, "-o", png, NULL), ==, 1);
  g_assert_nonnull(strstr(err, "are both rank 0"));
  g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
}

/* A run of 4 ranks given ranks 0 and 2: 1 and 3 named missing. These logs need no files. */
static void test_rank_missing_refused(void) {
  gs_rank_log given[] = {{.path = "r-0.gstrace", .has_run = TRUE, .rank = 0, .world = 4, .run = 7},
                         {.path = "r-2.gstrace", .has_run = TRUE, .rank = 2, .world = 4, .run = 7}};
  g_autoptr(GArray) logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  g_array_append_vals(logs, given, 2);
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_rank_logs_one_run(logs, NULL));
  g_assert_false(gs_rank_logs_every_rank(logs, &error));
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "has 4 ranks"));
  g_assert_nonnull(strstr(error->message, "missing: 1, 3 "));
  g_assert_nonnull(strstr(error->message, "r-0.gstrace (rank 0), r-2.gstrace (rank 2)"));
  gs_rank_log all[] = {{.path = "a", .has_run = TRUE, .rank = 0, .world = 2, .run = 7},
                       {.path = "b", .has_run = TRUE, .rank = 1, .world = 2, .run = 7}};
  g_array_set_size(logs, 0);
  g_array_append_vals(logs, all, 2);
  g_assert_true(gs_rank_logs_every_rank(logs, NULL));
}

static void test_event_range_refused(void) {
  g_autofree char *a0 = log_path("a-0.gstrace"), *a1 = log_path("a-1.gstrace");
  g_autofree char *png = g_build_filename(dir, "range.png", NULL);
  g_autofree char *err = NULL, *err2 = NULL;
  g_assert_cmpint(run_cli(&err, "export-timeline", a0, a1, "--first", "10", "-o", png, NULL), ==,
                  1);
  g_assert_nonnull(strstr(err, "--first numbers the events of one log"));
  g_assert_cmpint(run_cli(&err2, "export-timeline", a0, a1, "--by", "scope", "-o", png, NULL), ==,
                  1);
  g_assert_nonnull(strstr(err2, "by category only, got --by 'scope'"));
  g_assert_false(g_file_test(png, G_FILE_TEST_EXISTS));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_assert_cmpint(argc, ==, 2);
  cli = argv[1];
  g_assert_nonnull(g_getenv("GS_DDP_LOGS"));
  dir = g_dir_make_tmp("test-cli-rank-lanes.XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_test_add_func("/cli/export-timeline/two-lanes", test_two_lanes);
  g_test_add_func("/cli/export-timeline/legend-names-every-colour", test_legend_names_every_colour);
  g_test_add_func("/cli/export-timeline/two-runs-refused", test_two_runs_refused);
  g_test_add_func("/cli/export-timeline/rank-twice-refused", test_rank_twice_refused);
  g_test_add_func("/cli/export-timeline/rank-missing-refused", test_rank_missing_refused);
  g_test_add_func("/cli/export-timeline/event-range-refused", test_event_range_refused);
  int status = g_test_run();
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
  (void)!system(rm);
  g_free(dir);
  return status;
}
