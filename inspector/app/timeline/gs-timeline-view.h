/* gs-timeline-view.h: the memory timeline: bytes alive over the run, stacked by scope or by
 * category, with the peak, user marks, outermost scopes and backward passes, and the
 * scrubber's event as a line (drawn by inspector/timeline/, the renderer `gradscope
 * export-timeline` uses too). Hovering shows a column's totals; clicking lists what was alive
 * at that event and why; Ctrl+scroll zooms in time around the pointer, scrolling or dragging
 * pans, and the view follows the scrubber and a growing source.
 *
 * Signals (the view contract): event-selected (guint64 index) on a click in the chart;
 * tensor-selected (guint64 tensor_id) when a row of the alive list is activated. */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_TIMELINE_VIEW (gs_timeline_view_get_type())
G_DECLARE_FINAL_TYPE(GsTimelineView, gs_timeline_view, GS, TIMELINE_VIEW, GtkWidget)

GtkWidget *gs_timeline_view_new(void);
/* Borrowed: the capture page owns the model and outlives its views. NULL clears. */
void gs_timeline_view_set_model(GsTimelineView *self, gs_trace_model *model);
/* The scrubber's event: drawn as a line; the viewport pans to keep it visible. */
void gs_timeline_view_set_position(GsTimelineView *self, guint64 index);
/* A live source appended events: a viewport showing the end keeps showing it. */
void gs_timeline_view_model_grew(GsTimelineView *self);

/* Stacks by scope groups (TRUE) or memory categories (FALSE); the toggle in the header. */
void gs_timeline_view_set_by_scope(GsTimelineView *self, gboolean by_scope);
gboolean gs_timeline_view_get_by_scope(GsTimelineView *self);
/* Events first..last shown (clamped; at least a few events wide). */
void gs_timeline_view_set_viewport(GsTimelineView *self, guint64 first, guint64 last);
void gs_timeline_view_get_viewport(GsTimelineView *self, guint64 *first, guint64 *last);
/* Zooms by factor (< 1 zooms in) around the event under chart x. */
void gs_timeline_view_zoom(GsTimelineView *self, double factor, double x);

/* What a click at chart coordinate x does: selects the event there, fills the alive list and
 * emits event-selected. Returns the event, or G_MAXUINT64 if there is none. */
guint64 gs_timeline_view_click(GsTimelineView *self, double x);
/* The chart x at the centre of event index (as drawn now). */
double gs_timeline_view_x_of(GsTimelineView *self, guint64 index);
/* The alive list (GsAliveItem), largest first. */
GListModel *gs_timeline_view_get_alive(GsTimelineView *self);
/* The alive list's rows as shown (GtkTreeListRow of GsAliveItem): objects grouped by where
 * they were made, op, shape and holder, a group opening to its members. */
GListModel *gs_timeline_view_get_alive_rows(GsTimelineView *self);
/* The tensor chosen in another view (0 for none): its life is drawn as a band over the
 * chart, and stays up to date while a live source grows. */
void gs_timeline_view_select_tensor(GsTimelineView *self, guint64 tensor);
/* The band drawn: its first and last event; FALSE when there is none. */
gboolean gs_timeline_view_get_tensor_life(GsTimelineView *self, guint64 *first,
                                          guint64 *last);
/* The chart's hover text at chart coordinate x (newly allocated; NULL outside the data). */
char *gs_timeline_view_describe_at(GsTimelineView *self, double x);

G_END_DECLS
