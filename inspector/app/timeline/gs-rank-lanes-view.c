/* gs-rank-lanes-view.c: a distributed run's stacked memory lanes (see the header). The view
 * keeps only the shown range; timeline/rank-lanes.c computes and draws everything from it. */
#include "gs-rank-lanes-view.h"

#include <adwaita.h>
#include <math.h>

#include "rank-lanes.h"

/* The narrowest range a zoom reaches: 10 us over the plot. */
#define MIN_SPAN_NS 10000

struct _GsRankLanesView {
  GtkWidget parent_instance;
  GtkWidget *area;
  gs_rank_run *run;
  guint64 t0, t1;
  double pointer_x, drag_t0;
  gulong dark_handler;
};

G_DEFINE_FINAL_TYPE(GsRankLanesView, gs_rank_lanes_view, GTK_TYPE_WIDGET)

GtkWidget *gs_rank_lanes_view_new(void) { return g_object_new(GS_TYPE_RANK_LANES_VIEW, NULL); }

static gs_rank_lanes_view view_of(GsRankLanesView *self) {
  return (gs_rank_lanes_view){
      .t0 = self->t0,
      .t1 = self->t1,
      .width = MAX(gtk_widget_get_width(self->area), 1),
      .height = MAX(gtk_widget_get_height(self->area), 1),
      .dark = adw_style_manager_get_dark(adw_style_manager_get_default()),
      .hover_x = self->pointer_x,
  };
}

static void draw(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
  (void)area, (void)width, (void)height;
  GsRankLanesView *self = data;
  if (!self->run)
    return;
  gs_rank_lanes_view v = view_of(self);
  gs_rank_lanes_draw(cr, self->run, &v);
}

void gs_rank_lanes_view_set_range(GsRankLanesView *self, guint64 t0, guint64 t1) {
  g_return_if_fail(GS_IS_RANK_LANES_VIEW(self));
  guint64 end = self->run ? MAX(gs_rank_run_duration(self->run), 1) : 1;
  guint64 span = MIN(MAX(t1 > t0 ? t1 - t0 : 0, MIN_SPAN_NS), end);
  t0 = MIN(t0, end - span);
  self->t0 = t0;
  self->t1 = t0 + span;
  gtk_widget_queue_draw(self->area);
}

void gs_rank_lanes_view_get_range(GsRankLanesView *self, guint64 *t0, guint64 *t1) {
  g_return_if_fail(GS_IS_RANK_LANES_VIEW(self));
  *t0 = self->t0;
  *t1 = self->t1;
}

void gs_rank_lanes_view_set_run(GsRankLanesView *self, gs_rank_run *run) {
  g_return_if_fail(GS_IS_RANK_LANES_VIEW(self));
  self->run = run;
  gs_rank_lanes_view_set_range(self, run ? gs_rank_run_first_time(run) : 0,
                               run ? gs_rank_run_duration(run) : 1);
}

void gs_rank_lanes_view_zoom(GsRankLanesView *self, double factor, double x) {
  g_return_if_fail(GS_IS_RANK_LANES_VIEW(self));
  if (!self->run)
    return;
  gs_rank_lanes_view v = view_of(self);
  gs_rank_lanes_geometry g;
  gs_rank_lanes_plot_place(&v, &g);
  /* The time under the pointer stays under it. */
  guint64 at = gs_rank_lanes_time_at(&v, &g, x);
  double f = CLAMP((x - g.plot_x) / g.plot_width, 0.0, 1.0);
  double span = (double)(self->t1 - self->t0) * factor;
  double t0 = MAX(0.0, (double)at - f * span);
  gs_rank_lanes_view_set_range(self, (guint64)t0, (guint64)(t0 + span));
}

