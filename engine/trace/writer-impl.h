/* writer-impl.h: the writer's per-event path, inline, shared by writer.c (buffers, strings,
 * the sink) and events.c (one encoder per kind). An event costs two plain stores and a load
 * around its thread's buffer, a clock read (one per public call) and the field stores; the rest (a
 * new buffer, a full one, a deferred event, another thread claiming the buffer) is out of line in
 * writer.c. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base.h"
#include "format.h"
#include "trace-writer.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define GS__TW_BUFFER_BYTES (64u * 1024u)
/* The room kept for an event's length: 3 bytes, up to 2 MiB. The writer writes the length in
 * one byte, as almost every event's fields take fewer than 128 (2 bytes an event less to
 * write out); a longer event's fields move on by 2 at its end (gs__tw_end). The snapshot's
 * writer (flight-state.c) pads it to 3 bytes instead: LEB128 allows both. */
#define GS__TW_LENGTH_BYTES 3

/* Which ids of a table (strings, call sites) one thread's stream has defined in the current
 * log: a definition goes into each stream that uses the id, before its first use, so any
 * stream read alone is complete. */
typedef struct gs__tw_defined {
  uint8_t *bits;
  size_t bytes;
  uint64_t epoch; /* the log the bitmap is for */
} gs__tw_defined;

/* One thread's buffer: its events since the last chunk. gs_trace_flush on any thread writes
 * out every thread's buffer, never while the owner is half-way through an event. A lock taken
 * around every event cost an atomic exchange each (a fifth of an event), so the owner and the
 * other threads shake hands instead (Dekker's, made asymmetric): the owner marks itself busy
 * with a plain store, then checks that no other thread has claimed the buffer; a claimer marks
 * the buffer claimed, then waits until the owner is not busy. Each side stores, then loads
 * the other's flag; the claimer's membarrier(2) runs a full barrier on every thread of the
 * process, so the owner needs none of its own (writer.c falls back to a fence on both sides
 * where membarrier is missing). */
typedef struct gs__tw_buffer {
  uint8_t *data; /* GS__TW_BUFFER_BYTES; swapped for a spare when handed to write-behind.c */
  size_t used;
  uint32_t thread_no;
  uint64_t base_seq, base_time; /* of the event before this chunk's first */
  uint64_t last_seq, last_time;
  gs__tw_defined strings;       /* string ids this thread's stream has defined */
  gs__tw_defined sites;         /* call-site ids (sites.c) */
  gs__trace_ids ids;            /* this chunk's compact-id tables (format.h); reset at its start */
  struct gs__tw_buffer *next;   /* in the registry */
  /* data, used, base_*, last_*: its thread's while busy, a claimer's while claimed */
  atomic_uint busy;        /* its thread is writing an event */
  atomic_uint claimed;     /* another thread (or its own, between events) holds it */
  gs__spinlock claim_lock; /* one claimer at a time */
} gs__tw_buffer;

/* Whether claimers run membarrier(2) (registered when the library loads), so that the owner's
 * side of the handshake needs no fence. Never changes after the library's constructors. */
extern bool gs__tw_asymmetric;
/* writer.c: writes one chunk (header, payload, padding) to fd, taking the sink lock if lock;
 * a sink that fails stops recording. fd GS__TW_RING: into the flight recorder's ring (or,
 * from a fatal signal's handler, into its dump). */
#define GS__TW_RING (-2)
void gs__tw_write_chunk(int fd, bool lock, uint32_t thread, uint64_t base_seq, uint64_t base_time,
                        const uint8_t *data, size_t used);

/* write-behind.c: full buffers written by a thread of the writer's own. */
void gs__wb_open(int fd); /* chunks handed over go to fd (or GS__TW_RING) from now on */
void gs__wb_close(void);  /* takes no more, and returns once all are written */
void gs__wb_drain(void);  /* returns once every chunk handed over is written */
/* Hands *data (used bytes of one thread's stream) over and puts a spare block in its place;
 * false if not taken (no file log, no thread, no memory): the caller writes it itself. */
bool gs__wb_submit(uint32_t thread, uint64_t base_seq, uint64_t base_time, uint8_t **data,
                   size_t used);
void gs__wb_crash_halt(void);  /* a fatal signal's handler: stops the writer between chunks */
void gs__wb_crash_flush(void); /* the same, then writes what is queued */
void gs__wb_forget_after_fork(void);

/* The owner found its buffer claimed: steps aside until the claimer is done (writer.c). */
void gs__tw_wait_unclaimed(gs__tw_buffer *b);

