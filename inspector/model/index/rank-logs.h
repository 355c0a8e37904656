/* rank-logs.h: several log files read as the ranks of one distributed run (format 1.7's
 * dist_init: rank, world size, run id): which rank each file is, and a clear refusal of files
 * that are not one run's ranks. `gradscope stats/diff/explain A B ...` and the inspector's
 * window both check logs here before reading them whole. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A log as a rank of a distributed run: what its header and dist_init say (has_run FALSE:
 * it has no dist_init). path is borrowed from the caller. */
typedef struct gs_rank_log {
  const char *path;
  gboolean has_run;
  guint32 rank, world;
  guint64 run;
  guint64 start_realtime_ns; /* the header's wall clock when recording started */
} gs_rank_log;

/* Reads path's header and its events until dist_init (it comes among the first). FALSE with
 * error set if the file cannot be read; a log without dist_init is not an error (has_run). */
gboolean gs_rank_log_read(const char *path, gs_rank_log *out, GError **error);

/* Whether logs (gs_rank_log) are the ranks of one run: each has a dist_init, all carry the
 * same run id, no rank comes twice; they are then sorted by rank. FALSE with error set to a
 * translated sentence naming the files, their ranks and run ids. */
gboolean gs_rank_logs_one_run(GArray *logs, GError **error);

/* Whether logs, one run's (gs_rank_logs_one_run: sorted by rank), hold every rank of its
 * world, as a picture of the whole run needs. FALSE with error set to a translated sentence
 * naming the ranks missing and the files given. */
gboolean gs_rank_logs_every_rank(const GArray *logs, GError **error);

/* Whether any of logs has a dist_init: several files of which none does are separate
 * captures, not the ranks of a run. */
gboolean gs_rank_logs_any_run(const GArray *logs);

G_END_DECLS
