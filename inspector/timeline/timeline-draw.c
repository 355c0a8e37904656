/* timeline-draw.c: the memory timeline's drawing (see timeline-draw.h). Everything is drawn
 * from the frame's per-column summary; the only per-item loops are over marks and spans
 * inside the viewport, each collapsed to at most one shape per pixel. */
#include "timeline-draw.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "escape.h"
#include "timeline-palette.h"

#define FONT "Sans 8"
#define LABEL_FONT "Sans Bold 8"
/* Narrower scope or backward spans are not shaded over the whole plot height. */
#define MIN_BAND_PX 4
/* Nor are spans, or marks drawn as lines, that come closer than this on average: a long run's
 * steps (word-language's hundred in 600 px) made the plot a wall of stripes behind the data.
 * The strip along the top and the marks' ticks under the plot still show their rhythm. */
#define MIN_SHADED_SPACING_PX 40

/* Whether n things in view are few enough to be shaded over the plot's height. */
static gboolean sparse(const gs_timeline_frame *f, guint n) {
  return n == 0 || f->plot_width / n >= MIN_SHADED_SPACING_PX;
}

static void set_color(cairo_t *cr, gs_rgba c) { cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a); }

typedef enum { ALIGN_LEFT, ALIGN_CENTER, ALIGN_RIGHT } text_align;

/* Draws text with its top at y, aligned at x; returns its width. With background, a
 * rounded box in that colour goes under it so it stays legible over the stacks. */
/* Sets text on the layout, a name from the log clipped first (escape.h): the legend shapes
 * every stack's name to fit the row, and a 64 KB scope name held a frame 0.2 s. */
static void set_text(PangoLayout *layout, const char *text) {
  if (strlen(text) > GS_TEXT_SHOWN_MAX) {
    g_autofree char *clipped = gs_text_clip(text, GS_TEXT_SHOWN_MAX);
    pango_layout_set_text(layout, clipped, -1);
  } else {
    pango_layout_set_text(layout, text, -1);
  }
}

static double draw_text(cairo_t *cr, PangoLayout *layout, const char *text, double x, double y,
                        text_align align, gs_rgba color, const gs_rgba *background) {
  set_text(layout, text);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  double left = align == ALIGN_LEFT ? x : align == ALIGN_CENTER ? x - w / 2.0 : x - w;
  if (background) {
    set_color(cr, *background);
    cairo_rectangle(cr, left - 3, y - 1, w + 6, h + 2);
    cairo_fill(cr);
  }
  set_color(cr, color);
  cairo_move_to(cr, left, y);
  pango_cairo_show_layout(cr, layout);
  return w;
}

static double text_width(PangoLayout *layout, const char *text) {
  set_text(layout, text);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  return w;
}

