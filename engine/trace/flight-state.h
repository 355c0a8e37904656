/* flight-state.h: what the flight recorder's dropped chunks leave alive, kept so that a log
 * that begins in the middle of a run can open with a snapshot of it (doc/trace-format.md,
 * "Snapshots").
 *
 * The ring (flight-recorder.c) keeps only the newest chunks. Each chunk it drops is decoded
 * and applied here: the state keeps the events that still describe something alive (the
 * creation of a tensor not yet disposed, a scope not yet ended, a node not yet released, the
 * table entries every later event may name) and forgets the rest. Writing the state out
 * re-emits those events, in the order they happened, between snapshot_begin and snapshot_end:
 * a reader replays them with its ordinary code and stands where the first kept chunk begins.
 *
 * Plain C on the trace codec: no engine records are looked at, so the snapshot says exactly
 * what the dropped part of the log said. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gradscope/trace.h"

typedef struct gs__flight_state gs__flight_state;

gs__flight_state *gs__flight_state_new(void);
void gs__flight_state_free(gs__flight_state *s);
/* Applies one event, as the reader decoded it from a dropped chunk (derived storage events
 * included). False if memory ran out: the state is then incomplete (and says so). */
bool gs__flight_state_apply(gs__flight_state *s, const gs_trace_event *e);
/* Nothing applied yet: the log begins at the run's start and needs no snapshot. */
bool gs__flight_state_empty(const gs__flight_state *s);
/* Tensors and composites alive after the applied events. */
uint64_t gs__flight_state_objects(const gs__flight_state *s);

/* Where the snapshot's chunks go: out(bytes, n, ctx) writes them all or returns false. */
typedef bool (*gs__flight_out_fn)(const void *bytes, size_t n, void *ctx);

/* Writes the table entries the applied events defined (strings, sites, binaries), then
 * snapshot_begin {reason (string id, defined here as reason_text), objects}, the events that re-create what is alive, and
 * snapshot_end, as whole chunks. Every event takes the number of the last applied event, as
 * table entries do, so the log's numbers stay the engine's. Allocates nothing (a fatal signal
 * handler calls it): it encodes into a static buffer, which makes it one caller at a time. */
bool gs__flight_state_write(const gs__flight_state *s, uint32_t reason, const char *reason_text,
                            gs__flight_out_fn out, void *ctx);
