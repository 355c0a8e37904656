/* writer-impl.h: the writer's two primitives, shared by writer.c (buffers, strings) and
 * events.c (one encoder per kind). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "gradscope/trace.h"

/* Opens an event of kind in this thread's buffer (locked, with room for max bytes of fields)
 * after writing any deferred event, and writes its kind, length placeholder and seq and time
 * deltas; returns where the fields go, or NULL if the event cannot be recorded (no buffer, the
 * sink gone). String ids the event uses must be taken before (gs__trace_string writes
 * events of its own). */
uint8_t *gs__tw_begin(gs_trace_kind kind, uint64_t seq, size_t max);
/* Closes the open event at end: patches its length in and unlocks the buffer. */
void gs__tw_end(uint8_t *end);
