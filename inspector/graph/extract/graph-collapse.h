/* graph-collapse.h: keeping big graphs readable (and dot fast) by collapsing repeated
 * structure. Scope instances with the same name under the same outer scope (time steps,
 * repeated module calls, micro-batches) are the repetition the engine records: beyond a limit
 * of visible items, all but the last instance of such a run become one item "name ×N", the
 * largest runs first, until the graph fits. A scope run that was expanded (double-click in the
 * view) stays open. */
#pragma once

#include <glib.h>

#include "graph.h"

G_BEGIN_DECLS

/* The view's default: beyond about this many items dot gets slow and the picture unreadable. */
#define GS_GRAPH_COLLAPSE_LIMIT 1500

/* A new graph with at most about limit items (when the scopes allow it). expanded (may be
 * NULL) is a set of group keys (char *) to keep open. Items keep their order; group items
 * (GS_GRAPH_GROUP, members > 1, key "g...") come after them. Edges into and out of a group go
 * to the group item, duplicates merged, edges inside it dropped. */
gs_graph *gs_graph_collapse(const gs_graph *graph, guint limit, GHashTable *expanded);

/* Tensors feeding more than this many nodes are drawn once per consumer beyond the first. */
#define GS_GRAPH_HUB_LIMIT 3

/* Splits hubs in place: a leaf, saved tensor or plain tensor with more than limit outgoing
 * gradient/saved edges keeps its first edge, and each further consumer gets its own copy of
 * it (same kind, tensor and label, key "<key>~N", in the consumer's scope). A weight used in
 * every time step otherwise pulls an edge across the whole graph per step: dot spent minutes
 * on a 200-node unrolled RNN that way, and the picture was a fan of crossing lines. */
void gs_graph_split_hubs(gs_graph *graph, guint limit);

G_END_DECLS
