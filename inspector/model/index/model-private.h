/* model-private.h: the trace model's insides, shared by its files (trace-model.c builds the
 * index; model-events.c decodes single events; model-seek.c rebuilds moments; model-memory.c,
 * model-scopes.c, model-life.c, model-filter.c and model-explain.c answer the rest).
 *
 * Memory per event is the budget that shapes this (issue 20: <= 16 bytes per event on a 100 M
 * event log): a byte of kind, two of seq and four of time (offsets from the event's chunk:
 * a chunk whose seqs spread wider keeps four-byte seq offsets aside, and the rare misfit of
 * either goes to a side table), about four of tensor-life postings (model-life-index.c: sorted
 * by object in sealed segments), the memory series at a few bytes a change (model-series.c),
 * and sparse side arrays for everything else. Event indices are stored as 32 bits: a model
 * holds at most 2^32 - 1 events (a log of some 70 GB). */
#pragma once

#include "replay-records.h"
#include "site-table.h"
#include "trace-model.h"

/* Alive objects and storages from which keyframes keep them shared (model-seek.c): below it
 * a copy is cheap, and shared records' bucket directories would cost more than they save. */
#define MODEL_KEYFRAME_SHARE_MIN 8192

/* In the kinds column, the bit that marks an event the reader derived (gs_trace_event's
 * derived: a storage_alloc or storage_free unfolded from a 1.2 tensor event, sharing its seq). */
#define MODEL_DERIVED 0x80u
_Static_assert(GS_TRACE_KIND_COUNT <= MODEL_DERIVED, "kinds fit below the derived bit");

/* A 1.2 log folds a storage's alloc into the tensor_create that made it and its free into the
 * dispose that freed it; the reader unfolds each into two events (the derived alloc before its
 * create, the derived free after its dispose). To a user they are one step, and the memory
 * series show the pair's result at its first event: otherwise the bytes would pass through
 * "other" for one event at every tensor made or disposed, four series points per tensor (a
 * third of the model's memory on a log of short-lived tensors). TRUE for the second event. */
static inline gboolean model_event_closes_pair(const gs_trace_event *e) {
  return (e->kind == GS_TRACE_TENSOR_CREATE && e->alloc) ||
         (e->derived && e->kind == GS_TRACE_STORAGE_FREE);
}

/* One chunk of the log that delivered events: where its bytes are, and which events. */
typedef struct model_chunk {
  guint64 offset; /* its first byte in the log */
  guint64 first;  /* index of its first event */
  guint64 seq0, time0; /* seq and time of its first event */
  guint32 size;   /* header, payload and padding */
  guint32 thread;
  guint32 n;      /* events (string entries excluded) */
  /* Where its events' seq offsets start in seq_wide, if one did not fit in 16 bits (other
   * threads' events interleaved with a long chunk); G_MAXUINT32 while they fit in seq_off. */
  guint32 seq_wide;
} model_chunk;

/* Re-reads chunks through a reader of its own: the model keeps several, so decoding for one
 * purpose (an event shown, a moment rebuilt) does not disturb another. */
typedef struct model_decoder {
  gs_trace_reader *reader;
  guint chunk;   /* the chunk fed to reader, G_MAXUINT for none */
  guint64 next;  /* index of the event the reader delivers next */
  char *text;    /* the last event's text made valid UTF-8, if it was not */
  /* The event delivered last (index next - 1), its pointers into the reader still valid:
   * explaining an event decodes it again after a seek, and reopening the chunk to get back
   * to it made explaining a log quadratic in its chunks' lengths. */
  gs_trace_event last;
  gboolean has_last;
} model_decoder;

/* A value over event indices, stored only where it changes. */
/* The timeline stacks at most GS_MEMORY_MAX_STACKS - 1 scope groups: groups from this index
 * on share the last stack, and one series holds their sum (a log may have 200,000 names, and a
 * series each made every column walk them all). */
#define MODEL_REST_GROUP (GS_MEMORY_MAX_STACKS - 2)

/* model-series.c: points in blocks of this many, each block starting with one in full. */
#define MODEL_SERIES_BLOCK 64

typedef struct model_series_block {
  guint64 value;  /* its first point's value */
  guint64 offset; /* where its other points' bytes start in data */
  guint32 at;     /* its first point's event index */
  guint32 last_at; /* its last point's */
  /* Over its points: a column of the timeline spanning whole blocks reads these, not points. */
  guint64 min, max;
  guint32 max_at; /* the first point with the largest value */
} model_series_block;

