/* gs-window.c: the main window (see the header). Opening goes through one place per kind of
 * source; every failure becomes a toast, never a dialog that blocks the run being watched. */
#include "gs-window.h"

#include <glib/gi18n.h>

#include "gs-capture-page.h"
#include "gs-compare-page.h"
#include "gs-recent.h"
#include "gs-run-dialog.h"
#include "tours.h"

struct _GsWindow {
  AdwApplicationWindow parent_instance;

  AdwToastOverlay *toast_overlay;
  AdwWindowTitle *window_title;
  GtkStack *stack;
  AdwTabView *tab_view;
  GMenu *recent_submenu;
  GtkListBox *tour_list;

  GSettings *settings;
  GMenu *recent_section;
};

G_DEFINE_FINAL_TYPE(GsWindow, gs_window, ADW_TYPE_APPLICATION_WINDOW)

static void setup_settings(GsWindow *self, GsApplication *app);

GsWindow *gs_window_new(GsApplication *app) {
  g_return_val_if_fail(GS_IS_APPLICATION(app), NULL);
  GsWindow *self = g_object_new(GS_TYPE_WINDOW, "application", app, NULL);
  setup_settings(self, app);
  return self;
}

AdwTabView *gs_window_get_tab_view(GsWindow *self) {
  g_return_val_if_fail(GS_IS_WINDOW(self), NULL);
  return self->tab_view;
}

GsCapturePage *gs_window_get_current_page(GsWindow *self) {
  g_return_val_if_fail(GS_IS_WINDOW(self), NULL);
  AdwTabPage *page = adw_tab_view_get_selected_page(self->tab_view);
  GtkWidget *child = page ? adw_tab_page_get_child(page) : NULL;
  return GS_IS_CAPTURE_PAGE(child) ? GS_CAPTURE_PAGE(child) : NULL;
}

void gs_window_show_toast(GsWindow *self, const char *message) {
  g_return_if_fail(GS_IS_WINDOW(self));
  /* A toast's title is markup (libadwaita 1.2): a message quoting "a&b" is text. */
  g_autofree char *escaped = g_markup_escape_text(message, -1);
  AdwToast *toast = adw_toast_new(escaped);
  adw_toast_set_timeout(toast, 8);
  adw_toast_overlay_add_toast(self->toast_overlay, toast);
}

static void on_page_toast(GtkWidget *page, const char *message, GsWindow *self) {
  (void)page;
  gs_window_show_toast(self, message);
}

/* A tab's tooltip is markup: the page's subtitle (a command line with "2>&1") is text. */
static gboolean escape_markup(GBinding *binding, const GValue *from, GValue *to, gpointer data) {
  (void)binding, (void)data;
  const char *text = g_value_get_string(from);
  g_value_take_string(to, text ? g_markup_escape_text(text, -1) : NULL);
  return TRUE;
}

/* A capture page or a Compare page: both have a title, a subtitle, busy and toasts. */
static void add_page(GsWindow *self, gpointer page) {
  AdwTabPage *tab = adw_tab_view_append(self->tab_view, GTK_WIDGET(page));
  g_object_bind_property(page, "title", tab, "title", G_BINDING_SYNC_CREATE);
  g_object_bind_property_full(page, "subtitle", tab, "tooltip", G_BINDING_SYNC_CREATE,
                              escape_markup, NULL, NULL, NULL);
  g_object_bind_property(page, "busy", tab, "loading", G_BINDING_SYNC_CREATE);
  g_signal_connect_object(page, "toast", G_CALLBACK(on_page_toast), self, 0);
  adw_tab_view_set_selected_page(self->tab_view, tab);
}

void gs_window_open_file(GsWindow *self, GFile *file, gboolean follow) {
  g_return_if_fail(GS_IS_WINDOW(self));
  g_autofree char *path = g_file_get_path(file);
  if (!path) {
    g_autofree char *uri = g_file_get_uri(file);
    g_autofree char *message =
        g_strdup_printf(_("Cannot open %s: expected a local file, got a remote location."), uri);
    gs_window_show_toast(self, message);
    return;
  }
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_autofree char *message = g_strdup_printf(
        _("Cannot open “%s”: expected an event log file, but it does not exist or is not a "
          "regular file."),
        path);
    gs_window_show_toast(self, message);
    gs_recent_remove(self->settings, path);
    return;
  }
  add_page(self, gs_capture_page_new_for_file(path, follow));
  gs_recent_add(self->settings, path);
}

