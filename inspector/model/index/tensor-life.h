/* tensor-life.h: a tensor's life as the model answers it (gs_trace_model_tensor_life): the
 * indices of the events that concern it, ascending, in two bytes an event. A parameter's life
 * on a long log is millions of events; as 8-byte indices its answer was 24 MB of fresh pages
 * at 164 M events, whose faults cost more than finding the events. Events are kept in chunks
 * of one 65,536-event range each: the range once, then each event's low 16 bits. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct gs_tensor_life gs_tensor_life;

/* How many events the life has. */
guint gs_tensor_life_len(const gs_tensor_life *life);
/* The index of its event number i (i < len), found by a binary search over its chunks. */
guint64 gs_tensor_life_at(const gs_tensor_life *life, guint i);
/* How many of its events are at or before index (the position of the first one after it). */
guint gs_tensor_life_count_upto(const gs_tensor_life *life, guint64 index);
gboolean gs_tensor_life_contains(const gs_tensor_life *life, guint64 index);
/* Whether life's first gs_tensor_life_len(prefix) events are prefix's. */
gboolean gs_tensor_life_starts_with(const gs_tensor_life *life, const gs_tensor_life *prefix);
void gs_tensor_life_free(gs_tensor_life *life);

/* A walk over a life's events, either way, with no search per event: a parameter's life is
 * millions of events, and gs_tensor_life_at searches the chunks each time. */
typedef struct gs_tensor_life_cursor {
  const gs_tensor_life *life;
  guint i;     /* the position _next returns (one past what _prev returns) */
  guint chunk; /* the chunk holding position i, or the last one */
} gs_tensor_life_cursor;

/* A cursor at position at (0: the first event; gs_tensor_life_len: past the last). */
void gs_tensor_life_cursor_init(gs_tensor_life_cursor *c, const gs_tensor_life *life, guint at);
/* The event at the cursor (*index), and the cursor moves one on; FALSE past the last. */
gboolean gs_tensor_life_cursor_next(gs_tensor_life_cursor *c, guint64 *index);
/* The event before the cursor (*index), and the cursor moves one back; FALSE at the first. */
gboolean gs_tensor_life_cursor_prev(gs_tensor_life_cursor *c, guint64 *index);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_tensor_life, gs_tensor_life_free)

G_END_DECLS
