/* test-tour-panel.c: the Tour panel under Xvfb (suite "inspector-ui"). Each tour is started
 * as `gradscope-inspector --tour NAME` starts it (its program runs with tracing, the panel
 * plays the tour once the run is over); the panel's steps must move the scrubber to the
 * resolved events, open each step's page and show its paragraph, with the buttons and with
 * Alt+Right/Alt+Left; a tour over a log it does not fit says which step found nothing; the
 * start page lists every tour; a tour the build left out (GS_TOUR_SKIP) is skipped, saying
 * why. Each tour's key step is saved as a screenshot
 * (tour-NAME-LANG.png in GS_SCREENSHOT_DIR), in English and, run again, in Chinese. */
#include <adwaita.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <string.h>

#include "gs-application.h"
#include "gs-capture-page.h"
#include "gs-config.h"
#include "gs-scrubber.h"
#include "gs-tensor-life.h"
#include "gs-tour-panel.h"
#include "gs-window.h"
#include "tours.h"
#include "views-test-util.h"

static GsApplication *app;

/* The step whose screenshot each tour gets: the moment it is about. */
static const struct {
  const char *tour;
  guint step;
} key_steps[] = {
    {"storage", 2}, {"clone-detach", 3}, {"version", 2}, {"micrograd", 3},
    {"scopes", 2},  {"packed", 2},       {"memory", 4},  {"sharing", 1},
};

static gboolean tour_started(gpointer data) {
  return gs_tour_panel_get_started(GS_TOUR_PANEL(gs_capture_page_get_tour_panel(data)));
}

static GsWindow *new_window(void) {
  GsWindow *window = gs_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1400, 860);
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

static const char *visible_page(GsCapturePage *page) {
  AdwViewStack *stack = ADW_VIEW_STACK(views_test_find(GTK_WIDGET(page), ADW_TYPE_VIEW_STACK));
  return adw_view_stack_get_visible_child_name(stack);
}

/* The panel shows step s of tour, and the page follows: the scrubber at the step's event,
 * its view, its paragraph in the user's language, and the scrubber's sentence for it. */
static void assert_showing(GsCapturePage *page, const gs_tour *tour, const gs_tour_stop *stops,
                           guint s) {
  GsTourPanel *panel = GS_TOUR_PANEL(gs_capture_page_get_tour_panel(page));
  g_assert_cmpuint(gs_tour_panel_get_step(panel), ==, s);
  g_assert_cmpuint(gs_tour_panel_get_event(panel), ==, stops[s].index);
  GsScrubber *scrubber = gs_capture_page_get_scrubber(page);
  g_assert_cmpuint(gs_scrubber_get_position(scrubber), ==, stops[s].index);
  g_assert_cmpstr(visible_page(page), ==, gs_tour_panel_view_name(tour->steps[s].page));
  g_assert_cmpstr(gs_tour_panel_get_paragraph(panel), ==, _(tour->steps[s].paragraph));
  g_autofree char *sentence =
      gs_trace_model_explain(gs_capture_page_get_model(page), stops[s].index);
  g_assert_cmpstr(gs_scrubber_get_explanation(scrubber), ==, sentence);
}

