/* rank-lanes.c: a distributed run's memory timelines stacked, one lane per rank, with waits
 * and collectives (see the header). Each lane is drawn from the trace model's per-column
 * memory summary over the events whose shared times fall in each pixel column. */
#include "rank-lanes.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <math.h>
#include <pango/pangocairo.h>

#include "dist-words.h"
#include "timeline-palette.h"

#define FONT "Sans 8"
#define BOLD_FONT "Sans Bold 9"
#define LABEL_WIDTH 112.0 /* "waited 388.3 ms" whole at the default font */
#define LEGEND_TOP 3.0
#define LEGEND_ROW 18.0 /* the marks on the first row, the categories on the next ones */
#define LEGEND_MIN_ROWS 2
#define AXIS_HEIGHT 24.0
#define LANE_GAP 10.0
#define RIGHT_MARGIN 8.0
/* A line passes "here" for a tooltip within this many pixels. */
#define NEAR_PX 3.0
/* The strip along a lane's top that marks its waits in full colour. */
#define WAIT_STRIP_PX 5.0
/* Collectives closer than this on average are drawn only between the lanes (and as ticks at
 * their edges): a whole run's thousands of lines would hide the lanes. */
#define DENSE_LINE_PX 6.0

static void categories_in_view(const gs_rank_run *run, const gs_rank_lanes_view *v,
                               const gs_rank_lanes_geometry *g, gboolean *seen, guint64 *bytes);
static guint legend_layout(const gboolean *seen, const gs_rank_lanes_view *v,
                           const gs_rank_lanes_geometry *g, gs_rank_lanes_legend_entry *out,
                           guint *rows);

/* The lanes below as many legend rows as the names of the categories in view need. */
static void place_lanes(const gs_rank_run *run, const gs_rank_lanes_view *view, guint rows,
                        gs_rank_lanes_geometry *g) {
  guint n = gs_rank_run_n_lanes(run);
  g->lanes_y = LEGEND_TOP + 1 + MAX(rows, LEGEND_MIN_ROWS) * LEGEND_ROW;
  g->lane_gap = LANE_GAP;
  double room = view->height - g->lanes_y - AXIS_HEIGHT - LANE_GAP * (n - 1);
  g->lane_height = MAX(16.0, room / n);
}

/* The plot's left and width, which the categories in view depend on (one lane column a
 * pixel): placed first. */
void gs_rank_lanes_plot_place(const gs_rank_lanes_view *view, gs_rank_lanes_geometry *g) {
  g->plot_x = LABEL_WIDTH;
  g->plot_width = MAX(1.0, view->width - LABEL_WIDTH - RIGHT_MARGIN);
}

void gs_rank_lanes_geometry_get(const gs_rank_run *run, const gs_rank_lanes_view *view,
                                gs_rank_lanes_geometry *g) {
  gs_rank_lanes_plot_place(view, g);
  gboolean seen[GS_MEMORY_MAX_STACKS] = {0};
  categories_in_view(run, view, g, seen, NULL);
  gs_rank_lanes_legend_entry entries[GS_RANK_LANES_LEGEND_MAX];
  guint rows;
  legend_layout(seen, view, g, entries, &rows);
  place_lanes(run, view, rows, g);
}

static double x_of(const gs_rank_lanes_view *v, const gs_rank_lanes_geometry *g, guint64 t) {
  double span = (double)MAX(v->t1 - v->t0, 1);
  return g->plot_x + ((double)t - (double)v->t0) / span * g->plot_width;
}

guint64 gs_rank_lanes_time_at(const gs_rank_lanes_view *v, const gs_rank_lanes_geometry *g,
                              double x) {
  double f = CLAMP((x - g->plot_x) / g->plot_width, 0.0, 1.0);
  return v->t0 + (guint64)(f * (double)(v->t1 - v->t0));
}

static double lane_top(const gs_rank_lanes_geometry *g, guint lane) {
  return g->lanes_y + lane * (g->lane_height + g->lane_gap);
}

