/* gs-application.c: the inspector application. One primary instance: a second
 * `gradscope-inspector run.gstrace` opens a tab in the existing window. The command line is
 * handled in the primary instance so `-- PROGRAM ARGS` reaches it unparsed. */
#include "gs-application.h"

#include <glib/gi18n.h>
#include <unistd.h>

#include "gs-config.h"
#include "gs-window.h"

struct _GsApplication {
  AdwApplication parent_instance;
  GSettings *settings;
  int echo_fd[2]; /* see gs_application_set_output_echo */
};

G_DEFINE_FINAL_TYPE(GsApplication, gs_application, ADW_TYPE_APPLICATION)

static const GOptionEntry option_entries[] = {
  {"follow", 'f', 0, G_OPTION_ARG_NONE, NULL,
   N_("Keep reading the given files as a running program appends to them"), NULL},
  {"listen", 'l', 0, G_OPTION_ARG_NONE, NULL,
   N_("Listen for traced programs on the per-user socket"), NULL},
  {"compare", 'c', 0, G_OPTION_ARG_NONE, NULL,
   N_("Open the two given files as a pair in a Compare tab (A before a change, B after)"),
   NULL},
  {"version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version and exit"), NULL},
  {"tour", 't', 0, G_OPTION_ARG_STRING, NULL,
   N_("Run a guided tour’s program with tracing and play the tour (see gradscope explain "
      "--list-tours); with a FILE, play it over that log"), N_("NAME")},
  /* What followed "--", one argument each (see gs_application_local_command_line). */
  {"program-argument", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING_ARRAY, NULL, NULL, NULL},
  {NULL},
};

GsApplication *gs_application_new(void) {
  return g_object_new(GS_TYPE_APPLICATION,
                      "application-id", GS_APP_ID,
                      "flags", G_APPLICATION_HANDLES_OPEN | G_APPLICATION_HANDLES_COMMAND_LINE,
                      "resource-base-path", "/io/github/gradscope/Inspector",
                      NULL);
}

GSettings *gs_application_get_settings(GsApplication *self) {
  g_return_val_if_fail(GS_IS_APPLICATION(self), NULL);
  return self->settings;
}

void gs_application_set_output_echo(GsApplication *self, int stdout_fd, int stderr_fd) {
  g_return_if_fail(GS_IS_APPLICATION(self));
  self->echo_fd[0] = stdout_fd;
  self->echo_fd[1] = stderr_fd;
}

void gs_application_get_output_echo(GsApplication *self, int *stdout_fd, int *stderr_fd) {
  g_return_if_fail(GS_IS_APPLICATION(self));
  *stdout_fd = self->echo_fd[0];
  *stderr_fd = self->echo_fd[1];
}

/* The window to add tabs to: the active one, or a new one. */
static GsWindow *current_window(GsApplication *self) {
  GtkWindow *window = gtk_application_get_active_window(GTK_APPLICATION(self));
  if (GS_IS_WINDOW(window))
    return GS_WINDOW(window);
  GsWindow *created = gs_window_new(self);
  return created;
}

static void gs_application_activate(GApplication *app) {
  gtk_window_present(GTK_WINDOW(current_window(GS_APPLICATION(app))));
}

static void gs_application_open(GApplication *app, GFile **files, int n_files,
                                const char *hint) {
  GsApplication *self = GS_APPLICATION(app);
  GsWindow *window = current_window(self);
  /* hint "follow" comes from our own command line handler. */
  gboolean follow = g_strcmp0(hint, "follow") == 0;
  gs_window_open_files(window, files, (guint)n_files, follow, NULL);
  gtk_window_present(GTK_WINDOW(window));
}

static int gs_application_handle_local_options(GApplication *app, GVariantDict *options) {
  (void)app;
  if (g_variant_dict_contains(options, "version")) {
    g_print("gradscope-inspector %s\n", GS_VERSION);
    return 0;
  }
  return -1;
}

/* GOption drops "--" and would take PROGRAM for a file to open: before it parses, everything
 * after "--" becomes --program-argument=ARG options, which also travel to a primary instance
 * running elsewhere. */
