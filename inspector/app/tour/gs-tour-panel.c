/* gs-tour-panel.c: the Tour panel (see the header). Built in code: a heading ("Tour: title ·
 * step 2 of 5"), the step's paragraph, and Previous/Next. It only says where to go; the
 * capture page moves the scrubber and the views, so a tour step and a click end up the same
 * way. */
#include "gs-tour-panel.h"

#include <adwaita.h>
#include <glib/gi18n.h>

struct _GsTourPanel {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkWidget *heading;
  GtkWidget *paragraph;
  GtkWidget *previous_button, *next_button;

  const gs_tour *tour;
  gs_tour_stop *stops; /* tour->n_steps, once started */
  guint step;
};

G_DEFINE_FINAL_TYPE(GsTourPanel, gs_tour_panel, GTK_TYPE_WIDGET)

enum { SIGNAL_SHOW_STEP, N_SIGNALS };
static guint signals[N_SIGNALS];

GtkWidget *gs_tour_panel_new(void) { return g_object_new(GS_TYPE_TOUR_PANEL, NULL); }

const char *gs_tour_panel_view_name(gs_tour_page page) {
  switch (page) {
  case GS_TOUR_PAGE_GRAPH: return "graph";
  case GS_TOUR_PAGE_MEMORY: return "timeline";
  case GS_TOUR_PAGE_EVENTS:
  case GS_TOUR_PAGE_SCOPES:
  default: return "events";
  }
}

static void show_step(GsTourPanel *self) {
  const gs_tour *tour = self->tour;
  /* Translators: the Tour panel's heading: the tour's title, then "step 2 of 5". */
  g_autofree char *heading = g_strdup_printf(_("Tour: %s · step %u of %u"), _(tour->title),
                                             self->step + 1, tour->n_steps);
  gtk_label_set_text(GTK_LABEL(self->heading), heading);
  gtk_label_set_text(GTK_LABEL(self->paragraph), _(tour->steps[self->step].paragraph));
  gtk_widget_set_sensitive(self->previous_button, self->step > 0);
  gtk_widget_set_sensitive(self->next_button, self->step + 1 < tour->n_steps);
  const gs_tour_stop *stop = &self->stops[self->step];
  g_signal_emit(self, signals[SIGNAL_SHOW_STEP], 0, stop->index, stop->tensor,
                gs_tour_panel_view_name(tour->steps[self->step].page));
}

void gs_tour_panel_set_tour(GsTourPanel *self, const gs_tour *tour) {
  g_return_if_fail(GS_IS_TOUR_PANEL(self));
  self->tour = tour;
  g_clear_pointer(&self->stops, g_free);
  self->step = 0;
  gtk_widget_set_visible(GTK_WIDGET(self), tour != NULL);
  if (!tour)
    return;
  g_autofree char *heading = g_strdup_printf(_("Tour: %s"), _(tour->title));
  gtk_label_set_text(GTK_LABEL(self->heading), heading);
  gtk_label_set_text(GTK_LABEL(self->paragraph),
                     _("The tour starts when its program has finished."));
  gtk_widget_set_sensitive(self->previous_button, FALSE);
  gtk_widget_set_sensitive(self->next_button, FALSE);
}

const gs_tour *gs_tour_panel_get_tour(GsTourPanel *self) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), NULL);
  return self->tour;
}

gboolean gs_tour_panel_start(GsTourPanel *self, gs_trace_model *model) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self) && self->tour && model, FALSE);
  g_autofree gs_tour_stop *stops = g_new0(gs_tour_stop, self->tour->n_steps);
  g_autofree char *missing = NULL;
  if (!gs_tour_resolve(model, self->tour, stops, &missing)) {
    gtk_label_set_text(GTK_LABEL(self->paragraph), missing);
    return FALSE;
  }
  g_free(self->stops);
  self->stops = g_steal_pointer(&stops);
  self->step = 0;
  show_step(self);
  return TRUE;
}

gboolean gs_tour_panel_get_started(GsTourPanel *self) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), FALSE);
  return self->stops != NULL;
}

guint gs_tour_panel_get_step(GsTourPanel *self) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), 0);
  return self->step;
}