typedef struct model_series {
  model_series_block *blocks;
  guint n_blocks, blocks_cap;
  guint8 *data; /* per point after a block's first: varint index step, varint zigzag change */
  gsize data_len, data_cap;
  guint64 n_encoded;    /* points in blocks and data */
  guint32 last_at;      /* the last encoded point, which the next one is relative to */
  guint64 last_value;
  gboolean has_tail;    /* the newest point, kept aside until a later event changes the value */
  guint32 tail_at;
  guint64 tail_value;
} model_series;

/* A point of a series, walked in order. */
typedef struct model_series_cursor {
  const model_series *series;
  guint64 pos;  /* the point's position, G_MAXUINT64 before the first */
  gsize byte;   /* where the next point's bytes start */
  guint32 at;
  guint64 value;
} model_series_cursor;

/* A copy of the state after `applied` events (open scopes only: ended ones are borrowed from
 * the head state, whose ended records never change). A big state's alive objects and
 * storages are kept apart in records, shared with the keyframe before (replay-records.h). */
typedef struct model_keyframe {
  guint64 applied;
  guint64 bytes;  /* about what the copy costs (state_bytes), or what it newly allocated */
  guint n_scopes; /* scopes begun by then */
  gs_replay *state;
  gs_replay_records *records; /* NULL: state holds them */
} model_keyframe;

/* Where each scope is in the log, by its position in the head's scope_list. */
typedef struct model_scope_span {
  guint64 begin, end; /* event indices; end G_MAXUINT64 while open */
} model_scope_span;

/* The memory series' incremental bookkeeping (model-memory.c). */
typedef struct model_memory model_memory;

struct gs_trace_model {
  /* first pass */
  gs_trace_reader *reader;
  guint64 fed;
  gboolean finished;
  char *problem;
  guint64 header_size; /* bytes before the first chunk, once known */

  /* where the bytes are: in memory (pages of fed bytes) or in a file (re-read on demand) */
  GPtrArray *pages; /* GByteArray* of MODEL_PAGE bytes each, the last one filling */
  int fd;           /* -1 for memory */

  /* the index */
  GArray *chunks;   /* model_chunk */
  GArray *kinds;    /* guint8 per event: its kind, | MODEL_DERIVED if the reader derived it */
  GArray *seq_off;  /* guint16 per event: seq - chunk seq0 (0 in a chunk with seq_wide) */
  GArray *seq_wide; /* guint32 per event of the chunks that need it: seq - chunk seq0, or
                     * G_MAXUINT32 (see seq_big) */
  GArray *time_off; /* guint32 per event: time - chunk time0, or G_MAXUINT32 */
  GHashTable *seq_big, *time_big; /* event index -> full value, where the offset overflowed */
  GHashTable *thread_chunks;      /* thread -> GArray of guint chunk positions */
  GArray *threads;                /* guint32, ascending */
  GHashTable *strings;            /* string id -> text (owned) */
  gs_site_table *sites;           /* call sites and binaries (site and binary events) */

  /* The per-event columns of events being indexed, appended to the arrays in batches (one
   * append per column per MODEL_PENDING events instead of one per event): drain() flushes
   * before it returns, so callers never see them. */
#define MODEL_PENDING 4096
  guint n_pending;
  guint64 n_indexed; /* events indexed: the columns' length once pending ones are appended */
  guint8 pending_kinds[MODEL_PENDING];
  guint16 pending_seq[MODEL_PENDING];
  guint32 pending_time[MODEL_PENDING];

  /* Tensor life (model-life.c): each event's key and extra (key, event) pairs. The newest
   * segment's are kept as they come (a key per event, the extras in order); a full segment is
   * sealed into postings sorted by key (model-life-index.c), so a life is a few lookups per
   * segment instead of a scan of every event's key. Sealed segments are merged into bigger
   * ones as the log grows, a little at a time, so a key is looked up in a few dozen. */
  guint life_segment_events; /* events per segment; G_MAXUINT: never sealed (tests) */
  guint64 life_open_first;   /* the first event of the open segment */
  GArray *life_keys;         /* guint32 per event of the open segment, 0 for none */
  GArray *life_extra;        /* model_posting of the open segment */
  GArray *life_segments;     /* model_life_segment, sealed, in event order */
  struct model_life_sorter *life_sorter; /* sealing's scratch, kept between seals */
  guint8 *life_follow; /* a bit per event of the open segment: MODEL_LIFE_FOLLOW (if sealing) */
  struct model_life_merge *life_merge;   /* the merge under way, NULL for none */
  /* While a file loads on two cores, the thread that keeps the life index and appends the
   * per-event columns (model-life-feed.c): until it is joined, only it touches the life_
   * fields above and kinds, seq_off and time_off. */
  struct model_life_feed *life_feed;
  guint64 life_merge_credit;             /* postings the merge may still take */
  /* the last tensor filtered on (model-filter.c), until more events arrive */
  guint64 life_cache_tensor, life_cache_events;
  gs_tensor_life *life_cache;

