/* trace-model.h: the inspector's index over one event log, answering "what was alive, owned by
 * whom, at event N" on logs of millions of events, while the log may still be growing.
 *
 * Raw log bytes go in (gs_trace_model_feed, from a file, a growing file or a socket: the same
 * code); the model parses every whole event once, through the trace reader, and keeps only
 * compact indices: a table of chunks (where each chunk's bytes are, its thread, its first
 * event), one byte of kind and a few bytes of seq and time per event, postings of the events
 * that concern each tensor, the memory series only where it changes, and keyframes of the
 * replayed state. A single event is decoded again on demand from its chunk's bytes; a moment
 * is rebuilt by copying the nearest keyframe and applying the events after it.
 *
 * Events are numbered 0..n-1 in log (file) order; string-table entries are not events here.
 *
 * A model is single-threaded: one thread feeds and queries at a time. A worker thread may
 * build one (gs_trace_model_load_file) and hand it to the UI thread.
 *
 * GLib only, no GTK: the CLI, the tests and the GTK inspector share it. */
#pragma once

#include <gio/gio.h>
#include <glib.h>
#include <gradscope/trace-reader.h>

#include "replay.h"
#include "site-table.h"
#include "tensor-life.h"
#include "trace-file.h"

G_BEGIN_DECLS

typedef struct gs_trace_model gs_trace_model;

/* ---- building ------------------------------------------------------------------------- */

gs_trace_model *gs_trace_model_new(void);
void gs_trace_model_free(gs_trace_model *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gs_trace_model, gs_trace_model_free)

/* Appends n raw bytes of the log, in any split; parses and indexes every whole event now
 * available. Returns how many events were added. After damage nothing more is added (every
 * event before it is kept); after gs_trace_model_finish, feeding is a programming error. */
guint64 gs_trace_model_feed(gs_trace_model *m, const void *bytes, gsize n);
/* The source ended: a log that now ends mid-chunk is truncated (see _problem). */
void gs_trace_model_finish(gs_trace_model *m);
/* NULL while the log is whole (or still arriving), else one translated sentence: damage (what
 * and at which byte), a log cut mid-chunk, or a source that ended before a header arrived. */
const char *gs_trace_model_problem(const gs_trace_model *m);
/* TRUE once the reader found damage: feeding adds nothing more. */
gboolean gs_trace_model_damaged(const gs_trace_model *m);
/* TRUE once gs_trace_model_finish was called: nothing more will come. */
gboolean gs_trace_model_finished(const gs_trace_model *m);
/* Bytes fed so far. */
guint64 gs_trace_model_bytes_fed(const gs_trace_model *m);

/* Events between keyframes of the state, exactly (by default 8192, more while the state is
 * big, so keyframes cost at most ~2 bytes per event): fewer make seeks faster and the model
 * bigger. For tests and benchmarks; set it before feeding anything. Such a model's keyframes
 * keep alive objects and storages as shared records whatever their number (by default only
 * from 8,192 on), so tests cover both kinds of keyframe. */
void gs_trace_model_set_keyframe_interval(gs_trace_model *m, guint events);

/* A model whose log is the file fd reads from its first byte (a followed log, fed as it grows):
 * fed bytes are not kept, events are decoded again from the file. The model keeps a
 * duplicate of fd (closed with it); call before feeding anything. FALSE if fd cannot be
 * duplicated (the model then keeps fed bytes in memory, as it does for a socket). */
gboolean gs_trace_model_read_back_from(gs_trace_model *m, int fd);
/* Bytes of the log the model keeps in memory (0 when it reads them back from a file). */
guint64 gs_trace_model_bytes_kept(const gs_trace_model *m);

/* Reads a whole file into a new model (for a worker thread). progress (may be NULL) is called
 * after each piece with bytes done of total. Returns NULL with error set if the file cannot be
 * read or cancellable was cancelled; a damaged or truncated log is not an error (see
 * gs_trace_model_problem). The file's bytes are read again on demand to decode single events,
 * so it must not be rewritten while the model is alive (appending is fine). */
gs_trace_model *gs_trace_model_load_file(const char *path, gs_trace_progress_fn progress,
                                         gpointer user_data, GCancellable *cancellable,
                                         GError **error);

/* ---- events --------------------------------------------------------------------------- */

