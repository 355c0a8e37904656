/* test-rank-window.c: a distributed run's ranks opened together in the inspector's window,
 * under Xvfb, on examples/digits-ddp's logs (tests/common/with-ddp-logs.sh: GS_DDP_LOGS holds
 * a-0, a-1, b-0 and b-1, two runs of 2 ranks). Two ranks open as one page: its Events page
 * lists both ranks' events with a Rank column and a rank filter whose counts are each log's;
 * its Memory page draws one lane per rank with the run's collectives and waits; logs of two
 * runs are refused naming them; its Graph page names the rank whose graphs it draws; one
 * rank's log alone opens as any log does, with no Rank column and no rank named. Screenshots
 * (light and dark) go to GS_SCREENSHOT_DIR. */
#include <adwaita.h>
#include <gradscope/trace-reader.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "gs-application.h"
#include "gs-capture-page.h"
#include "gs-config.h"
#include "gs-event-list-view.h"
#include "gs-event-row.h"
#include "gs-graph-pane.h"
#include "gs-rank-lanes-view.h"
#include "gs-scrubber.h"
#include "gs-window.h"
#include "rank-lanes.h"
#include "views-test-util.h"

static GsApplication *app;

static char *log_path(const char *name) {
  return g_build_filename(g_getenv("GS_DDP_LOGS"), name, NULL);
}

static GsWindow *new_window(void) {
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 860);
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

static gboolean run_loaded(gpointer data) {
  return gs_capture_page_get_run(data) && !gs_capture_page_get_busy(data);
}

static gboolean page_loaded(gpointer data) {
  return gs_capture_page_get_model(data) && !gs_capture_page_get_busy(data);
}

static guint n_rows(GsEventListView *list) {
  GsEventListModel *rows = gs_event_list_view_get_list(list);
  gs_event_list_model_finish_filtering(rows);
  return g_list_model_get_n_items(G_LIST_MODEL(rows));
}

/* The event list's column titled title, or NULL. */
static GtkColumnViewColumn *column(GsEventListView *list, const char *title) {
  GtkWidget *view = views_test_find(GTK_WIDGET(list), GTK_TYPE_COLUMN_VIEW);
  GListModel *columns = gtk_column_view_get_columns(GTK_COLUMN_VIEW(view));
  for (guint i = 0; i < g_list_model_get_n_items(columns); i++) {
    g_autoptr(GtkColumnViewColumn) c = g_list_model_get_item(columns, i);
    if (!g_strcmp0(gtk_column_view_column_get_title(c), title))
      return c;
  }
  return NULL;
}

static GtkColumnViewColumn *column_at(GsEventListView *list, guint i) {
  GtkWidget *view = views_test_find(GTK_WIDGET(list), GTK_TYPE_COLUMN_VIEW);
  g_autoptr(GtkColumnViewColumn) c =
      g_list_model_get_item(gtk_column_view_get_columns(GTK_COLUMN_VIEW(view)), i);
  return c; /* the view holds it */
}

static GsCapturePage *open_run(GsWindow *window, const char *first, const char *second) {
  g_autofree char *p1 = log_path(first), *p2 = log_path(second);
  GFile *files[2] = {g_file_new_for_path(p1), g_file_new_for_path(p2)};
  g_autoptr(GError) error = NULL;
  g_assert_true(gs_window_open_files(window, files, 2, FALSE, &error));
  g_assert_no_error(error);
  g_object_unref(files[0]);
  g_object_unref(files[1]);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  views_test_wait_for(run_loaded, page);
  return page;
}