  /* scopes (model-scopes.c) */
  GArray *scope_spans;     /* model_scope_span, by position in head->scope_list */
  GHashTable *scope_pos;   /* scope id -> position + 1 */
  GHashTable *scope_kids;  /* outer id -> GArray of guint positions (0: the roots) */
  GHashTable *thread_scope_list; /* thread -> GArray of guint positions, in begin order */
  /* sibling scopes grouped by name (model-scope-groups.c) */
  GPtrArray *scope_groups;       /* model_scope_group*, by group number */
  GHashTable *scope_group_keys;  /* model_group_key* -> group number + 1 */
  GHashTable *scope_parents;     /* parent id -> model_scope_parent* (0: the roots) */
  GArray *scope_group_of;        /* model_group_place per scope position */

  /* the snapshot a log that begins mid-run opens with (gs_trace_model_snapshot) */
  gboolean snapshot;
  guint64 snapshot_first_seq, snapshot_objects, snapshot_begin, snapshot_end; /* indices */

  /* states */
  gs_replay *head;
  GArray *keyframes; /* model_keyframe */
  guint keyframe_events;
  gboolean keyframe_fixed; /* set by the caller: no growing the spacing for big states */
  guint keyframe_share_min; /* records alive from which keyframes share them (replay-records.h) */
  guint64 keyframe_bytes;   /* what every keyframe costs, summed */
  guint64 keyframe_peak_records; /* the most record bytes a shared keyframe held */
  guint64 keyframe_check_at; /* the next event count at which a big state's size is weighed */
  guint64 compact_at; /* the event count at which the head's tables are rebuilt next */
  gs_replay *cursor; /* what _seek returned */
  guint64 cursor_applied;
  /* cursor->scope_list's first cursor_scopes_head entries are the head's, but at the
   * positions in cursor_scopes_own (guint), where the cursor's own copies stand (model-seek.c) */
  guint cursor_scopes_head;
  GArray *cursor_scopes_own;
  model_decoder seek_decoder, event_decoder, query_decoder;

  /* memory series (model-memory.c) */
  model_series total;
  model_series outside; /* of total, bytes outside the engine's allocator (replay.h) */
  model_series categories[GS_MEM_N_CATEGORIES];
  GPtrArray *group_series; /* model_series* per scope group shown as its own stack; the last
                            * one sums all the groups after them (MODEL_REST_GROUP) */
  GArray *rest_bytes_by_group; /* guint64: the bytes each summed group had last */
  guint64 rest_bytes;          /* their sum */
  model_memory *memory;
};

typedef struct model_posting {
  guint32 key, index;
} model_posting;

/* Varints (7 bits a byte, low bits first) into a growing buffer and back: the memory series'
 * points and the life index's postings. */
static inline void model_put_varint(guint8 **data, gsize *len, gsize *cap, guint64 v) {
  if (*len + 10 > *cap) {
    *cap = MAX(*cap * 2, 256);
    *data = g_realloc(*data, *cap);
  }
  while (v >= 0x80) {
    (*data)[(*len)++] = (guint8)(v | 0x80);
    v >>= 7;
  }
  (*data)[(*len)++] = (guint8)v;
}