guint64 gs_trace_model_n_events(const gs_trace_model *m);
/* Cheap: no decoding. Out of range gives 0. */
gs_trace_kind gs_trace_model_kind_at(const gs_trace_model *m, guint64 index);
guint32 gs_trace_model_thread_at(const gs_trace_model *m, guint64 index);
guint64 gs_trace_model_seq_at(const gs_trace_model *m, guint64 index);
guint64 gs_trace_model_time_at(const gs_trace_model *m, guint64 index);
/* Decodes event index into *out; its pointers (arrays, text) stay valid until the next call
 * of this function on m. FALSE if index is out of range. */
gboolean gs_trace_model_event(gs_trace_model *m, guint64 index, gs_trace_event *out);
/* The text of string id as the log defined it last ("" if never defined). */
const char *gs_trace_model_string(const gs_trace_model *m, guint32 id);
/* The index of the event with engine event number seq, or G_MAXUINT64 if none. */
guint64 gs_trace_model_find_seq(const gs_trace_model *m, guint64 seq);
/* The index of the last event (in log order) numbered seq or less, G_MAXUINT64 if none: the
 * moment after every event up to engine number seq, so a program that read gs_event_counter()
 * just after a call finds the state that call left. Exact for a log of one thread (a thread
 * numbers its events in order); with several, events of other threads numbered later may
 * precede it in the log and be applied too. */
guint64 gs_trace_model_index_through_seq(const gs_trace_model *m, guint64 seq);
/* A log that begins in the middle of a run (a flight recorder's dump, or tracing switched on
 * late; format 1.5) opens with a snapshot: events from a snapshot_begin to its snapshot_end
 * re-create what was alive, so every state from the snapshot_end on is the run's. TRUE if
 * this log does; then *first_seq is the engine's number of its first recorded event, *objects
 * the tensors and composites alive then, *end_index the index of the snapshot_end
 * (G_MAXUINT64 until it arrives). Any pointer may be NULL. */
gboolean gs_trace_model_snapshot(const gs_trace_model *m, guint64 *first_seq, guint64 *objects,
                                 guint64 *end_index);
/* Threads seen, ascending (guint32; owned by the model). */
const GArray *gs_trace_model_threads(const gs_trace_model *m);

/* ---- moments -------------------------------------------------------------------------- */

/* The state just after event index (clamped to the last event); NULL while there are no
 * events. Owned by the model and valid until the next _seek or _feed on m. Nearby seeks are
 * cheap: forward applies the events in between, backward restarts from a cached keyframe; the
 * last event's state is the head's (no replay).
 * Its scope_list holds every scope begun by then (with the statistics of that moment); its
 * scopes table holds at least every scope open then, not necessarily the ended ones: look a
 * scope up with gs_trace_model_scope_in. */
const gs_replay *gs_trace_model_seek(gs_trace_model *m, guint64 index);
/* The state after the last event fed (kept current by _feed); owned by the model. */
const gs_replay *gs_trace_model_head(const gs_trace_model *m);

/* ---- memory categories ---------------------------------------------------------------- */

typedef enum {
  GS_MEM_PARAMETERS,      /* held by a module, or a tensor moved into a parameter */
  GS_MEM_GRADIENTS,       /* held by a tensor: a .grad */
  GS_MEM_OPTIMIZER_STATE, /* held by an optimizer */
  GS_MEM_DATA,            /* read by a live dataset (gs_tensor_dataset) */
  GS_MEM_BATCH,           /* a DataLoader batch and its fields, a PackedSequence's parts */
  GS_MEM_SAVED,           /* saved by a graph node backward can still run (replay.h) */
  GS_MEM_PROGRAM,         /* held by the program (the caller) outside every scope */
  GS_MEM_TEMPORARIES,     /* held by an open dispose scope */
  GS_MEM_OTHER,           /* the rest: held by the engine, by graph nodes that cannot run, or
                           * by a storage no alive tensor views */
  GS_MEM_N_CATEGORIES
} gs_mem_category;

/* Translated name ("parameters", "saved for backward"...). */
const char *gs_mem_category_name(gs_mem_category category);
/* What it counts, translated, in a few words (for tooltips). */
const char *gs_mem_category_description(gs_mem_category category);
/* Where a storage's bytes come from (format 1.4's memory and peer), translated: "a DLPack
 * producer", "shared memory received from process 4242"... (g_free the result). */
