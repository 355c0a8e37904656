/* graph-layout.h: a gs_graph laid out by Graphviz dot, as plain data a UI or an exporter
 * draws by itself: node boxes, edge splines with their arrowheads, edge labels, cluster boxes.
 *
 * Units: points (1/72 inch), origin at the top-left of the drawing, y growing DOWN (Graphviz
 * gives y up; the flip is done here once, so drawing code matches cairo and GTK).
 *
 * Graphviz keeps global state and is not thread-safe, and its pango plugin caches a font name
 * that a freed GVC context leaves dangling: so there is one GVC context per process, made on
 * first use and kept (like Graphviz's plugin state), and every Graphviz call here holds one
 * lock. UIs go through the single layout thread (layout-worker.h) so they never wait on it;
 * the CLI and benchmarks call gs_layout_compute directly. */
#pragma once

#include <glib.h>
#include <graphviz/gvc.h>

#include "graph.h"

G_BEGIN_DECLS

typedef struct gs_layout_node {
  guint item;              /* index in graph->items */
  double x, y;             /* centre */
  double width, height;
  char *label;             /* the text Graphviz laid out (escapes resolved): what to draw */
} gs_layout_node;

typedef struct gs_layout_edge {
  guint edge;              /* index in graph->edges */
  double *points;          /* x, y pairs: cubic bezier segments, 1 + 3n points */
  guint n_points;
  gboolean arrow_start, arrow_end;
  double sx, sy, ex, ey;   /* arrowhead tips (the spline stops at the arrow's base) */
  char *label;             /* "view", "detached from"... or NULL */
  double lx, ly;           /* label centre */
} gs_layout_edge;

typedef struct gs_layout_cluster {
  guint64 scope;
  double x0, y0, x1, y1;   /* box */
  char *label;
  double lx, ly;           /* label centre */
  guint depth;             /* 0 for a top-level cluster */
} gs_layout_cluster;

typedef struct gs_layout {
  gs_graph *graph;         /* owned: what was laid out */
  double width, height;    /* the drawing's size */
  GArray *nodes;           /* gs_layout_node, one per graph item, same order */
  GArray *edges;           /* gs_layout_edge, one per graph edge, same order */
  GArray *clusters;        /* gs_layout_cluster, outer ones before inner ones */
  char *title;             /* or NULL */
  double title_x, title_y;
  double seconds;          /* how long dot took */
} gs_layout;

typedef struct gs_layout_options {
  gboolean clusters;       /* a cluster per scope (also what keeps dot fast on big graphs) */
  const char *title;       /* NULL for none */
} gs_layout_options;

#define GS_LAYOUT_ERROR (gs_layout_error_quark())
/* Beyond these, dot takes minutes (5,000 nodes flat: 14 s here, and it grows faster than the
 * square): the layout refuses, saying so, instead of hanging the worker or the command. */
#define GS_LAYOUT_MAX_NODES 4000
#define GS_LAYOUT_MAX_EDGES 20000
/* The error code of a graph refused for its size (here, or before it is built). */
#define GS_LAYOUT_ERROR_TOO_LARGE 4
GQuark gs_layout_error_quark(void);

/* Lays graph out (taking it) with dot. NULL with error set if Graphviz refuses. Blocks while
 * another thread is inside Graphviz. */
gs_layout *gs_layout_compute(gs_graph *graph, const gs_layout_options *options, GError **error);
void gs_layout_free(gs_layout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_layout, gs_layout_free)

/* The node under point (x, y) in layout units, or -1. */
gint gs_layout_node_at(const gs_layout *layout, double x, double y);

G_END_DECLS
