/* timeline-frame.c: laying out the memory timeline from the model's per-column summary
 * (see timeline-frame.h). The only model call is gs_trace_model_memory_columns, once per
 * frame, for as many columns as the plot is wide. */
#include "timeline-frame.h"

#include <math.h>
#include <string.h>

/* Room around the plot: byte labels on the left, the legend on top, event numbers and mark
 * labels below. */
#define MARGIN_LEFT 76
#define MARGIN_RIGHT 18
#define MARGIN_TOP 34
#define MARGIN_BOTTOM 48

gs_timeline_frame *gs_timeline_frame_new_with_buckets(guint bucket_events) {
  gs_timeline_frame *frame = g_new0(gs_timeline_frame, 1);
  if (bucket_events)
    frame->summary = gs_timeline_summary_new(bucket_events);
  return frame;
}

gs_timeline_frame *gs_timeline_frame_new(void) {
  gs_timeline_frame *frame = g_new0(gs_timeline_frame, 1);
  frame->summary = gs_timeline_summary_new(0);
  return frame;
}

void gs_timeline_frame_free(gs_timeline_frame *frame) {
  if (!frame)
    return;
  g_free(frame->columns);
  g_clear_pointer(&frame->summary, gs_timeline_summary_free);
  g_free(frame);
}

void gs_timeline_nice_scale(guint64 peak, guint64 *scale_max, guint64 *step) {
  if (peak == 0) {
    *scale_max = 1024;
    *step = 256;
    return;
  }
  double unit = 1;
  while (unit < 1099511627776.0 && (double)peak >= unit * 1024)
    unit *= 1024;
  double value = (double)peak / unit;
  static const double mantissas[] = {1, 2, 5};
  /* Bytes come whole: below KiB the smallest step is one byte. */
  for (double decade = unit > 1 ? 0.01 : 1;; decade *= 10)
    for (int k = 0; k < 3; k++) {
      double s = mantissas[k] * decade;
      double steps = ceil(value / s - 1e-9);
      if (steps <= 6) {
        if (steps < 1)
          steps = 1;
        *step = (guint64)llround(s * unit);
        *scale_max = (guint64)llround(steps * s * unit);
        if (*scale_max < peak) /* rounding of fractional steps */
          *scale_max += *step;
        return;
      }
    }
}

/* The engine allocates a tensor's storage one event before it creates the tensor and gives it
 * an owner, so the first event of a column's largest total is usually that allocation, when
 * its bytes belong to no scope and no category yet. Stacks are shown as of the tensor's
 * creation right after (same total) instead, even when that falls in the next column (zoomed
 * in to single events), or every peak would read "outside any scope". */
static void settle_column(const gs_trace_model *m, gboolean by_scope, gs_memory_column *col) {
  guint64 i = col->max_index;
  if (i + 1 >= gs_trace_model_n_events(m) ||
      gs_trace_model_kind_at(m, i) != GS_TRACE_STORAGE_ALLOC ||
      gs_trace_model_kind_at(m, i + 1) != GS_TRACE_TENSOR_CREATE ||
      gs_trace_model_bytes_at(m, i + 1) != col->max_total)
    return;
  gs_memory_column created;
  gs_trace_model_memory_columns(m, i + 1, i + 1, 1, by_scope, &created);
  memcpy(col->stack, created.stack, sizeof col->stack);
}