/* The owner's side: busy, then no claimer. */
static inline void gs__tw_enter(gs__tw_buffer *b) {
  if (__builtin_expect(gs__tw_asymmetric, 1)) {
    atomic_store_explicit(&b->busy, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the claimer's membarrier orders the rest */
  } else {
    atomic_exchange_explicit(&b->busy, 1, memory_order_seq_cst);
  }
  if (__builtin_expect(atomic_load_explicit(&b->claimed, memory_order_seq_cst) != 0, 0))
    gs__tw_wait_unclaimed(b);
}

static inline void gs__tw_leave(gs__tw_buffer *b) {
  atomic_store_explicit(&b->busy, 0, memory_order_release);
}

extern GS__THREAD_LOCAL gs__tw_buffer *gs__tw_mine;
extern GS__THREAD_LOCAL gs__trace_deferred_fn gs__tw_pending;
extern uint64_t gs__tw_start;
extern atomic_uint_fast64_t gs__tw_log_epoch; /* advances with every gs_trace_open */

/* writer.c: the slow paths. */
gs__tw_buffer *gs__tw_buffer_new(void);
/* Flushes b (entered by its thread) to make room for need bytes. Returns where the event goes,
 * b still entered; or NULL when it cannot be recorded, and then b is left: the caller has
 * nothing left to release. */
uint8_t *gs__tw_make_room_or_leave(gs__tw_buffer *b, size_t need);
void gs__tw_emit_pending(void);
uint64_t gs__tw_clock_ns(void);
/* True the first time id is used in this stream since the log began (and marks it so): the
 * caller writes the definition. False also when memory for the bitmap runs out. */
bool gs__tw_first_use(gs__tw_defined *d, uint32_t id);

/* Nanoseconds on the monotonic clock: the TSC scaled by a factor calibrated when recording
 * started (x86), else clock_gettime. The factor is fixed-point (ns per tick times 2^32): one
 * integer multiply, where the double's conversions there and back were a sixth of an event's
 * encoder in bench-trace's profile. A TSC behind the origin (another core's, a little late)
 * reads as the origin. */
#if defined(__x86_64__)
extern uint64_t gs__tw_tsc_origin, gs__tw_ns_origin;
extern uint64_t gs__tw_ns_per_tick_q32; /* 0: no usable TSC */
static inline uint64_t gs__tw_now(void) {
  if (__builtin_expect(gs__tw_ns_per_tick_q32 == 0, 0))
    return gs__tw_clock_ns();
  int64_t ticks = (int64_t)(__rdtsc() - gs__tw_tsc_origin);
  __extension__ typedef unsigned __int128 u128;
  u128 scaled = (u128)(uint64_t)(ticks < 0 ? 0 : ticks) * gs__tw_ns_per_tick_q32;
  return gs__tw_ns_origin + (uint64_t)(scaled >> 32);
}
#else
static inline uint64_t gs__tw_now(void) { return gs__tw_clock_ns(); }
#endif

/* The public call this thread is in (trace-writer.h, gs__trace_call_enter): none (each event
 * reads the clock), one whose first event has not read it yet, or one that has. */
enum { GS__TW_NO_CALL, GS__TW_CALL_UNTIMED, GS__TW_CALL_TIMED };
extern GS__THREAD_LOCAL uint8_t gs__tw_call_state;
extern GS__THREAD_LOCAL uint64_t gs__tw_call_time; /* gs__tw_now() at its first event */

/* The time of the event being opened in b, in ns since recording started: its public call's,
 * read once per call. Never before b's previous event: a stream's times never go back (a
 * deferred event written after a table entry, another core's TSC a little behind). */
static inline uint64_t gs__tw_event_time(const gs__tw_buffer *b) {
  uint64_t now;
  if (gs__tw_call_state == GS__TW_CALL_TIMED) {
    now = gs__tw_call_time;
  } else {
    now = gs__tw_now();
    if (gs__tw_call_state == GS__TW_CALL_UNTIMED) {
      gs__tw_call_time = now;
      gs__tw_call_state = GS__TW_CALL_TIMED;
    }
  }
  uint64_t t = now > gs__tw_start ? now - gs__tw_start : 0;
  return t > b->last_time ? t : b->last_time;
}

/* Opens an event of kind with number seq in b: enters b, makes room for max bytes of fields,
 * writes the kind, the length placeholder and the seq and time deltas, and returns where the
 * fields go (NULL if the event cannot be recorded). */
static inline uint8_t *gs__tw_begin_in(gs__tw_buffer *b, gs_trace_kind kind, uint64_t seq,
                                       size_t max) {
  size_t need = 1 + GS__TW_LENGTH_BYTES + 20 + max;
  gs__tw_enter(b);
  uint8_t *p = b->data + b->used;
  if (__builtin_expect(b->used + need > GS__TW_BUFFER_BYTES, 0) &&
      !(p = gs__tw_make_room_or_leave(b, need)))
    return NULL; /* b is left */
  if (__builtin_expect(b->used == 0, 0))
    gs__trace_ids_reset(&b->ids); /* a new chunk: its ids refer within it only */
  uint64_t t = gs__tw_event_time(b);
  p[0] = (uint8_t)kind;
  p = gs__put_svarint(p + 2, (int64_t)(seq - b->last_seq)); /* kind, 1 byte of length */
  p = gs__put_svarint(p, (int64_t)(t - b->last_time));
  b->last_seq = seq;
  b->last_time = t;
  return p;
}

/* Opens an event in this thread's buffer, after writing any deferred event (it has the
 * smaller number); seq 0 takes the next number. String ids the event uses must be taken
 * before (gs__trace_string writes events of its own). */
static inline uint8_t *gs__tw_begin(gs_trace_kind kind, uint64_t seq, size_t max) {
  if (__builtin_expect(gs__tw_pending != NULL, 0))
    gs__tw_emit_pending();
  gs__tw_buffer *b = gs__tw_mine;
  if (__builtin_expect(!b, 0) && !(b = gs__tw_buffer_new()))
    return NULL;
  return gs__tw_begin_in(b, kind, seq ? seq : gs__next_event(), max);
}

/* Compact ids (format.h) into this thread's chunk, between gs__tw_begin and gs__tw_end. */
static inline uint8_t *gs__tw_put_tensor(uint8_t *p, uint64_t id) {
  return gs__put_id(p, gs__tw_mine->ids.tensor, id);
}
static inline uint8_t *gs__tw_put_storage(uint8_t *p, uint64_t id) {
  return gs__put_counter_id(p, &gs__tw_mine->ids.storage, id);
}
static inline uint8_t *gs__tw_put_node(uint8_t *p, uint64_t id) {
  return gs__put_counter_id(p, &gs__tw_mine->ids.node, id);
}

/* Closes the event being written in this thread's buffer at end: patches its length in and
 * leaves the buffer. */
static inline void gs__tw_end(uint8_t *end) {
  gs__tw_buffer *b = gs__tw_mine;
  uint8_t *p = b->data + b->used;
  uint8_t *body = p + 2;
  size_t len = (size_t)(end - body);
  if (__builtin_expect(len < 0x80, 1)) {
    p[1] = (uint8_t)len;
  } else { /* 3 bytes of length (2 MiB): the fields move into the room kept for them */
    memmove(body + 2, body, len);
    p[1] = (uint8_t)(0x80 | (len & 0x7f));
    p[2] = (uint8_t)(0x80 | ((len >> 7) & 0x7f));
    p[3] = (uint8_t)((len >> 14) & 0x7f);
    end += 2;
  }
  b->used = (size_t)(end - b->data);
  gs__tw_leave(b);
}

/* gs__trace_string's per-thread cache (writer.c), inline for the encoders: a hit is a string
 * this stream has defined already. Two ways per set, and the set from a multiplicative hash of
 * the whole pointer: short literals sit packed in .rodata (two op names can share 8 bytes), and
 * with one way indexed by `s >> 3` bench-trace's micro-step missed six times a step (a locked
 * lookup each, about 130 instructions: 5% of what recording cost it). */
#define GS__TW_STRING_CACHE 256
extern GS__THREAD_LOCAL const char *gs__tw_string_keys[GS__TW_STRING_CACHE];
extern GS__THREAD_LOCAL uint32_t gs__tw_string_ids[GS__TW_STRING_CACHE];
extern GS__THREAD_LOCAL uint64_t gs__tw_string_epoch;

/* The first slot of s's set; the other is slot ^ 1. */
static inline size_t gs__tw_string_slot(const char *s) {
  _Static_assert((GS__TW_STRING_CACHE & (GS__TW_STRING_CACHE - 1)) == 0, "a power of two");
  return (size_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 56) % GS__TW_STRING_CACHE;
}

/* An encoder's string id: inline only a hit in the set's first way, the common case; the
 * rest is gs__trace_string's, one copy out of line. Inlined whole into every encoder it took
 * more of the instruction cache than their fields did. */
static inline uint32_t gs__tw_string(const char *s) {
  size_t slot = gs__tw_string_slot(s);
  if (__builtin_expect(gs__tw_string_keys[slot] == s, 1) && __builtin_expect(s != NULL, 1) &&
      __builtin_expect(
          gs__tw_string_epoch == atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed), 1))
    return gs__tw_string_ids[slot];
  return gs__trace_string(s);
}

