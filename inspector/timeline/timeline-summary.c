/* timeline-summary.c: bucketed min/max summaries over the model's memory series (see
 * timeline-summary.h). Buckets are filled lazily, up to the last whole bucket a query
 * needs, with one model call per batch of buckets (the model's own columns, one per bucket,
 * are exactly a bucket's summary when the split is even). */
#include "timeline-summary.h"

#include <string.h>

#define DEFAULT_BUCKET 256
/* Buckets asked of the model per call while filling. */
#define FILL_BATCH 4096

struct gs_timeline_summary {
  guint bucket;
  const gs_trace_model *model;
  guint64 model_events;  /* events the model had when last used: fewer means a new log */
  GArray *buckets[2];    /* gs_memory_column per whole bucket, [by_scope] */
};

gs_timeline_summary *gs_timeline_summary_new(guint bucket_events) {
  gs_timeline_summary *s = g_new0(gs_timeline_summary, 1);
  s->bucket = bucket_events ? bucket_events : DEFAULT_BUCKET;
  for (int i = 0; i < 2; i++)
    s->buckets[i] = g_array_new(FALSE, FALSE, sizeof(gs_memory_column));
  return s;
}

void gs_timeline_summary_free(gs_timeline_summary *s) {
  if (!s)
    return;
  for (int i = 0; i < 2; i++)
    g_array_unref(s->buckets[i]);
  g_free(s);
}

/* Summaries of buckets 0..count-1 (all whole: count * bucket <= the model's events). */
static const gs_memory_column *buckets_upto(gs_timeline_summary *s, const gs_trace_model *m,
                                            gboolean by_scope, guint64 count) {
  GArray *a = s->buckets[by_scope ? 1 : 0];
  while (a->len < count) {
    guint batch = (guint)MIN(count - a->len, FILL_BATCH);
    guint64 first = (guint64)a->len * s->bucket;
    guint start = a->len;
    g_array_set_size(a, a->len + batch);
    /* batch columns over batch * bucket events: the model's split gives each one bucket. */
    gs_trace_model_memory_columns(m, first, first + (guint64)batch * s->bucket - 1, batch,
                                  by_scope, &g_array_index(a, gs_memory_column, start));
  }
  return (const gs_memory_column *)(void *)a->data;
}

/* Folds part (a later, adjacent range) into acc: the largest total keeps its first event. */
static void merge(gs_memory_column *acc, const gs_memory_column *part, gboolean *empty) {
  if (part->first > part->last)
    return;
  if (*empty) {
    *acc = *part;
    *empty = FALSE;
    return;
  }
  acc->last = part->last;
  acc->min_total = MIN(acc->min_total, part->min_total);
  if (part->max_total > acc->max_total) {
    acc->max_total = part->max_total;
    acc->max_index = part->max_index;
    memcpy(acc->stack, part->stack, sizeof acc->stack);
    acc->outside = part->outside;
  }
}

/* Events [first, end) straight from the model (nothing if the range is empty). */
static void model_part(const gs_trace_model *m, guint64 first, guint64 end, gboolean by_scope,
                       gs_memory_column *acc, gboolean *empty) {
  if (first >= end)
    return;
  gs_memory_column part;
  gs_trace_model_memory_columns(m, first, end - 1, 1, by_scope, &part);
  merge(acc, &part, empty);
}

void gs_timeline_summary_columns(gs_timeline_summary *s, const gs_trace_model *m,
                                 guint64 first, guint64 last, guint columns, gboolean by_scope,
                                 gs_memory_column *out) {
  guint64 n = gs_trace_model_n_events(m);
  if (m != s->model || n < s->model_events) {
    for (int i = 0; i < 2; i++)
      g_array_set_size(s->buckets[i], 0);
    s->model = m;
  }
  s->model_events = n;
  if (columns == 0)
    return;
  guint64 span = gs_trace_model_clamp_range(m, first, &last);
  guint64 b = s->bucket;
  if (span / columns < 2 * b) { /* zoomed in: the model's scan is short */
    gs_trace_model_memory_columns(m, first, last, columns, by_scope, out);
    return;
  }
  /* Column c covers [start(c), start(c+1)), each boundary rounded to the nearest bucket
   * boundary; columns are at least two buckets wide, so they stay in order and not empty. */
  guint64 end_bucket = (last + 1) / b; /* buckets wholly before last + 1 */
  const gs_memory_column *buckets = buckets_upto(s, m, by_scope, end_bucket);
  guint n_stacks = gs_trace_model_n_stacks(m, by_scope);
  guint64 start = first;
  for (guint c = 0; c < columns; c++) {
    guint64 next = last + 1;
    if (c + 1 < columns) {
      guint64 exact = first + span * (c + 1) / columns;
      next = (exact + b / 2) / b * b;
    }
    gs_memory_column *col = &out[c];
    memset(col, 0, sizeof *col);
    gboolean empty = TRUE;
    /* [start, next): a partial bucket at each end only in the first and last column. */
    guint64 k0 = (start + b - 1) / b, k1 = next / b;
    if (k0 >= k1) {
      model_part(m, start, next, by_scope, col, &empty);
    } else {
      model_part(m, start, k0 * b, by_scope, col, &empty);
      for (guint64 k = k0; k < k1; k++)
        merge(col, &buckets[k], &empty);
      model_part(m, k1 * b, next, by_scope, col, &empty);
    }
    col->first = start;
    col->last = next - 1;
    col->n_stacks = n_stacks;
    start = next;
  }
}
