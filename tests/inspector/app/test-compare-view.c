/* test-compare-view.c: the inspector's Compare view under Xvfb (suite "inspector-ui"), on two
 * recordings of tests/inspector/cli/diff-workload.c made in the test: before a fix (a leak, a
 * graph not cut) and after it. The pair is opened through the window as the menu action does;
 * the table must list the leak (objects alive 3 → 0) and each pass's 3 removed nodes, the chart
 * must draw the runs' shared step marks at the same x, activating rows must move both runs, the
 * graphs must mark the removed nodes, a file that holds no log must be named in the error, and
 * a damaged one in a toast. Screenshots in English and, run again with LANGUAGE=zh_CN, in
 * Chinese (GS_SCREENSHOT_DIR). */
#include <adwaita.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <math.h>
#include <string.h>

#include "gs-application.h"
#include "gs-compare-page.h"
#include "gs-config.h"
#include "gs-diff-row.h"
#include "gs-window.h"
#include "views-test-util.h"

static char *dir, *before_path, *after_path;
static GsApplication *app;
static gboolean chinese;

/* Runs the workload with the engine's recorder pointed at path (GS_TRACE). */
static void record(const char *mode, const char *path) {
  const char *workload = g_getenv("GS_DIFF_WORKLOAD");
  g_assert_nonnull(workload);
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "GS_TRACE", path, TRUE);
  const char *argv[] = {workload, mode, NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                             &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
}

static gboolean timed_out(gpointer data) {
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

static void wait_until_loaded(GsComparePage *page) {
  gboolean expired = FALSE;
  guint timer = g_timeout_add_seconds(60, timed_out, &expired);
  while (gs_compare_page_get_busy(page) && !expired)
    g_main_context_iteration(NULL, TRUE);
  g_assert_false(expired);
  g_source_remove(timer);
}

static gboolean graphs_drawn(GsComparePage *page) {
  for (guint run = 0; run < 2; run++) {
    GsGraphView *view = gs_compare_page_get_graph(page, run);
    if (!gs_graph_view_get_layout(view) || gs_graph_view_is_busy(view))
      return FALSE;
  }
  return TRUE;
}

static void wait_for_graphs(GsComparePage *page) {
  gboolean expired = FALSE;
  guint timer = g_timeout_add_seconds(60, timed_out, &expired);
  while (!graphs_drawn(page) && !expired)
    g_main_context_iteration(NULL, TRUE);
  g_assert_false(expired);
  g_source_remove(timer);
  views_test_settle(GTK_WIDGET(page));
}

/* The table's row whose first column says what (translated by the caller), or G_MAXUINT. */
static guint find_row(GsComparePage *page, const char *what) {
  GListModel *rows = gs_compare_page_get_rows(page);
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
    g_autoptr(GsDiffRow) row = g_list_model_get_item(rows, i);
    if (!strcmp(gs_diff_row_get(row)->what, what))
      return i;
  }
  return G_MAXUINT;
}

static const gs_run_diff_row *row_at(GsComparePage *page, guint i) {
  g_autoptr(GsDiffRow) row = g_list_model_get_item(gs_compare_page_get_rows(page), i);
  return gs_diff_row_get(row);
}

/* How many nodes of the laid-out graph of run are among nodes (by node id). */
static guint drawn_among(GsComparePage *page, guint run, const GArray *nodes) {
  const gs_layout *layout = gs_graph_view_get_layout(gs_compare_page_get_graph(page, run));
  guint found = 0;
  for (guint i = 0; i < layout->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(layout->nodes, gs_layout_node, i);
    const gs_graph_item *item = &g_array_index(layout->graph->items, gs_graph_item, n->item);
    if (item->kind != GS_GRAPH_OP && item->kind != GS_GRAPH_LEAF)
      continue;
    for (guint k = 0; k < nodes->len; k++)
      found += g_array_index(nodes, gs_run_node, k).id == item->id;
  }
  return found;
}