guint gs_rank_lanes_lane_at(const gs_rank_run *run, const gs_rank_lanes_geometry *g, double y) {
  for (guint i = 0; i < gs_rank_run_n_lanes(run); i++)
    if (y >= lane_top(g, i) && y < lane_top(g, i) + g->lane_height)
      return i;
  return G_MAXUINT;
}

/* ---- shapes ----------------------------------------------------------------------------- */

gs_rank_lanes_shapes *gs_rank_lanes_shapes_new(const gs_rank_run *run,
                                               const gs_rank_lanes_view *v) {
  gs_rank_lanes_geometry g; /* x_of needs only the plot's place, not the lanes' */
  gs_rank_lanes_plot_place(v, &g);
  guint n = gs_rank_run_n_lanes(run);
  gs_rank_lanes_shapes *s = g_new0(gs_rank_lanes_shapes, 1);
  s->lines = g_array_new(FALSE, TRUE, sizeof(gs_rank_lanes_line));
  s->shades = g_array_new(FALSE, TRUE, sizeof(gs_rank_lanes_shade));
  const GArray *all = gs_rank_run_collectives(run);
  for (guint c = 0; c < all->len; c++) {
    const gs_rank_collective *col = &g_array_index(all, gs_rank_collective, c);
    if (col->n_ended < 2)
      continue;
    gboolean in_view = FALSE;
    for (guint i = 0; i < n; i++)
      in_view |= col->end[i] != G_MAXUINT64 && col->end[i] >= v->t0 && col->end[i] <= v->t1;
    if (!in_view)
      continue;
    gs_rank_lanes_line line = {.collective = c, .x = g_new(double, n)};
    for (guint i = 0; i < n; i++)
      line.x[i] = col->end[i] == G_MAXUINT64 ? (double)NAN : x_of(v, &g, col->end[i]);
    g_array_append_val(s->lines, line);
  }
  for (guint lane = 0; lane < n; lane++) {
    const GArray *waits = gs_rank_run_waits(run, lane);
    for (guint w = 0; w < waits->len; w++) {
      const gs_rank_wait *wait = &g_array_index(waits, gs_rank_wait, w);
      if (wait->end < v->t0 || wait->begin > v->t1)
        continue;
      gs_rank_lanes_shade shade = {.lane = lane, .wait = w};
      shade.x0 = MAX(g.plot_x, x_of(v, &g, MAX(wait->begin, v->t0)));
      shade.x1 = MIN(g.plot_x + g.plot_width, x_of(v, &g, MIN(wait->end, v->t1)));
      g_array_append_val(s->shades, shade);
    }
  }
  return s;
}

void gs_rank_lanes_shapes_free(gs_rank_lanes_shapes *s) {
  if (!s)
    return;
  for (guint i = 0; i < s->lines->len; i++)
    g_free(g_array_index(s->lines, gs_rank_lanes_line, i).x);
  g_array_unref(s->lines);
  g_array_unref(s->shades);
  g_free(s);
}

/* ---- memory per column ------------------------------------------------------------------ */

/* Lane's memory over shared times [t, t_next): the column at its largest total, or FALSE
 * where the lane has no event by then (before its log began, or after it ended). */
static gboolean lane_column(const gs_rank_run *run, guint lane, guint64 t, guint64 t_next,
                            gs_memory_column *col) {
  gs_trace_model *m = gs_rank_run_model(run, lane);
  guint64 n = gs_trace_model_n_events(m);
  guint64 first = gs_rank_run_lane_index_at(run, lane, t);
  guint64 end = gs_rank_run_lane_index_at(run, lane, t_next);
  if (first >= n)
    return FALSE;
  if (end <= first) { /* no event in the column: the state after the one before it */
    if (first == 0)
      return FALSE;
    first = end = first - 1;
    end++;
  }
  gs_trace_model_memory_columns(m, first, end - 1, 1, FALSE, col);
  return TRUE;
}