/* The last tensor_create this thread wrote: its tensor and event number (events.c), for
 * gs__trace_defer_after_create. */
extern GS__THREAD_LOCAL uint64_t gs__tw_created_tensor, gs__tw_created_seq;

/* ---- call sites (sites.c) ------------------------------------------------------------- */

#define GS__TW_SITE_CACHE 256
extern GS__THREAD_LOCAL uintptr_t gs__tw_thread_site;
extern GS__THREAD_LOCAL uintptr_t gs__tw_site_addr[GS__TW_SITE_CACHE];
extern GS__THREAD_LOCAL uint32_t gs__tw_site_id[GS__TW_SITE_CACHE];
extern GS__THREAD_LOCAL uint64_t gs__tw_site_epoch;
extern uintptr_t gs__tw_code_lo, gs__tw_code_hi;
extern int gs__tw_stack_depth;
extern atomic_bool gs__tw_sites_ready;
uintptr_t gs__tw_walk(void);
uint32_t gs__tw_site_slow(uintptr_t ret, size_t slot, uint64_t epoch);
/* An interpreter's site set by gs_trace_set_site_text (0: none), and its use in a stream. */
extern GS__THREAD_LOCAL uint32_t gs__tw_text_site;
uint32_t gs__tw_text_site_use(void);

