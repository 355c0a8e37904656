/* replay-records.h: a state's alive objects and storages, kept apart from the rest of it for
 * the trace model's keyframes. A log with a huge state (200,000 tensors alive) changes few of
 * them between keyframes: a keyframe shares every bucket of records that did not change with
 * the keyframe before it, and within a bucket that did, every record that did not, so it
 * costs what changed rather than a copy of the whole state. A seek's cursor reads a keyframe's
 * records in place (gs_replay_set_base) rather than copying them. */
#pragma once

#include "replay.h"

G_BEGIN_DECLS

/* (gs_replay_records is declared in replay.h: a state may read one as its base.) */

/* Keeps r's alive objects and storages, sharing with prev (may be NULL) what it kept
 * unchanged; adds the bytes newly allocated to *bytes. NULL if r holds a buffer that two
 * storages read or that holds values (such a state is copied whole, gs_replay_copy). When r
 * tracks its changes (gs_replay_track_changes), they must be all those since prev was taken:
 * then only the records they name are compared, not every alive one. */
gs_replay_records *gs_replay_records_take(const gs_replay *r, const gs_replay_records *prev,
                                          guint64 *bytes);
gs_replay_records *gs_replay_records_ref(gs_replay_records *k);
/* Drops a reference (the records go with the last). */
void gs_replay_records_free(gs_replay_records *k);
/* r (a gs_replay_copy_without_records of the state k was taken from, before any change) reads
 * k's records as its alive objects and storages from now on, and holds a reference to k: a
 * seek's cursor starts so, at no cost per record, and copies into its own tables only the
 * records the events it applies change (replay_object_w, replay_storage_w). */
void gs_replay_set_base(gs_replay *r, gs_replay_records *k);
/* r's alive objects and storages, counted. */
guint gs_replay_records_count(const gs_replay *r);
/* What keeping them all anew costs, in bytes (a first keyframe's records). */
guint64 gs_replay_records_cost(const gs_replay *r);

G_END_DECLS