/* Several files: the ranks of one distributed run open as one page; files of which none is a
 * rank's log open as before, one page each. */
gboolean gs_window_open_files(GsWindow *self, GFile **files, guint n, gboolean follow,
                              GError **error) {
  g_return_val_if_fail(GS_IS_WINDOW(self), FALSE);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) logs = g_array_new(FALSE, TRUE, sizeof(gs_rank_log));
  for (guint i = 0; i < n && n > 1; i++) {
    char *path = g_file_get_path(files[i]);
    gs_rank_log log;
    if (!path)
      break;
    g_ptr_array_add(paths, path);
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR) || !gs_rank_log_read(path, &log, NULL))
      break;
    g_array_append_val(logs, log);
  }
  if (logs->len < 2 || logs->len < n || !gs_rank_logs_any_run(logs)) {
    for (guint i = 0; i < n; i++)
      gs_window_open_file(self, files[i], follow);
    return TRUE;
  }
  g_autoptr(GError) refusal = NULL;
  if (!gs_rank_logs_one_run(logs, &refusal)) {
    g_autofree char *message =
        g_strdup_printf(_("Cannot open these logs as one run: %s"), refusal->message);
    gs_window_show_toast(self, message);
    g_set_error_literal(error, refusal->domain, refusal->code, message);
    return FALSE;
  }
  add_page(self, gs_capture_page_new_for_run((const gs_rank_log *)logs->data, logs->len));
  for (guint i = 0; i < logs->len; i++)
    gs_recent_add(self->settings, g_array_index(logs, gs_rank_log, i).path);
  return TRUE;
}

void gs_window_compare(GsWindow *self, GFile *a, GFile *b) {
  g_return_if_fail(GS_IS_WINDOW(self));
  GFile *files[2] = {a, b};
  /* Two variables, not an array: g_autofree frees one pointer. */
  g_autofree char *path_a = g_file_get_path(a), *path_b = g_file_get_path(b);
  const char *paths[2] = {path_a, path_b};
  for (guint i = 0; i < 2; i++) {
    if (!paths[i] || !g_file_test(paths[i], G_FILE_TEST_IS_REGULAR)) {
      g_autofree char *name = g_file_get_parse_name(files[i]);
      g_autofree char *message = g_strdup_printf(
          _("Cannot compare “%s”: expected an event log file, but it does not exist or is not "
            "a regular file."),
          name);
      gs_window_show_toast(self, message);
      return;
    }
  }
  add_page(self, gs_compare_page_new(paths[0], paths[1]));
}

void gs_window_spawn(GsWindow *self, const char *const *argv, const char *cwd) {
  g_return_if_fail(GS_IS_WINDOW(self));
  g_autoptr(GError) error = NULL;
  int echo_stdout = -1, echo_stderr = -1;
  gs_application_get_output_echo(GS_APPLICATION(gtk_window_get_application(GTK_WINDOW(self))),
                                 &echo_stdout, &echo_stderr);
  GsCapturePage *page =
      gs_capture_page_new_for_program(argv, cwd, echo_stdout, echo_stderr, &error);
  if (!page) {
    g_autofree char *message = g_strdup_printf(_("Cannot run %s: %s"), argv[0], error->message);
    gs_window_show_toast(self, message);
    return;
  }
  add_page(self, page);
}

void gs_window_start_tour(GsWindow *self, const char *name) {
  g_return_if_fail(GS_IS_WINDOW(self));
  const gs_tour *tour = gs_tour_find(name);
  if (!tour) {
    g_autofree char *message = g_strdup_printf(_("There is no tour called “%s”"), name);
    gs_window_show_toast(self, message);
    return;
  }
  g_autoptr(GError) error = NULL;
  int echo_stdout = -1, echo_stderr = -1;
  gs_application_get_output_echo(GS_APPLICATION(gtk_window_get_application(GTK_WINDOW(self))),
                                 &echo_stdout, &echo_stderr);
  GsCapturePage *page = gs_capture_page_new_for_tour(tour, echo_stdout, echo_stderr, &error);
  if (!page) {
    g_autofree char *message =
        g_strdup_printf(_("Cannot start the tour “%s”: %s"), _(tour->title), error->message);
    gs_window_show_toast(self, message);
    return;
  }
  add_page(self, page);
}