char *gs_rank_lanes_view_describe_at(GsRankLanesView *self, double x, double y) {
  g_return_val_if_fail(GS_IS_RANK_LANES_VIEW(self), NULL);
  if (!self->run)
    return NULL;
  gs_rank_lanes_view v = view_of(self);
  return gs_rank_lanes_describe(self->run, &v, x, y);
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip, gpointer data) {
  (void)widget, (void)keyboard;
  g_autofree char *text = gs_rank_lanes_view_describe_at(data, x, y);
  if (!text)
    return FALSE;
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void on_motion(GtkEventControllerMotion *motion, double x, double y, gpointer data) {
  (void)motion, (void)y;
  GsRankLanesView *self = data;
  self->pointer_x = x;
  gtk_widget_queue_draw(self->area);
}

static void on_leave(GtkEventControllerMotion *motion, gpointer data) {
  (void)motion;
  GsRankLanesView *self = data;
  self->pointer_x = -1;
  gtk_widget_queue_draw(self->area);
}

/* Ctrl+scroll zooms around the pointer, scroll pans by a tenth of the range. */
static gboolean on_scroll(GtkEventControllerScroll *controller, double dx, double dy,
                          gpointer data) {
  GsRankLanesView *self = data;
  GdkModifierType state =
      gtk_event_controller_get_current_event_state(GTK_EVENT_CONTROLLER(controller));
  if (state & GDK_CONTROL_MASK) {
    gs_rank_lanes_view_zoom(self, pow(1.25, dy), self->pointer_x);
    return TRUE;
  }
  double span = (double)(self->t1 - self->t0), t0 = (double)self->t0 + (dx + dy) * span * 0.1;
  t0 = MAX(0.0, t0);
  gs_rank_lanes_view_set_range(self, (guint64)t0, (guint64)(t0 + span));
  return TRUE;
}

static void on_drag_begin(GtkGestureDrag *gesture, double x, double y, gpointer data) {
  (void)gesture, (void)x, (void)y;
  GsRankLanesView *self = data;
  self->drag_t0 = (double)self->t0;
}

static void on_drag_update(GtkGestureDrag *gesture, double dx, double dy, gpointer data) {
  (void)gesture, (void)dy;
  GsRankLanesView *self = data;
  if (!self->run)
    return;
  gs_rank_lanes_view v = view_of(self);
  gs_rank_lanes_geometry g;
  gs_rank_lanes_plot_place(&v, &g);
  double span = (double)(self->t1 - self->t0);
  double t0 = MAX(0.0, self->drag_t0 - dx / g.plot_width * span);
  gs_rank_lanes_view_set_range(self, (guint64)t0, (guint64)(t0 + span));
}

static void on_dark_changed(GsRankLanesView *self) { gtk_widget_queue_draw(self->area); }

static void gs_rank_lanes_view_dispose(GObject *object) {
  GsRankLanesView *self = GS_RANK_LANES_VIEW(object);
  g_clear_signal_handler(&self->dark_handler, adw_style_manager_get_default());
  g_clear_pointer(&self->area, gtk_widget_unparent);
  self->run = NULL;
  G_OBJECT_CLASS(gs_rank_lanes_view_parent_class)->dispose(object);
}

static void gs_rank_lanes_view_class_init(GsRankLanesViewClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = gs_rank_lanes_view_dispose;
  gtk_widget_class_set_layout_manager_type(GTK_WIDGET_CLASS(klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "gs-rank-lanes");
}

static void gs_rank_lanes_view_init(GsRankLanesView *self) {
  self->pointer_x = -1;
  self->t1 = 1;
  self->area = gtk_drawing_area_new();
  gtk_widget_set_hexpand(self->area, TRUE);
  gtk_widget_set_vexpand(self->area, TRUE);
  gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(self->area), draw, self, NULL);
  gtk_widget_set_has_tooltip(self->area, TRUE);
  g_signal_connect(self->area, "query-tooltip", G_CALLBACK(on_query_tooltip), self);
  gtk_widget_set_parent(self->area, GTK_WIDGET(self));

  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(self->area, motion);
  GtkEventController *scroll = gtk_event_controller_scroll_new(
      GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES | GTK_EVENT_CONTROLLER_SCROLL_DISCRETE);
  g_signal_connect(scroll, "scroll", G_CALLBACK(on_scroll), self);
  gtk_widget_add_controller(self->area, scroll);
  GtkGesture *drag = gtk_gesture_drag_new();
  g_signal_connect(drag, "drag-begin", G_CALLBACK(on_drag_begin), self);
  g_signal_connect(drag, "drag-update", G_CALLBACK(on_drag_update), self);
  gtk_widget_add_controller(self->area, GTK_EVENT_CONTROLLER(drag));
  self->dark_handler = g_signal_connect_swapped(adw_style_manager_get_default(), "notify::dark",
                                                G_CALLBACK(on_dark_changed), self);
}
