/* gs-compare-chart.c: two runs' memory over one axis (see the header). Each run's events are
 * binned into pixel columns once per width (the largest total in each column, so a spike
 * between two pixels still shows), then both outlines are drawn with cairo. */
#include "gs-compare-chart.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "timeline-palette.h"

#define TOP 28.0    /* room for the legend */
#define BOTTOM 18.0 /* room for the marks' labels */
#define LEFT 8.0
#define RIGHT 8.0

struct _GsCompareChart {
  GtkWidget parent_instance;
  gs_trace_model *models[2]; /* borrowed */
  const gs_run_diff *diff;   /* borrowed */
  char *labels[2];
  double cursor;             /* on A's axis; < 0: none */
  /* The columns of the last width drawn: per run, the largest total in each (-1: no event
   * fell in it). */
  int columns;
  gint64 *binned[2];
  guint64 top_bytes;
};

G_DEFINE_FINAL_TYPE(GsCompareChart, gs_compare_chart, GTK_TYPE_WIDGET)

enum { SIGNAL_POSITION_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The runs' colours: A purple, B orange (GNOME's palette), far apart in hue and lightness. */
static const gs_rgba run_colour[2][2] = {
    {{0.51, 0.24, 0.61, 1}, {0.78, 0.27, 0.0, 1}},  /* light */
    {{0.86, 0.54, 0.87, 1}, {1.0, 0.64, 0.28, 1}},  /* dark */
};

static double axis_end(GsCompareChart *self) {
  return self->diff ? (double)MAX(self->diff->a->last_seq, 1) : 1;
}

double gs_compare_chart_x_of(GsCompareChart *self, guint run, guint64 seq) {
  g_return_val_if_fail(GS_IS_COMPARE_CHART(self), 0);
  double width = gtk_widget_get_width(GTK_WIDGET(self)) - LEFT - RIGHT;
  double pos = run == 0 || !self->diff ? (double)seq : gs_run_diff_align(self->diff, seq);
  return LEFT + pos / axis_end(self) * MAX(width, 1);
}

static void clear_bins(GsCompareChart *self) {
  g_clear_pointer(&self->binned[0], g_free);
  g_clear_pointer(&self->binned[1], g_free);
  self->columns = 0;
}

/* Bins every event of both runs into columns: O(events) per width, not per frame. */
static void bin(GsCompareChart *self, int columns) {
  clear_bins(self);
  self->columns = columns;
  self->top_bytes = 1;
  double end = axis_end(self);
  for (guint run = 0; run < 2; run++) {
    gint64 *out = self->binned[run] = g_new(gint64, columns);
    for (int c = 0; c < columns; c++)
      out[c] = -1;
    gs_trace_model *m = self->models[run];
    guint64 n = m ? gs_trace_model_n_events(m) : 0;
    for (guint64 i = 0; i < n; i++) {
      guint64 seq = gs_trace_model_seq_at(m, i);
      double pos = run == 0 ? (double)seq : gs_run_diff_align(self->diff, seq);
      int c = (int)CLAMP(pos / end * columns, 0, columns - 1);
      gint64 bytes = (gint64)MIN(gs_trace_model_bytes_at(m, i), (guint64)G_MAXINT64);
      out[c] = MAX(out[c], bytes);
      self->top_bytes = MAX(self->top_bytes, (guint64)bytes);
    }
  }
}

static void set_rgba(cairo_t *cr, gs_rgba c) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a);
}

/* Draws text with its top-left at (x, y); returns its width. */
static int draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y,
                     gs_rgba colour) {
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
  int width;
  pango_layout_get_pixel_size(layout, &width, NULL);
  set_rgba(cr, colour);
  cairo_move_to(cr, x, y);
  pango_cairo_show_layout(cr, layout);
  g_object_unref(layout);
  return width;
}

/* One run's outline: a step line through its columns, carried across columns with no event. */
static void draw_run(GsCompareChart *self, cairo_t *cr, guint run, double height, gs_rgba c) {
  const gint64 *bins = self->binned[run];
  double plot = height - TOP - BOTTOM;
  gboolean started = FALSE;
  double y = TOP + plot;
  for (int col = 0; col < self->columns; col++) {
    if (bins[col] >= 0)
      y = TOP + plot * (1 - (double)bins[col] / (double)self->top_bytes);
    else if (!started)
      continue;
    if (!started)
      cairo_move_to(cr, LEFT + col, y);
    else
      cairo_line_to(cr, LEFT + col, y);
    cairo_line_to(cr, LEFT + col + 1, y);
    started = TRUE;
  }
  set_rgba(cr, c);
  cairo_set_line_width(cr, 1.5);
  cairo_stroke(cr);
}

