/* graph-source.h: the graph at any event of a trace model, for the graph view.
 *
 * The model's seek gives the replayed state; storage versions are not part of it, so this
 * keeps a gs_graph_versions fed with the model's in-place writes and errors up to the
 * position asked for: forward moves feed only the events in between (a few kind bytes each,
 * decoding only writes and errors), a move back rewinds it (gs_graph_versions_rewind) instead
 * of starting again from the first event.
 *
 * Items are clustered by the scope they were created in (the model knows it for any event),
 * not by their current owner as gs_graph_build does from a replay alone. */
#pragma once

#include <glib.h>

#include "graph.h"
#include "trace-model.h"

G_BEGIN_DECLS

typedef struct gs_graph_source gs_graph_source;

/* model is borrowed and must outlive the source. */
gs_graph_source *gs_graph_source_new(gs_trace_model *model);
void gs_graph_source_free(gs_graph_source *source);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_graph_source, gs_graph_source_free)

/* The full graph (uncollapsed) just after event index (clamped to the last event); an empty
 * graph while the model has no events. Moves the model's seek position. */
gs_graph *gs_graph_source_build(gs_graph_source *source, guint64 index);

/* Past this many live graph nodes the inspector builds no graph: the build walks every node
 * on the UI thread (200,000 took 1.5 s), and what it would hand to dot must fold to
 * GS_LAYOUT_MAX_NODES anyway. Far above a real step's graph (a few thousand nodes). */
#define GS_GRAPH_SOURCE_MAX_NODES 50000

/* As gs_graph_source_build, unless more than max_nodes graph nodes are alive just after index:
 * then NULL, with error (GS_LAYOUT_ERROR_TOO_LARGE) saying how many and the limit. The check
 * costs the seek only. */
gs_graph *gs_graph_source_build_at_most(gs_graph_source *source, guint64 index, guint max_nodes,
                                        GError **error);

/* The index of the n-th backward_begin event (from 0), or G_MAXUINT64: "the graph of a
 * chosen backward" is the graph at that event. */
guint64 gs_graph_source_find_backward(gs_graph_source *source, guint n);

G_END_DECLS