static guint64 lane_peak(const gs_rank_run *run, guint lane) {
  gs_trace_model *m = gs_rank_run_model(run, lane);
  guint64 n = gs_trace_model_n_events(m);
  if (!n)
    return 0;
  gs_memory_column col;
  gs_trace_model_memory_columns(m, 0, n - 1, 1, FALSE, &col);
  return col.max_total;
}

/* Lane's memory in the plot's pixel column c: FALSE where nothing is alive or it has no event. */
static gboolean pixel_column(const gs_rank_run *run, const gs_rank_lanes_view *v,
                             const gs_rank_lanes_geometry *g, guint lane, int c,
                             gs_memory_column *col) {
  guint64 t = gs_rank_lanes_time_at(v, g, g->plot_x + c);
  guint64 t_next = gs_rank_lanes_time_at(v, g, g->plot_x + c + 1);
  return lane_column(run, lane, t, MAX(t_next, t + 1), col) && col->max_total;
}

static int plot_columns(const gs_rank_lanes_geometry *g) { return (int)ceil(g->plot_width); }

/* The categories the lanes draw in view: a category any lane shows in one of its columns.
 * bytes, if not NULL (n_lanes x plot_columns x GS_MEM_N_CATEGORIES, zeroed), gets each
 * column's bytes by category, for the drawing: the columns are looked up once a frame. */
static void categories_in_view(const gs_rank_run *run, const gs_rank_lanes_view *v,
                               const gs_rank_lanes_geometry *g, gboolean *seen, guint64 *bytes) {
  int columns = plot_columns(g);
  for (guint lane = 0; lane < gs_rank_run_n_lanes(run); lane++)
    for (int c = 0; c < columns; c++) {
      gs_memory_column col;
      if (!pixel_column(run, v, g, lane, c, &col))
        continue;
      guint64 *at = bytes ? bytes + ((gsize)lane * columns + c) * GS_MEM_N_CATEGORIES : NULL;
      for (guint s = 0; s < col.n_stacks && s < GS_MEM_N_CATEGORIES; s++) {
        seen[s] |= col.stack[s] != 0;
        if (at)
          at[s] = col.stack[s];
      }
    }
}

/* ---- the legend ------------------------------------------------------------------------- */

/* Lays the legend out from the plot's left edge to the right margin: the two marks, then
 * from a new row each category seen, an entry (swatch and name) going on the next row when
 * it does not fit whole on this one, so a narrow view names every colour it draws (an entry
 * wider than a whole row still gets one). Widths come from a layout of the default font map,
 * the same font as the drawing's. Returns the entries; *rows: the rows used. */
static guint legend_layout(const gboolean *seen, const gs_rank_lanes_view *v,
                           const gs_rank_lanes_geometry *g, gs_rank_lanes_legend_entry *out,
                           guint *rows) {
  PangoContext *context = pango_font_map_create_context(pango_cairo_font_map_get_default());
  PangoLayout *layout = pango_layout_new(context);
  PangoFontDescription *font = pango_font_description_from_string(FONT);
  pango_layout_set_font_description(layout, font);
  double left = g->plot_x, right = v->width - RIGHT_MARGIN, x = left;
  guint n = 0, row = 0;
  for (int what = -2; what < (int)GS_MEM_N_CATEGORIES; what++) {
    if (what >= 0 && !seen[what])
      continue;
    const char *name = what == -2   ? _("waiting for the other ranks")
                       : what == -1 ? _("a collective, where it ended on each rank")
                                    : gs_mem_category_name((gs_mem_category)what);
    pango_layout_set_text(layout, name, -1);
    int w, h;
    pango_layout_get_pixel_size(layout, &w, &h);
    double width = 16 + w;
    gboolean first_category = what >= 0 && (n == 0 || out[n - 1].category < 0);
    if (x > left && (first_category || x + width > right))
      row++, x = left;
    out[n++] = (gs_rank_lanes_legend_entry){
        .name = name, .category = what, .x = x, .y = LEGEND_TOP + row * LEGEND_ROW, .width = width};
    x += width + 14;
  }
  *rows = row + 1;
  pango_font_description_free(font);
  g_object_unref(layout);
  g_object_unref(context);
  return n;
}

