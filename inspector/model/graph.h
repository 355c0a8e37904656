/* graph.h: the autograd graph alive in a replayed state, in torchviz's vocabulary: op nodes,
 * leaves (AccumulateGrad, labelled with the leaf's name), tensors saved for backward, and the
 * outputs (tensors made by nodes nothing consumes). Drawing it is left to the writer: DOT text
 * in the CLI, a cgraph layout in the inspector. */
#pragma once

#include <glib.h>

#include "replay.h"

G_BEGIN_DECLS

typedef enum gs_graph_item_kind {
  GS_GRAPH_OP,     /* a backward node: label is its kind */
  GS_GRAPH_LEAF,   /* an AccumulateGrad node: label is the leaf's name or handle */
  GS_GRAPH_SAVED,  /* a tensor some node saved for backward */
  GS_GRAPH_OUTPUT, /* the tensor a root node made */
} gs_graph_item_kind;

typedef struct gs_graph_item {
  gs_graph_item_kind kind;
  guint64 id;   /* node id (op, leaf) or tensor id (saved, output) */
  guint64 tensor; /* the tensor it stands for (leaf, saved, output), else 0 */
  char *key;    /* unique and stable: "n12", "t4294967298" */
  char *label;  /* may contain anything user code named things: escape before use */
} gs_graph_item;

typedef struct gs_graph_edge {
  guint from, to;      /* item indices */
  gboolean undirected; /* a saved tensor joined to its node */
} gs_graph_edge;

typedef struct gs_graph {
  GArray *items; /* gs_graph_item */
  GArray *edges; /* gs_graph_edge: input -> consumer, node -> output, saved -- node */
} gs_graph;

/* The graph of the nodes alive in replay now, items in node-id order. */
gs_graph *gs_graph_build(const gs_replay *replay);
void gs_graph_free(gs_graph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_graph, gs_graph_free)

G_END_DECLS
