/* rank-lanes.h: the memory timelines of a distributed run's ranks (rank-run.h), one lane per
 * rank stacked top to bottom over one shared time axis: each lane's bytes alive by category,
 * the spans the rank waited for the others shaded, and each collective drawn as a line across
 * the lanes through the moment it ended on each rank, so a straggler shows as the rank that
 * never waits while the others do. The GTK view (app/timeline/gs-rank-lanes-view.c) draws it
 * into a snapshot and `gradscope export-timeline A B ...` into a PNG (timeline-export.c);
 * cairo and Pango only, so tests and export need no display. */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "rank-run.h"

G_BEGIN_DECLS

/* What is shown: the shared axis from t0 to t1 (ns) in a width x height area. */
typedef struct gs_rank_lanes_view {
  guint64 t0, t1;
  int width, height;
  gboolean dark;
  double hover_x; /* a vertical line where the pointer is, < 0 for none */
} gs_rank_lanes_view;

/* The plot's place in the area: lanes between the legend (top) and the time axis (bottom),
 * labels on the left. */
typedef struct gs_rank_lanes_geometry {
  double plot_x, plot_width;
  double lanes_y, lane_height, lane_gap;
} gs_rank_lanes_geometry;

void gs_rank_lanes_geometry_get(const gs_rank_run *run, const gs_rank_lanes_view *view,
                                gs_rank_lanes_geometry *out);
/* Only plot_x and plot_width, which do not depend on the run: what zooming and dragging need,
 * without get's look at every lane's columns for the legend's rows (which place the lanes). */
void gs_rank_lanes_plot_place(const gs_rank_lanes_view *view, gs_rank_lanes_geometry *out);
/* The shared time at x (clamped to the view), and the lane at y (G_MAXUINT: none). */
guint64 gs_rank_lanes_time_at(const gs_rank_lanes_view *view, const gs_rank_lanes_geometry *g,
                              double x);
guint gs_rank_lanes_lane_at(const gs_rank_run *run, const gs_rank_lanes_geometry *g, double y);

/* An entry of the legend above the lanes. */
typedef struct gs_rank_lanes_legend_entry {
  const char *name;   /* translated, static */
  int category;       /* a gs_mem_category; -2 the waits' shade, -1 the collectives' line */
  double x, y, width; /* the swatch's left edge, the row's top, swatch and name together */
} gs_rank_lanes_legend_entry;

#define GS_RANK_LANES_LEGEND_MAX (2 + GS_MEM_N_CATEGORIES)

/* The legend as view lays it out: the two marks on the first row, then an entry for each
 * category the lanes draw in view, from a new row, wrapping onto as many rows as the width
 * needs (the lanes start below the last), so every colour drawn is named. Fills
 * out[GS_RANK_LANES_LEGEND_MAX] and returns how many. */
guint gs_rank_lanes_legend(const gs_rank_run *run, const gs_rank_lanes_view *view,
                           gs_rank_lanes_legend_entry *out);

/* A collective drawn across the lanes: x[lane] where it ended on that lane (NAN where the lane
 * has no end). */
typedef struct gs_rank_lanes_line {
  guint collective; /* its place in gs_rank_run_collectives */
  double *x;        /* n_lanes */
} gs_rank_lanes_line;

/* A wait shaded on its lane, x0..x1 clipped to the plot. */
typedef struct gs_rank_lanes_shade {
  guint lane, wait; /* wait: its place in gs_rank_run_waits(lane) */
  double x0, x1;
} gs_rank_lanes_shade;

/* What the view shows of the run between the ranks: lines (collectives ended on two lanes or
 * more, at least one end in view) and shades (waits overlapping the view). */
typedef struct gs_rank_lanes_shapes {
  GArray *lines;  /* gs_rank_lanes_line */
  GArray *shades; /* gs_rank_lanes_shade */
} gs_rank_lanes_shapes;

gs_rank_lanes_shapes *gs_rank_lanes_shapes_new(const gs_rank_run *run,
                                               const gs_rank_lanes_view *view);
void gs_rank_lanes_shapes_free(gs_rank_lanes_shapes *shapes);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_rank_lanes_shapes, gs_rank_lanes_shapes_free)

/* Draws the lanes, shades, lines, the time axis and the legend at (0, 0) of cr. */
void gs_rank_lanes_draw(cairo_t *cr, const gs_rank_run *run, const gs_rank_lanes_view *view);

/* The lanes as view shows them, drawn by gs_rank_lanes_draw into a view->width x
 * view->height PNG file (timeline-export.c; `gradscope export-timeline A B ...`). FALSE with
 * error set, translated, if it cannot be written. */
gboolean gs_rank_lanes_export_png(const gs_rank_run *run, const gs_rank_lanes_view *view,
                                  const char *path, GError **error);

/* What is at (x, y) in words, translated, for a tooltip: the rank, the time and the bytes
 * alive, the wait it is in, the collective whose line passes within a few pixels. NULL off
 * the lanes. Free with g_free. */
char *gs_rank_lanes_describe(const gs_rank_run *run, const gs_rank_lanes_view *view, double x,
                             double y);

G_END_DECLS