void gs_window_play_tour(GsWindow *self, const char *name) {
  g_return_if_fail(GS_IS_WINDOW(self));
  const gs_tour *tour = gs_tour_find(name);
  GsCapturePage *page = gs_window_get_current_page(self);
  if (!tour || !page) {
    g_autofree char *message = tour ? g_strdup(_("There is no capture to play the tour over"))
                                    : g_strdup_printf(_("There is no tour called “%s”"), name);
    gs_window_show_toast(self, message);
    return;
  }
  gs_capture_page_set_tour(page, tour);
}

void gs_window_listen(GsWindow *self) {
  g_return_if_fail(GS_IS_WINDOW(self));
  g_autoptr(GError) error = NULL;
  GsCapturePage *page = gs_capture_page_new_listening(&error);
  if (!page) {
    g_autofree char *message = g_strdup_printf(_("Cannot listen for programs: %s"),
                                               error->message);
    gs_window_show_toast(self, message);
    return;
  }
  add_page(self, page);
}

/* ---- actions -------------------------------------------------------------------------- */

static void on_open_response(GtkNativeDialog *dialog, int response, gpointer user_data) {
  GsWindow *self = GS_WINDOW(user_data);
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GListModel) files = gtk_file_chooser_get_files(GTK_FILE_CHOOSER(dialog));
    gboolean follow = g_settings_get_boolean(self->settings, "follow-files");
    g_autoptr(GPtrArray) chosen = g_ptr_array_new_with_free_func(g_object_unref);
    for (guint i = 0; i < g_list_model_get_n_items(files); i++)
      g_ptr_array_add(chosen, g_list_model_get_item(files, i));
    gs_window_open_files(self, (GFile **)chosen->pdata, chosen->len, follow, NULL);
  }
  g_object_unref(dialog);
}

/* A chooser of several captures, event logs first, any file second. */
static GtkFileChooserNative *new_capture_chooser(GsWindow *self, const char *title,
                                                 const char *accept) {
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
      title, GTK_WINDOW(self), GTK_FILE_CHOOSER_ACTION_OPEN, accept, _("_Cancel"));
  gtk_file_chooser_set_select_multiple(GTK_FILE_CHOOSER(chooser), TRUE);
  GtkFileFilter *logs = gtk_file_filter_new();
  gtk_file_filter_set_name(logs, _("Gradscope event logs"));
  gtk_file_filter_add_pattern(logs, "*.gstrace");
  gtk_file_filter_add_mime_type(logs, "application/x-gradscope-trace");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), logs);
  GtkFileFilter *all = gtk_file_filter_new();
  gtk_file_filter_set_name(all, _("All files"));
  gtk_file_filter_add_pattern(all, "*");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), all);
  g_object_unref(logs);
  g_object_unref(all);
  return chooser;
}

