/* gs-rank-lanes-view.h: the Memory page of a distributed run: one memory timeline per rank,
 * stacked over one shared time axis (timeline/rank-lanes.h draws it), zoomed with Ctrl+scroll
 * and panned with scroll or a drag, all lanes together; waits shaded, collectives drawn across
 * the lanes, a tooltip saying what is under the pointer. */
#pragma once

#include <gtk/gtk.h>

#include "rank-run.h"

G_BEGIN_DECLS

#define GS_TYPE_RANK_LANES_VIEW (gs_rank_lanes_view_get_type())
G_DECLARE_FINAL_TYPE(GsRankLanesView, gs_rank_lanes_view, GS, RANK_LANES_VIEW, GtkWidget)

GtkWidget *gs_rank_lanes_view_new(void);
/* Borrowed; NULL shows nothing. Shows the whole run. */
void gs_rank_lanes_view_set_run(GsRankLanesView *self, gs_rank_run *run);
/* The shared axis shown (ns). */
void gs_rank_lanes_view_get_range(GsRankLanesView *self, guint64 *t0, guint64 *t1);
/* Shows t0..t1 (clamped to the run). */
void gs_rank_lanes_view_set_range(GsRankLanesView *self, guint64 t0, guint64 t1);
/* Zooms by factor (> 1: out) around x (pixels), as Ctrl+scroll does. */
void gs_rank_lanes_view_zoom(GsRankLanesView *self, double factor, double x);
/* The tooltip's text at (x, y), or NULL (tests). */
char *gs_rank_lanes_view_describe_at(GsRankLanesView *self, double x, double y);

G_END_DECLS