static inline const guint8 *model_get_varint(const guint8 *p, guint64 *out) {
  guint64 v = 0;
  for (guint shift = 0;; shift += 7) {
    guint8 b = *p++;
    v |= (guint64)(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  *out = v;
  return p;
}

/* A sealed segment of the life index: its keys' groups in ascending key order, each group its
 * key (a varint step from the group before, or in full in the directory every
 * MODEL_LIFE_DIR_EVERY groups), the count of events it is the primary key of and of those it
 * is an extra key of (the first with two flags: extras follow, and a primary is of a
 * MODEL_LIFE_FOLLOW kind), then those events as ascending varint steps from the segment's
 * first. A sealed segment covers MODEL_LIFE_FANOUT^level base segments: merging MODEL_LIFE_FANOUT
 * neighbours of one level makes one of the next. */
typedef struct model_life_segment {
  guint8 *bytes;  /* its groups (owned) */
  gsize len, cap; /* written, and held (mapped: unmapped with cap) */
  gboolean mapped;
  struct model_life_dir *dir; /* its directory (owned) */
  guint32 n_dir, n_groups;
  guint64 first;  /* its first event */
  guint64 events; /* how many events it covers */
  guint level;
} model_life_segment;

#define MODEL_LIFE_DIR_EVERY 16
/* The kinds whose events a life query decodes to follow a tensor (its storage, its new
 * handle): a group flags whether its primaries hold one, so a parameter's millions of other
 * events are never looked at one by one. */
#define MODEL_LIFE_FOLLOW(kind) ((kind) == GS_TRACE_TENSOR_CREATE || (kind) == GS_TRACE_TENSOR_MOVE)
/* Base segments of this many events: a seal's radix sort stays in cache. */
#define MODEL_LIFE_SEGMENT (1u << 16)
/* Segments merged at once: a key is looked up in at most FANOUT - 1 segments per level (and
 * the merge's inputs while it runs), and each posting is rewritten once per level. */
#define MODEL_LIFE_FANOUT 16
/* Postings (and groups) a merge may rewrite per event indexed, in steps of
 * MODEL_LIFE_MERGE_STEP events' worth, small enough not to stall a feed. A posting is
 * rewritten about log16(segments) times, some 2-4 credits an event on big logs, and merges
 * are spread thin: while a file loads the life index keeps pace with the reading on another
 * core (model-life-feed.c), and at 32 an event each merge was a burst that left the reading
 * waiting (3.5 s of a 12.5 s open at 100 M events). One merge runs at a time, so while a big
 * one runs, small segments pile up: every MODEL_LIFE_MERGE_BACKLOG segments waiting add
 * MODEL_LIFE_MERGE_RATE more, so merging catches up whatever the log's shape. */
#define MODEL_LIFE_MERGE_RATE 4
#define MODEL_LIFE_MERGE_BACKLOG 32
#define MODEL_LIFE_MERGE_STEP 1024

typedef struct model_life_dir {
  guint32 key; /* the key of every MODEL_LIFE_DIR_EVERY-th group */
  guint32 pos; /* where that group's key step would be: its counts, from the segment's bytes */
} model_life_dir;

/* model-events.c */
void model_decoder_init(model_decoder *d);
void model_decoder_clear(model_decoder *d);
/* Decodes event index with d; pointers in *out valid until d's next use. */
gboolean model_decode(gs_trace_model *m, model_decoder *d, guint64 index, gs_trace_event *out);
const char *model_string_fn(guint32 id, gpointer model);
guint model_chunk_of(const gs_trace_model *m, guint64 index);

/* model-series.c */
void model_series_init(model_series *s);
void model_series_clear(model_series *s);
guint64 model_series_len(const model_series *s);
/* The value from event index on (points must come at ascending indices; a second set at the
 * last point's index replaces it). */
void model_series_set(model_series *s, guint64 index, guint64 value);
guint64 model_series_value(const model_series *s, guint64 index);
/* c at the last point at or before index: TRUE, or FALSE with c before the first point. */
gboolean model_series_seek(const model_series *s, guint64 index, model_series_cursor *c);
/* c at the next point: FALSE when there is none. */
gboolean model_series_next(model_series_cursor *c);
/* The smallest and largest values over events [first, last], and the first event holding the
 * largest. */
void model_series_range(const model_series *s, guint64 first, guint64 last, guint64 *min,
                        guint64 *max, guint64 *max_at);

/* model-memory.c: the category bookkeeping follows the head state event by event. */
model_memory *model_memory_new(void);
void model_memory_free(model_memory *mm);
/* Before applying e to the head: note what e may change. */
void model_memory_before(gs_trace_model *m, const gs_trace_event *e);
/* After: update the series at index. */
void model_memory_after(gs_trace_model *m, const gs_trace_event *e, guint64 index);

/* model-seek.c */
void model_keyframes_after(gs_trace_model *m, guint64 applied);
void model_keyframes_clear(gs_trace_model *m);

/* model-scope-groups.c: a scope begun at position (its record is the head's), or ended. */
void model_scope_groups_init(gs_trace_model *m);
void model_scope_groups_clear(gs_trace_model *m);
void model_scope_groups_begin(gs_trace_model *m, guint position);
void model_scope_groups_end(gs_trace_model *m, guint position, guint64 index);

/* model-scopes.c */
void model_scopes_after(gs_trace_model *m, const gs_trace_event *e, guint64 index);
void model_scopes_init(gs_trace_model *m);
void model_scopes_clear(gs_trace_model *m);

/* model-life.c: indexes the event's key and its extra keys (events come in order). */
void model_life_add(gs_trace_model *m, const gs_trace_event *e, guint64 index);
/* The event's own key (0 for none), its extra keys appended to extras, and whether its key's
 * group must flag it (MODEL_LIFE_FOLLOW): what model_life_add works out before keeping. */
guint32 model_life_key(gs_trace_model *m, const gs_trace_event *e, guint64 index, GArray *extras,
                       gboolean *follow);
/* Keeps what model_life_key gave for event index, as model_life_add does (the life thread). */
void model_life_keep(gs_trace_model *m, guint64 index, guint32 key, gboolean follow,
                     const model_posting *extras, guint n_extras);

/* model-life-feed.c: the life index kept on a thread of its own while a file loads. */
typedef struct model_life_feed model_life_feed;
void model_life_feed_start(gs_trace_model *m);
/* On the indexing thread, instead of keeping the event's keys itself (model_life_add) and
 * its columns (the pending ones): the life thread appends them to kinds, seq_off, time_off. */
void model_life_feed_add(gs_trace_model *m, const gs_trace_event *e, guint64 index, guint8 kind,
                         guint16 seq, guint32 time);
/* Hands over the batch being filled and waits until the life thread has kept everything: the
 * columns then hold every event fed so far (for the rare reader of earlier columns). */
void model_life_feed_sync(gs_trace_model *m);
/* Hands over what is left (or, with drop, abandons it) and joins the thread: afterwards the
 * model is as the serial path leaves it. */
void model_life_feed_end(gs_trace_model *m, gboolean drop);

/* trace-model.c: gs_trace_model_load_file into a model the caller made (tests set its life
 * segments first), with the life index on a second thread or not. FALSE, with error set and
 * m to be freed, if the file cannot be opened or read, or the load was cancelled. */
gboolean model_load_file(gs_trace_model *m, const char *path, gs_trace_progress_fn progress,
                         gpointer user_data, GCancellable *cancellable, gboolean parallel,
                         GError **error);

/* model-life-index.c */
void model_life_index_init(gs_trace_model *m);
void model_life_index_clear(gs_trace_model *m);
/* Seals the open segment (called when it is full, before the next event's keys). */
void model_life_seal(gs_trace_model *m);
/* Moves the merge under way forward by the credit indexing has earned (called as events come). */
void model_life_merge_step(gs_trace_model *m);
/* Where one sealed segment keeps key k's events: varint steps from first, its primaries (the
 * events whose own key is k) then its extras (where k is an extra key). */
typedef struct model_life_group {
  const guint8 *events;
  guint64 first;
  guint32 primaries, extras;
  gboolean follow; /* a primary is a creation or a move (MODEL_LIFE_FOLLOW) */
} model_life_group;
/* A life's answer (tensor-life.h): chunk c holds the events at positions [first, next chunk's
 * first) of one 65,536-event range, high; lows[i] is event i's index's low 16 bits. */
typedef struct model_life_chunk {
  guint64 high; /* the range: index >> 16 */
  guint first;  /* the position of its first event */
} model_life_chunk;

struct gs_tensor_life {
  guint n, n_chunks;
  guint16 *lows;
  model_life_chunk *chunks;
};

/* tensor-life.c: an empty life with room for `bound` events among `events` (the log's). */
gs_tensor_life *model_life_answer_new(guint64 bound, guint64 events);
/* Appends event index, which is after every event appended before. */
static inline void model_life_answer_add(gs_tensor_life *l, guint64 index) {
  if (G_UNLIKELY(l->n_chunks == 0 || l->chunks[l->n_chunks - 1].high != index >> 16))
    l->chunks[l->n_chunks++] = (model_life_chunk){index >> 16, l->n};
  l->lows[l->n++] = (guint16)index;
}
/* Appends to groups (of model_life_group) every sealed segment's group of key k, oldest
 * first; the open segment is the caller's to scan. Counting first lets a query size its
 * answer once. */
void model_life_find(const gs_trace_model *m, guint32 k, GArray *groups);
/* Does e concern one of the handles ids[0, n) of a tensor, or (storage events, in-place
 * writes) its storage? What a life's keys were made from (tests check lives with it). */
gboolean model_life_concerns(const gs_trace_model *m, const gs_trace_event *e, const guint64 *ids,
                             guint n, guint64 storage);
/* Tests: segments of this many events (at most MODEL_LIFE_SEGMENT), or G_MAXUINT for none
 * sealed (every query scans every event's key, as the model did before the index). Only
 * before the first event. */
void gs_trace_model_set_life_segment(gs_trace_model *m, guint events);
/* Bytes the life index holds (sealed and open), for the budget's tests. */
guint64 model_life_index_bytes(const gs_trace_model *m);
/* The in-place writes to storage (event indices, ascending). */
GArray *model_storage_writes(gs_trace_model *m, guint64 storage);