static char *format_bytes(guint64 bytes) {
  return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

static double plot_right(const gs_timeline_frame *f) { return f->plot_x + f->plot_width; }
static double plot_bottom(const gs_timeline_frame *f) { return f->plot_y + f->plot_height; }

/* ---- spans ------------------------------------------------------------------------------- */

/* The pixel range [x0, x1) of events first..last clipped to the plot; FALSE if outside. */
static gboolean span_pixels(const gs_timeline_frame *f, guint64 first, guint64 last, double *x0,
                            double *x1) {
  if (last < f->request.first || first > f->request.last)
    return FALSE;
  first = MAX(first, f->request.first);
  last = MIN(last, f->request.last);
  double span = (double)(f->request.last - f->request.first + 1);
  *x0 = f->plot_x + (double)(first - f->request.first) / span * f->plot_width;
  *x1 = f->plot_x + (double)(last - f->request.first + 1) / span * f->plot_width;
  *x0 = floor(*x0);
  *x1 = MAX(ceil(*x1), *x0 + 1);
  return TRUE;
}

/* Outermost scopes as alternating bands, their names on top where a band is wide enough;
 * backward passes tinted over them. */
static guint n_spans_in_view(const gs_timeline_frame *f, const GArray *spans) {
  guint n = 0;
  for (guint i = 0; i < spans->len; i++) {
    const gs_timeline_span *s = &g_array_index(spans, gs_timeline_span, i);
    n += s->last >= f->request.first && s->first <= f->request.last;
  }
  return n;
}

static void draw_spans(cairo_t *cr, const gs_timeline_frame *f, gs_trace_model *m,
                       gs_timeline_index *index, const gs_timeline_palette *pal,
                       PangoLayout *layout) {
  const GArray *scopes = gs_timeline_index_scope_spans(index);
  double label_end = -1;
  double covered = -G_MAXDOUBLE; /* bands are drawn left of this */
  gboolean bands = sparse(f, n_spans_in_view(f, scopes));
  for (guint i = 0; bands && i < scopes->len; i++) {
    const gs_timeline_span *s = &g_array_index(scopes, gs_timeline_span, i);
    double x0, x1;
    if (!span_pixels(f, s->first, s->last, &x0, &x1))
      continue;
    /* Spans of several threads overlap (they come by begin): a pixel gets the band of the
     * first span over it only, so 100,000 threads' scopes, open to the end, fill the plot
     * once instead of 100,000 times (3 s of compositing per frame). */
    x0 = MAX(x0, covered);
    /* Bands narrower than a few pixels would only add stripes: the marks and the backward
     * strip still show the rhythm of steps at that zoom. */
    if (x1 - x0 < MIN_BAND_PX)
      continue;
    covered = x1;
    set_color(cr, pal->scope_band[i % 2]);
    cairo_rectangle(cr, x0, f->plot_y, x1 - x0, f->plot_height);
    cairo_fill(cr);
    if (x1 - x0 >= 60 && x0 >= label_end && s->first >= f->request.first) {
      /* Clipped: Pango measures the whole text, and a name may be 64 KB. */
      g_autofree char *name =
          gs_text_clip(gs_timeline_index_scope_name(index, m, i), GS_TEXT_SHOWN_MAX);
      if (text_width(layout, name) + 8 <= x1 - x0)
        label_end = x0 + 4 + draw_text(cr, layout, name, x0 + 4, f->plot_y + 2, ALIGN_LEFT,
                                       pal->dim_text, NULL);
    }
  }
  /* Backward passes: a strip along the top, merged per pixel into one path (a run has a
   * pass per step: thousands in view when zoomed out); the whole height too where a pass is
   * wide enough not to cover the plot when passes follow each other closely. */
  const GArray *backwards = gs_timeline_index_backward_spans(index);
  double strip_x0 = 0, strip_x1 = -1;
  for (guint i = 0; i < backwards->len; i++) {
    const gs_timeline_span *s = &g_array_index(backwards, gs_timeline_span, i);
    double x0, x1;
    if (!span_pixels(f, s->first, s->last, &x0, &x1))
      continue;
    if (x0 <= strip_x1) {
      strip_x1 = MAX(strip_x1, x1);
    } else {
      if (strip_x1 > strip_x0)
        cairo_rectangle(cr, strip_x0, f->plot_y, strip_x1 - strip_x0, 3);
      strip_x0 = x0;
      strip_x1 = x1;
    }
  }
  if (strip_x1 > strip_x0)
    cairo_rectangle(cr, strip_x0, f->plot_y, strip_x1 - strip_x0, 3);
  gs_rgba strip = pal->backward;
  strip.a = MIN(1.0, strip.a * 4);
  set_color(cr, strip);
  cairo_fill(cr);
  gboolean tints = sparse(f, n_spans_in_view(f, backwards));
  for (guint i = 0; tints && i < backwards->len; i++) {
    const gs_timeline_span *s = &g_array_index(backwards, gs_timeline_span, i);
    double x0, x1;
    if (!span_pixels(f, s->first, s->last, &x0, &x1) || x1 - x0 < MIN_BAND_PX)
      continue;
    set_color(cr, pal->backward);
    cairo_rectangle(cr, x0, f->plot_y + 3, x1 - x0, f->plot_height - 3);
    cairo_fill(cr);
    if (x1 - x0 >= 70)
      draw_text(cr, layout, _("backward"), (x0 + x1) / 2, f->plot_y + 14, ALIGN_CENTER,
                pal->dim_text, NULL);
  }
}

/* ---- axes -------------------------------------------------------------------------------- */

static void draw_byte_axis(cairo_t *cr, const gs_timeline_frame *f,
                           const gs_timeline_palette *pal, PangoLayout *layout) {
  for (guint64 v = 0; v <= f->scale_max; v += f->scale_step) {
    double y = round(gs_timeline_frame_y_of(f, v)) + 0.5;
    set_color(cr, v == 0 ? pal->axis : pal->grid);
    cairo_move_to(cr, f->plot_x, y);
    cairo_line_to(cr, plot_right(f), y);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    g_autofree char *label = format_bytes(v);
    draw_text(cr, layout, label, f->plot_x - 6, y - 7, ALIGN_RIGHT, pal->dim_text, NULL);
  }
}

/* The first event of first..last whose engine number is at least seq. Numbers increase along
 * each thread's events; where threads interleave they are close to increasing, so the search
 * lands within a few events of the tick's number. */
static guint64 index_of_number(const gs_trace_model *m, guint64 first, guint64 last,
                               guint64 seq) {
  guint64 lo = first, hi = last + 1;
  while (lo < hi) {
    guint64 mid = lo + (hi - lo) / 2;
    if (gs_trace_model_seq_at(m, mid) < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return MIN(lo, last);
}

/* Event numbers under the plot, at round steps at least ~90 px apart. They are the engine's
 * numbers, the #N of the sentences, the hover and the alive list, not positions in the log:
 * numbers taken before tracing began or without an event of their own leave gaps, so ticks
 * can be unevenly spaced. */
static void draw_event_axis(cairo_t *cr, const gs_timeline_frame *f, const gs_trace_model *m,
                            const gs_timeline_palette *pal, PangoLayout *layout) {
  guint64 first_number = gs_trace_model_seq_at(m, f->request.first);
  guint64 last_number = MAX(gs_trace_model_seq_at(m, f->request.last), first_number);
  double per_px = (double)(last_number - first_number + 1) / f->plot_width;
  static const guint64 mantissas[] = {1, 2, 5};
  guint64 istep = 0;
  for (guint64 decade = 1; !istep && decade < G_MAXUINT64 / 10; decade *= 10)
    for (int k = 0; k < 3 && !istep; k++)
      if ((double)(decade * mantissas[k]) / per_px >= 90)
        istep = decade * mantissas[k];
  if (!istep)
    return;
  guint64 start = (first_number + istep - 1) / istep * istep;
  double y = plot_bottom(f), previous = -G_MAXDOUBLE;
  set_color(cr, pal->axis);
  cairo_set_line_width(cr, 1);
  for (guint64 number = MAX(start, istep); number <= last_number; number += istep) {
    guint64 index = index_of_number(m, f->request.first, f->request.last, number);
    double x = gs_timeline_frame_x_of(f, index);
    if (x - previous < 60) /* a gap in the numbering put two ticks on one spot */
      continue;
    previous = x;
    cairo_move_to(cr, round(x) + 0.5, y);
    cairo_line_to(cr, round(x) + 0.5, y + 4);
    cairo_stroke(cr);
    g_autofree char *label = g_strdup_printf("%" G_GUINT64_FORMAT, number);
    draw_text(cr, layout, label, x, y + 5, ALIGN_CENTER, pal->dim_text, NULL);
    set_color(cr, pal->axis);
  }
  /* Which way time runs, at the right end under the numbers. */
  draw_text(cr, layout, _("events →"), plot_right(f), y + 32, ALIGN_RIGHT, pal->dim_text, NULL);
}

/* User marks: a line through the plot and a tick, at most one per pixel, each set in one
 * path; labels where they do not overlap the previous one. */
static void draw_marks(cairo_t *cr, const gs_timeline_frame *f, gs_trace_model *m,
                       gs_timeline_index *index, const gs_timeline_palette *pal,
                       PangoLayout *layout) {
  const GArray *marks = gs_timeline_index_marks(index);
  guint begin = gs_timeline_index_first_mark(index, f->request.first), end = begin;
  double y = plot_bottom(f), last_x = -1;
  while (end < marks->len && g_array_index(marks, guint64, end) <= f->request.last)
    end++;
  /* Lines over the plot only for marks far enough apart (the ticks below are always drawn). */
  for (guint i = begin; sparse(f, end - begin) && i < end; i++) {
    double x = round(gs_timeline_frame_x_of(f, g_array_index(marks, guint64, i))) + 0.5;
    if (x == last_x)
      continue;
    last_x = x;
    cairo_move_to(cr, x, f->plot_y);
    cairo_line_to(cr, x, y);
  }
  gs_rgba line = pal->mark;
  line.a *= 0.35;
  set_color(cr, line);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  last_x = -1;
  for (guint i = begin; i < end; i++) {
    double x = round(gs_timeline_frame_x_of(f, g_array_index(marks, guint64, i))) + 0.5;
    if (x == last_x)
      continue;
    last_x = x;
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x, y + 18);
  }
  set_color(cr, pal->mark);
  cairo_stroke(cr);
  double label_end = -1;
  for (guint i = begin; i < end; i++) {
    double x = round(gs_timeline_frame_x_of(f, g_array_index(marks, guint64, i))) + 0.5;
    if (x < label_end + 6)
      continue;
    g_autofree char *label =
        gs_text_clip(gs_timeline_index_mark_label(index, m, i), GS_TEXT_SHOWN_MAX);
    if (x + 2 + text_width(layout, label) > f->request.width - 2)
      continue;
    label_end = x + 2 + draw_text(cr, layout, label, x + 2, y + 18, ALIGN_LEFT, pal->mark, NULL);
  }
}

/* ---- data -------------------------------------------------------------------------------- */

/* For each plot column, the column whose data it shows: itself, or when zoomed in past one
 * event per pixel and it holds no event, the next one that does (an event is drawn across
 * all the pixels event_at maps to it); -1 after the last event. Free with g_free. */
static int *shown_columns(const gs_timeline_frame *f) {
  int *shown = g_new(int, MAX(f->n_columns, 1));
  int next = -1;
  for (guint c = f->n_columns; c-- > 0;) {
    if (f->columns[c].first <= f->columns[c].last)
      next = (int)c;
    shown[c] = next;
  }
  return shown;
}

/* Each stack as one path of one-pixel rectangles over the columns, bottom stack first. */
static void draw_stacks(cairo_t *cr, const gs_timeline_frame *f, const int *shown,
                        gboolean dark) {
  cairo_antialias_t aa = cairo_get_antialias(cr);
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
  double bottom = plot_bottom(f);
  for (guint s = 0; s < f->n_stacks; s++) {
    if (f->stack_peak[s] == 0)
      continue;
    for (guint c = 0; c < f->n_columns; c++) {
      if (shown[c] < 0)
        break;
      const gs_memory_column *col = &f->columns[shown[c]];
      if (col->stack[s] == 0)
        continue;
      guint64 below = 0;
      for (guint k = 0; k < s; k++)
        below += col->stack[k];
      double y0 = round(MIN(gs_timeline_frame_y_of(f, below), bottom));
      double y1 = round(gs_timeline_frame_y_of(f, below + col->stack[s]));
      cairo_rectangle(cr, f->plot_x + c, y1, 1, y0 - y1);
    }
    set_color(cr, gs_timeline_stack_color(dark, f->request.by_scope, s));
    cairo_fill(cr);
  }
  cairo_set_antialias(cr, aa);
}

/* The total's largest value per column as a line, and its range down to the smallest where
 * bytes changed within a column (an allocation and its free inside one pixel). */
static void draw_outline(cairo_t *cr, const gs_timeline_frame *f, const int *shown,
                         const gs_timeline_palette *pal) {
  /* The ranges first, faint, so the stacks under them stay readable. */
  for (guint c = 0; c < f->n_columns && shown[c] >= 0; c++) {
    const gs_memory_column *col = &f->columns[shown[c]];
    if (col->min_total < col->max_total) {
      cairo_move_to(cr, f->plot_x + c + 0.5, gs_timeline_frame_y_of(f, col->max_total));
      cairo_line_to(cr, f->plot_x + c + 0.5, gs_timeline_frame_y_of(f, col->min_total));
    }
  }
  gs_rgba range = pal->outline;
  range.a *= 0.25;
  set_color(cr, range);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
  for (guint c = 0; c < f->n_columns && shown[c] >= 0; c++) {
    double x = f->plot_x + c + 0.5;
    double y = gs_timeline_frame_y_of(f, f->columns[shown[c]].max_total);
    if (c == 0)
      cairo_move_to(cr, x, y);
    else
      cairo_line_to(cr, x, y);
  }
  set_color(cr, pal->outline);
  cairo_set_line_width(cr, 1);
  cairo_stroke(cr);
}

static gboolean any_outside(const gs_timeline_frame *f) {
  for (guint c = 0; c < f->n_columns; c++)
    if (f->columns[c].outside > 0)
      return TRUE;
  return FALSE;
}

/* Of the total, the bytes outside the engine's allocator (external and shared memory: DLPack,
 * mapped files, a DataLoader worker's batches) as a dashed line, so they read apart from the
 * engine's own whatever the stacks are. Drawn only when a log has any. */
static void draw_outside(cairo_t *cr, const gs_timeline_frame *f, const int *shown,
                         const gs_timeline_palette *pal) {
  if (!any_outside(f))
    return;
  for (guint c = 0; c < f->n_columns && shown[c] >= 0; c++) {
    double x = f->plot_x + c + 0.5;
    double y = gs_timeline_frame_y_of(f, f->columns[shown[c]].outside);
    if (c == 0)
      cairo_move_to(cr, x, y);
    else
      cairo_line_to(cr, x, y);
  }
  static const double dash[] = {4, 3};
  cairo_save(cr);
  cairo_set_dash(cr, dash, G_N_ELEMENTS(dash), 0);
  set_color(cr, pal->outside);
  cairo_set_line_width(cr, 1.5);
  cairo_stroke(cr);
  cairo_restore(cr);
}

static void draw_peak(cairo_t *cr, const gs_timeline_frame *f, gs_trace_model *m,
                      const gs_timeline_palette *pal, PangoLayout *layout) {
  if (f->peak_column < 0)
    return;
  /* Where the peak's event is drawn: its column, or zoomed in, the middle of its pixels. */
  double x = round(gs_timeline_frame_x_of(f, f->peak_index) - 0.5) + 0.5;
  double y = gs_timeline_frame_y_of(f, f->peak_bytes);
  set_color(cr, pal->peak);
  cairo_move_to(cr, x, y - 1);
  cairo_line_to(cr, x - 5, y - 9);
  cairo_line_to(cr, x + 5, y - 9);
  cairo_close_path(cr);
  cairo_fill(cr);
  g_autofree char *bytes = format_bytes(f->peak_bytes);
  g_autofree char *label =
      g_strdup_printf(_("peak %s at event #%" PRIu64), bytes,
                      (uint64_t)gs_trace_model_seq_at(m, f->peak_index));
  PangoFontDescription *bold = pango_font_description_from_string(LABEL_FONT);
  pango_layout_set_font_description(layout, bold);
  double w = text_width(layout, label);
  gboolean left = x + 8 + w > plot_right(f);
  double ty = MAX(y - 24, f->plot_y + 1);
  gs_rgba bg = pal->background;
  bg.a = 0.8;
  draw_text(cr, layout, label, left ? x - 8 : x + 8, ty, left ? ALIGN_RIGHT : ALIGN_LEFT,
            pal->peak, &bg);
  pango_font_description_free(bold);
}

/* The selected tensor's life: a band the scrubber's colour, faint, behind the stacks (back),
 * then its edges and its label on top of them. */
static void draw_life(cairo_t *cr, const gs_timeline_frame *f, const gs_timeline_decor *decor,
                      const gs_timeline_palette *pal, PangoLayout *layout, gboolean back) {
  if (!decor->has_life)
    return;
  double x0, x1;
  if (!span_pixels(f, decor->life_first, decor->life_last, &x0, &x1))
    return;
  x1 = MAX(x1, x0 + 2);
  if (back) {
    gs_rgba fill = pal->position;
    fill.a = 0.15;
    set_color(cr, fill);
    cairo_rectangle(cr, x0, f->plot_y, x1 - x0, f->plot_height);
    cairo_fill(cr);
    return;
  }
  gs_rgba edge = pal->position;
  edge.a = 0.6;
  set_color(cr, edge);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, round(x0) + 0.5, f->plot_y);
  cairo_line_to(cr, round(x0) + 0.5, plot_bottom(f));
  cairo_move_to(cr, round(x1) - 0.5, f->plot_y);
  cairo_line_to(cr, round(x1) - 0.5, plot_bottom(f));
  cairo_stroke(cr);
  if (decor->life_label) {
    gs_rgba bg = pal->background;
    bg.a = 0.8;
    draw_text(cr, layout, decor->life_label, x0 + 4, f->plot_y + 20, ALIGN_LEFT, pal->position,
              &bg);
  }
}

static void draw_vertical(cairo_t *cr, const gs_timeline_frame *f, double x, gs_rgba color,
                          double width) {
  if (x < f->plot_x || x > plot_right(f))
    return;
  set_color(cr, color);
  cairo_set_line_width(cr, width);
  cairo_move_to(cr, x, f->plot_y);
  cairo_line_to(cr, x, plot_bottom(f));
  cairo_stroke(cr);
  cairo_set_line_width(cr, 1);
}

/* Whether a backward pass overlaps the viewport (the strip along the top is drawn). */
static gboolean backward_in_view(const gs_timeline_frame *f, gs_timeline_index *index) {
  const GArray *spans = index ? gs_timeline_index_backward_spans(index) : NULL;
  for (guint i = 0; spans && i < spans->len; i++) {
    const gs_timeline_span *sp = &g_array_index(spans, gs_timeline_span, i);
    if (sp->first > f->request.last)
      break;
    if (sp->last >= f->request.first)
      return TRUE;
  }
  return FALSE;
}

/* One legend entry: a swatch and a name at (*at, row); *at moves past it. */
static void draw_entry(cairo_t *cr, PangoLayout *layout, double *at, double row, gs_rgba color,
                       double swatch_y, double swatch_h, const char *name, gs_rgba text) {
  set_color(cr, color);
  cairo_rectangle(cr, *at, row + swatch_y, 10, swatch_h);
  cairo_fill(cr);
  *at += 14 + draw_text(cr, layout, name, *at + 14, row, ALIGN_LEFT, text, NULL) + 14;
}

static void draw_legend(cairo_t *cr, const gs_timeline_frame *f, gs_trace_model *m,
                        gs_timeline_index *index, gboolean dark, const gs_timeline_palette *pal,
                        PangoLayout *layout) {
  double x = f->plot_x, y = 10;
  /* The top row runs from the plot's left edge to the mode's name at its right; stacks that
   * do not fit go on the bottom row, left of "events →" (below the marks' labels): a
   * narrow pane hid categories behind "+2 more" with that row empty. Only what fits on
   * neither is counted as "+N more", for which room is kept once any is left out. */
  const char *mode = f->request.by_scope ? _("by scope") : _("by category");
  draw_text(cr, layout, mode, plot_right(f), y, ALIGN_RIGHT, pal->dim_text, NULL);
  double top_limit = plot_right(f) - text_width(layout, mode) - 12;
  double bottom_x = f->plot_x, bottom_y = plot_bottom(f) + 32;
  double bottom_limit = plot_right(f) - text_width(layout, _("events →")) - 16;
  guint total = 0;
  double all_w = 0;
  for (guint s = 0; s < f->n_stacks; s++)
    if (f->stack_peak[s] > 0) {
      total++;
      all_w += 14 + text_width(layout, gs_trace_model_stack_name(m, f->request.by_scope, s)) + 14;
    }
  g_autofree char *more_sample = g_strdup_printf(_("+%u more"), total);
  double room = (top_limit - x) + (bottom_limit - bottom_x);
  double stack_limit = all_w <= room ? bottom_limit
                                     : bottom_limit - text_width(layout, more_sample) - 8;
  guint shown = 0, hidden = 0;
  gboolean on_bottom = FALSE;
  for (guint s = 0; s < f->n_stacks; s++) {
    if (f->stack_peak[s] == 0)
      continue;
    const char *name = gs_trace_model_stack_name(m, f->request.by_scope, s);
    double w = 14 + text_width(layout, name) + 14;
    if (!hidden && !on_bottom && x + w > top_limit && shown > 0)
      on_bottom = TRUE; /* in order: the rest follow on the bottom row */
    if (hidden || (on_bottom && bottom_x + w > stack_limit)) {
      hidden++;
      continue;
    }
    gs_rgba color = gs_timeline_stack_color(dark, f->request.by_scope, s);
    if (on_bottom) {
      draw_entry(cr, layout, &bottom_x, bottom_y, color, 2, 10, name, pal->text);
      shown++;
      continue;
    }
    /* The first entry is always shown: one too long for the row is ellipsized at its end. */
    gboolean cut = x + w > top_limit && top_limit - x - 14 > 0;
    if (cut) {
      pango_layout_set_width(layout, (int)((top_limit - x - 14) * PANGO_SCALE));
      pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_END);
    }
    draw_entry(cr, layout, &x, y, color, 2, 10, name, pal->text);
    if (cut) {
      pango_layout_set_width(layout, -1);
      pango_layout_set_ellipsize(layout, PANGO_ELLIPSIZE_NONE);
      x = top_limit;
    }
    shown++;
  }
  if (hidden) {
    g_autofree char *more = g_strdup_printf(_("+%u more"), hidden);
    draw_text(cr, layout, more, bottom_x, bottom_y, ALIGN_LEFT, pal->dim_text, NULL);
    bottom_x = bottom_limit + 1; /* both rows are full */
  }
  /* The faint bars above the stacks (bytes that came and went within one pixel column) and
   * the strip along the top of the plot (backward passes) say what they are after the
   * stacks, or, when the top row is full (a narrow pane), on the bottom row, so neither is
   * ever left unexplained. */
  gboolean ranges = FALSE;
  for (guint c = 0; c < f->n_columns && !ranges; c++)
    ranges = f->columns[c].min_total < f->columns[c].max_total;
  gs_rgba range = pal->outline;
  range.a *= 0.25;
  gs_rgba strip = pal->backward;
  strip.a = MIN(1.0, strip.a * 4);
  const struct {
    gboolean shown;
    const char *name;
    gs_rgba color;
    double swatch_y, swatch_h;
  } extras[] = {
      {ranges, _("range within a pixel"), range, 2, 10},
      /* TRANSLATORS: the timeline's dashed line: bytes that are not the engine's own (a blob,
       * DLPack, a mapped file, shared memory such as a DataLoader worker's batches) */
      {any_outside(f), _("external and shared memory"), pal->outside, 6, 2},
      {backward_in_view(f, index), _("backward pass"), strip, 5, 4},
  };
  for (guint i = 0; i < G_N_ELEMENTS(extras); i++) {
    if (!extras[i].shown)
      continue;
    double w = 14 + text_width(layout, extras[i].name) + 14;
    double *at = &x, row = y;
    if (on_bottom || x + w > top_limit) {
      if (bottom_x + w > bottom_limit)
        continue;
      at = &bottom_x, row = bottom_y;
    }
    draw_entry(cr, layout, at, row, extras[i].color, extras[i].swatch_y, extras[i].swatch_h,
               extras[i].name, pal->text);
  }
}

