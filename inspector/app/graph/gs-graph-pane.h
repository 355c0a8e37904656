/* gs-graph-pane.h: the Graph page of a capture: the graph view (gs-graph-view.h) under a
 * header that picks a backward pass (previous / next / its number: the scrubber moves to the
 * pass's backward_begin, where the graph it walks is complete) and says what is drawn (nodes,
 * folded groups, or that no graph is alive at that event).
 *
 * Follows the view contract: set_model / set_position / model_grew, signals tensor-selected
 * (guint64 tensor id) and event-selected (guint64 event index); select_tensor highlights a
 * tensor chosen in another view. */
#pragma once

#include <gtk/gtk.h>

#include "gs-graph-view.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_GRAPH_PANE (gs_graph_pane_get_type())
G_DECLARE_FINAL_TYPE(GsGraphPane, gs_graph_pane, GS, GRAPH_PANE, GtkWidget)

GtkWidget *gs_graph_pane_new(void);
/* model is borrowed (the capture page owns it and outlives its views); NULL clears. */
void gs_graph_pane_set_model(GsGraphPane *self, gs_trace_model *model);
void gs_graph_pane_set_position(GsGraphPane *self, guint64 index);
void gs_graph_pane_model_grew(GsGraphPane *self);
void gs_graph_pane_select_tensor(GsGraphPane *self, guint64 tensor);

/* In a distributed run's page the graphs drawn are one rank's (the first log's): the header
 * names it. rank < 0 (the default) for a single log: no name. get_rank_text gives the name
 * shown, or NULL. */
void gs_graph_pane_set_rank(GsGraphPane *self, gint64 rank);
const char *gs_graph_pane_get_rank_text(GsGraphPane *self);

GsGraphView *gs_graph_pane_get_view(GsGraphPane *self);
/* Backward passes seen so far, and the one (from 1) whose begin is at or before the position
 * (0 before the first). */
guint gs_graph_pane_get_n_passes(GsGraphPane *self);
guint gs_graph_pane_get_pass(GsGraphPane *self);
/* Moves the scrubber (through event-selected) to the begin of backward pass number pass
 * (from 1); FALSE if there is no such pass. */
gboolean gs_graph_pane_go_to_pass(GsGraphPane *self, guint pass);

G_END_DECLS