/* One compare: an address below the library's code wraps around to a large value. */
static inline bool gs__tw_in_engine(uintptr_t a) {
  return a - gs__tw_code_lo < gs__tw_code_hi - gs__tw_code_lo;
}

/* The site id of the public call this thread is in (gs__trace_call_open), found at its first
 * event, for the log whose epoch + 1 is gs__tw_call_site_epoch (0: none found yet). Every
 * event of a call has the call's site; the id once found costs its other events one compare
 * instead of the checks and the cache below (a backward pass's two dozen events). Kept only
 * for a call charged to a site (gs__tw_thread_site); cleared when a call opens or closes and
 * when the thread's site or an interpreter's line is set (gs__tw_call_site_forget). */
extern GS__THREAD_LOCAL uint32_t gs__tw_call_site;
extern GS__THREAD_LOCAL uint64_t gs__tw_call_site_epoch;
static inline void gs__tw_call_site_forget(void) { gs__tw_call_site_epoch = 0; }

/* gs__trace_site's body (sites.c): the call's site, else the walk (or the thread's charged
 * site), then this thread's cache; the rest out of line. */
static inline uint32_t gs__tw_site_find(void) {
  uint64_t epoch = atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed);
  if (gs__tw_call_site_epoch == epoch + 1)
    return gs__tw_call_site;
  if (__builtin_expect(!atomic_load_explicit(&gs__tw_sites_ready, memory_order_relaxed), 0))
    gs__trace_sites_init();
  if (__builtin_expect(gs__tw_text_site != 0, 0))
    return gs__tw_text_site_use();
  if (!gs__tw_code_hi)
    return 0;
  uintptr_t ret = gs__tw_thread_site ? gs__tw_thread_site : gs__tw_walk();
  size_t slot = (ret >> 2) % GS__TW_SITE_CACHE;
  if (__builtin_expect(gs__tw_stack_depth != 1, 0)) /* a whole stack: its own each event */
    return gs__tw_site_slow(ret, slot, epoch);
  uint32_t id = gs__tw_site_epoch == epoch && gs__tw_site_addr[slot] == ret
                    ? gs__tw_site_id[slot]
                    : gs__tw_site_slow(ret, slot, epoch);
  /* The call's other events take it as it is: they are charged to the same site. (Without
   * one, each event walks its own stack, which a callback may have made longer.) */
  if (gs__tw_call_state != GS__TW_NO_CALL && gs__tw_thread_site) {
    gs__tw_call_site = id;
    gs__tw_call_site_epoch = epoch + 1;
  }
  return id;
}

/* An encoder's site id: inline only the call's site found at its first event (what its other
 * events take); the rest is gs__trace_site's, one copy out of line, as for gs__tw_string. */
static inline uint32_t gs__tw_site(void) {
  if (__builtin_expect(gs__tw_call_site_epoch ==
                           atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed) + 1,
                       1))
    return gs__tw_call_site;
  return gs__trace_site();
}
