/* views-test-util.c: see views-test-util.h. */
#include "views-test-util.h"

#include "gs-alive-item.h"
#include "gs-timeline-view.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <gradscope/gradscope.h>
#include <locale.h>
#include <string.h>

#include "gs-config.h"

char *views_test_record_bytes(views_test_workload body, gsize *n) {
  g_autofree char *dir = g_dir_make_tmp("gradscope-views-XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_autofree char *path = g_build_filename(dir, "run.gstrace", NULL);
  g_assert_cmpint(gs_trace_open(path), ==, 0);
  body();
  gs_trace_close();
  char *bytes = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &bytes, n, &error));
  g_remove(path);
  g_rmdir(dir);
  return bytes;
}

static gboolean timed_out(gpointer data) {
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

static gboolean tick(gpointer data) {
  (void)data;
  return G_SOURCE_CONTINUE;
}

void views_test_wait_for_seconds(gboolean (*done)(gpointer), gpointer data, guint seconds) {
  gboolean expired = FALSE;
  guint timer = g_timeout_add_seconds(seconds, timed_out, &expired);
  guint ticker = g_timeout_add(10, tick, NULL);
  while (!done(data) && !expired)
    g_main_context_iteration(NULL, TRUE);
  g_assert_false(expired);
  g_source_remove(ticker);
  g_source_remove(timer);
}

void views_test_wait_for(gboolean (*done)(gpointer), gpointer data) {
  views_test_wait_for_seconds(done, data, 60);
}

void views_test_store_u64(GtkWidget *view, guint64 value, gpointer data) {
  (void)view;
  *(guint64 *)data = value;
}

void views_test_close(GtkWindow *window, gs_trace_model *model) {
  gtk_window_destroy(window);
  gs_trace_model_free(model);
}

gs_trace_model *views_test_record(views_test_workload body) {
  gsize n = 0;
  g_autofree char *bytes = views_test_record_bytes(body, &n);
  gs_trace_model *m = gs_trace_model_new();
  g_assert_cmpuint(gs_trace_model_feed(m, bytes, n), >, 0);
  gs_trace_model_finish(m);
  g_assert_null(gs_trace_model_problem(m));
  return m;
}

GsApplication *views_test_application(int *argc, char ***argv) {
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  gs_config_init_settings();
  g_setenv("GSETTINGS_BACKEND", "memory", TRUE);
  views_test_init(argc, argv);
  GsApplication *app = gs_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
  gs_application_set_output_echo(app, -1, -1);
  return app;
}

void views_test_init(int *argc, char ***argv) {
  gtk_test_init(argc, argv, NULL);
  adw_init();
  /* Screenshots compare across machines: one theme, no animations. */
  g_object_set(gtk_settings_get_default(), "gtk-enable-animations", FALSE, NULL);
  /* The app's own style tweaks, which AdwApplication loads in the app, when the test has the
   * inspector's resources. */
  if (g_resources_get_info("/io/github/gradscope/Inspector/style.css", 0, NULL, NULL, NULL)) {
    g_autoptr(GtkCssProvider) css = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(css, "/io/github/gradscope/Inspector/style.css");
    gtk_style_context_add_provider_for_display(gdk_display_get_default(),
                                               GTK_STYLE_PROVIDER(css),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  }
}

static gboolean quit_later(gpointer data) {
  *(gboolean *)data = TRUE;
  return G_SOURCE_REMOVE;
}

void views_test_settle(GtkWidget *widget) {
  /* A few frames: lists create their rows in size-allocate, then draw them. */
  GdkFrameClock *clock = gtk_widget_get_frame_clock(widget);
  for (int frame = 0; frame < 6; frame++) {
    gboolean done = FALSE;
    g_timeout_add(30, quit_later, &done);
    if (clock)
      gdk_frame_clock_request_phase(clock, GDK_FRAME_CLOCK_PHASE_LAYOUT);
    gtk_widget_queue_draw(widget);
    while (!done)
      g_main_context_iteration(NULL, TRUE);
  }
  while (g_main_context_pending(NULL))
    g_main_context_iteration(NULL, FALSE);
}

GtkWindow *views_test_show(GtkWidget *child, int width, int height) {
  GtkWindow *window = GTK_WINDOW(gtk_window_new());
  gtk_window_set_default_size(window, width, height);
  gtk_window_set_child(window, child);
  gtk_window_present(window);
  views_test_settle(GTK_WIDGET(window));
  return window;
}

GtkWidget *views_test_find_where(GtkWidget *root, views_test_match match, gconstpointer data) {
  if (match(root, data))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c)) {
    GtkWidget *found = views_test_find_where(c, match, data);
    if (found)
      return found;
  }
  return NULL;
}

static gboolean is_of_type(GtkWidget *w, gconstpointer type) {
  return G_TYPE_CHECK_INSTANCE_TYPE(w, (GType)GPOINTER_TO_SIZE(type));
}

GtkWidget *views_test_find(GtkWidget *root, GType type) {
  return views_test_find_where(root, is_of_type, GSIZE_TO_POINTER(type));
}

static gboolean is_label_saying(GtkWidget *w, gconstpointer text) {
  return GTK_IS_LABEL(w) && g_strcmp0(gtk_label_get_text(GTK_LABEL(w)), text) == 0;
}

