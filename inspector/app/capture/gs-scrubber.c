/* gs-scrubber.c: the time scrubber (see the header). The slider's adjustment runs over event
 * indices as doubles (exact up to 2^53 events); the position is the rounded value. */
#include "gs-scrubber.h"

#include "gs-view.h"

#include <glib/gi18n.h>
#include <inttypes.h>
#include <math.h>

struct _GsScrubber {
  GtkWidget parent_instance;

  GtkWidget *explanation_label;
  GtkWidget *first_button, *previous_button, *next_button, *last_button;
  GtkWidget *scale;
  GtkAdjustment *adjustment;
  GtkWidget *position_label;
  GtkWidget *follow_button;

  gs_trace_model *model;
  guint64 position;
  gint64 rank;      /* the rank whose log this is, in a run of several; -1 */
  gboolean syncing; /* we are moving the adjustment ourselves */
};

G_DEFINE_FINAL_TYPE(GsScrubber, gs_scrubber, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_POSITION, N_PROPS };
static GParamSpec *props[N_PROPS];

GtkWidget *gs_scrubber_new(void) {
  return g_object_new(GS_TYPE_SCRUBBER, NULL);
}

static guint64 n_events(GsScrubber *self) {
  return self->model ? gs_trace_model_n_events(self->model) : 0;
}

const char *gs_scrubber_get_explanation(GsScrubber *self) {
  g_return_val_if_fail(GS_IS_SCRUBBER(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->explanation_label));
}

const char *gs_scrubber_get_position_text(GsScrubber *self) {
  g_return_val_if_fail(GS_IS_SCRUBBER(self), NULL);
  return gtk_label_get_text(GTK_LABEL(self->position_label));
}

guint64 gs_scrubber_get_position(GsScrubber *self) {
  g_return_val_if_fail(GS_IS_SCRUBBER(self), 0);
  return self->position;
}

static void update_labels(GsScrubber *self) {
  guint64 n = n_events(self);
  g_autofree char *where = NULL;
  g_autofree char *explanation = NULL;
  if (n == 0) {
    where = g_strdup(_("no events"));
    explanation = g_strdup("");
  } else {
    /* Translators: the scrubber's position, "event 12 of 3,400 · #15": the event's place in
     * the log, then its engine event number (as the event list and error messages show). */
    where = g_strdup_printf(_("event %'" PRIu64 " of %'" PRIu64 " · #%" PRIu64),
                            self->position + 1, n,
                            gs_trace_model_seq_at(self->model, self->position));
    explanation = gs_trace_model_explain(self->model, self->position);
  }
  if (self->rank >= 0) {
    /* Translators: the scrubber's position in one rank's log of a distributed run, "rank 0 ·
     * event 12 of 3,400 · #15" (the second %s is the position as above). */
    char *ranked = g_strdup_printf(_("rank %" PRId64 " · %s"), self->rank, where);
    g_free(where);
    where = ranked;
  }
  gtk_label_set_text(GTK_LABEL(self->position_label), where);
  gtk_label_set_text(GTK_LABEL(self->explanation_label), explanation ? explanation : "");
  gs_view_set_tooltip(self->explanation_label, explanation);
  gtk_widget_set_sensitive(self->first_button, self->position > 0);
  gtk_widget_set_sensitive(self->previous_button, self->position > 0);
  gtk_widget_set_sensitive(self->next_button, n > 0 && self->position + 1 < n);
  gtk_widget_set_sensitive(self->last_button, n > 0 && self->position + 1 < n);
  gtk_widget_set_sensitive(self->scale, n > 1);
}

/* Sets the adjustment's range to the model's events without moving the position. */
static void sync_range(GsScrubber *self) {
  guint64 n = n_events(self);
  self->syncing = TRUE;
  gtk_adjustment_configure(self->adjustment, (double)self->position, 0,
                           n ? (double)(n - 1) : 0, 1, MAX(1.0, floor((double)n / 100)), 0);
  self->syncing = FALSE;
}

void gs_scrubber_set_rank(GsScrubber *self, gint64 rank) {
  g_return_if_fail(GS_IS_SCRUBBER(self));
  self->rank = rank < 0 ? -1 : rank;
  update_labels(self);
}

void gs_scrubber_set_position(GsScrubber *self, guint64 index) {
  g_return_if_fail(GS_IS_SCRUBBER(self));
  guint64 n = n_events(self);
  if (n == 0)
    index = 0;
  else if (index >= n)
    index = n - 1;
  gboolean changed = index != self->position;
  self->position = index;
  if (n > 0) {
    self->syncing = TRUE;
    gtk_adjustment_set_value(self->adjustment, (double)index);
    self->syncing = FALSE;
    /* At the end: follow new events; elsewhere: stay put while they arrive. */
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(self->follow_button), index + 1 == n);
  }
  update_labels(self);
  if (changed)
    g_object_notify_by_pspec(G_OBJECT(self), props[PROP_POSITION]);
}

