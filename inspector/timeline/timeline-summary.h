/* timeline-summary.h: a cache that makes zoomed-out timeline columns cost the same on a
 * 10 M-event log as on a small one. The model answers a column by scanning every change of
 * the memory series inside it, so the whole run costs O(events) per redraw; this keeps, per
 * stacking, one summary per bucket of B consecutive events (smallest and largest total, the
 * first event of the largest, the stacks there), built once from the model and extended as a
 * live log grows. A zoomed-out view then snaps its column boundaries to buckets and merges
 * them; the result is exact for the columns it returns (the same min, max, max_index and
 * stacks the model gives for those event ranges), only the boundaries move, by less than a
 * quarter of a pixel. Zoomed in (under 2 buckets per column) it asks the model directly.
 * Public model API only: nothing inside the model changes. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

typedef struct gs_timeline_summary gs_timeline_summary;

/* bucket_events: events per bucket (0: the default, 256: ~300 bytes per bucket and stacking,
 * ~23 MB for both stackings of a 10 M-event run). */
gs_timeline_summary *gs_timeline_summary_new(guint bucket_events);
void gs_timeline_summary_free(gs_timeline_summary *summary);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_timeline_summary, gs_timeline_summary_free)

/* Like gs_trace_model_memory_columns over first..last (clamped), except that when columns
 * span at least two buckets each, their boundaries sit on bucket boundaries (the first
 * column still starts at first and the last ends at last). Columns tile first..last in
 * order; none is empty unless there are more columns than events. A different model, or
 * one with fewer events than already summarised, starts the cache over. */
void gs_timeline_summary_columns(gs_timeline_summary *summary, const gs_trace_model *m,
                                 guint64 first, guint64 last, guint columns, gboolean by_scope,
                                 gs_memory_column *out);

G_END_DECLS
