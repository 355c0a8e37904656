/* model-test-util.h: what the trace model's tests share: recording a workload with the real
 * engine into log bytes, building a model from them, replaying a prefix of the log from
 * scratch with a plain reader (the reference every indexed answer must equal), and comparing
 * two replayed states field by field. */
#pragma once

#include <glib.h>
#include <gradscope/gradscope.h>

#include "event-fields.h"
#include "replay.h"
#include "trace-model.h"

typedef void (*workload_fn)(void);

/* Runs body with recording on, into a temporary file; returns its path (g_free; the caller
 * removes the file with remove_log). */
char *record_log(workload_fn body);
void remove_log(char *path);
/* The log's bytes. */
GBytes *read_log_bytes(const char *path);

/* A recorded log and the model made of it: the fixture of the model's tests. */
typedef struct recorded_model {
  char *path;
  GBytes *bytes;
  gs_trace_model *m;
} recorded_model;

/* Records body, reads its log and makes a model of it with model_from_bytes (keyframes every
 * keyframe_interval events, 0: the default); the model must report no problem. */
void recorded_model_init(recorded_model *f, workload_fn body, guint keyframe_interval);
/* Frees the model and the bytes and removes the log. */
void recorded_model_clear(recorded_model *f);

/* gs_trace_model_tensor_life's answer as an array of event indices (g_free), *n of them: what
 * the tests compare. */
guint64 *life_indices(const gs_trace_model *m, guint64 tensor, guint *n);

/* A model fed all of bytes in one piece, then finished; keyframes every keyframe_interval
 * events (0: the default). */
gs_trace_model *model_from_bytes(GBytes *bytes, guint keyframe_interval);

/* A plain reader fed all of bytes (gs_trace_reader_free it). */
gs_trace_reader *reader_of_bytes(GBytes *bytes);

/* What replay_each calls after applying each event e to r; joins_previous: e closes a pair
 * that event_opens_pair opened, so the step before shows its result too. Returns whether to
 * go on. */
typedef gboolean (*replay_step_fn)(const gs_replay *r, const gs_trace_event *e,
                                   gboolean joins_previous, gpointer data);
/* Replays bytes from scratch with a plain reader and gs_replay_apply, event by event (string
 * entries excluded), calling step after each; returns the last state (gs_replay_free it). */
gs_replay *replay_each(GBytes *bytes, replay_step_fn step, gpointer data);

/* The state after the first n events (string entries excluded), by a fresh reader and
 * gs_replay_apply: the reference. */
gs_replay *replay_prefix(GBytes *bytes, guint64 n);

/* Whether e is the first of the two events the reader unfolds from one 1.2 tensor event (a
 * derived storage_alloc before its tensor_create, a tensor_dispose before its derived
 * storage_free). The memory series treat such a pair as one user-visible step and show its
 * result at its first event. */
gboolean event_opens_pair(const gs_trace_event *e);

/* Seeks m to the first `forward` events one by one, the last `backward` ones backwards, then
 * `jumps` random ones (seeded), and checks each moment, and the head, against replay_prefix. */
void assert_seeks_equal_fresh_replay(gs_trace_model *m, GBytes *bytes, guint64 forward,
                                     guint64 backward, guint jumps, guint32 seed);

/* a and b hold the same state: memory, objects with owners, scopes with statistics, nodes. */
void assert_replay_equal(const gs_replay *a, const gs_replay *b);

/* The first event index at or after from of kind whose name (or op) string is name (NULL:
 * any), or G_MAXUINT64. */
guint64 find_event(gs_trace_model *m, guint64 from, gs_trace_kind kind, const char *name);
