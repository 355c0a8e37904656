/* reader-model.c: the trace reader plus an event count (see reader-model.h). */
#include "reader-model.h"

#include <gradscope/trace.h>

struct gs_trace_model {
  gs_trace_reader *reader;
  guint64 events, bytes;
  gboolean damaged, finished;
};

gs_trace_model *gs_trace_model_new(void) {
  gs_trace_model *m = g_new0(gs_trace_model, 1);
  m->reader = gs_trace_reader_new();
  return m;
}

void gs_trace_model_free(gs_trace_model *m) {
  if (!m)
    return;
  gs_trace_reader_free(m->reader);
  g_free(m);
}

guint64 gs_trace_model_feed(gs_trace_model *m, const void *bytes, gsize n) {
  g_return_val_if_fail(m != NULL, 0);
  if (m->damaged || n == 0)
    return 0; /* once damaged, nothing after the damage can be trusted */
  gs_trace_reader_feed(m->reader, bytes, n);
  m->bytes += n;
  guint64 added = 0;
  gs_trace_event event;
  gs_trace_status status;
  while ((status = gs_trace_reader_next(m->reader, &event)) == GS_TRACE_EVENT)
    added++;
  m->damaged = status == GS_TRACE_DAMAGED;
  m->events += added;
  return added;
}

void gs_trace_model_finish(gs_trace_model *m) {
  g_return_if_fail(m != NULL);
  m->finished = TRUE;
}

guint64 gs_trace_model_n_events(gs_trace_model *m) { return m->events; }

guint64 gs_trace_model_n_bytes(gs_trace_model *m) { return m->bytes; }

const char *gs_trace_model_damage(gs_trace_model *m, guint64 *offset) {
  uint64_t at = 0;
  const char *what = m->damaged ? gs_trace_reader_error(m->reader, &at) : NULL;
  if (offset)
    *offset = at;
  return what;
}

gboolean gs_trace_model_truncated(gs_trace_model *m, guint64 *offset) {
  uint64_t at = 0;
  gboolean cut = m->finished && !m->damaged && gs_trace_reader_truncated(m->reader, &at);
  if (offset)
    *offset = at;
  return cut;
}