char *gs_memory_origin_label(guint memory, guint peer);

/* The category of an alive object in a state returned by _seek or _head. The first rule that
 * holds wins, in the enum's order. */
gs_mem_category gs_trace_model_category(const gs_trace_model *m, const gs_replay *state,
                                        const gs_replay_object *object);
/* Who holds object and, if a runnable node saves it, why it is still alive, translated:
 * "scope step #12", "module Linear #3", "optimizer Adam #1.1", "batch #4.1", "caller",
 * "gradient of tensor #5.1", then
 * "; saved by MatmulBackward #88 for backward". Free with g_free. */
char *gs_trace_model_owner_label(const gs_trace_model *m, const gs_replay *state,
                                 const gs_replay_object *object);
/* Bytes alive in state per category, from scratch (what the memory series holds at that
 * event). Bytes belong to the buffer's storage; a storage takes the first category (enum
 * order) of the alive objects on it, SAVED if a runnable node saved a tensor on it and that
 * comes first, else other. out has GS_MEM_N_CATEGORIES entries and sums to
 * state->live_bytes. */
void gs_trace_model_category_bytes(const gs_trace_model *m, const gs_replay *state,
                                   guint64 *out);

/* ---- memory series -------------------------------------------------------------------- */

/* Bytes alive (all storages) just after event index. */
guint64 gs_trace_model_bytes_at(const gs_trace_model *m, guint64 index);
/* Of those, the bytes outside the engine's allocator: external memory (gs_from_blob, DLPack,
 * mapped files) and shared memory (made here or received from another process, such as a
 * DataLoader worker's batches). */
guint64 gs_trace_model_outside_bytes_at(const gs_trace_model *m, guint64 index);

/* At most this many stacks in a column. */
#define GS_MEMORY_MAX_STACKS 32

/* One pixel column of the memory timeline: events first..last (inclusive), the smallest and
 * largest total over them, and each stack's bytes at the first event where the largest total
 * is reached (so the stacks at max_index sum to max_total). By category, stack i is
 * gs_mem_category i. By scope, stack 0 is bytes owned by no scope (held by modules, the
 * caller, tensors, the engine...), stack i >= 1 is scope group i - 1 (every scope instance of
 * one name: see gs_trace_model_stack_name), and when there are more groups than fit, the last
 * stack sums the rest. n_stacks is the same for every column of one call. A column with no
 * events (more columns than events) has first > last and zeros. */
typedef struct gs_memory_column {
  guint64 first, last;
  guint64 min_total, max_total;
  guint64 max_index;
  guint n_stacks;
  guint64 stack[GS_MEMORY_MAX_STACKS];
  guint64 outside; /* of max_total, the bytes outside the engine's allocator (external and
                    * shared: gs_trace_model_outside_bytes_at) */
} gs_memory_column;

/* Clamps *last to the model's last event and returns how many events first..*last holds (0 if
 * none, and then *last may be left as it was). */
guint64 gs_trace_model_clamp_range(const gs_trace_model *m, guint64 first, guint64 *last);
/* Splits events first..last (clamped) into `columns` equal runs and fills out[columns]. */
void gs_trace_model_memory_columns(const gs_trace_model *m, guint64 first, guint64 last,
                                   guint columns, gboolean by_scope, gs_memory_column *out);
/* Stacks of a call with this by_scope, and stack i's translated label. */
guint gs_trace_model_n_stacks(const gs_trace_model *m, gboolean by_scope);
const char *gs_trace_model_stack_name(const gs_trace_model *m, gboolean by_scope, guint stack);

/* ---- scopes --------------------------------------------------------------------------- */

/* Every scope seen so far, in begin order, with its statistics as of the last event fed
 * (gs_replay_scope: id, outer, name, thread, begin/end, created/disposed/alive/bytes/peak).
 * Owned by the model; for a past moment use gs_trace_model_seek(...)->scopes. */
guint gs_trace_model_n_scopes(const gs_trace_model *m);
const gs_replay_scope *gs_trace_model_scope_at(const gs_trace_model *m, guint position);
const gs_replay_scope *gs_trace_model_scope(const gs_trace_model *m, guint64 scope_id);
/* Scope scope_id as it was in state (from _seek or _head), NULL if it had not begun then. */
const gs_replay_scope *gs_trace_model_scope_in(const gs_trace_model *m, const gs_replay *state,
                                               guint64 scope_id);
