/* oracle.h: the differential oracle. The inspector's model is checked against the live engine:
 * a program runs with recording on, and after every public call that took an event number the
 * oracle asks the engine itself about every tensor alive (gs_live_tensors: storage, version,
 * copy-on-write, owner scope, shape, strides, offset, dtype, the first values) and about every
 * scope open on the thread (gs_scope_get_info), with gs_event_counter(). When the program ends
 * the log is replayed, and the model's state after the last event numbered at or below each
 * probe's counter (what `gradscope state --at` prints) must say the same, field by field. And
 * every event's sentence is built and its facts checked against that same state.
 *
 * GS_ORACLE_MAX_PROBES=N stops probing a long program after N probes (its sentences are then
 * checked as far as it was probed).
 *
 * A program reaches the probe in one of two ways: its calls go through oracle-wrap.h (force
 * included, so tours and examples run unchanged), or it calls oracle_after_call itself. */
#pragma once

#include <glib.h>
#include <gradscope/gradscope.h>

G_BEGIN_DECLS

typedef struct oracle oracle;

/* Starts recording into a new temporary log and makes this the oracle that probes. The first
 * `values` elements of each tensor are compared (the log must record at least as many:
 * GS_TRACE_VALUES). */
oracle *oracle_begin(guint values);
/* Stops recording, replays the log and compares every probe. Returns the number of
 * disagreements; the first ones are described in report (one line each). Frees o and removes
 * its log unless keep_log (then *log_path, if not NULL, gets its path: g_free). */
guint oracle_end(oracle *o, GString *report, gboolean keep_log, char **log_path);

/* For a program's main under the oracle: runs it again with GS_TRACE_VALUES set if it is not
 * (values are recorded only when the library loads with it), then begins the oracle. */
oracle *oracle_begin_program(char **argv);
/* Ends a whole program's oracle: prints its oracle_... lines, the disagreements on stderr
 * (the log is kept for them), and returns the exit status: non-zero if the program failed
 * (status), the two disagree, or nothing was probed. */
int oracle_end_program(oracle *o, int status);

/* Probes the engine now, after call (named in reports), if anything took an event number
 * since the last probe. Does nothing when no oracle has begun. */
void oracle_after_call(const char *call);

/* Saved-tensor hooks report to the oracle what the engine gave them, the truth the log's
 * saved_pack and saved_unpack events are checked against: a pack hook calls
 * oracle_saved_packed first with the tensor it got (returns the pack's number, kept with what
 * it packs), an unpack hook calls oracle_saved_unpacked with that number and the tensor it
 * gives back. Each pack is then a saved_pack event, in order, of the node the hook's tensor
 * was made for, on that tensor's storage, naming the tensor it views; each saved_unpack event
 * names a tensor an unpack hook gave back, of the node whose pack made what it unpacked.
 * Nothing is recorded when no oracle has begun (0). */
guint oracle_saved_packed(gs_tensor t);
/* While held (nested), calls do not probe: for callbacks the engine makes in the middle of one
 * of its calls, where its state is half changed (a free_packed hook runs while a disposal
 * releases the node: the tensor it disposes has left its scope, its dispose event is not
 * written yet). Their events are compared at the next probe. */
void oracle_hold_probes(gboolean hold);
void oracle_saved_unpacked(guint pack, gs_tensor given);

/* A flight recorder's log against a full log of the same run (the same program from the same
 * engine state): the state after the ring's last event must equal the full log's after that
 * event, except for what the ring cannot know, which it must say it does not know (versions
 * of storages its snapshot re-created, values, when objects were made). Returns the number of
 * disagreements, described in report. */
guint oracle_compare_ring(const char *full_log, const char *ring_log, GString *report);

/* What the oracle counted, over every oracle_end so far: probes compared, tensors compared,
 * sentences checked, and values the model did not know (the log could not say them). */
typedef struct oracle_totals {
  guint64 programs, probes, tensors, scopes, sentences, facts, unknown_values;
  guint64 ranges;         /* open named ranges compared at probes */
  guint64 packs, unpacks; /* hook calls matched to the log's saved_pack and saved_unpack */
  guint64 reshapes;       /* sentences checked for a tensor's layout changed in place */
  guint64 snapshots; /* flight recorder logs compared that began with a snapshot */
} oracle_totals;
oracle_totals oracle_get_totals(void);

G_END_DECLS
