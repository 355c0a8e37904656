/* graph-dot.h: a gs_graph as Graphviz DOT text, in torchviz's colours: ops gray, leaves light
 * blue, saved tensors orange on undirected edges, outputs green; views dotted, copy-on-write
 * clones dashed, detaches labelled "detached from"; failed version checks red. One writer for
 * `gradscope export-dot` and for the layout (inspector/graph/), which reads the text back with
 * agmemread: every name from user code goes through gs_escape_dot here and nowhere else. */
#pragma once

#include <glib.h>

#include "graph.h"

G_BEGIN_DECLS

/* Graphviz's own reader is quadratic in clusters (cgraph's subgraphs: 2,000 parse in 0.8 s,
 * 4,000 in 3.2 s, 200,000 in hours): a graph with more scopes than this is written without
 * clusters. */
#define GS_GRAPH_DOT_MAX_CLUSTERS 2000

typedef struct gs_graph_dot_options {
  const char *title;   /* graph label, or NULL for none */
  gboolean clusters;   /* a cluster per scope (nested like the scopes), if there are at most
                        * GS_GRAPH_DOT_MAX_CLUSTERS (see gs_graph_dot_clusters) */
  gboolean ids;        /* id="eN" on edge N, so a layout can find its edges again */
} gs_graph_dot_options;

/* Whether options give graph its clusters. */
gboolean gs_graph_dot_clusters(const gs_graph *graph, const gs_graph_dot_options *options);

/* The text an item shows: its label, then its version line ("v2", "saved v0, now v2"). */
char *gs_graph_item_display_label(const gs_graph_item *item);

/* Appends the graph as a DOT digraph. */
void gs_graph_write_dot(GString *out, const gs_graph *graph, const gs_graph_dot_options *options);

G_END_DECLS
