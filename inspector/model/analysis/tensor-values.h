/* tensor-values.h: what a tensor held at an event, from the `values` events a run records
 * with GS_TRACE_VALUES=N (the first N elements after its creation and after each in-place
 * write to it), and the gradient a leaf had accumulated by then: the data and grad that
 * micrograd's draw_dot shows on each node, in words short enough for a graph label. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

/* What tensor held at event index (at a creation or in-place write, the values its op
 * computed, recorded just after): while it is alive, the leading values the replayed state
 * knows of its bytes, which a write through any alias changes; else the values last recorded
 * for it. A new array (g_free) of *n values, with the tensor's element count in *numel, or
 * NULL if none are known. Moves the model's seek position. */
double *gs_trace_model_values_at(gs_trace_model *m, guint64 tensor, guint64 index, guint *n,
                                 guint64 *numel);
/* The gradient tensor accumulated into leaf (its .grad) at or before index, or 0. */
guint64 gs_trace_model_grad_at(gs_trace_model *m, guint64 leaf, guint64 index);
/* Values in a few words: all of them when the tensor is small and all were recorded
 * ("[2, -3, 10]", a scalar as "-8"), else the element count and a few statistics of what was
 * recorded ("32768 values; first 16: min -1.2, mean 0.1, max 2.3"). Newly allocated. */
char *gs_tensor_values_text(const double *values, guint n, guint64 numel);
/* "data …" and, if the leaf has a gradient, "\ngrad …" for tensor at index: a graph item's
 * extra lines; NULL if no values were recorded for it. Newly allocated. */
char *gs_trace_model_values_label(gs_trace_model *m, guint64 tensor, guint64 index);

G_END_DECLS