static void test_two_ranks_one_page(void) {
  GsWindow *window = new_window();
  /* Rank 1's log first: the page still shows rank 0's as the first. */
  GsCapturePage *page = open_run(window, "a-1.gstrace", "a-0.gstrace");
  g_assert_cmpuint(adw_tab_view_get_n_pages(gs_window_get_tab_view(window)), ==, 1);
  g_assert_true(strstr(gs_capture_page_get_title(page), "a-0.gstrace (2 ranks)") != NULL);
  gs_rank_run *run = gs_capture_page_get_run(page);
  g_assert_cmpuint(gs_rank_run_n_lanes(run), ==, 2);
  g_assert_true(gs_rank_run_model(run, 0) == gs_capture_page_get_model(page));
  g_assert_cmpuint(gs_rank_run_rank(run, 1), ==, 1);

  GsEventListView *list = gs_capture_page_get_event_list(page);
  guint64 n0 = gs_trace_model_n_events(gs_rank_run_model(run, 0));
  guint64 n1 = gs_trace_model_n_events(gs_rank_run_model(run, 1));
  g_assert_cmpuint(n_rows(list), ==, n0 + n1);
  /* The scrubber walks rank 0's log alone, and says so: its count is n0, not the list's. */
  g_autofree char *scrub_want = g_strdup_printf(
      "rank 0 · event %'" G_GUINT64_FORMAT " of %'" G_GUINT64_FORMAT " · #", n0, n0);
  const char *scrub = gs_scrubber_get_position_text(gs_capture_page_get_scrubber(page));
  g_test_message("scrubber: %s", scrub);
  g_assert_true(g_str_has_prefix(scrub, scrub_want));
  /* The Time column is the run's shared axis: both ranks' rows rise together (digits-ddp
   * records from one thread, so its merged times never go back), interleaved, not one rank's
   * log after the other's. Every row is read: on a loaded machine one rank may start (and
   * record thousands of events) well before the other. */
  GListModel *rows = G_LIST_MODEL(gs_event_list_view_get_list(list));
  double last = 0;
  guint ranks_seen[2] = {0, 0}, switches = 0;
  int previous = -1;
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
    g_autoptr(GsEventRow) row = g_list_model_get_item(rows, i);
    g_autofree char *time = gs_event_row_dup_time(row), *r = gs_event_row_dup_rank(row);
    double t = g_ascii_strtod(time, NULL);
    g_assert_cmpfloat(t, >=, last);
    last = t;
    int rank_of_row = atoi(r) == 1;
    ranks_seen[rank_of_row]++;
    switches += previous != -1 && rank_of_row != previous;
    previous = rank_of_row;
  }
  g_assert_cmpuint(ranks_seen[0], ==, n0);
  g_assert_cmpuint(ranks_seen[1], ==, n1);
  g_assert_cmpuint(switches, >, 10); /* one log after the other would switch once */
  GtkColumnViewColumn *rank = column(list, "Rank");
  g_assert_nonnull(rank);
  g_assert_true(gtk_column_view_column_get_visible(rank));
  /* first, before the event's number */
  g_assert_true(column_at(list, 0) == rank);
  gs_event_list_view_set_rank_filter(list, 1);
  g_assert_cmpuint(n_rows(list), ==, n1);
  gs_event_list_view_set_rank_filter(list, 0);
  g_assert_cmpuint(n_rows(list), ==, n0);
  /* A kind and a rank together: rank 1's collective_end events. */
  gs_event_list_view_set_rank_filter(list, 1);
  gs_event_list_view_set_kind_filter(list, GS_TRACE_COLLECTIVE_END);
  guint ends = 0;
  for (guint i = 0; i < gs_rank_run_collectives(run)->len; i++)
    ends +=
        g_array_index(gs_rank_run_collectives(run), gs_rank_collective, i).end[1] != G_MAXUINT64;
  g_assert_cmpuint(n_rows(list), ==, ends);
  gs_event_list_view_set_kind_filter(list, 0);
  gs_event_list_view_set_rank_filter(list, G_MAXUINT);
  g_assert_cmpuint(n_rows(list), ==, n0 + n1);
  views_test_screenshot(GTK_WIDGET(window), "rank-events.png");

  /* The Graph page draws rank 0's graphs (the scrubber walks rank 0's log) and its header says
   * whose. */
  adw_view_stack_set_visible_child_name(
      ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK)), "graph");
  GsGraphPane *graph = GS_GRAPH_PANE(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_PANE));
  g_assert_cmpstr(gs_graph_pane_get_rank_text(graph), ==, "Rank 0");
  views_test_settle(GTK_WIDGET(graph));
  views_test_screenshot(GTK_WIDGET(window), "rank-window-graph.png");

  /* The Memory page: the lanes, from the run's first event (a log begins before MPI_Init,
   * which may take longer than the steps drawn) to its last. */
  adw_view_stack_set_visible_child_name(
      ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK)), "timeline");
  GsRankLanesView *lanes = GS_RANK_LANES_VIEW(gs_capture_page_get_rank_lanes(page));
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(lanes)));
  views_test_settle(GTK_WIDGET(lanes));
  guint64 t0, t1;
  gs_rank_lanes_view_get_range(lanes, &t0, &t1);
  guint64 first = MIN(gs_rank_run_time(run, 0, 0), gs_rank_run_time(run, 1, 0));
  g_assert_cmpuint(first, >, 0);
  g_assert_cmpuint(gs_rank_run_first_time(run), ==, first);
  g_assert_cmpuint(t0, ==, first);
  g_assert_cmpuint(t1, ==, gs_rank_run_duration(run));
  views_test_screenshot(GTK_WIDGET(window), "rank-window-memory.png");
  views_test_screenshot(GTK_WIDGET(lanes), "rank-lanes.png");
  /* A wait of rank 1 in the middle of the run, zoomed in on: the tooltip there says so. */
  const GArray *waits = gs_rank_run_waits(run, 1);
  const gs_rank_wait *w = &g_array_index(waits, gs_rank_wait, waits->len / 2);
  /* Some five steps around it: a step is the time from one wait to the next. */
  guint64 pad = 5 * (w[1].begin - w->begin) / 2;
  gs_rank_lanes_view_set_range(lanes, w->begin - pad, w->end + pad);
  gs_rank_lanes_view vw = {.width = gtk_widget_get_width(GTK_WIDGET(lanes)),
                           .height = gtk_widget_get_height(GTK_WIDGET(lanes))};
  gs_rank_lanes_view_get_range(lanes, &vw.t0, &vw.t1);
  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, &vw, &g);
  double x = g.plot_x + ((double)(w->begin + w->end) / 2 - (double)vw.t0) /
                            (double)(vw.t1 - vw.t0) * g.plot_width;
  double y = g.lanes_y + (g.lane_height + g.lane_gap) + g.lane_height / 2;
  g_autofree char *said = gs_rank_lanes_view_describe_at(lanes, x, y);
  g_test_message("tooltip in rank 1's wait: %s", said);
  g_assert_nonnull(said);
  g_assert_true(g_str_has_prefix(said, "Rank 1 at "));
  g_assert_nonnull(strstr(said, "for the other ranks"));
  views_test_screenshot(GTK_WIDGET(lanes), "rank-lanes-zoomed.png");
  views_test_screenshot(GTK_WIDGET(window), "rank-window-memory-zoomed.png");
  /* Ctrl+scroll's zoom out widens the range around the pointer. */
  gs_rank_lanes_view_zoom(lanes, 4.0, x);
  guint64 z0, z1;
  gs_rank_lanes_view_get_range(lanes, &z0, &z1);
  g_assert_cmpuint(z1 - z0, >, 3 * (vw.t1 - vw.t0));
  gs_rank_lanes_view_set_range(lanes, 0, gs_rank_run_duration(run));

  adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_FORCE_DARK);
  views_test_settle(GTK_WIDGET(lanes));
  views_test_screenshot(GTK_WIDGET(lanes), "rank-lanes-dark.png");
  adw_style_manager_set_color_scheme(adw_style_manager_get_default(), ADW_COLOR_SCHEME_DEFAULT);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_refuses_two_runs(void) {
  GsWindow *window = new_window();
  g_autofree char *a0 = log_path("a-0.gstrace"), *b1 = log_path("b-1.gstrace");
  GFile *files[2] = {g_file_new_for_path(a0), g_file_new_for_path(b1)};
  g_autoptr(GError) error = NULL;
  g_assert_false(gs_window_open_files(window, files, 2, FALSE, &error));
  g_assert_nonnull(error);
  g_test_message("refusal: %s", error->message);
  g_autofree char *want =
      g_strdup_printf("%s and %s are not logs of one run: %s is rank 0 of run", a0, b1, a0);
  g_assert_nonnull(strstr(error->message, want));
  g_assert_cmpuint(adw_tab_view_get_n_pages(gs_window_get_tab_view(window)), ==, 0);
  g_object_unref(files[0]);
  g_object_unref(files[1]);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* One rank's log alone is a log like any: no run, no Rank column, no rank filter. */
static void test_one_rank_alone(void) {
  GsWindow *window = new_window();
  g_autofree char *a1 = log_path("a-1.gstrace");
  g_autoptr(GFile) file = g_file_new_for_path(a1);
  g_assert_true(gs_window_open_files(window, &file, 1, FALSE, NULL));
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(page_loaded, page);
  g_assert_null(gs_capture_page_get_run(page));
  GsEventListView *list = gs_capture_page_get_event_list(page);
  g_assert_cmpuint(n_rows(list), ==, gs_trace_model_n_events(gs_capture_page_get_model(page)));
  g_assert_null(column(list, "Rank"));
  g_assert_null(gs_graph_pane_get_rank_text(
      GS_GRAPH_PANE(views_test_find(GTK_WIDGET(page), GS_TYPE_GRAPH_PANE))));
  g_assert_false(gtk_widget_get_mapped(gs_capture_page_get_rank_lanes(page)));
  gtk_window_destroy(GTK_WINDOW(window));
}

int main(int argc, char **argv) {
  app = views_test_application(&argc, &argv);
  g_test_add_func("/rank-window/two-ranks-one-page", test_two_ranks_one_page);
  g_test_add_func("/rank-window/refuses-two-runs", test_refuses_two_runs);
  g_test_add_func("/rank-window/one-rank-alone", test_one_rank_alone);
  return g_test_run();
}
