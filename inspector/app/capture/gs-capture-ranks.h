/* gs-capture-ranks.h: the other ranks of a distributed run a capture page shows. The page
 * loads the first rank's log as it loads any file (its views, scrubber and graph show that
 * rank); this loads the others on a worker thread, and once both are in, joins them into one
 * gs_rank_run for the Events page's merged list and the Memory page's lanes. */
#pragma once

#include <gio/gio.h>

#include "rank-run.h"

G_BEGIN_DECLS

typedef struct gs_capture_ranks gs_capture_ranks;

/* Starts loading logs[1..n-1] (sorted by rank, one run: gs_rank_logs_one_run); done(data) is
 * called on this thread's main context when they are loaded (or failed: see _error). */
gs_capture_ranks *gs_capture_ranks_new(const gs_rank_log *logs, guint n, void (*done)(gpointer),
                                       gpointer data);
/* Cancels a load still running (done is not called then) and frees. */
void gs_capture_ranks_free(gs_capture_ranks *ranks);
gboolean gs_capture_ranks_loading(const gs_capture_ranks *ranks);
guint gs_capture_ranks_count(const gs_capture_ranks *ranks);
/* After done: why a rank's log could not be read, or NULL. */
const char *gs_capture_ranks_error(const gs_capture_ranks *ranks);
/* After done, without an error: the run over first (the first rank's model, which stays the
 * caller's and must outlive the run) and the loaded ranks (the run owns them). Once only. */
gs_rank_run *gs_capture_ranks_make_run(gs_capture_ranks *ranks, gs_trace_model *first);

G_END_DECLS
