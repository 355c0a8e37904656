/* timeline-index.h: what the memory timeline draws besides bytes: user marks (epochs,
 * steps), outermost scope spans and backward spans, as event indices. Built by scanning the
 * model's per-event kind and thread bytes (no decoding) and extended incrementally while a
 * live source grows, so a redraw never walks the events. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

/* Events first..last inclusive; last is G_MAXUINT64 while the span is still open. */
typedef struct gs_timeline_span {
  guint64 first, last;
} gs_timeline_span;

typedef struct gs_timeline_index gs_timeline_index;

gs_timeline_index *gs_timeline_index_new(void);
void gs_timeline_index_free(gs_timeline_index *index);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_timeline_index, gs_timeline_index_free)

/* Scans the events m gained since the last call (all of them the first time). A different
 * model, or one with fewer events than already scanned, starts over. */
void gs_timeline_index_update(gs_timeline_index *index, const gs_trace_model *m);

/* Indices of MARK events, ascending (guint64). */
const GArray *gs_timeline_index_marks(const gs_timeline_index *index);
/* Scopes begun with no scope open on their thread, by begin (gs_timeline_span). */
const GArray *gs_timeline_index_scope_spans(const gs_timeline_index *index);
/* BACKWARD_BEGIN .. BACKWARD_END on one thread, by begin (gs_timeline_span). */
const GArray *gs_timeline_index_backward_spans(const gs_timeline_index *index);
/* Position of the first mark at or after event, in gs_timeline_index_marks. */
guint gs_timeline_index_first_mark(const gs_timeline_index *index, guint64 event);

/* The label of mark number position, or the name of the scope that begins scope span
 * position: decoded from m the first time (decoding one event re-reads its chunk), then
 * remembered. Owned by m; "" if the event cannot be decoded. */
const char *gs_timeline_index_mark_label(gs_timeline_index *index, gs_trace_model *m,
                                         guint position);
const char *gs_timeline_index_scope_name(gs_timeline_index *index, gs_trace_model *m,
                                         guint position);

G_END_DECLS