gboolean gs_scrubber_grab_focus(GsScrubber *self) {
  g_return_val_if_fail(GS_IS_SCRUBBER(self), FALSE);
  return gtk_widget_grab_focus(self->scale) ||
         gtk_widget_child_focus(GTK_WIDGET(self), GTK_DIR_TAB_FORWARD);
}

void gs_scrubber_step(GsScrubber *self, gint64 delta) {
  g_return_if_fail(GS_IS_SCRUBBER(self));
  if (delta < 0 && (guint64)(-delta) > self->position)
    gs_scrubber_set_position(self, 0);
  else
    gs_scrubber_set_position(self, self->position + (guint64)delta);
}

void gs_scrubber_set_model(GsScrubber *self, gs_trace_model *model) {
  g_return_if_fail(GS_IS_SCRUBBER(self));
  self->model = model;
  guint64 n = n_events(self);
  self->position = n ? n - 1 : 0;
  sync_range(self);
  gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(self->follow_button), TRUE);
  update_labels(self);
  g_object_notify_by_pspec(G_OBJECT(self), props[PROP_POSITION]);
}

void gs_scrubber_model_grew(GsScrubber *self) {
  g_return_if_fail(GS_IS_SCRUBBER(self));
  guint64 n = n_events(self);
  sync_range(self);
  if (n && gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->follow_button)))
    gs_scrubber_set_position(self, n - 1);
  else
    update_labels(self); /* "of M" changed */
}

static void on_value_changed(GsScrubber *self) {
  if (self->syncing)
    return;
  double v = gtk_adjustment_get_value(self->adjustment);
  gs_scrubber_set_position(self, v <= 0 ? 0 : (guint64)llround(v));
}

static void on_follow_toggled(GsScrubber *self) {
  guint64 n = n_events(self);
  if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->follow_button)) && n)
    gs_scrubber_set_position(self, n - 1);
}

static void on_first(GsScrubber *self) { gs_scrubber_set_position(self, 0); }
static void on_previous(GsScrubber *self) { gs_scrubber_step(self, -1); }
static void on_next(GsScrubber *self) { gs_scrubber_step(self, 1); }
static void on_last(GsScrubber *self) { gs_scrubber_set_position(self, G_MAXUINT64); }

static void gs_scrubber_get_property(GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec) {
  GsScrubber *self = GS_SCRUBBER(object);
  switch (prop_id) {
  case PROP_POSITION:
    g_value_set_uint64(value, self->position);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_scrubber_set_property(GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec) {
  GsScrubber *self = GS_SCRUBBER(object);
  switch (prop_id) {
  case PROP_POSITION:
    gs_scrubber_set_position(self, g_value_get_uint64(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void gs_scrubber_dispose(GObject *object) {
  gtk_widget_dispose_template(GTK_WIDGET(object), GS_TYPE_SCRUBBER);
  gs_widget_unparent_children(GTK_WIDGET(object));
  G_OBJECT_CLASS(gs_scrubber_parent_class)->dispose(object);
}

static void gs_scrubber_class_init(GsScrubberClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->get_property = gs_scrubber_get_property;
  object_class->set_property = gs_scrubber_set_property;
  object_class->dispose = gs_scrubber_dispose;

  props[PROP_POSITION] = g_param_spec_uint64(
      "position", NULL, NULL, 0, G_MAXUINT64, 0,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties(object_class, N_PROPS, props);

  gtk_widget_class_set_template_from_resource(widget_class,
                                              "/io/github/gradscope/Inspector/gs-scrubber.ui");
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, explanation_label);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, first_button);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, previous_button);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, next_button);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, last_button);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, scale);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, adjustment);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, position_label);
  gtk_widget_class_bind_template_child(widget_class, GsScrubber, follow_button);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(widget_class, "gs-scrubber");
}

static void gs_scrubber_init(GsScrubber *self) {
  self->rank = -1;
  gtk_widget_init_template(GTK_WIDGET(self));
  g_signal_connect_swapped(self->adjustment, "value-changed", G_CALLBACK(on_value_changed),
                           self);
  g_signal_connect_swapped(self->follow_button, "toggled", G_CALLBACK(on_follow_toggled), self);
  g_signal_connect_swapped(self->first_button, "clicked", G_CALLBACK(on_first), self);
  g_signal_connect_swapped(self->previous_button, "clicked", G_CALLBACK(on_previous), self);
  g_signal_connect_swapped(self->next_button, "clicked", G_CALLBACK(on_next), self);
  g_signal_connect_swapped(self->last_button, "clicked", G_CALLBACK(on_last), self);
  update_labels(self);
}
