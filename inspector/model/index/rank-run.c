/* rank-run.c: the ranks' logs of one run on a shared time axis, their events merged (see the
 * header); rank-sync.c finds the collectives and waits.
 *
 * How the clocks are aligned. A log's event times count from its own start (the monotonic
 * clock when recording began), and its header also holds the wall clock (CLOCK_REALTIME) at
 * that start. On one machine every process reads the same wall clock, so a log's start on the
 * wall clock plus an event's time puts every rank's events on one axis, to within the
 * microseconds between the header's two clock reads. Across hosts wall clocks agree only as
 * well as NTP keeps them (milliseconds; not at all on a host without it). There the dist_init
 * events are the reference: every rank writes its dist_init right after the run id's broadcast
 * from rank 0 completes, so they happened at nearly one moment (a broadcast's latency apart).
 * When the wall clocks put two ranks' dist_init events more than DIST_INIT_SKEW_NS apart, the
 * clocks are taken as unrelated and each lane is shifted so that its dist_init lines up with
 * the first lane's. */
#include "rank-run-private.h"

#include <string.h>

/* A gap between the ranks' dist_init events on the wall clock that one machine (even a loaded
 * one) or NTP-synchronised hosts do not produce. */
#define DIST_INIT_SKEW_NS G_GUINT64_CONSTANT(1000000000)

struct gs_rank_run {
  guint n;
  gs_trace_model **models;
  gboolean *owned;
  guint32 *ranks;
  char **paths;
  guint32 world;
  guint64 id;
  gs_rank_clock clock;
  guint64 *offsets;
  guint64 duration;
  guint64 first; /* the earliest event's time on the shared axis */
  /* merged order and its inverse */
  guint64 n_events;
  guint16 *merged_lane;
  guint32 *merged_index;
  guint32 **position; /* per lane: event index -> merged position */
  /* rank-sync.c */
  GArray *collectives;
  GArray **waits;
  GStringChunk *strings;
  guint n_shared;
};

/* The time of lane's dist_init (ns since its log began), FALSE if it has none outside a
 * snapshot (a snapshot's dist_init was written when the log began, not at the broadcast). */
static gboolean dist_init_time(gs_trace_model *m, guint64 *t) {
  guint64 n = gs_trace_model_n_events(m), snapshot_end = G_MAXUINT64;
  gboolean snapshot = gs_trace_model_snapshot(m, NULL, NULL, &snapshot_end);
  for (guint64 i = 0; i < n; i++)
    if (gs_trace_model_kind_at(m, i) == GS_TRACE_DIST_INIT) {
      if (snapshot && i <= snapshot_end)
        return FALSE;
      *t = gs_trace_model_time_at(m, i);
      return TRUE;
    }
  return FALSE;
}

/* Offsets from the wall clock, or from the dist_init events when the wall clocks disagree
 * (see the comment at the top). */
static void align(gs_rank_run *run, const gs_rank_log *logs) {
  guint n = run->n;
  g_autofree gint64 *shift = g_new0(gint64, n);
  g_autofree guint64 *init = g_new0(guint64, n);
  gboolean all_init = TRUE;
  for (guint i = 0; i < n; i++)
    all_init = dist_init_time(run->models[i], &init[i]) && all_init;
  guint64 first_start = logs[0].start_realtime_ns;
  for (guint i = 0; i < n; i++)
    shift[i] = (gint64)(logs[i].start_realtime_ns - first_start);
  run->clock = GS_RANK_CLOCK_WALL;
  if (all_init) {
    gint64 lo = G_MAXINT64, hi = G_MININT64;
    for (guint i = 0; i < n; i++) {
      gint64 at = shift[i] + (gint64)init[i];
      lo = MIN(lo, at);
      hi = MAX(hi, at);
    }
    if ((guint64)(hi - lo) > DIST_INIT_SKEW_NS) {
      run->clock = GS_RANK_CLOCK_DIST_INIT;
      for (guint i = 0; i < n; i++)
        shift[i] = (gint64)init[0] - (gint64)init[i];
    }
  }
  gint64 least = 0;
  for (guint i = 0; i < n; i++)
    least = MIN(least, shift[i]);
  for (guint i = 0; i < n; i++)
    run->offsets[i] = (guint64)(shift[i] - least);
}

/* Each lane's events in log order, merged by shared time: the lane whose next event comes
 * first goes next (a linear pick: runs have few ranks). */
static void merge(gs_rank_run *run) {
  guint n = run->n;
  g_autofree guint64 *next = g_new0(guint64, n);
  g_autofree guint64 *len = g_new0(guint64, n);
  g_autofree guint64 *head = g_new0(guint64, n);
  run->n_events = 0;
  for (guint i = 0; i < n; i++) {
    len[i] = gs_trace_model_n_events(run->models[i]);
    run->n_events += len[i];
    run->position[i] = g_new(guint32, len[i] ? len[i] : 1);
    if (len[i])
      head[i] = gs_rank_run_time(run, i, 0);
  }
  run->merged_lane = g_new(guint16, run->n_events ? run->n_events : 1);
  run->merged_index = g_new(guint32, run->n_events ? run->n_events : 1);
  for (guint64 p = 0; p < run->n_events; p++) {
    guint best = G_MAXUINT;
    for (guint i = 0; i < n; i++)
      if (next[i] < len[i] && (best == G_MAXUINT || head[i] < head[best]))
        best = i;
    run->merged_lane[p] = (guint16)best;
    run->merged_index[p] = (guint32)next[best];
    if (p == 0)
      run->first = head[best];
    run->position[best][next[best]] = (guint32)p;
    run->duration = MAX(run->duration, head[best]);
    if (++next[best] < len[best])
      head[best] = gs_rank_run_time(run, best, next[best]);
  }
}

