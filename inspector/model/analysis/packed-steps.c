/* packed-steps.c: the time steps of a fused recurrence node, from its output's shape and the
 * packed sequence before it (see packed-steps.h). Decodes only the few events it needs (the
 * candidates are found by kind and thread, which the model keeps undecoded), with a decoder of
 * its own so a caller's decoded event stays valid. */
#include "packed-steps.h"

#include <inttypes.h>
#include <string.h>

#include <glib/gi18n-lib.h>
#include <gradscope/scope.h>

#include "model-private.h"

/* How far back from the node to look for the packed sequence it ran over: a collate step
 * that packs the batch makes a few events per sequence. */
#define PACKED_LOOKBACK 200000

const char *gs_packed_steps_cell(const char *kind) {
  static const struct {
    const char *kind, *cell;
  } kinds[] = {{"LSTMRecurrenceBackward", "LSTM"},
               {"GRURecurrenceBackward", "GRU"},
               {"RNNTanhRecurrenceBackward", "RNN"},
               {"RNNReluRecurrenceBackward", "RNN"}};
  for (guint i = 0; kind && i < G_N_ELEMENTS(kinds); i++)
    if (strcmp(kind, kinds[i].kind) == 0)
      return kinds[i].cell;
  return NULL;
}

void gs_packed_steps_clear(gs_packed_steps *s) {
  g_free(s->active);
  memset(s, 0, sizeof *s);
}

/* The first size of tensor as made at or before index (its latest creation there), or -1. */
static gint64 first_size(gs_trace_model *m, model_decoder *d, guint64 tensor, guint64 index) {
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, tensor);
  gs_trace_event e;
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, gs_tensor_life_count_upto(life, index));
  guint64 at;
  while (gs_tensor_life_cursor_prev(&c, &at)) {
    if (gs_trace_model_kind_at(m, at) == GS_TRACE_TENSOR_CREATE && model_decode(m, d, at, &e) &&
        e.tensor == tensor)
      return e.ndim >= 1 ? e.shape[0] : -1;
  }
  return -1;
}

/* batch_sizes' recorded values, if GS_TRACE_VALUES recorded all steps and they make a packed
 * batch: batch first, never growing, summing to rows. NULL otherwise. */
static guint64 *recorded_sizes(gs_trace_model *m, model_decoder *d, guint64 tensor,
                               const gs_packed_steps *s) {
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, tensor);
  gs_trace_event e;
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, 0);
  guint64 at;
  while (gs_tensor_life_cursor_next(&c, &at)) {
    if (gs_trace_model_kind_at(m, at) != GS_TRACE_VALUES || !model_decode(m, d, at, &e) ||
        e.tensor != tensor || e.n_values < s->steps)
      continue;
    g_autofree guint64 *sizes = g_new(guint64, s->steps);
    guint64 sum = 0;
    for (guint64 t = 0; t < s->steps; t++) {
      double v = e.values[t];
      double previous = t ? (double)sizes[t - 1] : (double)s->batch;
      if (!(v >= 1 && v <= previous) || v != (double)(guint64)v)
        return NULL; /* not a batch_sizes a packed sequence can have */
      sizes[t] = (guint64)v;
      sum += sizes[t];
    }
    return sum == s->rows && sizes[0] == s->batch ? g_steal_pointer(&sizes) : NULL;
  }
  return NULL;
}