gboolean gs_tour_panel_go_to(GsTourPanel *self, guint step) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), FALSE);
  if (!self->stops || step >= self->tour->n_steps || step == self->step)
    return FALSE;
  self->step = step;
  show_step(self);
  return TRUE;
}

gboolean gs_tour_panel_next(GsTourPanel *self) {
  return gs_tour_panel_go_to(self, gs_tour_panel_get_step(self) + 1);
}

gboolean gs_tour_panel_previous(GsTourPanel *self) {
  guint step = gs_tour_panel_get_step(self);
  return step > 0 && gs_tour_panel_go_to(self, step - 1);
}

guint64 gs_tour_panel_get_event(GsTourPanel *self) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), G_MAXUINT64);
  return self->stops ? self->stops[self->step].index : G_MAXUINT64;
}

const char *gs_tour_panel_get_paragraph(GsTourPanel *self) {
  g_return_val_if_fail(GS_IS_TOUR_PANEL(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->paragraph));
}

static void on_previous(GsTourPanel *self) { gs_tour_panel_previous(self); }
static void on_next(GsTourPanel *self) { gs_tour_panel_next(self); }

static GtkWidget *nav_button(GsTourPanel *self, const char *icon, const char *label,
                             const char *tooltip, GCallback callback) {
  GtkWidget *content = adw_button_content_new();
  adw_button_content_set_icon_name(ADW_BUTTON_CONTENT(content), icon);
  adw_button_content_set_label(ADW_BUTTON_CONTENT(content), label);
  adw_button_content_set_use_underline(ADW_BUTTON_CONTENT(content), TRUE);
  GtkWidget *button = gtk_button_new();
  gtk_button_set_child(GTK_BUTTON(button), content);
  gtk_widget_set_tooltip_text(button, tooltip);
  gtk_widget_set_valign(button, GTK_ALIGN_CENTER);
  g_signal_connect_swapped(button, "clicked", callback, self);
  return button;
}

static void gs_tour_panel_init(GsTourPanel *self) {
  self->box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_parent(self->box, GTK_WIDGET(self));
  gtk_widget_add_css_class(GTK_WIDGET(self), "tour-panel");
  GtkWidget *text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_set_hexpand(text, TRUE);
  self->heading = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->heading), 0);
  gtk_widget_add_css_class(self->heading, "heading");
  self->paragraph = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->paragraph), 0);
  gtk_label_set_wrap(GTK_LABEL(self->paragraph), TRUE);
  gtk_label_set_selectable(GTK_LABEL(self->paragraph), FALSE);
  gtk_box_append(GTK_BOX(text), self->heading);
  gtk_box_append(GTK_BOX(text), self->paragraph);
  gtk_box_append(GTK_BOX(self->box), text);
  self->previous_button = nav_button(self, "go-previous-symbolic", _("_Previous"),
                                     _("The tour's previous step (Alt+Left)"),
                                     G_CALLBACK(on_previous));
  self->next_button = nav_button(self, "go-next-symbolic", _("_Next"),
                                 _("The tour's next step (Alt+Right)"), G_CALLBACK(on_next));
  gtk_box_append(GTK_BOX(self->box), self->previous_button);
  gtk_box_append(GTK_BOX(self->box), self->next_button);
  gtk_widget_set_visible(GTK_WIDGET(self), FALSE);
}

static void gs_tour_panel_dispose(GObject *object) {
  GsTourPanel *self = GS_TOUR_PANEL(object);
  g_clear_pointer(&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS(gs_tour_panel_parent_class)->dispose(object);
}

static void gs_tour_panel_finalize(GObject *object) {
  GsTourPanel *self = GS_TOUR_PANEL(object);
  g_free(self->stops);
  G_OBJECT_CLASS(gs_tour_panel_parent_class)->finalize(object);
}

static void gs_tour_panel_class_init(GsTourPanelClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = gs_tour_panel_dispose;
  object_class->finalize = gs_tour_panel_finalize;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "tourpanel");
  /* show-step (event index, tensor id or 0, view stack page name): go there. */
  signals[SIGNAL_SHOW_STEP] =
      g_signal_new("show-step", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 3, G_TYPE_UINT64, G_TYPE_UINT64, G_TYPE_STRING);
}
