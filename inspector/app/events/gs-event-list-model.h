/* gs-event-list-model.h: the event list's GListModel over a trace model: items are
 * GsEventRow objects made on demand for the positions asked for (only the visible rows), never
 * one per event up front. Unfiltered, position N is event N. Filtered, the matching indices
 * are collected in idle chunks of a few milliseconds, so the list fills progressively and the
 * UI never blocks. */
#pragma once

#include <gio/gio.h>

#include "rank-run.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_EVENT_LIST_MODEL (gs_event_list_model_get_type())
G_DECLARE_FINAL_TYPE(GsEventListModel, gs_event_list_model, GS, EVENT_LIST_MODEL, GObject)

GsEventListModel *gs_event_list_model_new(void);

/* Borrowed; NULL empties the list. */
void gs_event_list_model_set_model(GsEventListModel *self, gs_trace_model *model);
/* The logs of a distributed run's ranks (borrowed; NULL: back to the model alone): every
 * rank's events merged in time order, each row knowing its rank. Positions and indices of
 * this list are then the run's merged positions (gs_rank_run_event_at). */
void gs_event_list_model_set_run(GsEventListModel *self, gs_rank_run *run);
gs_rank_run *gs_event_list_model_get_run(GsEventListModel *self);
/* Shows only the events of the run's lane (G_MAXUINT: every rank's). */
void gs_event_list_model_set_lane(GsEventListModel *self, guint lane);
/* Events were appended to the model: new rows (that match) are added at the end. */
void gs_event_list_model_model_grew(GsEventListModel *self);
/* Copies filter (its search text too); NULL or an empty filter shows every event. */
void gs_event_list_model_set_filter(GsEventListModel *self, const gs_event_filter *filter);
/* TRUE while a filter is still scanning the model ("filtering" property). */
gboolean gs_event_list_model_get_filtering(GsEventListModel *self);
/* Runs the scan to the end now (tests, and callers that need the full result). */
void gs_event_list_model_finish_filtering(GsEventListModel *self);

/* The event shown at position, and the position of event index (G_MAXUINT if not shown). */
guint64 gs_event_list_model_index_at(GsEventListModel *self, guint position);
guint gs_event_list_model_position_of(GsEventListModel *self, guint64 index);

G_END_DECLS