static void test_compare_pair(void) {
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 900);
  gtk_window_present(GTK_WINDOW(window));
  g_autoptr(GFile) a = g_file_new_for_path(before_path);
  g_autoptr(GFile) b = g_file_new_for_path(after_path);
  gs_window_compare(window, a, b);
  AdwTabPage *tab = adw_tab_view_get_selected_page(gs_window_get_tab_view(window));
  g_assert_nonnull(tab);
  GsComparePage *page = GS_COMPARE_PAGE(adw_tab_page_get_child(tab));
  /* A Compare tab is no capture page: views that act on captures leave it alone. */
  g_assert_null(gs_window_get_current_page(window));
  wait_until_loaded(page);
  g_assert_null(gs_compare_page_get_error(page));
  g_assert_cmpstr(adw_tab_page_get_title(tab), ==, "before.gstrace ↔ after.gstrace");
  const gs_run_diff *diff = gs_compare_page_get_diff(page);
  g_assert_nonnull(diff);

  /* The leak: 3 objects alive at the end before the fix, none after. */
  guint live = find_row(page, _("Objects alive at the end"));
  g_assert_cmpuint(live, !=, G_MAXUINT);
  g_assert_cmpstr(row_at(page, live)->a_text, ==, "3");
  g_assert_cmpstr(row_at(page, live)->b_text, ==, "0");
  /* The cut: each of the 3 passes lost 3 nodes and gained none. */
  g_autofree char *cut = g_strdup_printf(_("%u removed, %u added"), 3u, 0u);
  guint pass_rows = 0;
  GListModel *rows = gs_compare_page_get_rows(page);
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++)
    if (row_at(page, i)->pass >= 0) {
      g_assert_cmpstr(row_at(page, i)->change, ==, cut);
      pass_rows++;
    }
  g_assert_cmpuint(pass_rows, ==, 3);
  g_assert_true(diff->passes_by_step);

  /* Aligned by the 3 step marks: each is drawn at the same x in both runs although the runs'
   * events are numbered differently (the fixed run has fewer). */
  views_test_settle(GTK_WIDGET(window));
  GsCompareChart *chart = gs_compare_page_get_chart(page);
  g_assert_cmpuint(diff->anchors->len / 2, ==, 3 + 2);
  g_assert_cmpuint(diff->a->marks->len, ==, 3);
  for (guint k = 0; k < 3; k++) {
    guint64 a_seq = g_array_index(diff->a->marks, gs_run_mark, k).seq;
    guint64 b_seq = g_array_index(diff->b->marks, gs_run_mark, k).seq;
    g_assert_cmpstr(g_array_index(diff->a->marks, gs_run_mark, k).label, ==,
                    g_array_index(diff->b->marks, gs_run_mark, k).label);
    if (k)
      g_assert_cmpuint(a_seq, !=, b_seq);
    g_assert_cmpfloat(fabs(gs_compare_chart_x_of(chart, 0, a_seq) -
                           gs_compare_chart_x_of(chart, 1, b_seq)), <, 0.5);
  }
  /* The end of B lands on the end of A. */
  g_assert_cmpfloat(fabs(gs_compare_chart_x_of(chart, 0, diff->a->last_seq) -
                         gs_compare_chart_x_of(chart, 1, diff->b->last_seq)), <, 0.5);

  /* Opened on the first pass that changed, its removed nodes drawn in A's graph only. */
  wait_for_graphs(page);
  const gs_run_diff_pass *first = diff->passes->pdata[0];
  g_assert_cmpuint(gs_compare_page_get_position(page, 0), !=, G_MAXUINT64);
  g_assert_cmpuint(drawn_among(page, 0, first->removed), ==, 3);
  g_assert_cmpuint(first->added->len, ==, 0);
  /* What the table shows on screen: the leak's row, with its values. */
  g_autoptr(GPtrArray) labels = views_test_labels(GTK_WIDGET(page));
  guint shown = G_MAXUINT;
  for (guint i = 0; i < labels->len; i++)
    if (!g_strcmp0(gtk_label_get_text(labels->pdata[i]), _("Objects alive at the end")))
      shown = i;
  g_assert_cmpuint(shown, !=, G_MAXUINT);
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[shown + 1]), ==, "3");
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[shown + 2]), ==, "0");
  g_assert_cmpstr(gtk_label_get_text(labels->pdata[shown + 3]), ==, "−3");
  views_test_screenshot(GTK_WIDGET(window),
                        chinese ? "compare-view-zh_CN.png" : "compare-view.png");
  /* The table shows ten rows or so of the pair's twenty before it scrolls (a fixed 160 px
   * showed five and half of a sixth). */
  GtkWidget *table = views_test_find(GTK_WIDGET(page), GTK_TYPE_COLUMN_VIEW);
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(
      GTK_SCROLLED_WINDOW(gtk_widget_get_ancestor(table, GTK_TYPE_SCROLLED_WINDOW)));
  guint n_rows = g_list_model_get_n_items(G_LIST_MODEL(gtk_column_view_get_model(GTK_COLUMN_VIEW(table))));
  double row = gtk_adjustment_get_upper(adj) / (n_rows + 1); /* the header is about a row */
  g_test_message("table: %u rows, %g px of %g shown", n_rows, gtk_adjustment_get_page_size(adj),
                 gtk_adjustment_get_upper(adj));
  g_assert_cmpuint(n_rows, >, 10);
  g_assert_cmpfloat(gtk_adjustment_get_page_size(adj), >=, 10 * row);

  /* A row moves both runs to its place: the live count's row to each run's last event. */
  gs_compare_page_activate_row(page, live);
  g_assert_cmpfloat(gs_compare_chart_get_cursor(chart), ==, (double)diff->a->last_seq);
  guint64 a_end = gs_compare_page_get_position(page, 0);
  guint64 b_end = gs_compare_page_get_position(page, 1);
  g_assert_cmpuint(a_end, !=, G_MAXUINT64);
  g_assert_cmpuint(b_end, !=, G_MAXUINT64);
  /* The row of pass 3: both graphs at that pass's backward_begin. */
  guint third = G_MAXUINT;
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++)
    if (row_at(page, i)->pass == 2)
      third = i;
  g_assert_cmpuint(third, !=, G_MAXUINT);
  gs_compare_page_activate_row(page, third);
  const gs_run_diff_pass *p3 = diff->passes->pdata[2];
  g_assert_cmpfloat(gs_compare_chart_get_cursor(chart), ==, (double)p3->a->seq);
  g_assert_cmpuint(gs_compare_page_get_position(page, 0), <, a_end);
  g_assert_cmpuint(gs_compare_page_get_position(page, 1), <, b_end);
  wait_for_graphs(page);
  g_assert_cmpuint(drawn_among(page, 0, p3->removed), ==, 3);
  views_test_screenshot(GTK_WIDGET(window),
                        chinese ? "compare-view-pass3-zh_CN.png" : "compare-view-pass3.png");
  /* A click on the chart at A's "step 2" mark moves A to it and B to its own "step 2". */
  guint64 a_step2 = g_array_index(diff->a->marks, gs_run_mark, 1).seq;
  guint64 b_step2 = g_array_index(diff->b->marks, gs_run_mark, 1).seq;
  guint64 a_pass3 = gs_compare_page_get_position(page, 0);
  guint64 b_pass3 = gs_compare_page_get_position(page, 1);
  g_signal_emit_by_name(chart, "position-chosen", (double)a_step2);
  g_assert_cmpfloat(gs_compare_chart_get_cursor(chart), ==, (double)a_step2);
  g_assert_cmpfloat(ABS(gs_run_diff_unalign(diff, (double)a_step2) - (double)b_step2), <, 1e-6);
  /* Both runs went back from pass 3 to step 2 (where the graphs are those of step 1's end). */
  g_assert_cmpuint(gs_compare_page_get_position(page, 0), <, a_pass3);
  g_assert_cmpuint(gs_compare_page_get_position(page, 1), <, b_pass3);
  g_assert_cmpuint(gs_compare_page_get_position(page, 0), >, a_pass3 / 3);
  if (!chinese) { /* the marks and the chart's colours on libadwaita's dark style */
    AdwStyleManager *style = adw_style_manager_get_default();
    adw_style_manager_set_color_scheme(style, ADW_COLOR_SCHEME_FORCE_DARK);
    views_test_settle(GTK_WIDGET(window));
    views_test_screenshot(GTK_WIDGET(window), "compare-view-dark.png");
    adw_style_manager_set_color_scheme(style, ADW_COLOR_SCHEME_DEFAULT);
  }
  gtk_window_destroy(GTK_WINDOW(window));
}

