/* trace-stats.h: whole-log statistics: events by kind and thread, the replayed state (scopes,
 * memory peak, objects alive at the end), errors and marks. Built by feeding events in order;
 * `gradscope stats` prints it, the inspector's summary page can show the same numbers. */
#pragma once

#include <glib.h>
#include <gradscope/trace-reader.h>

#include "replay.h"
#include "site-table.h"

G_BEGIN_DECLS

typedef struct gs_trace_error_record {
  guint64 seq;
  guint32 thread;
  guint32 code; /* gs_error_code */
  char *message;
} gs_trace_error_record;

typedef struct gs_trace_stats {
  gs_replay *replay;
  guint64 events;
  guint64 by_kind[GS_TRACE_KIND_COUNT];
  guint64 unknown_kinds; /* kinds newer than this reader knows */
  GHashTable *by_thread; /* thread -> events (stored as pointers) */
  guint64 first_ns, last_ns;
  GArray *errors;        /* gs_trace_error_record */
  guint64 backward_ns;   /* time inside backward passes (a nested pass counts once) */
  GHashTable *open_backward;  /* thread -> the outermost open pass's begin time + 1 */
  GHashTable *backward_depth; /* thread -> passes open (a pass started inside another nests) */
  gs_site_table *sites;  /* where the program called the engine (site and binary events) */
  /* A log that begins mid-run (format 1.5) opens with a snapshot: its first event number and
   * the objects alive then (the first snapshot_begin's). */
  gboolean snapshot, snapshot_end_seen;
  guint64 snapshot_first_seq, snapshot_objects;
  /* A rank of a distributed run (format 1.7): its dist_init, the time it was blocked in
   * collectives (their ends' waited), the bytes it allreduced and its synchronised DDP steps
   * (waits for the buckets at backward's end). */
  gboolean has_run;
  guint32 rank, world;
  guint64 run;
  guint64 collective_wait_ns, allreduced_bytes, collectives, synced_steps;
} gs_trace_stats;

gs_trace_stats *gs_trace_stats_new(void);
void gs_trace_stats_free(gs_trace_stats *stats);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_trace_stats, gs_trace_stats_free)

void gs_trace_stats_add(gs_trace_stats *stats, const gs_trace_event *event,
                        const gs_trace_reader *reader);

/* Threads seen, ascending (free with g_array_unref; elements guint32). */
GArray *gs_trace_stats_threads(const gs_trace_stats *stats);

G_END_DECLS
