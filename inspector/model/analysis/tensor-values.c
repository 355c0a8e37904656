/* tensor-values.c: a tensor's recorded values and gradient at an event (see the header). A
 * tensor alive at the event has the values the replayed state gives its bytes (replay-values.c:
 * a write through any alias shows in every tensor over those bytes); one that is not is read
 * from its own life's last recorded values. */
#include "tensor-values.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <math.h>

/* Tensors with at most this many elements are shown in full. */
#define SMALL_TENSOR 6

/* Values shown per tensor, at most (as many as the replay keeps of one buffer). */
#define MAX_SHOWN 4096

/* What the replayed state says tensor holds at index; FALSE if it is not alive then. */
static gboolean replayed_values_at(gs_trace_model *m, guint64 tensor, guint64 index,
                                   double **values, guint *n, guint64 *numel) {
  /* The values an op computes are recorded just after the event that announced it (a
   * creation, an in-place write): at that very event they are already the bytes'. */
  guint64 at = index;
  gs_trace_kind kind = gs_trace_model_kind_at(m, index);
  if ((kind == GS_TRACE_TENSOR_CREATE || kind == GS_TRACE_INPLACE_WRITE) &&
      gs_trace_model_kind_at(m, index + 1) == GS_TRACE_VALUES)
    at = index + 1;
  const gs_replay *state = gs_trace_model_seek(m, at);
  const gs_replay_object *o = state ? gs_replay_object_get(state, tensor) : NULL;
  if (!o || o->composite)
    return FALSE;
  *numel = gs_replay_object_numel(o);
  double *known = g_new(double, MAX_SHOWN);
  *n = gs_replay_tensor_values(state, o, known, MAX_SHOWN);
  if (*n == 0)
    g_clear_pointer(&known, g_free);
  *values = known;
  return TRUE;
}

double *gs_trace_model_values_at(gs_trace_model *m, guint64 tensor, guint64 index, guint *n,
                                 guint64 *numel) {
  double *replayed = NULL;
  if (replayed_values_at(m, tensor, index, &replayed, n, numel))
    return replayed;
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, tensor);
  guint len = gs_tensor_life_len(life);
  double *values = NULL;
  *n = 0;
  *numel = 0;
  /* The values an op computes are recorded just after the event that announced it (a
   * creation, an in-place write): at that very event they are already the tensor's. */
  guint until = gs_tensor_life_count_upto(life, index);
  if (until > 0 && until < len && gs_tensor_life_at(life, until - 1) == index &&
      gs_trace_model_kind_at(m, gs_tensor_life_at(life, until)) == GS_TRACE_VALUES) {
    gs_trace_kind at = gs_trace_model_kind_at(m, index);
    if (at == GS_TRACE_TENSOR_CREATE || at == GS_TRACE_INPLACE_WRITE)
      until++;
  }
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, 0);
  guint64 at;
  for (guint k = 0; k < until && gs_tensor_life_cursor_next(&c, &at); k++) {
    gs_trace_kind kind = gs_trace_model_kind_at(m, at);
    gs_trace_event e;
    if ((kind != GS_TRACE_VALUES && kind != GS_TRACE_TENSOR_CREATE) ||
        !gs_trace_model_event(m, at, &e) || e.tensor != tensor)
      continue;
    if (kind == GS_TRACE_TENSOR_CREATE) {
      guint64 count = 1;
      for (int d = 0; d < e.ndim && d < GS_MAX_DIMS; d++)
        count = e.shape[d] > 0 && count <= G_MAXUINT64 / (guint64)e.shape[d]
                    ? count * (guint64)e.shape[d]
                    : 0;
      *numel = count;
    } else {
      g_free(values);
      values = g_memdup2(e.values, sizeof(double) * e.n_values);
      *n = e.n_values;
    }
  }
  if (values && *numel < *n)
    *numel = *n; /* its creation was not found: trust what was recorded */
  return values;
}

guint64 gs_trace_model_grad_at(gs_trace_model *m, guint64 leaf, guint64 index) {
  g_autoptr(gs_tensor_life) life = gs_trace_model_tensor_life(m, leaf);
  guint64 grad = 0;
  gs_tensor_life_cursor c;
  gs_tensor_life_cursor_init(&c, life, 0);
  guint64 at;
  while (gs_tensor_life_cursor_next(&c, &at) && at <= index) {
    gs_trace_event e;
    if (gs_trace_model_kind_at(m, at) == GS_TRACE_GRAD_ACCUMULATE &&
        gs_trace_model_event(m, at, &e) && e.tensor == leaf)
      grad = e.target;
  }
  return grad;
}

/* A number as short as it can be without losing what a learner compares: "6", "-0.25",
 * "1.23e-05". */
static void append_number(GString *s, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.4g", v));
}

char *gs_tensor_values_text(const double *values, guint n, guint64 numel) {
  GString *s = g_string_new(NULL);
  if (n == numel && n <= SMALL_TENSOR) {
    if (numel == 1)
      append_number(s, values[0]);
    else {
      g_string_append_c(s, '[');
      for (guint i = 0; i < n; i++) {
        if (i)
          g_string_append(s, ", ");
        append_number(s, values[i]);
      }
      g_string_append_c(s, ']');
    }
    return g_string_free(s, FALSE);
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (guint i = 0; i < n; i++) {
    lo = fmin(lo, values[i]);
    hi = fmax(hi, values[i]);
    sum += values[i];
  }
  GString *stats = g_string_new(NULL);
  append_number(stats, lo);
  g_string_append(stats, " / ");
  append_number(stats, n ? sum / n : 0);
  g_string_append(stats, " / ");
  append_number(stats, hi);
  if (n == numel)
    /* Translators: a large tensor's values on a graph node: its element count, then the
     * minimum, mean and maximum of its values ("min / mean / max" written out). */
    g_string_printf(s, _("%" PRIu64 " values, min/mean/max %s"), (uint64_t)numel, stats->str);
  else
    /* Translators: as above, when only the first N values were recorded. */
    g_string_printf(s, _("%" PRIu64 " values; first %u: min/mean/max %s"), (uint64_t)numel, n,
                    stats->str);
  g_string_free(stats, TRUE);
  return g_string_free(s, FALSE);
}

char *gs_trace_model_values_label(gs_trace_model *m, guint64 tensor, guint64 index) {
  guint n = 0;
  guint64 numel = 0;
  g_autofree double *data = gs_trace_model_values_at(m, tensor, index, &n, &numel);
  if (!data)
    return NULL;
  g_autofree char *data_text = gs_tensor_values_text(data, n, numel);
  guint64 grad = gs_trace_model_grad_at(m, tensor, index);
  g_autofree double *grad_values = grad ? gs_trace_model_values_at(m, grad, index, &n, &numel)
                                        : NULL;
  if (!grad_values)
    /* Translators: a tensor's values on a graph node, as micrograd's draw_dot shows them. */
    return g_strdup_printf(_("data %s"), data_text);
  g_autofree char *grad_text = gs_tensor_values_text(grad_values, n, numel);
  /* Translators: a tensor's values and its accumulated gradient on a graph node. */
  return g_strdup_printf(_("data %s\ngrad %s"), data_text, grad_text);
}
