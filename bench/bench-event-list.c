/* bench-event-list.c: the inspector's event list on a big log, under a display (run it with
 * `xvfb-run -a`, GSK_RENDERER=cairo). Records a training-like log of about 1.1 M events with
 * the engine, loads it into a trace model, shows it in a GsEventListView and reports:
 *   event_list_rows             rows in the list (one per event, none made up front)
 *   event_list_set_model_ms     showing the whole log (the list is lazy: no row objects)
 *   event_list_page_ms_median   one page scrolled down, drawn (smooth scrolling)
 *   event_list_page_ms_max
 *   event_list_jump_ms_median   the scrubber jumping to a random event, selected and drawn
 *   event_list_jump_ms_max
 *   event_list_filter_ms        a kind filter over every event, run to the end
 *   event_list_search_ms        a text search ("step") over every event, run to the end
 * (the inspector runs filters in chunks of 4 ms between frames; these are the totals) */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>

#include "bench-util.h"
#include "gs-event-list-view.h"

enum { STEPS = 45000, SAMPLES = 120 };

static void record(const char *path) {
  if (gs_trace_open(path) != 0) {
    fprintf(stderr, "bench-event-list: cannot record to %s\n", path);
    exit(1);
  }
  const int64_t shape[] = {8, 16};
  gs_tensor w = gs_ones(GS_F32, shape, 2);
  for (int step = 0; step < STEPS; step++) {
    gs_scope scope = gs_scope_begin("step");
    gs_tensor x = gs_ones(GS_F32, shape, 2);
    gs_tensor c = gs_clone(x);
    gs_add_scalar_(c, 1.0);
    gs_tensor y = gs_mul(gs_add(x, w), c);
    gs_dispose(gs_sum(y, NULL, 0, false));
    gs_scope_end(scope);
  }
  gs_dispose(w);
  gs_trace_close();
}

static gboolean painted;
static void on_after_paint(GdkFrameClock *clock, gpointer data) {
  (void)clock, (void)data;
  painted = TRUE;
}

/* Runs the main loop until the next frame has been painted (after what changed). */
static void wait_frame(GtkWidget *window) {
  painted = FALSE;
  gtk_widget_queue_draw(window);
  while (!painted)
    g_main_context_iteration(NULL, TRUE);
}

int main(int argc, char **argv) {
  gtk_init();
  adw_init();
  (void)argc, (void)argv;
  g_autofree char *dir = g_dir_make_tmp("gs-bench-list-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "big.gstrace", NULL);
  record(path);

  g_autoptr(GError) error = NULL;
  gs_trace_model *model = gs_trace_model_load_file(path, NULL, NULL, NULL, &error);
  if (!model) {
    fprintf(stderr, "bench-event-list: %s\n", error->message);
    return 1;
  }
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 1000, 800);
  GtkWidget *view = gs_event_list_view_new();
  gtk_window_set_child(GTK_WINDOW(window), view);
  gtk_window_present(GTK_WINDOW(window));
  GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
  while (!(clock = gtk_widget_get_frame_clock(window)))
    g_main_context_iteration(NULL, TRUE);
  g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), NULL);
  wait_frame(window);

  double t0 = bench_now_s();
  gs_event_list_view_set_model(GS_EVENT_LIST_VIEW(view), model);
  wait_frame(window);
  double set_model_ms = (bench_now_s() - t0) * 1e3;
  GListModel *rows = G_LIST_MODEL(gs_event_list_view_get_list(GS_EVENT_LIST_VIEW(view)));
  guint n = g_list_model_get_n_items(rows);

  GtkWidget *scroller = NULL;
  for (GtkWidget *w = gtk_widget_get_first_child(view); w && !scroller;
       w = gtk_widget_get_first_child(w))
    for (GtkWidget *c = w; c; c = gtk_widget_get_next_sibling(c))
      if (GTK_IS_SCROLLED_WINDOW(c)) {
        scroller = c;
        break;
      }
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));

  double page[SAMPLES], jump[SAMPLES];
  wait_frame(window);
  for (int i = 0; i < SAMPLES; i++) {
    double t = bench_now_s();
    gtk_adjustment_set_value(adj, gtk_adjustment_get_value(adj) +
                                      gtk_adjustment_get_page_size(adj));
    wait_frame(window);
    page[i] = (bench_now_s() - t) * 1e3;
  }
  GRand *rand = g_rand_new_with_seed(7);
  for (int i = 0; i < SAMPLES; i++) {
    guint64 index = (guint64)g_rand_int_range(rand, 0, (gint32)n);
    double t = bench_now_s();
    gs_event_list_view_set_position(GS_EVENT_LIST_VIEW(view), index);
    wait_frame(window); /* the selection and the scroll, queued after layout */
    wait_frame(window);
    jump[i] = (bench_now_s() - t) * 1e3;
  }
  g_rand_free(rand);

  t0 = bench_now_s();
  gs_event_list_view_set_kind_filter(GS_EVENT_LIST_VIEW(view), GS_TRACE_INPLACE_WRITE);
  gs_event_list_model_finish_filtering(gs_event_list_view_get_list(GS_EVENT_LIST_VIEW(view)));
  double filter_ms = (bench_now_s() - t0) * 1e3;
  guint matched = g_list_model_get_n_items(rows);

  gs_event_list_view_set_kind_filter(GS_EVENT_LIST_VIEW(view), 0);
  t0 = bench_now_s();
  gs_event_list_view_set_search(GS_EVENT_LIST_VIEW(view), "step");
  gs_event_list_model_finish_filtering(gs_event_list_view_get_list(GS_EVENT_LIST_VIEW(view)));
  double search_ms = (bench_now_s() - t0) * 1e3;
  guint found = g_list_model_get_n_items(rows);

  bench_result("event_list_rows", n, "");
  bench_result("event_list_set_model_ms", set_model_ms, "ms");
  double page_max = 0, jump_max = 0;
  for (int i = 0; i < SAMPLES; i++)
    page_max = MAX(page_max, page[i]), jump_max = MAX(jump_max, jump[i]);
  bench_result("event_list_page_ms_median", bench_median(page, SAMPLES), "ms");
  bench_result("event_list_page_ms_max", page_max, "ms");
  bench_result("event_list_jump_ms_median", bench_median(jump, SAMPLES), "ms");
  bench_result("event_list_jump_ms_max", jump_max, "ms");
  bench_result("event_list_filter_ms", filter_ms, "ms");
  bench_result("event_list_filter_rows", matched, "");
  bench_result("event_list_search_ms", search_ms, "ms");
  bench_result("event_list_search_rows", found, "");

  gtk_window_destroy(GTK_WINDOW(window));
  gs_trace_model_free(model);
  g_unlink(path);
  g_rmdir(dir);
  return matched == STEPS ? 0 : 1;
}
