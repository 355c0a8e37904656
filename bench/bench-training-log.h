/* bench-training-log.h: records a training-like loop to a log, for the inspector's
 * benchmarks (timeline redraw, graph building): scoped steps, each a forward through two
 * 32x32 layers, a backward and zero_grad, a mark every 100 steps, ~91 events per step, until
 * the log holds at least target events. Exits the process if the log cannot be written. */
#pragma once

#include <glib.h>

void bench_record_training_log(const char *path, guint64 target);
