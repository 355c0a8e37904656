/* graph-render.h: drawing a laid-out graph with cairo and Pango, one function for the widget
 * (GsGraphView draws it through a cairo render node) and for `gradscope export-graph` (an
 * image or SVG surface), so both show the same picture and the CLI needs no display.
 *
 * Colours follow torchviz: ops gray, leaves and parameters light blue, saved tensors orange
 * (ellipses, dashed undirected edges), outputs green; storage sharing in gray apart from
 * gradient edges: views dotted, copy-on-write clones dashed, detaches dotted with a circle;
 * failed version checks in red; collapsed groups as stacked yellow boxes. */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "graph-layout.h"

G_BEGIN_DECLS

/* Which part of the layout a surface shows: layout point (x, y) is at the surface's top-left,
 * and one layout point is `scale` surface units. */
typedef struct gs_graph_viewport {
  double x, y;
  double scale;
  double width, height; /* the surface's size, in its units */
} gs_graph_viewport;

/* How a node compares with the other run's graph (the Compare view): drawn in its colour,
 * which gs_graph_mark_rgb gives for the legend. */
typedef enum gs_graph_mark {
  GS_GRAPH_MARK_NONE,
  GS_GRAPH_MARK_REMOVED, /* in this run only: the other run lost it (red) */
  GS_GRAPH_MARK_ADDED,   /* in this run only: the other run did not have it (green) */
  GS_GRAPH_MARK_OUTSIDE, /* alive, but not in the backward pass compared (faded, dashed) */
} gs_graph_mark;

typedef struct gs_graph_style {
  gint selected;     /* layout node index drawn highlighted, -1 for none */
  gboolean dark;     /* dark background (libadwaita's dark style) */
  gboolean no_text;  /* shapes only (the minimap) */
  GHashTable *marks; /* item key -> GINT_TO_POINTER(gs_graph_mark), or NULL */
} gs_graph_style;

/* A mark's colour, components 0..1. */
void gs_graph_mark_rgb(gs_graph_mark mark, double *r, double *g, double *b);

/* The viewport that shows the whole layout centred in width x height, with a margin. */
void gs_graph_viewport_fit(const gs_layout *layout, double width, double height,
                           gs_graph_viewport *viewport);

/* Draws the background, clusters, edges, nodes and text visible in viewport. Text is skipped
 * where it would be too small to read. Passes that are off the viewport are culled. */
void gs_graph_render(cairo_t *cr, const gs_layout *layout, const gs_graph_viewport *viewport,
                     const gs_graph_style *style);

/* Writes the whole layout, fitted, to path: PNG (width x height pixels) or SVG (width x
 * height points), chosen by the extension. FALSE with error for any other extension or a
 * write failure. */
gboolean gs_graph_render_to_file(const gs_layout *layout, const char *path, int width,
                                 int height, GError **error);

G_END_DECLS