static void gs_compare_chart_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  GsCompareChart *self = GS_COMPARE_CHART(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  gboolean dark = adw_style_manager_get_dark(adw_style_manager_get_default());
  const gs_timeline_palette *p = gs_timeline_palette_get(dark);
  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, width, height));
  set_rgba(cr, p->background);
  cairo_paint(cr);
  if (!self->diff || width <= LEFT + RIGHT + 2 || height <= TOP + BOTTOM + 2) {
    cairo_destroy(cr);
    return;
  }
  int columns = width - (int)(LEFT + RIGHT);
  if (columns != self->columns)
    bin(self, columns);

  /* The moments both runs share, dotted, labelled below the plot (the first and last
   * anchors are the runs' ends: not marks). */
  const GArray *anchors = self->diff->anchors;
  const GArray *marks = self->diff->a->marks;
  cairo_set_line_width(cr, 1);
  double dash[] = {2, 3};
  double free_from = 0; /* labels left of this would overlap the last one drawn: skipped */
  guint next_mark = 0;
  for (guint i = 1; i + 1 < anchors->len / 2; i++) {
    guint64 a_seq = g_array_index(anchors, guint64, 2 * i);
    double x = gs_compare_chart_x_of(self, 0, a_seq);
    cairo_set_dash(cr, dash, 2, 0);
    set_rgba(cr, p->dim_text);
    cairo_move_to(cr, round(x) + 0.5, TOP);
    cairo_line_to(cr, round(x) + 0.5, height - BOTTOM);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    /* Anchors and marks both ascend: the mark of this anchor is at or after the last one. */
    while (next_mark < marks->len && g_array_index(marks, gs_run_mark, next_mark).seq < a_seq)
      next_mark++;
    if (next_mark < marks->len && g_array_index(marks, gs_run_mark, next_mark).seq == a_seq &&
        x + 3 >= free_from) {
      const char *label = g_array_index(marks, gs_run_mark, next_mark).label;
      free_from = x + 3 + draw_text(widget, cr, label, x + 3, height - BOTTOM, p->dim_text) + 6;
    }
  }
  draw_run(self, cr, 0, height, run_colour[dark][0]);
  draw_run(self, cr, 1, height, run_colour[dark][1]);

  /* The legend, and the scale: the top of the plot is the larger peak. */
  g_autofree char *top = g_format_size_full(self->top_bytes, G_FORMAT_SIZE_IEC_UNITS);
  g_autofree char *legend_a = g_strdup_printf(_("A: %s"), self->labels[0]);
  g_autofree char *legend_b = g_strdup_printf(_("B: %s"), self->labels[1]);
  double x = LEFT;
  const char *legends[2] = {legend_a, legend_b};
  for (guint run = 0; run < 2; run++) {
    set_rgba(cr, run_colour[dark][run]);
    cairo_rectangle(cr, x, 10, 14, 3);
    cairo_fill(cr);
    x += 18 + draw_text(widget, cr, legends[run], x + 18, 2, p->text) + 16;
  }
  g_autofree char *scale = g_strdup_printf(_("top: %s"), top);
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, scale);
  int scale_width;
  pango_layout_get_pixel_size(layout, &scale_width, NULL);
  g_object_unref(layout);
  draw_text(widget, cr, scale, width - RIGHT - scale_width, 2, p->dim_text);

  if (self->cursor >= 0) {
    double cx = LEFT + self->cursor / axis_end(self) * columns;
    set_rgba(cr, p->text);
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, round(cx), TOP);
    cairo_line_to(cr, round(cx), height - BOTTOM);
    cairo_stroke(cr);
  }
  /* the plot's baseline */
  set_rgba(cr, p->axis);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, LEFT, height - BOTTOM + 0.5);
  cairo_line_to(cr, width - RIGHT, height - BOTTOM + 0.5);
  cairo_stroke(cr);
  cairo_destroy(cr);
}

static void on_click(GtkGestureClick *gesture, int n_press, double x, double y,
                     GsCompareChart *self) {
  (void)gesture, (void)n_press, (void)y;
  if (!self->diff)
    return;
  double width = gtk_widget_get_width(GTK_WIDGET(self)) - LEFT - RIGHT;
  double pos = CLAMP((x - LEFT) / MAX(width, 1), 0, 1) * axis_end(self);
  g_signal_emit(self, signals[SIGNAL_POSITION_CHOSEN], 0, pos);
}

void gs_compare_chart_set_runs(GsCompareChart *self, gs_trace_model *a, gs_trace_model *b,
                               const gs_run_diff *diff, const char *label_a,
                               const char *label_b) {
  g_return_if_fail(GS_IS_COMPARE_CHART(self));
  self->models[0] = a;
  self->models[1] = b;
  self->diff = diff;
  g_free(self->labels[0]);
  g_free(self->labels[1]);
  self->labels[0] = g_strdup(label_a);
  self->labels[1] = g_strdup(label_b);
  clear_bins(self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void gs_compare_chart_set_cursor(GsCompareChart *self, double a_pos) {
  g_return_if_fail(GS_IS_COMPARE_CHART(self));
  self->cursor = a_pos;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

double gs_compare_chart_get_cursor(GsCompareChart *self) {
  g_return_val_if_fail(GS_IS_COMPARE_CHART(self), -1);
  return self->cursor;
}

static void gs_compare_chart_finalize(GObject *object) {
  GsCompareChart *self = GS_COMPARE_CHART(object);
  clear_bins(self);
  g_free(self->labels[0]);
  g_free(self->labels[1]);
  G_OBJECT_CLASS(gs_compare_chart_parent_class)->finalize(object);
}

static void gs_compare_chart_class_init(GsCompareChartClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = gs_compare_chart_finalize;
  GTK_WIDGET_CLASS(klass)->snapshot = gs_compare_chart_snapshot;
  signals[SIGNAL_POSITION_CHOSEN] =
      g_signal_new("position-chosen", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                   NULL, G_TYPE_NONE, 1, G_TYPE_DOUBLE);
}

static void gs_compare_chart_init(GsCompareChart *self) {
  self->cursor = -1;
  gtk_widget_set_size_request(GTK_WIDGET(self), 200, 140);
  GtkGesture *click = gtk_gesture_click_new();
  g_signal_connect(click, "pressed", G_CALLBACK(on_click), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(click));
  g_signal_connect_object(adw_style_manager_get_default(), "notify::dark",
                          G_CALLBACK(gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);
}

GtkWidget *gs_compare_chart_new(void) {
  return g_object_new(GS_TYPE_COMPARE_CHART, NULL);
}