/* The scopes whose outer is scope_id (0: the roots), in begin order, as positions for
 * _scope_at (owned by the model; grows while the log does). NULL when there are none. */
const GArray *gs_trace_model_scope_children(const gs_trace_model *m, guint64 scope_id);

/* The scope's position for _scope_at, or G_MAXUINT if the model has no such scope. */
guint gs_trace_model_scope_position(const gs_trace_model *m, guint64 scope_id);
/* The event indices that began and ended the scope at position (end G_MAXUINT64 while open;
 * both G_MAXUINT64 for no such position). */
guint64 gs_trace_model_scope_begin_index(const gs_trace_model *m, guint position);
guint64 gs_trace_model_scope_end_index(const gs_trace_model *m, guint position);

/* ---- scope groups --------------------------------------------------------------------- */

/* Sibling scopes with one name: under each parent (a scope id, 0 for the roots) one group per
 * name, numbered in the order the names first began there. Numbers never change while the log
 * grows; groups are only added, and instances only appended, so a live view appends rows. */
guint gs_trace_model_n_scope_groups(const gs_trace_model *m);
/* The group numbers under parent_id in order of first begin (owned by the model), or NULL. */
const GArray *gs_trace_model_scope_groups(const gs_trace_model *m, guint64 parent_id);
/* The groups under parent_id that have gained a second instance, in the order they did
 * (owned by the model; appended to), or NULL: a list shown live turns their plain rows into
 * group rows. */
const GArray *gs_trace_model_scope_groups_grown(const gs_trace_model *m, guint64 parent_id);
const char *gs_trace_model_scope_group_name(const gs_trace_model *m, guint group);
guint64 gs_trace_model_scope_group_parent(const gs_trace_model *m, guint group);
/* The group's place in gs_trace_model_scope_groups(parent). */
guint gs_trace_model_scope_group_index(const gs_trace_model *m, guint group);
/* The group's instances as positions for _scope_at, in begin order (owned by the model). */
const GArray *gs_trace_model_scope_group_instances(const gs_trace_model *m, guint group);
/* The group of the scope at position and its place among the group's instances (either
 * pointer may be NULL); FALSE if there is no such position. */
gboolean gs_trace_model_scope_group_of(const gs_trace_model *m, guint position, guint *group,
                                       guint *instance);

/* A group's instances summed as they stood just after one event. Only instances begun by then
 * count; peaks are each instance's own (min, mean and max over them). */
typedef struct gs_scope_group_stats {
  guint64 instances, open;    /* begun by then; of them, open then */
  guint64 created, disposed;  /* as gs_replay_scope's, summed */
  guint64 moved_in, moved_out;
  guint64 alive, bytes;       /* held then */
  guint64 leaked;             /* of alive: held by instances that ended (nothing will dispose
                               * them) or, at the last event of a finished log, still open */
  guint64 peak_min, peak_mean, peak_max;
} gs_scope_group_stats;

/* state is the model's state at index (from _seek, or _head at the last event); the ended
 * instances' share is summed as they end, so this reads only the instances open at index. */
void gs_trace_model_scope_group_stats(const gs_trace_model *m, guint group,
                                      const gs_replay *state, guint64 index,
                                      gs_scope_group_stats *out);

/* ---- tensor life ---------------------------------------------------------------------- */

/* Every event index that concerns tensor_id, ascending: its storage's allocation, sharing,
 * materialisation and release, its creation, views, clones and detaches made from it,
 * ownership changes, in-place writes to it or through any view of its storage (versions),
 * names, the nodes that made it or saved it, gradient accumulation into it or as its grad,
 * its move into a parameter (the new handle's events follow), its registration as a module's
 * parameter, the module_child events that put it (inside its module) into a tree and so
 * renamed it ("bias" -> "fc2.bias"), the optimizer_create that listed it, composites it is part
 * of, and its disposal. Found through 32-bit keys: a life of up to 512 events is checked event by
 * event; a longer one may (rarely: about once in a thousand queries on a log of millions of
 * tensors) include a few events of another tensor whose key collides. Newly allocated, in
 * two bytes an event (tensor-life.h: gs_tensor_life_at, _count_upto; gs_tensor_life_free). */
