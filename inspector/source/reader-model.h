/* reader-model.h: the smallest trace model: the trace reader plus an event count.
 *
 * Stands in for inspector/model/trace-model.h (same calls, same meaning) while that library
 * is being written, so the sources build and test on their own. It keeps no state per event.
 * Only gs-source-model.h includes it. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct gs_trace_model gs_trace_model;

gs_trace_model *gs_trace_model_new(void);
void gs_trace_model_free(gs_trace_model *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_trace_model, gs_trace_model_free)

/* Appends n bytes of the log (any split); returns how many events they completed. */
guint64 gs_trace_model_feed(gs_trace_model *m, const void *bytes, gsize n);
/* The input ended: whatever partial chunk is left is a truncation from now on. */
void gs_trace_model_finish(gs_trace_model *m);
guint64 gs_trace_model_n_events(gs_trace_model *m);
/* Bytes fed so far. */
guint64 gs_trace_model_n_bytes(gs_trace_model *m);
/* What damaged the log and at which byte, or NULL while it is whole. */
const char *gs_trace_model_damage(gs_trace_model *m, guint64 *offset);
/* After finish: TRUE if the log ends inside a chunk; *offset is where that chunk starts. */
gboolean gs_trace_model_truncated(gs_trace_model *m, guint64 *offset);

G_END_DECLS