void gs_timeline_draw(cairo_t *cr, const gs_timeline_frame *f, gs_trace_model *m,
                      gs_timeline_index *index, const gs_timeline_decor *decor) {
  const gs_timeline_palette *pal = gs_timeline_palette_get(decor->dark);
  cairo_save(cr);
  set_color(cr, pal->background);
  cairo_rectangle(cr, 0, 0, f->request.width, f->request.height);
  cairo_fill(cr);

  PangoLayout *layout = pango_cairo_create_layout(cr);
  PangoFontDescription *font = pango_font_description_from_string(FONT);
  pango_layout_set_font_description(layout, font);

  if (f->n_events == 0) {
    draw_text(cr, layout, _("No events yet"), f->request.width / 2.0,
              f->request.height / 2.0 - 8, ALIGN_CENTER, pal->dim_text, NULL);
  } else {
    cairo_save(cr);
    cairo_rectangle(cr, f->plot_x, f->plot_y, f->plot_width, f->plot_height);
    cairo_clip(cr);
    if (index)
      draw_spans(cr, f, m, index, pal, layout);
    draw_life(cr, f, decor, pal, layout, TRUE);
    g_autofree int *shown = shown_columns(f);
    draw_stacks(cr, f, shown, decor->dark);
    draw_outline(cr, f, shown, pal);
    draw_outside(cr, f, shown, pal);
    draw_life(cr, f, decor, pal, layout, FALSE);
    cairo_restore(cr);
    draw_byte_axis(cr, f, pal, layout);
    draw_event_axis(cr, f, m, pal, layout);
    if (index)
      draw_marks(cr, f, m, index, pal, layout);
    if (decor->hover_column >= 0)
      draw_vertical(cr, f, f->plot_x + decor->hover_column + 0.5, pal->hover, 1);
    if (decor->position != GS_TIMELINE_NO_EVENT && decor->position >= f->request.first &&
        decor->position <= f->request.last)
      draw_vertical(cr, f, round(gs_timeline_frame_x_of(f, decor->position)) + 0.5,
                    pal->position, 2);
    draw_legend(cr, f, m, index, decor->dark, pal, layout);
    draw_peak(cr, f, m, pal, layout);
  }
  pango_font_description_free(font);
  g_object_unref(layout);
  cairo_restore(cr);
}
