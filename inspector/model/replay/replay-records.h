/* replay-records.h: a state's alive objects and storages, kept apart from the rest of it for
 * the trace model's keyframes. A log with a huge state (200,000 tensors alive) changes few of
 * them between keyframes: a keyframe shares every bucket of records that did not change with
 * the keyframe before it, and within a bucket that did, every record that did not, so it
 * costs what changed rather than a copy of the whole state. */
#pragma once

#include "replay.h"

G_BEGIN_DECLS

typedef struct gs_replay_records gs_replay_records;

/* Keeps r's alive objects and storages, sharing with prev (may be NULL) what it kept
 * unchanged; adds the bytes newly allocated to *bytes. NULL if r holds a buffer that two
 * storages read or that holds values (such a state is copied whole, gs_replay_copy). */
gs_replay_records *gs_replay_records_take(const gs_replay *r, const gs_replay_records *prev,
                                          guint64 *bytes);
/* Puts copies of the kept records into r, a gs_replay_copy_without_records of the same
 * state. */
void gs_replay_records_restore(const gs_replay_records *k, gs_replay *r);
void gs_replay_records_free(gs_replay_records *k);
/* r's alive objects and storages, counted. */
guint gs_replay_records_count(const gs_replay *r);
/* What keeping them all anew costs, in bytes (a first keyframe's records). */
guint64 gs_replay_records_cost(const gs_replay *r);

G_END_DECLS
