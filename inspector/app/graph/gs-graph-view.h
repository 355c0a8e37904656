/* gs-graph-view.h: the computation-graph view: the autograd graph alive at the scrubber's
 * event, laid out by Graphviz on a worker thread (inspector/graph/layout/layout-worker.h) and
 * drawn by the shared renderer (graph-render.h). Zoom (scroll, pinch), pan (drag), fit (double-click on
 * the background, or gs_graph_view_fit), a minimap; a click selects a node (tensor nodes emit
 * tensor-selected), a double-click on an op emits event-selected with the event that created
 * it, on a collapsed "×N" group expands it; tooltips say what a node is. The previous layout
 * stays drawn while the next one is computed; a graph the layout refuses (too large for dot)
 * replaces it with the reason. While the view is hidden (another page of the stack) it only
 * remembers the position and builds the graph when shown.
 *
 * Follows the view contract: set_model / set_position / model_grew, signals tensor-selected
 * (guint64 tensor id) and event-selected (guint64 event index); layout-changed when a new
 * layout is drawn or the graph at the position cannot be (gs_graph_view_get_problem says
 * why). While a live source grows at the position shown, the graph is rebuilt at most four
 * times a second. */
#pragma once

#include <gtk/gtk.h>

#include "graph-layout.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_GRAPH_VIEW (gs_graph_view_get_type())
G_DECLARE_FINAL_TYPE(GsGraphView, gs_graph_view, GS, GRAPH_VIEW, GtkWidget)

GtkWidget *gs_graph_view_new(void);
/* model is borrowed (the capture page owns it and outlives its views); NULL clears. */
void gs_graph_view_set_model(GsGraphView *self, gs_trace_model *model);
/* Shows the graph just after event index. */
void gs_graph_view_set_position(GsGraphView *self, guint64 index);
/* A live source appended events: redraws if the position shown was past the old end. */
void gs_graph_view_model_grew(GsGraphView *self);

/* Highlights the node of tensor (chosen in another view), if it is drawn; 0 clears. */
void gs_graph_view_select_tensor(GsGraphView *self, guint64 tensor);

/* Draws the nodes whose item keys marks holds ("n12" -> GINT_TO_POINTER(gs_graph_mark)) in
 * their mark's colour (the Compare view: nodes only one run has); NULL clears. The table is
 * referenced, not copied. */
void gs_graph_view_set_marks(GsGraphView *self, GHashTable *marks);

/* Zooms by factor keeping what is under widget point (x, y) there (the scroll wheel's and a
 * pinch's zoom). */
void gs_graph_view_zoom_at(GsGraphView *self, double factor, double x, double y);
/* Fits the whole graph in the view. */
void gs_graph_view_fit(GsGraphView *self);
/* Expands the collapsed group with key (what a double-click on it does). */
void gs_graph_view_expand(GsGraphView *self, const char *group_key);

/* The layout drawn now (NULL before the first), and whether a newer one is being computed. */
const gs_layout *gs_graph_view_get_layout(GsGraphView *self);
gboolean gs_graph_view_is_busy(GsGraphView *self);
/* Why the graph at the position is not drawn (the layout refused it: too large for dot, or
 * Graphviz failed), as the view says it; NULL while a layout is drawn or none was asked for. */
const char *gs_graph_view_get_problem(GsGraphView *self);
/* The selected layout node, or -1. */
gint gs_graph_view_get_selected(GsGraphView *self);
/* Where layout point (x, y) is in widget coordinates (tests, tooltips). */
void gs_graph_view_layout_to_widget(GsGraphView *self, double x, double y, double *wx,
                                    double *wy);

G_END_DECLS