guint gs_rank_lanes_legend(const gs_rank_run *run, const gs_rank_lanes_view *view,
                           gs_rank_lanes_legend_entry *out) {
  gs_rank_lanes_geometry g;
  gs_rank_lanes_plot_place(view, &g);
  gboolean seen[GS_MEMORY_MAX_STACKS] = {0};
  categories_in_view(run, view, &g, seen, NULL);
  guint rows;
  return legend_layout(seen, view, &g, out, &rows);
}

/* ---- drawing ---------------------------------------------------------------------------- */

static void set_color(cairo_t *cr, gs_rgba c) { cairo_set_source_rgba(cr, c.r, c.g, c.b, c.a); }

static gs_rgba with_alpha(gs_rgba c, double a) {
  c.a = a;
  return c;
}

static double show_text(cairo_t *cr, PangoLayout *layout, const char *text, double x, double y,
                        gboolean right, gs_rgba color) {
  pango_layout_set_text(layout, text, -1);
  int w, h;
  pango_layout_get_pixel_size(layout, &w, &h);
  set_color(cr, color);
  cairo_move_to(cr, right ? x - w : x, y);
  pango_cairo_show_layout(cr, layout);
  return w;
}

/* bytes: the lane's columns' bytes by category (categories_in_view). */
static void draw_lane(cairo_t *cr, const gs_rank_lanes_view *v, const gs_rank_lanes_geometry *g,
                      guint lane, const guint64 *bytes, guint64 scale) {
  double top = lane_top(g, lane), h = g->lane_height;
  int columns = plot_columns(g);
  for (int c = 0; c < columns; c++) {
    const guint64 *stack = bytes + (gsize)c * GS_MEM_N_CATEGORIES;
    double y = top + h;
    for (guint s = 0; s < GS_MEM_N_CATEGORIES; s++) {
      if (!stack[s])
        continue;
      double dh = h * (double)stack[s] / (double)scale;
      set_color(cr, gs_timeline_stack_color(v->dark, FALSE, s));
      cairo_rectangle(cr, g->plot_x + c, y - dh, 1, dh);
      cairo_fill(cr);
      y -= dh;
    }
  }
}

/* Waits as a tint over the lane's height (under the memory) or, strip, in full colour along
 * its top (over it). A wait narrower than a pixel is drawn at its width: antialiased, a
 * column's colour says what share of its time the rank waited. */
static void draw_shades(cairo_t *cr, const gs_rank_lanes_view *v, const gs_rank_lanes_geometry *g,
                        const gs_rank_lanes_shapes *s, gboolean strip) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  set_color(cr, with_alpha(p->wait, strip ? 0.9 : v->dark ? 0.28 : 0.18));
  for (guint i = 0; i < s->shades->len; i++) {
    const gs_rank_lanes_shade *sh = &g_array_index(s->shades, gs_rank_lanes_shade, i);
    cairo_rectangle(cr, sh->x0, lane_top(g, sh->lane), sh->x1 - sh->x0,
                    strip ? WAIT_STRIP_PX : g->lane_height);
  }
  cairo_fill(cr);
}

