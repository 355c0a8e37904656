/* gs-run-dialog.c: the Run Program dialog (see the header). The command line is split like a
 * shell would (quotes, escapes) but not run through one; argv[0] is looked up in PATH. */
#include "gs-run-dialog.h"

#include <glib/gi18n.h>

struct _GsRunDialog {
  AdwMessageDialog parent_instance;
  GtkWidget *entry;
  GtkWidget *error_label;
  GSettings *settings;
};

G_DEFINE_FINAL_TYPE(GsRunDialog, gs_run_dialog, ADW_TYPE_MESSAGE_DIALOG)

enum { SIGNAL_RUN, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Parses the entry; shows why it cannot run, and enables "run" only when it can. */
static gboolean parse(GsRunDialog *self, GStrv *argv_out) {
  const char *text = gtk_editable_get_text(GTK_EDITABLE(self->entry));
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;
  g_autofree char *problem = NULL;
  g_autofree char *trimmed = g_strstrip(g_strdup(text));
  if (!*trimmed || !g_shell_parse_argv(text, NULL, &argv, &error)) {
    problem = *text ? g_strdup_printf(_("Expected a command line, got “%s”: %s"), text,
                                      error ? error->message : "")
                    : g_strdup(_("Type the program to run and its arguments."));
  } else {
    g_autofree char *found = g_find_program_in_path(argv[0]);
    if (!found)
      problem = g_strdup_printf(_("No program “%s” was found (not a file, and not in PATH)."),
                                argv[0]);
  }
  gtk_label_set_text(GTK_LABEL(self->error_label), problem ? problem : "");
  gtk_widget_set_visible(self->error_label, problem != NULL && *text);
  adw_message_dialog_set_response_enabled(ADW_MESSAGE_DIALOG(self), "run", problem == NULL);
  if (problem) {
    gtk_widget_add_css_class(self->entry, "error");
    return FALSE;
  }
  gtk_widget_remove_css_class(self->entry, "error");
  if (argv_out)
    *argv_out = g_steal_pointer(&argv);
  return TRUE;
}

static void on_changed(GsRunDialog *self) {
  parse(self, NULL);
}

static void on_activate(GsRunDialog *self) {
  if (adw_message_dialog_get_response_enabled(ADW_MESSAGE_DIALOG(self), "run"))
    adw_message_dialog_response(ADW_MESSAGE_DIALOG(self), "run");
}

static void gs_run_dialog_response(AdwMessageDialog *dialog, const char *response) {
  GsRunDialog *self = GS_RUN_DIALOG(dialog);
  g_auto(GStrv) argv = NULL;
  if (g_str_equal(response, "run") && parse(self, &argv)) {
    g_settings_set_string(self->settings, "last-command",
                          gtk_editable_get_text(GTK_EDITABLE(self->entry)));
    g_signal_emit(self, signals[SIGNAL_RUN], 0, argv);
  }
}

static void gs_run_dialog_dispose(GObject *object) {
  g_clear_object(&GS_RUN_DIALOG(object)->settings);
  G_OBJECT_CLASS(gs_run_dialog_parent_class)->dispose(object);
}

static void gs_run_dialog_class_init(GsRunDialogClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = gs_run_dialog_dispose;
  ADW_MESSAGE_DIALOG_CLASS(klass)->response = gs_run_dialog_response;
  signals[SIGNAL_RUN] = g_signal_new("run", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                     NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRV);
}

static void gs_run_dialog_init(GsRunDialog *self) {
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(self);
  adw_message_dialog_set_heading(dialog, _("Run Program"));
  adw_message_dialog_set_body(
      dialog, _("The program runs with tracing pointed at the inspector; its events appear "
                "live in a new tab."));
  adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "run", _("_Run"), NULL);
  adw_message_dialog_set_response_appearance(dialog, "run", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(dialog, "run");
  adw_message_dialog_set_close_response(dialog, "cancel");

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  self->entry = gtk_entry_new();
  gtk_entry_set_placeholder_text(GTK_ENTRY(self->entry), _("program --option argument"));
  gtk_widget_set_size_request(self->entry, 360, -1);
  self->error_label = gtk_label_new(NULL);
  gtk_label_set_wrap(GTK_LABEL(self->error_label), TRUE);
  gtk_label_set_xalign(GTK_LABEL(self->error_label), 0);
  gtk_widget_add_css_class(self->error_label, "error");
  gtk_widget_add_css_class(self->error_label, "caption");
  gtk_box_append(GTK_BOX(box), self->entry);
  gtk_box_append(GTK_BOX(box), self->error_label);
  adw_message_dialog_set_extra_child(dialog, box);
  g_signal_connect_swapped(self->entry, "changed", G_CALLBACK(on_changed), self);
  g_signal_connect_swapped(self->entry, "activate", G_CALLBACK(on_activate), self);
}

GsRunDialog *gs_run_dialog_new(GtkWindow *parent, GSettings *settings) {
  GsRunDialog *self = g_object_new(GS_TYPE_RUN_DIALOG, "transient-for", parent, "modal", TRUE,
                                   NULL);
  self->settings = g_object_ref(settings);
  g_autofree char *last = g_settings_get_string(settings, "last-command");
  gtk_editable_set_text(GTK_EDITABLE(self->entry), last);
  parse(self, NULL);
  return self;
}
