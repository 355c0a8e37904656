/* gs-compare-page.h: the Compare view, a tab that holds two captures as a pair (A before a
 * change, B after): their memory over one axis (gs-compare-chart.h), the table of their
 * differences (model/analysis/run-diff.h's rows: activating one moves both runs to its
 * place), and the graphs of a chosen backward pass side by side in two graph views, nodes only
 * A has marked removed and nodes only B has marked added.
 *
 * Both logs are read on a worker thread (a model each for the views, and a run summary each
 * for the comparison); "busy" is TRUE meanwhile. Properties "title", "subtitle" and "busy" and
 * the signal "toast" (a message) are the ones the window's tabs follow on a capture page. */
#pragma once

#include <gtk/gtk.h>

#include "gs-compare-chart.h"
#include "gs-graph-view.h"

G_BEGIN_DECLS

#define GS_TYPE_COMPARE_PAGE (gs_compare_page_get_type())
G_DECLARE_FINAL_TYPE(GsComparePage, gs_compare_page, GS, COMPARE_PAGE, GtkWidget)

GsComparePage *gs_compare_page_new(const char *path_a, const char *path_b);

gboolean gs_compare_page_get_busy(GsComparePage *self);
/* Why the pair could not be compared (names the file), or NULL. */
const char *gs_compare_page_get_error(GsComparePage *self);

/* For tests and the window: the table's rows (GsDiffRow), the chart, the graph views (0: A,
 * 1: B), the diff (NULL until loaded). */
GListModel *gs_compare_page_get_rows(GsComparePage *self);
GsCompareChart *gs_compare_page_get_chart(GsComparePage *self);
GsGraphView *gs_compare_page_get_graph(GsComparePage *self, guint run);
const gs_run_diff *gs_compare_page_get_diff(GsComparePage *self);

/* What activating row position of the table does: both runs go to the row's place (the
 * chart's cursor, both graphs), and a backward pass's row shows that pass side by side. */
void gs_compare_page_activate_row(GsComparePage *self, guint position);
/* Shows backward pass index (in the diff's passes) side by side, its nodes marked. */
void gs_compare_page_show_pass(GsComparePage *self, guint index);
/* The event index each graph shows (G_MAXUINT64: none yet). */
guint64 gs_compare_page_get_position(GsComparePage *self, guint run);

G_END_DECLS
