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
 * storages read or that holds values (such a state is copied whole, gs_replay_copy). When r
 * tracks its changes (gs_replay_track_changes), they must be all those since prev was taken:
 * then only the records they name are compared, not every alive one. */
gs_replay_records *gs_replay_records_take(const gs_replay *r, const gs_replay_records *prev,
                                          guint64 *bytes);
/* Puts copies of the kept records into r, a gs_replay_copy_without_records of the same
 * state. */
void gs_replay_records_restore(const gs_replay_records *k, gs_replay *r);
void gs_replay_records_free(gs_replay_records *k);
/* How many records k keeps. */
guint64 gs_replay_records_size(const gs_replay_records *k);
/* About how many records gs_replay_records_seek copies or drops to go from from's to to's:
 * those in buckets the two do not share (an upper bound). */
guint64 gs_replay_records_distance(const gs_replay_records *from, const gs_replay_records *to);
/* How many records r marked as changed since it began tracking (gs_replay_track_changes). */
guint64 gs_replay_records_changed(const gs_replay *r);
/* r holds from's records, and tracked its changes since it did (gs_replay_track_changes):
 * makes its alive objects and storages to's, by putting back what changed and copying what
 * differs between from and to (buckets shared by both are skipped), so a seek costs what
 * changed rather than every alive record. Stops the tracking. The rest of r is the
 * caller's to replace (gs_replay_copy_onto_records). */
void gs_replay_records_seek(gs_replay *r, const gs_replay_records *from,
                            const gs_replay_records *to);
/* r's alive objects and storages, counted. */
guint gs_replay_records_count(const gs_replay *r);
/* What keeping them all anew costs, in bytes (a first keyframe's records). */
guint64 gs_replay_records_cost(const gs_replay *r);

G_END_DECLS
