/* gs-compare-chart.h: the Compare view's memory chart: the bytes alive in two runs drawn over
 * one axis, run B's events moved onto run A's by the moments both share (step and epoch marks,
 * run-diff.h's anchors; with none, by the fraction of the run), the shared marks as dotted
 * lines, and a cursor at the place the table or a click chose. A click emits position-chosen
 * with the position on A's axis (a seq of run A; run-diff's gs_run_diff_unalign gives B's).
 * Colours come from the memory timeline's palette (inspector/timeline/). */
#pragma once

#include <gtk/gtk.h>

#include "run-diff.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_COMPARE_CHART (gs_compare_chart_get_type())
G_DECLARE_FINAL_TYPE(GsCompareChart, gs_compare_chart, GS, COMPARE_CHART, GtkWidget)

GtkWidget *gs_compare_chart_new(void);
/* The models and diff are borrowed (the Compare page owns them and outlives the chart);
 * labels name the runs in the legend. */
void gs_compare_chart_set_runs(GsCompareChart *self, gs_trace_model *a, gs_trace_model *b,
                               const gs_run_diff *diff, const char *label_a,
                               const char *label_b);
/* The cursor at a_pos on A's axis; a negative a_pos hides it. */
void gs_compare_chart_set_cursor(GsCompareChart *self, double a_pos);
double gs_compare_chart_get_cursor(GsCompareChart *self);
/* Where event seq of run (0: A, 1: B) is drawn, in widget x, at the current width. */
double gs_compare_chart_x_of(GsCompareChart *self, guint run, guint64 seq);

G_END_DECLS
