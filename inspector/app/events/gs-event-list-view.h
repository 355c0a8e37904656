/* gs-event-list-view.h: the event list: a GtkColumnView of #seq, time, thread, kind and
 * summary over a lazy list model, with a search entry and filters by kind, thread, tensor and
 * scope. Follows the view contract (set_model, set_position, model_grew, tensor-selected,
 * event-selected). */
#pragma once

#include <gtk/gtk.h>

#include "gs-event-list-model.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_EVENT_LIST_VIEW (gs_event_list_view_get_type())
G_DECLARE_FINAL_TYPE(GsEventListView, gs_event_list_view, GS, EVENT_LIST_VIEW, GtkWidget)

GtkWidget *gs_event_list_view_new(void);
void gs_event_list_view_set_model(GsEventListView *self, gs_trace_model *model);
/* The same, but the column view gets its first rows only: each gs_event_list_view_step lets
 * a few more in, and returns TRUE once all are (GTK 4.8 makes a list's ~200 rows at once
 * otherwise). The list model (gs_event_list_view_get_list) has every row from the start. */
void gs_event_list_view_set_model_in_steps(GsEventListView *self, gs_trace_model *model);
gboolean gs_event_list_view_step(GsEventListView *self);
/* Selects and scrolls to the row of event index, if it is shown. */
void gs_event_list_view_set_position(GsEventListView *self, guint64 index);
void gs_event_list_view_model_grew(GsEventListView *self);
/* The logs of a distributed run's ranks (borrowed; NULL for none), its first lane's model
 * being the one set: every rank's events merged in time order, with a Rank column and a rank
 * filter when there are several. Positions (set_position, event-selected) stay the first
 * rank's event indices. */
void gs_event_list_view_set_run(GsEventListView *self, gs_rank_run *run);
/* Shows only lane's events (G_MAXUINT: every rank's), as the rank drop-down does. */
void gs_event_list_view_set_rank_filter(GsEventListView *self, guint lane);

/* Filters set from elsewhere (the scope tree, the tensor details): fill the entries too.
 * 0 clears. */
void gs_event_list_view_set_scope_filter(GsEventListView *self, guint64 scope_id);
void gs_event_list_view_set_tensor_filter(GsEventListView *self, guint64 tensor_id);
void gs_event_list_view_set_search(GsEventListView *self, const char *text);
/* kind 0: every kind. */
void gs_event_list_view_set_kind_filter(GsEventListView *self, gs_trace_kind kind);
void gs_event_list_view_focus_search(GsEventListView *self);

/* The event of the selected row, or G_MAXUINT64. */
guint64 gs_event_list_view_get_selected_index(GsEventListView *self);
/* The list model behind the rows (tests count rows through it). */
GsEventListModel *gs_event_list_view_get_list(GsEventListView *self);

G_END_DECLS