static void draw_lines(cairo_t *cr, const gs_rank_run *run, const gs_rank_lanes_view *v,
                       const gs_rank_lanes_geometry *g, const gs_rank_lanes_shapes *s) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  guint n = gs_rank_run_n_lanes(run);
  gboolean dense = s->lines->len * DENSE_LINE_PX > g->plot_width;
  set_color(cr, with_alpha(p->mark, dense ? 0.6 : 0.75));
  cairo_set_line_width(cr, 1.0);
  for (guint i = 0; i < s->lines->len; i++) {
    const gs_rank_lanes_line *line = &g_array_index(s->lines, gs_rank_lanes_line, i);
    /* Through each lane at its end there, slanting across the gaps between lanes: a line
     * that leans shows one rank finishing later than the other. Dense, only the gaps. */
    guint prev = G_MAXUINT;
    for (guint lane = 0; lane < n; lane++) {
      if (isnan(line->x[lane]))
        continue;
      double top = lane_top(g, lane), x = line->x[lane];
      double bottom = top + g->lane_height;
      if (prev != G_MAXUINT) {
        cairo_move_to(cr, line->x[prev], lane_top(g, prev) + g->lane_height);
        cairo_line_to(cr, x, top);
      }
      cairo_move_to(cr, x, dense ? MAX(top, bottom - LANE_GAP) : top);
      cairo_line_to(cr, x, bottom);
      if (dense) {
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, MIN(bottom, top + LANE_GAP));
      }
      prev = lane;
    }
  }
  cairo_stroke(cr);
}

static char *format_duration(guint64 ns) {
  if (ns >= 10 * G_GUINT64_CONSTANT(1000000000))
    return g_strdup_printf(_("%.1f s"), ns / 1e9);
  if (ns >= G_GUINT64_CONSTANT(1000000000))
    return g_strdup_printf(_("%.3f s"), ns / 1e9);
  if (ns >= 1000000)
    return g_strdup_printf(_("%.1f ms"), ns / 1e6);
  return g_strdup_printf(_("%.0f µs"), ns / 1e3);
}

/* Ticks every 1, 2 or 5 x 10^k ns, some 100 px apart. */
static void draw_axis(cairo_t *cr, PangoLayout *layout, const gs_rank_lanes_view *v,
                      const gs_rank_lanes_geometry *g, double y) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  double span = (double)MAX(v->t1 - v->t0, 1);
  double want = span * 100.0 / g->plot_width, step = 1;
  while (step * 10 <= want)
    step *= 10;
  step = want > step * 5 ? step * 10 : want > step * 2 ? step * 5 : want > step ? step * 2 : step;
  set_color(cr, p->axis);
  cairo_set_line_width(cr, 1.0);
  cairo_move_to(cr, g->plot_x, y + 0.5);
  cairo_line_to(cr, g->plot_x + g->plot_width, y + 0.5);
  cairo_stroke(cr);
  for (double t = ceil(v->t0 / step) * step; t <= v->t1; t += step) {
    double x = x_of(v, g, (guint64)t);
    set_color(cr, p->axis);
    cairo_move_to(cr, floor(x) + 0.5, y);
    cairo_line_to(cr, floor(x) + 0.5, y + 4);
    cairo_stroke(cr);
    g_autofree char *label = format_duration((guint64)t);
    pango_layout_set_text(layout, label, -1);
    int w, h;
    pango_layout_get_pixel_size(layout, &w, &h);
    if (x - w / 2.0 >= g->plot_x - 4 && x + w / 2.0 <= v->width)
      show_text(cr, layout, label, x - w / 2.0, y + 5, FALSE, p->dim_text);
  }
}

static void draw_labels(cairo_t *cr, PangoLayout *layout, PangoLayout *bold, const gs_rank_run *run,
                        const gs_rank_lanes_view *v, const gs_rank_lanes_geometry *g) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  for (guint lane = 0; lane < gs_rank_run_n_lanes(run); lane++) {
    double top = lane_top(g, lane), x = g->plot_x - 8;
    g_autofree char *name = g_strdup_printf(_("Rank %u"), gs_rank_run_rank(run, lane));
    show_text(cr, bold, name, x, top + 2, TRUE, p->text);
    if (g->lane_height < 44)
      continue;
    g_autofree char *size = g_format_size_full(lane_peak(run, lane), G_FORMAT_SIZE_IEC_UNITS);
    g_autofree char *peak = g_strdup_printf(_("peak %s"), size);
    show_text(cr, layout, peak, x, top + 18, TRUE, p->dim_text);
    if (g->lane_height < 58)
      continue;
    g_autofree char *d = format_duration(gs_rank_run_waited(run, lane));
    g_autofree char *waited = g_strdup_printf(_("waited %s"), d);
    show_text(cr, layout, waited, x, top + 31, TRUE, p->dim_text);
  }
}