static void action_open(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  GsWindow *self = GS_WINDOW(widget);
  GtkFileChooserNative *chooser = new_capture_chooser(self, _("Open Capture"), _("_Open"));
  g_signal_connect(chooser, "response", G_CALLBACK(on_open_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void on_compare_response(GtkNativeDialog *dialog, int response, gpointer user_data) {
  GsWindow *self = GS_WINDOW(user_data);
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GListModel) files = gtk_file_chooser_get_files(GTK_FILE_CHOOSER(dialog));
    if (g_list_model_get_n_items(files) == 2) {
      g_autoptr(GFile) a = g_list_model_get_item(files, 0);
      g_autoptr(GFile) b = g_list_model_get_item(files, 1);
      gs_window_compare(self, a, b);
    } else {
      gs_window_show_toast(self, _("Choose two captures to compare: the one before a change, "
                                   "then the one after it."));
    }
  }
  g_object_unref(dialog);
}

/* Two captures as a pair, A and B in the order the chooser gives them. */
static void action_compare(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  GsWindow *self = GS_WINDOW(widget);
  GtkFileChooserNative *chooser =
      new_capture_chooser(self, _("Compare Two Captures"), _("_Compare"));
  g_signal_connect(chooser, "response", G_CALLBACK(on_compare_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void action_open_recent(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name;
  GsWindow *self = GS_WINDOW(widget);
  g_autoptr(GFile) file = g_file_new_for_path(g_variant_get_string(param, NULL));
  gs_window_open_file(self, file, g_settings_get_boolean(self->settings, "follow-files"));
}

static void action_clear_recent(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  g_settings_set_strv(GS_WINDOW(widget)->settings, "recent-files", NULL);
}

static void on_run_program(GsRunDialog *dialog, GStrv argv, GsWindow *self) {
  (void)dialog;
  gs_window_spawn(self, (const char *const *)argv, NULL);
}

static void action_run_program(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  GsWindow *self = GS_WINDOW(widget);
  GsRunDialog *dialog = gs_run_dialog_new(GTK_WINDOW(self), self->settings);
  g_signal_connect_object(dialog, "run", G_CALLBACK(on_run_program), self, 0);
  gtk_window_present(GTK_WINDOW(dialog));
}

static void action_start_tour(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name;
  gs_window_start_tour(GS_WINDOW(widget), g_variant_get_string(param, NULL));
}

static void action_listen(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  gs_window_listen(GS_WINDOW(widget));
}

static void action_close_tab(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  GsWindow *self = GS_WINDOW(widget);
  AdwTabPage *page = adw_tab_view_get_selected_page(self->tab_view);
  if (page)
    adw_tab_view_close_page(self->tab_view, page);
  else
    gtk_window_close(GTK_WINDOW(self));
}

static void action_find(GtkWidget *widget, const char *name, GVariant *param) {
  (void)name, (void)param;
  GsCapturePage *page = gs_window_get_current_page(GS_WINDOW(widget));
  if (page)
    gs_capture_page_focus_search(page);
}

/* ---- recent captures, drag and drop, tabs --------------------------------------------- */

static void rebuild_recent_menu(GsWindow *self) {
  g_menu_remove_all(self->recent_section);
  g_auto(GStrv) paths = g_settings_get_strv(self->settings, "recent-files");
  for (guint i = 0; paths[i]; i++) {
    g_autofree char *base = g_path_get_basename(paths[i]);
    g_autoptr(GMenuItem) item = g_menu_item_new(base, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-recent",
                                            g_variant_new_string(paths[i]));
    g_menu_append_item(self->recent_section, item);
  }
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.clear-recent", paths[0] != NULL);
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y,
                        gpointer user_data) {
  (void)target, (void)x, (void)y;
  GsWindow *self = GS_WINDOW(user_data);
  if (!G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST))
    return FALSE;
  gboolean follow = g_settings_get_boolean(self->settings, "follow-files");
  g_autoptr(GPtrArray) dropped = g_ptr_array_new();
  for (GSList *l = g_value_get_boxed(value); l; l = l->next)
    g_ptr_array_add(dropped, l->data);
  gs_window_open_files(self, (GFile **)dropped->pdata, dropped->len, follow, NULL);
  return TRUE;
}

static void update_title(GsWindow *self) {
  AdwTabPage *tab = adw_tab_view_get_selected_page(self->tab_view);
  if (tab) {
    /* A capture or a Compare page: both have these properties. */
    g_autofree char *title = NULL, *subtitle = NULL;
    g_object_get(adw_tab_page_get_child(tab), "title", &title, "subtitle", &subtitle, NULL);
    adw_window_title_set_title(self->window_title, title);
    adw_window_title_set_subtitle(self->window_title, subtitle);
  } else {
    adw_window_title_set_title(self->window_title, _("Gradscope Inspector"));
    adw_window_title_set_subtitle(self->window_title, NULL);
  }
}

static void on_pages_changed(GsWindow *self) {
  gboolean any = adw_tab_view_get_n_pages(self->tab_view) > 0;
  gtk_stack_set_visible_child_name(self->stack, any ? "tabs" : "empty");
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.find", any);
  update_title(self);
}

static void on_selected_page(GsWindow *self) {
  GsCapturePage *page = gs_window_get_current_page(self);
  update_title(self);
  if (page) {
    /* The title follows the page while it is selected (a program's name, then its status). */
    g_signal_handlers_disconnect_by_func(page, update_title, self);
    g_signal_connect_object(page, "notify::subtitle", G_CALLBACK(update_title), self,
                            G_CONNECT_SWAPPED);
  }
}

static gboolean on_close_request(GtkWindow *window) {
  GsWindow *self = GS_WINDOW(window);
  if (!gtk_window_is_maximized(window)) {
    int width, height;
    gtk_window_get_default_size(window, &width, &height);
    g_settings_set_int(self->settings, "window-width", width);
    g_settings_set_int(self->settings, "window-height", height);
  }
  return GTK_WINDOW_CLASS(gs_window_parent_class)->close_request(window);
}

/* The application's settings: window size, follow option, recent captures. ("application"
 * is not a construct property, so this runs after g_object_new.) */
static void setup_settings(GsWindow *self, GsApplication *app) {
  self->settings = g_object_ref(gs_application_get_settings(app));
  gtk_window_set_default_size(GTK_WINDOW(self), g_settings_get_int(self->settings, "window-width"),
                              g_settings_get_int(self->settings, "window-height"));

  g_autoptr(GAction) follow = g_settings_create_action(self->settings, "follow-files");
  g_action_map_add_action(G_ACTION_MAP(self), follow);

  g_signal_connect_object(self->settings, "changed::recent-files",
                          G_CALLBACK(rebuild_recent_menu), self, G_CONNECT_SWAPPED);
  rebuild_recent_menu(self);
}

static void gs_window_dispose(GObject *object) {
  GsWindow *self = GS_WINDOW(object);
  gtk_widget_dispose_template(GTK_WIDGET(self), GS_TYPE_WINDOW);
  g_clear_object(&self->recent_section);
  g_clear_object(&self->settings);
  G_OBJECT_CLASS(gs_window_parent_class)->dispose(object);
}

static void gs_window_class_init(GsWindowClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = gs_window_dispose;
  GTK_WINDOW_CLASS(klass)->close_request = on_close_request;

  g_type_ensure(GS_TYPE_CAPTURE_PAGE);
  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/gradscope/Inspector/gs-window.ui");
  gtk_widget_class_bind_template_child(widget_class, GsWindow, toast_overlay);
  gtk_widget_class_bind_template_child(widget_class, GsWindow, window_title);
  gtk_widget_class_bind_template_child(widget_class, GsWindow, stack);
  gtk_widget_class_bind_template_child(widget_class, GsWindow, tab_view);
  gtk_widget_class_bind_template_child(widget_class, GsWindow, recent_submenu);
  gtk_widget_class_bind_template_child(widget_class, GsWindow, tour_list);

  gtk_widget_class_install_action(widget_class, "win.open", NULL, action_open);
  gtk_widget_class_install_action(widget_class, "win.compare", NULL, action_compare);
  gtk_widget_class_install_action(widget_class, "win.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action(widget_class, "win.clear-recent", NULL, action_clear_recent);
  gtk_widget_class_install_action(widget_class, "win.run-program", NULL, action_run_program);
  gtk_widget_class_install_action(widget_class, "win.listen", NULL, action_listen);
  gtk_widget_class_install_action(widget_class, "win.start-tour", "s", action_start_tour);
  gtk_widget_class_install_action(widget_class, "win.close-tab", NULL, action_close_tab);
  gtk_widget_class_install_action(widget_class, "win.find", NULL, action_find);
}

static void gs_window_init(GsWindow *self) {
  gtk_widget_init_template(GTK_WIDGET(self));

  /* The recent captures, then a way to forget them. */
  self->recent_section = g_menu_new();
  g_menu_append_section(self->recent_submenu, NULL, G_MENU_MODEL(self->recent_section));
  g_autoptr(GMenu) clear = g_menu_new();
  g_menu_append(clear, _("_Clear Recent Captures"), "win.clear-recent");
  g_menu_append_section(self->recent_submenu, NULL, G_MENU_MODEL(clear));

  /* The start page lists the guided tours: one click runs the program and plays the tour. */
  for (guint i = 0; i < gs_tour_count(); i++) {
    const gs_tour *tour = gs_tour_at(i);
    GtkWidget *row = adw_action_row_new();
    adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), _(tour->title));
    g_autofree char *subtitle = g_strdup_printf("%u · %s", i + 1, tour->name);
    adw_action_row_set_subtitle(ADW_ACTION_ROW(row), subtitle);
    adw_action_row_add_suffix(ADW_ACTION_ROW(row), gtk_image_new_from_icon_name("go-next-symbolic"));
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
    gtk_actionable_set_action_name(GTK_ACTIONABLE(row), "win.start-tour");
    gtk_actionable_set_action_target_value(GTK_ACTIONABLE(row), g_variant_new_string(tour->name));
    gtk_list_box_append(self->tour_list, row);
  }

  GtkDropTarget *drop = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect(drop, "drop", G_CALLBACK(on_drop), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drop));

  g_signal_connect_swapped(self->tab_view, "notify::n-pages", G_CALLBACK(on_pages_changed),
                           self);
  g_signal_connect_swapped(self->tab_view, "notify::selected-page",
                           G_CALLBACK(on_selected_page), self);
  on_pages_changed(self);
}