static gboolean gs_application_local_command_line(GApplication *app, char ***arguments,
                                                  int *exit_status) {
  char **argv = *arguments;
  int dashes = -1;
  for (int i = 1; argv[i]; i++)
    if (g_str_equal(argv[i], "--")) {
      dashes = i;
      break;
    }
  if (dashes >= 0) {
    if (!argv[dashes + 1]) {
      g_printerr(_("Expected a program to run after “--”, got nothing.\n"));
      *exit_status = 1;
      return TRUE;
    }
    g_autoptr(GStrvBuilder) rewritten = g_strv_builder_new();
    for (int i = 0; i < dashes; i++)
      g_strv_builder_add(rewritten, argv[i]);
    for (int i = dashes + 1; argv[i]; i++) {
      g_autofree char *option = g_strconcat("--program-argument=", argv[i], NULL);
      g_strv_builder_add(rewritten, option);
    }
    g_strfreev(*arguments);
    *arguments = g_strv_builder_end(rewritten);
  }
  return G_APPLICATION_CLASS(gs_application_parent_class)
      ->local_command_line(app, arguments, exit_status);
}

/* Files, --follow, --listen, --compare and the program to run, in the primary instance. */
static int gs_application_command_line(GApplication *app, GApplicationCommandLine *cmdline) {
  GsApplication *self = GS_APPLICATION(app);
  GVariantDict *options = g_application_command_line_get_options_dict(cmdline);
  gboolean follow = g_variant_dict_contains(options, "follow");
  gboolean listen = g_variant_dict_contains(options, "listen");
  const char *tour = NULL;
  g_variant_dict_lookup(options, "tour", "&s", &tour);
  g_autofree const char **program = NULL;
  g_variant_dict_lookup(options, "program-argument", "^a&s", &program);

  int argc = 0;
  g_auto(GStrv) argv = g_application_command_line_get_arguments(cmdline, &argc);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_object_unref);
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1] != '\0')
      continue; /* an option, already parsed */
    g_ptr_array_add(files, g_application_command_line_create_file_for_arg(cmdline, argv[i]));
  }

  if (g_variant_dict_contains(options, "compare")) {
    if (files->len != 2) {
      g_application_command_line_printerr(
          cmdline, _("--compare wants two capture files (A before a change, B after), got %u.\n"),
          files->len);
      return 1;
    }
    GsWindow *window = current_window(self);
    gs_window_compare(window, files->pdata[0], files->pdata[1]);
    gtk_window_present(GTK_WINDOW(window));
    return 0;
  }
  GsWindow *window = current_window(self);
  g_autoptr(GError) refused = NULL;
  /* The ranks of one run open as one page; a refusal is said where it was asked for too. */
  if (files->len > 0 &&
      !gs_window_open_files(window, (GFile **)files->pdata, files->len, follow, &refused))
    g_application_command_line_printerr(cmdline, "gradscope-inspector: %s\n", refused->message);
  if (program && program[0])
    gs_window_spawn(window, program, g_application_command_line_get_cwd(cmdline));
  if (listen)
    gs_window_listen(window);
  if (tour && files->len > 0)
    /* A log recorded earlier from the tour's program: play the tour over the last one. */
    gs_window_play_tour(window, tour);
  else if (tour)
    gs_window_start_tour(window, tour);
  gtk_window_present(GTK_WINDOW(window));
  return 0;
}

static void apply_color_scheme(GsApplication *self) {
  static const AdwColorScheme schemes[] = {ADW_COLOR_SCHEME_DEFAULT,
                                           ADW_COLOR_SCHEME_FORCE_LIGHT,
                                           ADW_COLOR_SCHEME_FORCE_DARK};
  int scheme = g_settings_get_enum(self->settings, "color-scheme");
  if (scheme < 0 || scheme > 2)
    scheme = 0;
  adw_style_manager_set_color_scheme(adw_style_manager_get_default(), schemes[scheme]);
}

static void on_color_scheme_changed(GSettings *settings, const char *key, gpointer user_data) {
  (void)settings, (void)key;
  apply_color_scheme(GS_APPLICATION(user_data));
}