gs_tensor_life *gs_trace_model_tensor_life(const gs_trace_model *m, guint64 tensor_id);

/* ---- filters -------------------------------------------------------------------------- */

typedef struct gs_event_filter {
  guint64 kinds;      /* bit (1 << kind) for each kind to show; 0 shows every kind */
  guint64 tensor;     /* only events in this tensor's life; 0 for any */
  guint64 scope;      /* only events whose thread's innermost open scope is this; 0 any */
  guint32 thread;     /* 0 for any */
  const char *search; /* case-insensitive text in the kind name, op, scope or tensor names,
                       * or "#id" / "#slot.gen" of a tensor, scope, node, storage; NULL/"" */
} gs_event_filter;

/* Kind and thread are tested without decoding; the rest decodes only when needed. */
gboolean gs_trace_model_event_matches(gs_trace_model *m, guint64 index,
                                      const gs_event_filter *filter);
/* The scope open innermost on the event's thread when it happened (0 if none). */
guint64 gs_trace_model_scope_of(gs_trace_model *m, guint64 index);

/* ---- explanations --------------------------------------------------------------------- */

/* One translated sentence explaining event index in plain words, from the state before and
 * after it, e.g. "clone: tensor #12.1 has storage #5, which shares the bytes of #7.1's
 * storage #4 copy-on-write; nothing was copied". Free with g_free; NULL if index is out of
 * range. Moves the seek position. */
char *gs_trace_model_explain(gs_trace_model *m, guint64 index);

/* ---- call sites ----------------------------------------------------------------------- */

/* The log's call sites and binaries so far (site-table.h): what objects' and events' site
 * ids name. Owned by the model. */
gs_site_table *gs_trace_model_sites(const gs_trace_model *m);

/* What an explanation states, one fact per thing it names, so the sentence can be checked
 * against the log (tests/inspector/model/test-explain-truth.c) rather than against a golden
 * text. */
typedef enum gs_explain_fact_kind {
  GS_FACT_TENSOR,        /* id: a tensor it names; storage: the storage it puts it on, or 0 */
  GS_FACT_STORAGE,       /* id: a storage it names */
  GS_FACT_VERSION,       /* id: the tensor written; storage; value: its version after it */
  GS_FACT_ALIAS,         /* id: an alive tensor it says shares the written storage (storage)
                          * and sees the write */
  GS_FACT_NODE,          /* id: a graph node it names, text "MulBackward #4" */
  GS_FACT_SAVED_VERSION, /* id: a node; tensor: what it saved; storage: that tensor's storage
                          * when saved; value: the version it saved it at (backward will fail) */
  GS_FACT_OWNER,         /* id: the object held; holder (gs_trace_holder) and value: the owner */
  GS_FACT_SHARED_BYTES,  /* id: a storage it says reads another's bytes copy-on-write; storage:
                          * that other storage (0: it does not say which) */
  GS_FACT_SAVED_BY,      /* id: a node; tensor: a tensor it says the node saved; storage: the
                          * storage the node saved it from */
  GS_FACT_PACKED,        /* id: a node; value: how many of its saved tensors it says went to
                          * pack hooks (saved_pack events) */
  GS_FACT_UNPACKED,      /* id: a node; value: how many times it says unpack hooks gave it a
                          * saved tensor back (saved_unpack events) */
  GS_FACT_RANGE,         /* id: how many named ranges it says the event's thread has open;
                          * value: the place (1: the outermost) of the range it names, text
                          * its name */
} gs_explain_fact_kind;

typedef struct gs_explain_fact {
  gs_explain_fact_kind kind;
  gboolean before; /* a fact of the state just before the event (a disposed tensor, a released
                    * node, a previous owner) */
  guint64 id, storage, tensor, value;
  guint32 holder;
  char *text;      /* the words the sentence says it with (tensor words, "#5" for a storage,
                    * the version's number, "MulBackward #4", the owner's label) */
} gs_explain_fact;

/* gs_trace_model_explain, and (if facts is not NULL) *facts a new array of gs_explain_fact
 * (g_array_unref frees the texts too). */
char *gs_trace_model_explain_facts(gs_trace_model *m, guint64 index, GArray **facts);

G_END_DECLS