static void draw_legend(cairo_t *cr, PangoLayout *layout, const gs_rank_lanes_view *v,
                        const gs_rank_lanes_legend_entry *entries, guint n) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  for (guint i = 0; i < n; i++) {
    const gs_rank_lanes_legend_entry *e = &entries[i];
    if (e->category == -1) { /* the collectives' line */
      set_color(cr, p->mark);
      cairo_set_line_width(cr, 2);
      cairo_move_to(cr, e->x + 6.5, e->y + 1);
      cairo_line_to(cr, e->x + 6.5, e->y + 13);
      cairo_stroke(cr);
    } else {
      set_color(cr, e->category == -2 ? with_alpha(p->wait, 0.9)
                                      : gs_timeline_stack_color(v->dark, FALSE, e->category));
      cairo_rectangle(cr, e->x, e->y + 2, 12, 10);
      cairo_fill(cr);
    }
    show_text(cr, layout, e->name, e->x + 16, e->y, FALSE, e->category < 0 ? p->text : p->dim_text);
  }
}

void gs_rank_lanes_draw(cairo_t *cr, const gs_rank_run *run, const gs_rank_lanes_view *v) {
  const gs_timeline_palette *p = gs_timeline_palette_get(v->dark);
  gs_rank_lanes_geometry g;
  gs_rank_lanes_plot_place(v, &g);
  gboolean seen[GS_MEMORY_MAX_STACKS] = {0};
  guint n = gs_rank_run_n_lanes(run);
  gsize per_lane = (gsize)plot_columns(&g) * GS_MEM_N_CATEGORIES;
  g_autofree guint64 *bytes = g_new0(guint64, n * per_lane);
  categories_in_view(run, v, &g, seen, bytes);
  gs_rank_lanes_legend_entry legend[GS_RANK_LANES_LEGEND_MAX];
  guint rows, n_legend = legend_layout(seen, v, &g, legend, &rows);
  place_lanes(run, v, rows, &g);
  set_color(cr, p->background);
  cairo_paint(cr);
  guint64 scale = 1;
  for (guint lane = 0; lane < gs_rank_run_n_lanes(run); lane++)
    scale = MAX(scale, lane_peak(run, lane));
  g_autoptr(gs_rank_lanes_shapes) shapes = gs_rank_lanes_shapes_new(run, v);
  cairo_save(cr);
  cairo_rectangle(cr, g.plot_x, 0, g.plot_width, v->height);
  cairo_clip(cr);
  for (guint lane = 0; lane < n; lane++) {
    set_color(cr, p->grid);
    cairo_rectangle(cr, g.plot_x, lane_top(&g, lane), g.plot_width, g.lane_height);
    cairo_fill(cr);
  }
  draw_shades(cr, v, &g, shapes, FALSE);
  for (guint lane = 0; lane < n; lane++)
    draw_lane(cr, v, &g, lane, bytes + lane * per_lane, scale);
  draw_shades(cr, v, &g, shapes, TRUE);
  draw_lines(cr, run, v, &g, shapes);
  cairo_restore(cr);
  PangoLayout *layout = pango_cairo_create_layout(cr);
  PangoFontDescription *font = pango_font_description_from_string(FONT);
  pango_layout_set_font_description(layout, font);
  PangoLayout *bold = pango_cairo_create_layout(cr);
  PangoFontDescription *bold_font = pango_font_description_from_string(BOLD_FONT);
  pango_layout_set_font_description(bold, bold_font);
  draw_labels(cr, layout, bold, run, v, &g);
  draw_legend(cr, layout, v, legend, n_legend);
  draw_axis(cr, layout, v, &g, lane_top(&g, n - 1) + g.lane_height + 2);
  if (v->hover_x >= g.plot_x) {
    set_color(cr, p->hover);
    cairo_move_to(cr, floor(v->hover_x) + 0.5, g.lanes_y);
    cairo_line_to(cr, floor(v->hover_x) + 0.5, lane_top(&g, n - 1) + g.lane_height);
    cairo_stroke(cr);
  }
  pango_font_description_free(font);
  pango_font_description_free(bold_font);
  g_object_unref(layout);
  g_object_unref(bold);
}