GtkWidget *views_test_find_label(GtkWidget *root, const char *text) {
  return views_test_find_where(root, is_label_saying, text);
}

static gboolean is_label_containing(GtkWidget *w, gconstpointer part) {
  return GTK_IS_LABEL(w) && strstr(gtk_label_get_text(GTK_LABEL(w)), part);
}

GtkWidget *views_test_find_label_containing(GtkWidget *root, const char *part) {
  return views_test_find_where(root, is_label_containing, part);
}

static void collect_labels(GtkWidget *w, GPtrArray *out) {
  if (!gtk_widget_get_mapped(w)) /* hidden, or a stack's page not shown */
    return;
  if (GTK_IS_LABEL(w))
    g_ptr_array_add(out, w);
  for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c))
    collect_labels(c, out);
}

GPtrArray *views_test_labels(GtkWidget *root) {
  GPtrArray *out = g_ptr_array_new();
  collect_labels(root, out);
  return out;
}

const char *views_test_label_after(GtkWidget *root, const char *key) {
  g_autoptr(GPtrArray) labels = views_test_labels(root);
  for (guint i = 0; i + 1 < labels->len; i++)
    if (g_strcmp0(gtk_label_get_text(labels->pdata[i]), key) == 0)
      return gtk_label_get_text(labels->pdata[i + 1]);
  return NULL;
}

gboolean views_test_press_key(GtkWidget *widget, guint key, GdkModifierType mods) {
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(widget);
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (!GTK_IS_SHORTCUT_CONTROLLER(c) ||
        gtk_event_controller_get_propagation_phase(GTK_EVENT_CONTROLLER(c)) != GTK_PHASE_CAPTURE)
      continue;
    for (guint j = 0; j < g_list_model_get_n_items(G_LIST_MODEL(c)); j++) {
      g_autoptr(GtkShortcut) s = g_list_model_get_item(G_LIST_MODEL(c), j);
      GtkShortcutTrigger *t = gtk_shortcut_get_trigger(s);
      if (GTK_IS_KEYVAL_TRIGGER(t) && gtk_keyval_trigger_get_keyval(GTK_KEYVAL_TRIGGER(t)) == key &&
          gtk_keyval_trigger_get_modifiers(GTK_KEYVAL_TRIGGER(t)) == mods)
        return gtk_shortcut_action_activate(gtk_shortcut_get_action(s), 0, widget,
                                            gtk_shortcut_get_arguments(s));
    }
  }
  g_assert_not_reached();
}

GdkTexture *views_test_render(GtkWidget *widget) {
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  g_assert_cmpint(width, >, 0);
  g_assert_cmpint(height, >, 0);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, width, height);
  g_autoptr(GskRenderNode) node = gtk_snapshot_free_to_node(g_steal_pointer(&snapshot));
  g_assert_nonnull(node);
  GskRenderer *renderer = gtk_native_get_renderer(gtk_widget_get_native(widget));
  return gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, width, height));
}

void views_test_screenshot(GtkWidget *widget, const char *name) {
  views_test_settle(widget);
  const char *dir = g_getenv("GS_SCREENSHOT_DIR");
  if (dir)
    g_mkdir_with_parents(dir, 0755);
  g_autofree char *path = g_build_filename(dir ? dir : ".", name, NULL);
  g_autoptr(GdkTexture) texture = views_test_render(widget);
  g_assert_true(gdk_texture_save_to_png(texture, path));
  g_test_message("screenshot: %s", path);
}

guint64 views_test_find_kind(gs_trace_model *m, gs_trace_kind kind, guint64 from) {
  guint64 n = gs_trace_model_n_events(m);
  for (guint64 i = from; i < n; i++)
    if (gs_trace_model_kind_at(m, i) == kind)
      return i;
  return G_MAXUINT64;
}

static gboolean lists(GListModel *members, guint64 id) {
  for (guint i = 0; i < g_list_model_get_n_items(members); i++) {
    g_autoptr(GsAliveItem) item = g_list_model_get_item(members, i);
    if (gs_alive_item_get_id(item) == id)
      return TRUE;
  }
  return FALSE;
}

guint views_test_alive_row(GtkWidget *timeline, guint64 id) {
  GListModel *rows = gs_timeline_view_get_alive_rows(GS_TIMELINE_VIEW(timeline));
  GtkWidget *columns = views_test_find(timeline, GTK_TYPE_COLUMN_VIEW);
  for (guint i = 0; i < g_list_model_get_n_items(rows); i++) {
    g_autoptr(GtkTreeListRow) row = g_list_model_get_item(rows, i);
    g_autoptr(GsAliveItem) item = gtk_tree_list_row_get_item(row);
    if (gs_alive_item_get_id(item) == id)
      return i;
    GListModel *members = gs_alive_item_get_members(item);
    if (members && !gtk_tree_list_row_get_expanded(row) && lists(members, id)) {
      g_signal_emit_by_name(columns, "activate", i); /* opens the group below this row */
      g_assert_true(gtk_tree_list_row_get_expanded(row));
    }
  }
  return G_MAXUINT;
}
