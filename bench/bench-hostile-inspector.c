/* bench-hostile-inspector.c: the inspector on logs of unusual shapes (issue 22). Opens each
 * log given (tests/fuzz/make-hostile-logs writes them) in a window of the real app, as a user
 * would, then shows its graph at the last event and its memory timeline; the whole time a
 * 5 ms timer measures how long the main loop went without running (what a user sees as a
 * freeze; target <= 100 ms). Saves a screenshot of each page to GS_SCREENSHOT_DIR (default
 * the current folder) and prints one line per log:
 *   hostile_ui log=NAME open_s=S frame_gap_ms=G events=N warnings=W graph=STATE screenshot_ms=T
 *     gap_in=STEP
 * (STATE: laid-out; refused, the view saying why, e.g. too large for dot; still-busy or
 * not-drawn past the time limit; T, the longest of the bench's own screenshots, which hold
 * the main loop too but are not counted in G; STEP, where the longest stall began: open,
 * shown (the events page's first frames), graph or memory)
 * and at the end hostile_ui_worst_frame_gap_ms=G. Needs a display: run it under
 * `xvfb-run -a` with GSK_RENDERER=cairo. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <stdio.h>

#include "gs-application.h"
#include "gs-capture-page.h"
#include "gs-config.h"
#include "gs-graph-view.h"
#include "gs-scrubber.h"
#include "gs-window.h"
#include "trace-model.h"

#define TIMEOUT_S 60.0

/* The main loop's longest stall: the gap between two runs of a 5 ms timer. The bench's own
 * screenshots (a whole-window snapshot rendered to a texture, synchronously) are not the
 * app's: their time is kept apart, in longest_shot_us. */
typedef struct stall_meter {
  gint64 last_us;
  gint64 longest_us;
  gint64 longest_from_us; /* when the longest stall began, to tell which step it was */
  gint64 longest_shot_us;
} stall_meter;

static gboolean on_meter(gpointer data) {
  stall_meter *m = data;
  gint64 now = g_get_monotonic_time();
  if (m->last_us && now - m->last_us > m->longest_us) {
    m->longest_us = now - m->last_us;
    m->longest_from_us = m->last_us;
  }
  m->last_us = now;
  return G_SOURCE_CONTINUE;
}

/* Runs the main loop until done(data) or seconds pass; FALSE on the time limit. */
static gboolean run_until(gboolean (*done)(gpointer), gpointer data, double seconds) {
  gint64 end = g_get_monotonic_time() + (gint64)(seconds * 1e6);
  while (!(done && done(data))) {
    if (g_get_monotonic_time() >= end)
      return done == NULL;
    g_main_context_iteration(NULL, FALSE);
    g_usleep(1000);
  }
  return TRUE;
}

/* Loaded: the model is in hand and the source is done (a log with no events shows the "No
 * Events" page, not the content). */
static gboolean page_loaded(gpointer data) {
  return gs_capture_page_get_model(data) && !gs_capture_page_get_busy(data);
}

/* Settled: the view shows a layout, or says why it cannot (a graph too large for dot). */
static gboolean graph_settled(gpointer data) {
  return !gs_graph_view_is_busy(data) &&
         (gs_graph_view_get_layout(data) || gs_graph_view_get_problem(data));
}

static GtkWidget *find_widget(GtkWidget *root, GType type) {
  if (G_TYPE_CHECK_INSTANCE_TYPE(root, type))
    return root;
  for (GtkWidget *child = gtk_widget_get_first_child(root); child;
       child = gtk_widget_get_next_sibling(child)) {
    GtkWidget *found = find_widget(child, type);
    if (found)
      return found;
  }
  return NULL;
}

static void screenshot(GtkWidget *window, const char *name, stall_meter *meter) {
  run_until(NULL, NULL, 0.5); /* past the stack's crossfade */
  gint64 start = g_get_monotonic_time();
  int width = gtk_widget_get_width(window), height = gtk_widget_get_height(window);
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new(window);
  /* A widget waiting for its allocation draws nothing: try again on the next frames. */
  GskRenderNode *node = NULL;
  for (int attempt = 0; attempt < 50 && !node; attempt++) {
    if (attempt)
      run_until(NULL, NULL, 0.02);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    node = gtk_snapshot_free_to_node(snapshot);
  }
  if (!node) {
    fprintf(stderr, "bench-hostile-inspector: %s: the window drew nothing\n", name);
    meter->last_us = 0;
    return;
  }
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(window));
  g_autoptr(GdkTexture) texture =
      gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  g_autofree char *path = g_build_filename(dir && *dir ? dir : ".", name, NULL);
  gdk_texture_save_to_png(texture, path);
  gsk_render_node_unref(node);
  /* The gap since the meter's last tick is the screenshot's: the next tick starts afresh. */
  gint64 end = g_get_monotonic_time();
  meter->longest_shot_us = MAX(meter->longest_shot_us, end - start);
  meter->last_us = 0;
}