gs_rank_run *gs_rank_run_new(gs_trace_model **models, const gs_rank_log *logs, guint n) {
  g_return_val_if_fail(models && logs && n > 0 && n <= G_MAXUINT16, NULL);
  gs_rank_run *run = g_new0(gs_rank_run, 1);
  run->n = n;
  run->models = g_memdup2(models, n * sizeof *models);
  run->owned = g_new(gboolean, n);
  run->ranks = g_new(guint32, n);
  run->paths = g_new0(char *, n + 1);
  run->offsets = g_new0(guint64, n);
  run->position = g_new0(guint32 *, n);
  for (guint i = 0; i < n; i++) {
    run->owned[i] = TRUE;
    run->ranks[i] = logs[i].rank;
    run->paths[i] = g_strdup(logs[i].path);
  }
  run->world = logs[0].world;
  run->id = logs[0].run;
  align(run, logs);
  merge(run);
  run->strings = g_string_chunk_new(256);
  run->waits = g_new0(GArray *, n);
  gs__rank_run_sync(run, &run->collectives, run->waits, run->strings, &run->n_shared);
  return run;
}

void gs_rank_run_free(gs_rank_run *run) {
  if (!run)
    return;
  for (guint i = 0; i < run->n; i++) {
    if (run->owned[i])
      gs_trace_model_free(run->models[i]);
    g_free(run->position[i]);
  }
  gs__rank_run_sync_free(run->collectives, run->waits, run->n);
  g_string_chunk_free(run->strings);
  g_free(run->models);
  g_free(run->owned);
  g_free(run->ranks);
  g_strfreev(run->paths);
  g_free(run->offsets);
  g_free(run->position);
  g_free(run->merged_lane);
  g_free(run->merged_index);
  g_free(run);
}

guint gs_rank_run_n_lanes(const gs_rank_run *run) { return run->n; }

gs_trace_model *gs_rank_run_model(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, NULL);
  return run->models[lane];
}

gs_trace_model *gs_rank_run_release_model(gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n && run->owned[lane], NULL);
  run->owned[lane] = FALSE;
  return run->models[lane];
}

guint32 gs_rank_run_rank(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, 0);
  return run->ranks[lane];
}

guint gs_rank_run_lane_of_rank(const gs_rank_run *run, guint32 rank) {
  for (guint i = 0; i < run->n; i++)
    if (run->ranks[i] == rank)
      return i;
  return G_MAXUINT;
}

guint32 gs_rank_run_world(const gs_rank_run *run) { return run->world; }
guint64 gs_rank_run_id(const gs_rank_run *run) { return run->id; }
gs_rank_clock gs_rank_run_clock(const gs_rank_run *run) { return run->clock; }

const char *gs_rank_run_path(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, NULL);
  return run->paths[lane];
}

guint64 gs_rank_run_offset(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, 0);
  return run->offsets[lane];
}

guint64 gs_rank_run_time(const gs_rank_run *run, guint lane, guint64 index) {
  g_return_val_if_fail(lane < run->n, 0);
  return run->offsets[lane] + gs_trace_model_time_at(run->models[lane], index);
}

guint64 gs_rank_run_duration(const gs_rank_run *run) { return run->duration; }

guint64 gs_rank_run_first_time(const gs_rank_run *run) { return run->first; }

guint64 gs_rank_run_lane_index_at(const gs_rank_run *run, guint lane, guint64 t) {
  g_return_val_if_fail(lane < run->n, 0);
  guint64 lo = 0, hi = gs_trace_model_n_events(run->models[lane]);
  while (lo < hi) {
    guint64 mid = lo + (hi - lo) / 2;
    if (gs_rank_run_time(run, lane, mid) < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

guint64 gs_rank_run_n_events(const gs_rank_run *run) { return run->n_events; }

gboolean gs_rank_run_event_at(const gs_rank_run *run, guint64 position, guint *lane,
                              guint64 *index) {
  if (position >= run->n_events)
    return FALSE;
  if (lane)
    *lane = run->merged_lane[position];
  if (index)
    *index = run->merged_index[position];
  return TRUE;
}

guint64 gs_rank_run_position_of(const gs_rank_run *run, guint lane, guint64 index) {
  if (lane >= run->n || index >= gs_trace_model_n_events(run->models[lane]))
    return G_MAXUINT64;
  return run->position[lane][index];
}

const GArray *gs_rank_run_collectives(const gs_rank_run *run) { return run->collectives; }
guint gs_rank_run_n_shared_collectives(const gs_rank_run *run) { return run->n_shared; }

const GArray *gs_rank_run_waits(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, NULL);
  return run->waits[lane];
}

guint64 gs_rank_run_waited(const gs_rank_run *run, guint lane) {
  g_return_val_if_fail(lane < run->n, 0);
  guint64 sum = 0;
  for (guint i = 0; i < run->waits[lane]->len; i++) {
    const gs_rank_wait *w = &g_array_index(run->waits[lane], gs_rank_wait, i);
    sum += w->end - w->begin;
  }
  return sum;
}
