/* rank-run.h: the logs of one distributed run's ranks held together: one trace model per
 * rank (a lane, in rank order), their times put on one shared axis, their events merged in
 * time order, and what went between the ranks (rank-sync.c): each collective as the ranks saw
 * it, and the spans each rank spent waiting for the others. The inspector's Events page lists
 * the merged events; its Memory page draws one lane per rank over the shared axis.
 *
 * Memory: 10 bytes per event for the merged order and its inverse, besides the models. */
#pragma once

#include <glib.h>

#include "rank-logs.h"
#include "trace-model.h"

G_BEGIN_DECLS

typedef struct gs_rank_run gs_rank_run;

/* How the lanes' clocks were put on the shared axis (see rank-run.c). */
typedef enum {
  GS_RANK_CLOCK_WALL,      /* each log's start on the wall clock: one machine, or synced hosts */
  GS_RANK_CLOCK_DIST_INIT, /* the ranks' dist_init events lined up: hosts whose clocks differ */
} gs_rank_clock;

/* n models (taken: freed with the run), models[i] read from logs[i].path; logs sorted by
 * rank and checked to be one run (gs_rank_logs_one_run). The models must be whole (loaded, not
 * growing): the run indexes them once. */
gs_rank_run *gs_rank_run_new(gs_trace_model **models, const gs_rank_log *logs, guint n);
void gs_rank_run_free(gs_rank_run *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_rank_run, gs_rank_run_free)

guint gs_rank_run_n_lanes(const gs_rank_run *run);
gs_trace_model *gs_rank_run_model(const gs_rank_run *run, guint lane);
/* The run stops owning lane's model and returns it: it still reads it, so the caller frees it
 * only after the run (the inspector's page owns rank 0's model as it owns a single log's). */
gs_trace_model *gs_rank_run_release_model(gs_rank_run *run, guint lane);
guint32 gs_rank_run_rank(const gs_rank_run *run, guint lane);
/* The lane holding rank, or G_MAXUINT. */
guint gs_rank_run_lane_of_rank(const gs_rank_run *run, guint32 rank);
guint32 gs_rank_run_world(const gs_rank_run *run);
guint64 gs_rank_run_id(const gs_rank_run *run);
const char *gs_rank_run_path(const gs_rank_run *run, guint lane);
gs_rank_clock gs_rank_run_clock(const gs_rank_run *run);

/* ---- the shared time axis --------------------------------------------------------------- */

/* What is added to lane's event times (ns since its log began) to put them on the shared axis
 * (ns since the earliest lane began); >= 0. */
guint64 gs_rank_run_offset(const gs_rank_run *run, guint lane);
/* Event index of lane on the shared axis. */
guint64 gs_rank_run_time(const gs_rank_run *run, guint lane, guint64 index);
/* The latest event's time on the shared axis (0 for a run without events). */
guint64 gs_rank_run_duration(const gs_rank_run *run);
/* The earliest event's time on the shared axis (0 for a run without events): where a picture
 * of the run starts, since a log may begin long before its first event (MPI_Init, say). */
guint64 gs_rank_run_first_time(const gs_rank_run *run);
/* The first event of lane at or after shared time t (n_events of the lane if none). A log's
 * events are in chunk order, each thread's times rising: the search takes a lane's times as
 * rising, which holds to within one chunk's interleaving. */
guint64 gs_rank_run_lane_index_at(const gs_rank_run *run, guint lane, guint64 t);

/* ---- merged events ---------------------------------------------------------------------- */

/* Every lane's events, each lane's in log order, merged by shared time (ties: the lower rank
 * first). */
guint64 gs_rank_run_n_events(const gs_rank_run *run);
/* The event at merged position: its lane and its index in that lane's model. FALSE out of
 * range. */
gboolean gs_rank_run_event_at(const gs_rank_run *run, guint64 position, guint *lane,
                              guint64 *index);
/* The merged position of lane's event index (G_MAXUINT64 out of range). */
guint64 gs_rank_run_position_of(const gs_rank_run *run, guint lane, guint64 index);

/* ---- between the ranks (rank-sync.c) ---------------------------------------------------- */

/* One collective as every rank saw it: the same number on every rank is the same collective
 * (doc/trace-format.md, "Distributed runs"). Per lane, its begin and end on the shared axis
 * and how long that rank was blocked in it; G_MAXUINT64 where a lane's log lacks it. */
typedef struct gs_rank_collective {
  guint64 number;
  const char *op;                   /* "allreduce", "broadcast"... (owned by the run) */
  guint64 nbytes;                   /* rank 0's (the first lane's that has it) */
  gint32 bucket;                    /* a DDP bucket's index, -1 for none */
  guint n_ended;                    /* lanes whose log has its end */
  guint64 *begin, *end, *waited_ns; /* n_lanes each */
} gs_rank_collective;

/* A span a rank spent blocked waiting for the others: a wait_begin and its wait_end (DDP's
 * wait for its buckets), on the shared axis, with their event indices in the lane's model.
 * A wait the log cut before its end lasts to the lane's last event (ended FALSE). */
typedef struct gs_rank_wait {
  guint64 begin, end;
  guint64 begin_index, end_index;
  guint64 waited_ns; /* as the wait_end says (0 when it did not end) */
  const char *name;  /* what was awaited (owned by the run) */
  gboolean ended;
} gs_rank_wait;

/* The run's collectives by number, ascending (gs_rank_collective). */
const GArray *gs_rank_run_collectives(const gs_rank_run *run);
/* The collectives ended on at least two lanes: what can be drawn across lanes. */
guint gs_rank_run_n_shared_collectives(const gs_rank_run *run);
/* lane's waits in time order (gs_rank_wait). */
const GArray *gs_rank_run_waits(const gs_rank_run *run, guint lane);
/* The sum of lane's wait spans (ns). */
guint64 gs_rank_run_waited(const gs_rank_run *run, guint lane);

G_END_DECLS