gboolean gs_packed_steps_find(gs_trace_model *m, guint64 index, gs_packed_steps *out) {
  memset(out, 0, sizeof *out);
  if (gs_trace_model_kind_at(m, index) != GS_TRACE_NODE_CREATE)
    return FALSE;
  model_decoder d;
  model_decoder_init(&d);
  gs_trace_event e;
  gboolean found = FALSE;
  const char *cell = NULL;
  if (model_decode(m, &d, index, &e))
    cell = gs_packed_steps_cell(gs_trace_model_string(m, e.name));
  if (!cell) {
    model_decoder_clear(&d);
    return FALSE;
  }
  guint32 thread = e.thread;
  guint64 node_tensor = e.tensor;
  gint64 out_rows = first_size(m, &d, node_tensor, index);
  gint64 states = strcmp(cell, "LSTM") == 0 ? 2 : 1; /* final h (and c) rows after the data */
  for (guint64 i = index; out_rows > 0 && i-- > 0 && index - i <= PACKED_LOOKBACK;) {
    if (gs_trace_model_kind_at(m, i) != GS_TRACE_COMPOSITE_CREATE ||
        gs_trace_model_thread_at(m, i) != thread)
      continue;
    if (!model_decode(m, &d, i, &e) || e.object_kind != GS_OBJECT_PACKED_SEQUENCE)
      continue;
    /* The nearest packed sequence on the thread is the one the layer ran over (a result
     * packed sequence comes after its nodes): it fits, or the node ran over padded input. */
    guint64 parts[4] = {0};
    memcpy(parts, e.parts, sizeof(guint64) * MIN(e.n_parts, 4u));
    gint64 rows = parts[0] ? first_size(m, &d, parts[0], i) : -1;
    gint64 steps = parts[1] ? first_size(m, &d, parts[1], i) : -1;
    gint64 sorted = parts[2] ? first_size(m, &d, parts[2], i) : -1;
    gint64 batch = rows > 0 && (out_rows - rows) % states == 0 ? (out_rows - rows) / states : -1;
    if (rows > 0 && steps > 0 && steps <= rows && batch > 0 && batch <= rows &&
        (sorted < 0 || sorted == batch)) {
      *out = (gs_packed_steps){cell, (guint64)steps, (guint64)batch, (guint64)rows, NULL};
      out->active = recorded_sizes(m, &d, parts[1], out);
      found = TRUE;
    }
    break;
  }
  model_decoder_clear(&d);
  return found;
}

char *gs_packed_steps_label(const gs_packed_steps *s) {
  /* TRANSLATORS: a fused recurrence node in the graph stands for all its time steps: the
   * cell ("LSTM") and how many steps it folds ("LSTM step ×18"). */
  g_autofree char *folded = g_strdup_printf(_("%s step \xc3\x97%" PRIu64), s->cell,
                                            s->steps);
  if (!s->active)
    return g_strdup_printf(ngettext("%s\n%" PRIu64 " sequence",
                                    "%s\n%" PRIu64 " sequences", s->batch),
                           folded, s->batch);
  /* TRANSLATORS: how many sequences the first and the last time step ran over. */
  return g_strdup_printf(ngettext("%s\n%" PRIu64 " \xe2\x86\x92 %" PRIu64
                                  " sequence",
                                  "%s\n%" PRIu64 " \xe2\x86\x92 %" PRIu64
                                  " sequences", s->active[0]),
                         folded, s->active[0], s->active[s->steps - 1]);
}

char *gs_packed_steps_sentence(const gs_packed_steps *s) {
  if (!s->active)
    return NULL;
  GString *text = g_string_new(NULL);
  for (guint64 t = 0; t < s->steps;) {
    guint64 end = t + 1;
    while (end < s->steps && s->active[end] == s->active[t])
      end++;
    if (text->len)
      g_string_append(text, _("; "));
    if (end - t == 1)
      /* TRANSLATORS: what one time step of a packed LSTM/GRU/RNN did: "LSTM step 7 ran 3 of
       * 4 sequences" (the others had ended). */
      g_string_append_printf(text, ngettext("%s step %" PRIu64 " ran %" PRIu64
                                            " of %" PRIu64 " sequence",
                                            "%s step %" PRIu64 " ran %" PRIu64
                                            " of %" PRIu64 " sequences", s->batch),
                             s->cell, t + 1, s->active[t], s->batch);
    else
      /* TRANSLATORS: the same for a run of steps with the same count: "LSTM steps 1–5 ran 4
       * of 4 sequences". */
      g_string_append_printf(text, ngettext("%s steps %" PRIu64 "\xe2\x80\x93%"
                                            PRIu64 " ran %" PRIu64 " of %"
                                            PRIu64 " sequence",
                                            "%s steps %" PRIu64 "\xe2\x80\x93%"
                                            PRIu64 " ran %" PRIu64 " of %"
                                            PRIu64 " sequences", s->batch),
                             s->cell, t + 1, end, s->active[t], s->batch);
    t = end;
  }
  return g_string_free(text, FALSE);
}