/* A file that holds no log: the page says which, and the window gets a toast. */
static void test_compare_not_a_log(void) {
  g_autofree char *text = g_build_filename(dir, "notes.gstrace", NULL);
  g_assert_true(g_file_set_contents(text, "just some notes\n", -1, NULL));
  GsComparePage *page = g_object_ref_sink(gs_compare_page_new(before_path, text));
  wait_until_loaded(page);
  g_assert_nonnull(gs_compare_page_get_error(page));
  g_assert_nonnull(strstr(gs_compare_page_get_error(page), "notes.gstrace"));
  g_assert_null(gs_compare_page_get_diff(page));
  g_object_unref(page);
  g_unlink(text);
}

/* A run against itself: no row, and the note that the runs agree is what is shown. */
static void test_compare_same_run(void) {
  GsComparePage *page = gs_compare_page_new(before_path, before_path);
  GtkWindow *window = views_test_show(GTK_WIDGET(page), 1200, 800);
  wait_until_loaded(page);
  g_assert_cmpuint(g_list_model_get_n_items(gs_compare_page_get_rows(page)), ==, 0);
  views_test_settle(GTK_WIDGET(window));
  g_autoptr(GPtrArray) labels = views_test_labels(GTK_WIDGET(page));
  gboolean agree = FALSE;
  for (guint i = 0; i < labels->len; i++)
    agree |= g_str_has_prefix(gtk_label_get_text(labels->pdata[i]),
                              _("The two runs agree in everything compared: memory, "
                                "graphs, call sites, scopes and events by kind."));
  g_assert_true(agree);
  gtk_window_destroy(window);
}