static double bench_log(GsApplication *app, const char *path) {
  g_autofree char *base = g_path_get_basename(path);
  char *dot = strrchr(base, '.');
  if (dot)
    *dot = '\0';
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 860);
  gtk_window_present(GTK_WINDOW(window));
  run_until(NULL, NULL, 0.3);

  stall_meter meter = {0};
  guint timer = g_timeout_add(5, on_meter, &meter);
  gint64 start = g_get_monotonic_time();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  GsCapturePage *page = gs_window_get_current_page(window);
  gboolean opened = page && run_until(page_loaded, page, TIMEOUT_S);
  gint64 shown_from = g_get_monotonic_time(), graph_from = G_MAXINT64, memory_from = G_MAXINT64;
  double open_s = (double)(g_get_monotonic_time() - start) / 1e6;
  gs_trace_model *model = page ? gs_capture_page_get_model(page) : NULL;
  guint64 events = model ? gs_trace_model_n_events(model) : 0;
  guint64 warnings = model ? gs_trace_model_head(model)->n_warnings : 0;
  const char *graph_state = "none";
  if (opened && events) {
    g_autofree char *events_png = g_strdup_printf("hostile-%s-events.png", base);
    screenshot(GTK_WIDGET(window), events_png, &meter);
    graph_from = g_get_monotonic_time();
    AdwViewStack *stack = ADW_VIEW_STACK(find_widget(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
    adw_view_stack_set_visible_child_name(stack, "graph");
    if (events)
      gs_scrubber_set_position(gs_capture_page_get_scrubber(page), events - 1);
    GsGraphView *graph = GS_GRAPH_VIEW(find_widget(GTK_WIDGET(page), GS_TYPE_GRAPH_VIEW));
    gboolean settled = run_until(graph_settled, graph, TIMEOUT_S);
    if (settled)
      graph_state = gs_graph_view_get_layout(graph) ? "laid-out" : "refused";
    else
      graph_state = gs_graph_view_is_busy(graph) ? "still-busy" : "not-drawn";
    g_autofree char *graph_png = g_strdup_printf("hostile-%s-graph.png", base);
    screenshot(GTK_WIDGET(window), graph_png, &meter);
    memory_from = g_get_monotonic_time();
    adw_view_stack_set_visible_child_name(stack, "timeline");
    run_until(NULL, NULL, 1.0);
    g_autofree char *timeline_png = g_strdup_printf("hostile-%s-memory.png", base);
    screenshot(GTK_WIDGET(window), timeline_png, &meter);
  }
  g_source_remove(timer);
  double gap_ms = (double)meter.longest_us / 1e3;
  /* Which step the longest stall began in: opening (the model handed to the views), the
   * first page's first frames, the graph page, the memory page. */
  const char *gap_in = meter.longest_from_us < shown_from    ? "open"
                       : meter.longest_from_us < graph_from  ? "shown"
                       : meter.longest_from_us < memory_from ? "graph"
                                                             : "memory";
  printf("hostile_ui log=%s open_s=%.2f frame_gap_ms=%.0f events=%" G_GUINT64_FORMAT
         " warnings=%" G_GUINT64_FORMAT " graph=%s screenshot_ms=%.0f gap_in=%s%s\n",
         base, open_s, gap_ms, events, warnings, graph_state,
         (double)meter.longest_shot_us / 1e3, gap_in, opened ? "" : " (did not open)");
  fflush(stdout);
  /* For a profiler: the longest stall's span on CLOCK_MONOTONIC (perf record -k
   * CLOCK_MONOTONIC, then perf script --time FROM,TO shows what ran in it). */
  if (g_getenv("GS_BENCH_STALL_SPAN"))
    fprintf(stderr, "stall_span log=%s from_s=%.6f to_s=%.6f\n", base,
            (double)meter.longest_from_us / 1e6,
            (double)(meter.longest_from_us + meter.longest_us) / 1e6);
  gtk_window_destroy(GTK_WINDOW(window));
  run_until(NULL, NULL, 0.2);
  return opened ? gap_ms : 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench-hostile-inspector LOG...\n");
    return 2;
  }
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  gs_config_init_settings();
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  g_autofree char *runtime = g_dir_make_tmp("gs-bench-hostile-XXXXXX", NULL);
  g_setenv("XDG_RUNTIME_DIR", runtime, TRUE);
  gtk_init();
  adw_init();
  GsApplication *app = gs_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  if (!g_application_register(G_APPLICATION(app), NULL, NULL))
    return 1;
  double worst = 0;
  for (int i = 1; i < argc; i++) {
    double gap = bench_log(app, argv[i]);
    worst = MAX(worst, gap);
  }
  printf("hostile_ui_worst_frame_gap_ms=%.0f\n", worst);
  g_object_unref(app);
  g_rmdir(runtime);
  return worst <= 100 ? 0 : 1;
}