void gs_timeline_frame_compute(gs_timeline_frame *frame, const gs_trace_model *m,
                               const gs_timeline_request *request) {
  frame->request = *request;
  frame->n_events = m ? gs_trace_model_n_events(m) : 0;
  frame->plot_x = MARGIN_LEFT;
  frame->plot_y = MARGIN_TOP;
  frame->plot_width = MAX(1, request->width - MARGIN_LEFT - MARGIN_RIGHT);
  frame->plot_height = MAX(1, request->height - MARGIN_TOP - MARGIN_BOTTOM);
  guint columns = (guint)frame->plot_width;
  if (frame->n_columns != columns) {
    g_free(frame->columns);
    frame->columns = g_new0(gs_memory_column, columns);
    frame->n_columns = columns;
  }
  frame->peak_column = -1;
  frame->peak_bytes = 0;
  frame->peak_index = GS_TIMELINE_NO_EVENT;
  memset(frame->stack_peak, 0, sizeof frame->stack_peak);
  if (frame->n_events == 0) {
    memset(frame->columns, 0, sizeof *frame->columns * columns);
    for (guint c = 0; c < columns; c++)
      frame->columns[c].first = 1; /* no events: first > last */
    frame->n_stacks = 0;
    frame->request.first = 0;
    frame->request.last = 0;
    gs_timeline_nice_scale(0, &frame->scale_max, &frame->scale_step);
    return;
  }
  guint64 last = MIN(request->last, frame->n_events - 1);
  guint64 first = MIN(request->first, last);
  frame->request.first = first;
  frame->request.last = last;
  if (frame->summary)
    gs_timeline_summary_columns(frame->summary, m, first, last, columns, request->by_scope,
                                frame->columns);
  else
    gs_trace_model_memory_columns(m, first, last, columns, request->by_scope, frame->columns);
  frame->n_stacks = gs_trace_model_n_stacks(m, request->by_scope);
  for (guint c = 0; c < columns; c++) {
    gs_memory_column *col = &frame->columns[c];
    if (col->first > col->last)
      continue;
    settle_column(m, request->by_scope, col);
    if (frame->peak_column < 0 || col->max_total > frame->peak_bytes) {
      frame->peak_column = (int)c;
      frame->peak_bytes = col->max_total;
      frame->peak_index = col->max_index;
    }
    for (guint s = 0; s < col->n_stacks && s < GS_MEMORY_MAX_STACKS; s++)
      frame->stack_peak[s] = MAX(frame->stack_peak[s], col->stack[s]);
  }
  if (frame->peak_bytes == 0)
    frame->peak_column = -1;
  gs_timeline_nice_scale(frame->peak_bytes, &frame->scale_max, &frame->scale_step);
}

int gs_timeline_frame_column_at(const gs_timeline_frame *frame, double x) {
  double c = floor(x - frame->plot_x);
  if (c < 0 || c >= frame->n_columns)
    return -1;
  /* Zoomed in past one event per pixel, an event's column is the last of the pixels it
   * spans; the ones before it (empty columns) show that event too. */
  for (guint k = (guint)c; k < frame->n_columns; k++)
    if (frame->columns[k].first <= frame->columns[k].last)
      return (int)k;
  return -1;
}

guint64 gs_timeline_frame_event_at(const gs_timeline_frame *frame, double x) {
  if (frame->n_events == 0)
    return GS_TIMELINE_NO_EVENT;
  if (x < frame->plot_x)
    return frame->request.first;
  if (x >= frame->plot_x + (double)frame->n_columns)
    return frame->request.last;
  int c = gs_timeline_frame_column_at(frame, x);
  return c < 0 ? frame->request.last : frame->columns[c].first;
}

static gboolean column_empty(const gs_timeline_frame *frame, guint64 c) {
  return frame->columns[c].first > frame->columns[c].last;
}

double gs_timeline_frame_x_of(const gs_timeline_frame *frame, guint64 index) {
  guint64 first = frame->request.first, last = frame->request.last;
  guint64 cols = frame->n_columns, span = last - first + 1;
  if (frame->n_events == 0 || index < first || index > last)
    return frame->plot_x +
           ((double)index - (double)first + 0.5) / (double)span * (double)cols;
  /* The even split's column holding index; snapped boundaries (timeline-summary.h) move it
   * by at most one column, so a short walk finds the column that really holds it. */
  guint64 off = index - first;
  guint64 c = ((off + 1) * cols + span - 1) / span - 1;
  c = MIN(c, cols - 1);
  while (c > 0 && (column_empty(frame, c) || frame->columns[c].first > index))
    c--;
  while (c + 1 < cols && (column_empty(frame, c) || frame->columns[c].last < index))
    c++;
  /* Zoomed in past one event per pixel, the empty columns before it show it too: the
   * centre of that run of pixels. */
  guint64 lo = c;
  while (lo > 0 && column_empty(frame, lo - 1))
    lo--;
  return frame->plot_x + (double)(lo + c + 1) / 2.0;
}

double gs_timeline_frame_y_of(const gs_timeline_frame *frame, guint64 bytes) {
  double bottom = frame->plot_y + frame->plot_height;
  return bottom - (double)bytes / (double)frame->scale_max * frame->plot_height;
}