static void on_toast(GsComparePage *page, const char *message, char **said) {
  (void)page;
  g_free(*said);
  *said = g_strdup(message);
}

/* A damaged B is compared up to the damage, and a toast names it. */
static void test_compare_damaged(void) {
  g_autofree char *contents = NULL;
  gsize size;
  g_assert_true(g_file_get_contents(after_path, &contents, &size, NULL));
  contents[size / 2] ^= 0xff;
  g_autofree char *damaged = g_build_filename(dir, "damaged.gstrace", NULL);
  g_assert_true(g_file_set_contents(damaged, contents, (gssize)size, NULL));
  GsComparePage *page = g_object_ref_sink(gs_compare_page_new(before_path, damaged));
  g_autofree char *said = NULL;
  g_signal_connect(page, "toast", G_CALLBACK(on_toast), &said);
  wait_until_loaded(page);
  g_assert_null(gs_compare_page_get_error(page));
  g_assert_nonnull(gs_compare_page_get_diff(page));
  g_assert_nonnull(said);
  g_assert_true(g_str_has_prefix(said, "damaged.gstrace: "));
  g_object_unref(page);
  g_unlink(damaged);
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  gs_config_init_settings();
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  gtk_test_init(&argc, &argv, NULL);
  adw_init();
  chinese = g_str_has_prefix(g_getenv("LANGUAGE") ? g_getenv("LANGUAGE") : "", "zh");

  dir = g_dir_make_tmp("gs-compare-view-XXXXXX", NULL);
  before_path = g_build_filename(dir, "before.gstrace", NULL);
  after_path = g_build_filename(dir, "after.gstrace", NULL);
  record("before", before_path);
  record("after", after_path);

  app = gs_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));

  g_test_add_func("/compare-view/pair", test_compare_pair);
  g_test_add_func("/compare-view/not-a-log", test_compare_not_a_log);
  g_test_add_func("/compare-view/damaged", test_compare_damaged);
  g_test_add_func("/compare-view/same-run", test_compare_same_run);
  int status = g_test_run();

  g_object_unref(app);
  g_unlink(before_path);
  g_unlink(after_path);
  g_rmdir(dir);
  g_free(before_path);
  g_free(after_path);
  g_free(dir);
  return status;
}
