/* gs-event-row.h: one row of the event list: an event index into a trace model. Rows are made
 * only for the rows on screen (see gs-event-list-model.c); every column reads the model
 * through the row when it is bound. */
#pragma once

#include <glib-object.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_EVENT_ROW (gs_event_row_get_type())
G_DECLARE_FINAL_TYPE(GsEventRow, gs_event_row, GS, EVENT_ROW, GObject)

/* model is borrowed: the list model that makes rows keeps it alive longer than its rows
 * are shown. */
GsEventRow *gs_event_row_new(gs_trace_model *model, guint64 index);
/* A row of one rank's log among a distributed run's (the Events page's rank column); its
 * time is shown plus time_offset: the run's shared axis (gs_rank_run_offset). */
GsEventRow *gs_event_row_new_ranked(gs_trace_model *model, guint64 index, guint32 rank,
                                    guint64 time_offset);
gs_trace_model *gs_event_row_get_model(GsEventRow *self);
/* The rank as text, "" for a single log's row. */
char *gs_event_row_dup_rank(GsEventRow *self);

guint64 gs_event_row_get_index(GsEventRow *self);
/* Column texts; the summary decodes the event the first time it is asked for. */
char *gs_event_row_dup_seq(GsEventRow *self);
char *gs_event_row_dup_time(GsEventRow *self);
char *gs_event_row_dup_thread(GsEventRow *self);
const char *gs_event_row_get_kind(GsEventRow *self);
const char *gs_event_row_get_summary(GsEventRow *self);
/* Where the program caused it ("leak.c:17 in main"), or "" if the log does not say. */
const char *gs_event_row_get_site(GsEventRow *self);

/* The summary of event index: what it is about, in a few words ("tensor #3.1 [2, 3] f32
 * add in scope step"). Free with g_free. */
char *gs_event_summary(gs_trace_model *model, guint64 index);
/* Nanoseconds since the recorder started as "12.345 678 s". */
char *gs_format_event_time(guint64 ns);

G_END_DECLS