/* ---- words ------------------------------------------------------------------------------ */

char *gs_rank_lanes_describe(const gs_rank_run *run, const gs_rank_lanes_view *v, double x,
                             double y) {
  gs_rank_lanes_geometry g;
  gs_rank_lanes_geometry_get(run, v, &g);
  guint lane = gs_rank_lanes_lane_at(run, &g, y);
  if (lane == G_MAXUINT || x < g.plot_x || x > g.plot_x + g.plot_width)
    return NULL;
  guint64 t = gs_rank_lanes_time_at(v, &g, x);
  g_autofree char *at = format_duration(t);
  GString *out = g_string_new(NULL);
  gs_memory_column col;
  if (lane_column(run, lane, t, gs_rank_lanes_time_at(v, &g, x + 1) + 1, &col)) {
    g_autofree char *bytes = g_format_size_full(col.max_total, G_FORMAT_SIZE_IEC_UNITS);
    g_string_append_printf(out, _("Rank %u at %s: %s alive"), gs_rank_run_rank(run, lane), at,
                           bytes);
  } else {
    g_string_append_printf(out, _("Rank %u at %s: no events"), gs_rank_run_rank(run, lane), at);
  }
  const GArray *waits = gs_rank_run_waits(run, lane);
  guint64 slack = gs_rank_lanes_time_at(v, &g, x + NEAR_PX) - t;
  for (guint i = 0; i < waits->len; i++) {
    const gs_rank_wait *w = &g_array_index(waits, gs_rank_wait, i);
    if (w->begin <= t + slack && w->end + slack >= t) {
      g_autofree char *d = format_duration(w->end - w->begin);
      g_string_append_c(out, '\n');
      g_string_append_printf(out, _("waiting %s for the other ranks (%s)"), d,
                             gs_dist_wait_words(w->name));
      break;
    }
  }
  g_autoptr(gs_rank_lanes_shapes) shapes = gs_rank_lanes_shapes_new(run, v);
  const GArray *all = gs_rank_run_collectives(run);
  for (guint i = 0; i < shapes->lines->len; i++) {
    const gs_rank_lanes_line *line = &g_array_index(shapes->lines, gs_rank_lanes_line, i);
    if (isnan(line->x[lane]) || fabs(line->x[lane] - x) > NEAR_PX)
      continue;
    const gs_rank_collective *c = &g_array_index(all, gs_rank_collective, line->collective);
    g_autofree char *bytes = g_format_size_full(c->nbytes, G_FORMAT_SIZE_IEC_UNITS);
    g_string_append_c(out, '\n');
    g_string_append_printf(out, _("%s #%" PRIu64 " (%s) ended here; blocked in it:"),
                           gs_dist_collective_words(c->op), c->number, bytes);
    for (guint r = 0; r < gs_rank_run_n_lanes(run); r++)
      if (c->end[r] != G_MAXUINT64) {
        g_autofree char *d = format_duration(c->waited_ns[r]);
        g_string_append_printf(out, _(" rank %u %s"), gs_rank_run_rank(run, r), d);
      }
    break;
  }
  return g_string_free(out, FALSE);
}
