/* graph-workloads.h: programs the graph tests record (test-graph.c, test-graph-view.c), and
 * recording one into a trace model. */
#pragma once

#include <glib.h>

#include "trace-model.h"

G_BEGIN_DECLS

typedef void (*graph_workload_fn)(void);

/* A two-layer MLP step in scope "step": Linear(8,16) -> ReLU -> Linear(16,4) -> MSE loss,
 * then backward; the input is named "batch", the loss "loss". */
void graph_workload_mlp_step(void);

/* A recurrent net unrolled over GRAPH_WORKLOAD_RNN_STEPS time steps, each in scope "t" inside
 * scope "unroll": h = tanh(h W + x_t), then a sum as the loss; stops before backward, so the
 * whole unrolled graph (> 1,500 items) is alive at the end of the log. */
#define GRAPH_WORKLOAD_RNN_STEPS 400
void graph_workload_rnn(void);

/* A training loop of GRAPH_WORKLOAD_LEAK_STEPS steps, each in scope "train step", that leaks
 * two tensors per step: a [64, 32] f32 batch it detaches from the scope (made at
 * graph_workload_leak_line) and its loss, moved out of the step and never disposed (made at
 * the line after it). */
#define GRAPH_WORKLOAD_LEAK_STEPS 20
extern int graph_workload_leak_line;
void graph_workload_leaky_loop(void);

/* Records body into a fresh log in a new temporary directory (*dir, for
 * graph_workload_remove_dir) and loads the log into a model. */
gs_trace_model *graph_workload_record(graph_workload_fn body, char **dir);
void graph_workload_remove_dir(const char *dir);

/* The index of the nth event of kind in m (asserts there is one). */
guint64 graph_workload_find_kind(gs_trace_model *m, gs_trace_kind kind, guint nth);

G_END_DECLS