static void test_tour(gconstpointer data) {
  const gs_tour *tour = data;
  /* A tour the build left out (GS_TOUR_SKIP, "NAME: why": tour 8 without Python or PyTorch). */
  const char *skip = g_getenv("GS_TOUR_SKIP");
  if (skip && g_str_has_prefix(skip, tour->name) && skip[strlen(tour->name)] == ':') {
    g_test_skip(skip);
    return;
  }
  GsWindow *window = new_window();
  gs_window_start_tour(window, tour->name);
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  g_assert_cmpstr(gs_capture_page_get_title(page), ==, tour->program);
  views_test_wait_for(tour_started, page);
  gs_trace_model *model = gs_capture_page_get_model(page);
  g_autofree gs_tour_stop *stops = g_new0(gs_tour_stop, tour->n_steps);
  g_assert_true(gs_tour_resolve(model, tour, stops, NULL));
  assert_showing(page, tour, stops, 0);

  /* Alt+Right through every step, then back with Alt+Left; the ends stop there. */
  GtkWidget *widget = GTK_WIDGET(page);
  for (guint s = 1; s < tour->n_steps; s++) {
    g_assert_true(views_test_press_key(widget, GDK_KEY_Right, GDK_ALT_MASK));
    assert_showing(page, tour, stops, s);
  }
  g_assert_true(views_test_press_key(widget, GDK_KEY_Right, GDK_ALT_MASK));
  assert_showing(page, tour, stops, tour->n_steps - 1);
  g_assert_true(views_test_press_key(widget, GDK_KEY_Left, GDK_ALT_MASK));
  assert_showing(page, tour, stops, tour->n_steps - 2);

  /* The buttons do the same. */
  GsTourPanel *panel = GS_TOUR_PANEL(gs_capture_page_get_tour_panel(page));
  GtkWidget *previous = NULL, *next = NULL;
  for (GtkWidget *w = views_test_find(GTK_WIDGET(panel), GTK_TYPE_BUTTON); w;
       w = gtk_widget_get_next_sibling(w))
    if (GTK_IS_BUTTON(w))
      previous ? (void)(next = w) : (void)(previous = w);
  g_assert_nonnull(previous);
  g_assert_nonnull(next);
  while (gs_tour_panel_get_step(panel) > 0)
    g_signal_emit_by_name(previous, "clicked");
  assert_showing(page, tour, stops, 0);
  g_assert_false(gtk_widget_get_sensitive(previous));
  g_signal_emit_by_name(next, "clicked");
  assert_showing(page, tour, stops, 1);

  /* Tour 8: the tensor's life says its storage wraps the array's bytes (format 1.4's memory
   * field), as the step's sentence does, instead of calling it an allocation. */
  if (!strcmp(tour->name, "sharing")) {
    gs_trace_model *m = gs_capture_page_get_model(page);
    gs_trace_event e;
    g_assert_true(gs_trace_model_event(m, stops[0].index, &e));
    gs_tensor_handles x = {.id = stops[1].tensor};
    g_autofree char *life = gs_tensor_life_describe(m, &x, &e);
    g_autofree char *origin = gs_memory_origin_label(1, 0);
    g_assert_nonnull(strstr(life, origin));
    g_autofree char *allocated = g_strdup_printf(_("Storage #%llu allocated: %s"),
                                                 (unsigned long long)e.storage, "");
    g_assert_false(g_str_has_prefix(life, allocated));
  }

  /* The key step, on screen. */
  guint key = 0;
  for (gsize i = 0; i < G_N_ELEMENTS(key_steps); i++)
    if (!strcmp(key_steps[i].tour, tour->name))
      key = key_steps[i].step;
  gs_tour_panel_go_to(panel, key);
  assert_showing(page, tour, stops, key);
  const char *language = g_getenv("LANGUAGE");
  g_autofree char *name = g_strdup_printf(
      "tour-%s-%s.png", tour->name, language && g_str_has_prefix(language, "zh") ? "zh_CN" : "en");
  views_test_screenshot(GTK_WIDGET(window), name);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* A tour over a log it does not fit: the panel says which step found nothing, and the keys
 * are left to the page (no step to go to). */
static void test_wrong_log(void) {
  GsWindow *window = new_window();
  gs_window_start_tour(window, "micrograd");
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(tour_started, page);
  gs_capture_page_set_tour(page, gs_tour_find("storage"));
  GsTourPanel *panel = GS_TOUR_PANEL(gs_capture_page_get_tour_panel(page));
  g_assert_false(gs_tour_panel_get_started(panel));
  g_autofree char *expected = g_strdup_printf(_("the log has no mark “%s”"), "views");
  g_assert_nonnull(strstr(gs_tour_panel_get_paragraph(panel), expected));
  g_assert_false(views_test_press_key(GTK_WIDGET(page), GDK_KEY_Right, GDK_ALT_MASK));
  gtk_window_destroy(GTK_WINDOW(window));
}

/* `gradscope-inspector --tour micrograd run.gstrace`: a log recorded earlier from the tour's
 * program, opened as a file, and the tour played over it. */
static void test_play_over_log(void) {
  g_autofree char *program = gs_tour_program_path(gs_tour_find("micrograd"));
  g_autofree char *dir = g_dir_make_tmp("gs-tour-panel-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "micrograd.gstrace", NULL);
  g_autofree char *trace = g_strdup_printf("GS_TRACE=%s", path);
  char *argv[] = {program, NULL};
  char *env[] = {trace, "GS_TRACE_VALUES=16", NULL};
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                             NULL, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  GsWindow *window = new_window();
  g_autoptr(GFile) file = g_file_new_for_path(path);
  gs_window_open_file(window, file, FALSE);
  gs_window_play_tour(window, "micrograd");
  GsCapturePage *page = gs_window_get_current_page(window);
  views_test_wait_for(tour_started, page);
  GsTourPanel *panel = GS_TOUR_PANEL(gs_capture_page_get_tour_panel(page));
  g_assert_true(gs_tour_panel_get_tour(panel) == gs_tour_find("micrograd"));
  g_assert_cmpuint(gs_scrubber_get_position(gs_capture_page_get_scrubber(page)), ==,
                   gs_tour_panel_get_event(panel));
  gtk_window_destroy(GTK_WINDOW(window));
  g_remove(path);
  g_rmdir(dir);
}

/* The start page lists the tours; activating one starts it. */
static void test_start_page(void) {
  GsWindow *window = new_window();
  views_test_settle(GTK_WIDGET(window));
  GtkWidget *list = views_test_find(GTK_WIDGET(window), GTK_TYPE_LIST_BOX);
  g_assert_nonnull(list);
  guint rows = 0;
  for (GtkWidget *row = gtk_widget_get_first_child(list); row;
       row = gtk_widget_get_next_sibling(row))
    rows += GTK_IS_LIST_BOX_ROW(row);
  g_assert_cmpuint(rows, ==, gs_tour_count());
  const char *language = g_getenv("LANGUAGE");
  views_test_screenshot(GTK_WIDGET(window), language && g_str_has_prefix(language, "zh")
                                                ? "tour-start-page-zh_CN.png"
                                                : "tour-start-page-en.png");
  gtk_widget_activate(gtk_widget_get_first_child(list));
  GsCapturePage *page = gs_window_get_current_page(window);
  g_assert_nonnull(page);
  g_assert_true(gs_tour_panel_get_tour(GS_TOUR_PANEL(gs_capture_page_get_tour_panel(page))) ==
                gs_tour_at(0));
  views_test_wait_for(tour_started, page);
  gtk_window_destroy(GTK_WINDOW(window));
}

int main(int argc, char **argv) {
  app = views_test_application(&argc, &argv);

  g_test_add_func("/tour-panel/start-page", test_start_page);
  for (guint i = 0; i < gs_tour_count(); i++) {
    g_autofree char *path = g_strdup_printf("/tour-panel/%s", gs_tour_at(i)->name);
    g_test_add_data_func(path, gs_tour_at(i), test_tour);
  }
  g_test_add_func("/tour-panel/wrong-log", test_wrong_log);
  g_test_add_func("/tour-panel/play-over-log", test_play_over_log);
  int status = g_test_run();
  g_object_unref(app);
  return status;
}