static void action_quit(GSimpleAction *action, GVariant *param, gpointer user_data) {
  (void)action, (void)param;
  g_application_quit(G_APPLICATION(user_data));
}

static void action_about(GSimpleAction *action, GVariant *param, gpointer user_data) {
  (void)action, (void)param;
  GtkWindow *parent = gtk_application_get_active_window(GTK_APPLICATION(user_data));
  static const char *developers[] = {"The Gradscope developers", NULL};
  AdwAboutWindow *about = ADW_ABOUT_WINDOW(adw_about_window_new());
  g_object_set(about,
               "transient-for", parent,
               "application-name", _("Gradscope Inspector"),
               "application-icon", GS_APP_ID,
               "developer-name", _("The Gradscope developers"),
               "developers", developers,
               "version", GS_VERSION,
               "comments", _("See inside an autograd engine while it trains: tensors, "
                             "storages, dispose scopes and graph nodes, event by event."),
               "license-type", GTK_LICENSE_MIT_X11,
               /* Translators: put your names here, one per line. */
               "translator-credits", _("translator-credits"),
               NULL);
  gtk_window_present(GTK_WINDOW(about));
}

static void gs_application_startup(GApplication *app) {
  GsApplication *self = GS_APPLICATION(app);
  G_APPLICATION_CLASS(gs_application_parent_class)->startup(app);

  self->settings = g_settings_new(GS_APP_ID);
  g_signal_connect_object(self->settings, "changed::color-scheme",
                          G_CALLBACK(on_color_scheme_changed), self, 0);
  apply_color_scheme(self);

  static const GActionEntry entries[] = {
      {"quit", action_quit, NULL, NULL, NULL, {0}},
      {"about", action_about, NULL, NULL, NULL, {0}},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(app), entries, G_N_ELEMENTS(entries), app);
  /* The menu's radio items: the setting itself is the state. */
  g_autoptr(GAction) scheme = g_settings_create_action(self->settings, "color-scheme");
  g_action_map_add_action(G_ACTION_MAP(app), scheme);

  static const struct {
    const char *action;
    const char *accels[3];
  } accels[] = {
      {"app.quit", {"<Control>q", NULL}},
      {"win.open", {"<Control>o", NULL}},
      {"win.run-program", {"<Control>r", NULL}},
      {"win.listen", {"<Control>l", NULL}},
      {"win.close-tab", {"<Control>w", NULL}},
      {"win.show-help-overlay", {"<Control>question", "<Control>F1", NULL}},
      {"win.find", {"<Control>f", NULL}},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(accels); i++)
    gtk_application_set_accels_for_action(GTK_APPLICATION(app), accels[i].action,
                                          accels[i].accels);
}

static void gs_application_shutdown(GApplication *app) {
  GsApplication *self = GS_APPLICATION(app);
  G_APPLICATION_CLASS(gs_application_parent_class)->shutdown(app);
  g_clear_object(&self->settings);
}

static void gs_application_class_init(GsApplicationClass *klass) {
  GApplicationClass *app_class = G_APPLICATION_CLASS(klass);
  app_class->activate = gs_application_activate;
  app_class->open = gs_application_open;
  app_class->startup = gs_application_startup;
  app_class->shutdown = gs_application_shutdown;
  app_class->command_line = gs_application_command_line;
  app_class->local_command_line = gs_application_local_command_line;
  app_class->handle_local_options = gs_application_handle_local_options;
}

static void gs_application_init(GsApplication *self) {
  self->echo_fd[0] = STDOUT_FILENO;
  self->echo_fd[1] = STDERR_FILENO;
  g_application_add_main_option_entries(G_APPLICATION(self), option_entries);
  g_application_set_option_context_parameter_string(
      G_APPLICATION(self), _("[FILE…] [-- PROGRAM [ARGUMENT…]]"));
  g_application_set_option_context_summary(
      G_APPLICATION(self),
      _("Open Gradscope event logs, or run PROGRAM with tracing pointed at the inspector."));
}
