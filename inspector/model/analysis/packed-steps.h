/* packed-steps.h: what a fused recurrence node did, told from the log without a format of
 * its own. The engine runs each layer and direction of an RNN, LSTM or GRU over a packed
 * sequence as one node (LSTMRecurrenceBackward, GRURecurrenceBackward,
 * RNNTanhRecurrenceBackward, RNNReluRecurrenceBackward) that stands for every time step. The
 * log has its output [rows + k * batch, hidden] (k = 2 for LSTM's h and c, else 1), and the
 * packed sequence made before it on the same thread: data [rows, *], batch_sizes [steps],
 * sorted_indices [batch]. How many sequences each step ran over is in the log only when
 * GS_TRACE_VALUES recorded batch_sizes' values (N >= the longest sequence); otherwise the
 * steps, the batch and the rows are all it can tell. The graph's labels and the scrubber's
 * sentences both read it here. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

typedef struct gs_packed_steps {
  const char *cell;  /* "LSTM", "GRU" or "RNN" (static) */
  guint64 steps;     /* time steps of the longest sequence */
  guint64 batch;     /* sequences */
  guint64 rows;      /* rows of the packed data: the steps' batch sizes summed */
  guint64 *active;   /* [steps]: how many sequences step t ran over, or NULL (not recorded) */
} gs_packed_steps;

/* The cell a node kind is the fused recurrence of ("LSTM"...), or NULL for other kinds. */
const char *gs_packed_steps_cell(const char *node_kind);
/* Fills *out for the node_create at index (the model's event index) when it is a recurrence
 * over a packed sequence the log shows; FALSE otherwise (*out cleared). */
gboolean gs_packed_steps_find(gs_trace_model *m, guint64 index, gs_packed_steps *out);
void gs_packed_steps_clear(gs_packed_steps *steps);
/* "32 → 3 sequences" (first and last step's) when recorded, else "32 sequences"; with the
 * step count: "LSTM step ×18\n32 → 3 sequences" for a graph label. Translated. */
char *gs_packed_steps_label(const gs_packed_steps *steps);
/* What each step did, runs of equal steps merged: "steps 1–5 ran 32 of 32 sequences, step 6
 * ran 30 of 32, ...". NULL when the batch sizes were not recorded. Translated. */
char *gs_packed_steps_sentence(const gs_packed_steps *steps);

G_END_DECLS
