/* gradscope/trace-reader.h: reading the event log back: the format's version, its event
 * kinds, one decoded event, and the reader.
 *
 * The reader is the only code that parses the format: it is fed bytes as they arrive (from a
 * file, a growing file or a socket: the same code) and hands back decoded events. It belongs
 * to the capture library (capture/: libc and pthreads only), which the engine links to write
 * logs and the inspector links to read them; gradscope/trace.h includes this header, so
 * programs that include that one see it unchanged.
 */
#pragma once

#include "trace-kinds.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this library writes (it reads every 1.x and 2.x log). */
#define GS_TRACE_VERSION_MAJOR 2
#define GS_TRACE_VERSION_MINOR 3

/* ---- events --------------------------------------------------------------------------- */

/* The event kinds, one per line of GS_TRACE_KINDS (gradscope/trace-kinds.h, which says what
 * each carries). */
typedef enum gs_trace_kind {
#define GS__TRACE_KIND_ENUM(KIND, kind, value, flags) GS_TRACE_##KIND = value,
  GS_TRACE_KINDS(GS__TRACE_KIND_ENUM)
#undef GS__TRACE_KIND_ENUM
  GS_TRACE_KIND_COUNT
} gs_trace_kind;

/* Who holds an object after an ownership change. */
typedef enum gs_trace_holder {
  GS_TRACE_HELD_BY_CALLER = 0,
  GS_TRACE_HELD_BY_SCOPE,
  GS_TRACE_HELD_BY_MODULE,
  GS_TRACE_HELD_BY_COMPOSITE,
  GS_TRACE_HELD_BY_TENSOR, /* a gradient, held by its tensor */
  GS_TRACE_HELD_BY_ENGINE,
  GS_TRACE_HELD_BY_OPTIMIZER, /* an optimizer's state (momentum, exp_avg...); since 1.1 */
} gs_trace_holder;

/* One decoded event. Which fields mean something depends on kind (see gs_trace_kind and
 * doc/trace-format.md); the rest are zero. Pointers (text, arrays) point into the reader and
 * stay valid until the next call to gs_trace_reader_next. String fields are string-table ids;
 * gs_trace_reader_string turns one into text. */
typedef struct gs_trace_event {
  gs_trace_kind kind;
  uint32_t thread;   /* a small number per recording thread, from 1 */
  uint64_t seq;      /* the global event number (the engine's, as in its error messages) */
  uint64_t time_ns;  /* monotonic, from the recorder's start */
  uint64_t tensor;   /* tensor handle id */
  uint64_t target;   /* a second tensor: move target, grad tensor */
  uint64_t storage;
  uint64_t source;   /* source tensor (views, clones, detaches) or source storage */
  uint64_t node;
  uint64_t scope;
  uint64_t outer;    /* enclosing scope (scope begin) */
  uint64_t object;   /* tensor or composite id (ownership changes, composites) */
  uint64_t module;
  uint64_t child;    /* module child: the child module */
  uint64_t optimizer;
  uint64_t nbytes;
  /* Since 1.2, a fresh storage's allocation and its release are folded into the tensor events
   * that caused them, and the reader unfolds them again: it delivers a storage_alloc {storage,
   * nbytes = alloc} just before a tensor_create whose alloc is non-zero, and a storage_free
   * {storage = freed} just after a tensor_dispose whose freed is non-zero, so a reader's
   * caller sees the same events from a 1.2 log as from a 1.1 one. */
  uint64_t alloc;    /* tensor create: bytes of its storage, allocated for it (0: it existed) */
  uint64_t freed;    /* tensor dispose: the storage its disposal freed (0: none) */
  /* Since 2.2, a clone's storage_share is folded into the clone's tensor_create: shared is the
   * storage its storage shares copy-on-write, and the create's nbytes that share's bytes. The
   * reader delivers the storage_share {storage, source = shared, nbytes} just before the
   * create, with the number the engine gave it (the create's seq - 1) and derived false: the
   * event a 2.1 log held. The create keeps shared, and its nbytes reads 0 again. */
  uint64_t shared; /* tensor create: the storage its storage shares (0: none folded) */
  /* Since 2.2, the owner_change that makes a gradient its leaf's (holder 4, owner the leaf) is
   * folded into the grad_accumulate after it, whose holder, previous_holder, previous_owner
   * and site are then that change's (holder 0: none folded). The reader delivers the
   * owner_change {object = target, ..., owner = tensor} just before it, numbered seq - 1 and
   * not derived, and the grad_accumulate with those four fields 0, as a 2.1 log held them. */
  bool derived;      /* this storage_alloc or storage_free is not in the log: the reader made it
                      * from the alloc or freed of the tensor event next to it, whose seq, time
                      * and thread it shares */
  int64_t offset;
  uint64_t version;
  uint32_t name;     /* string id: scope name, node kind, op, mark label, module type... */
  uint32_t op;       /* string id: the op that made a tensor or wrote it */
  uint32_t dtype;    /* gs_dtype */
  uint32_t origin;   /* 0 new, 1 view, 2 detach, 3 clone */
  uint32_t holder;   /* gs_trace_holder after the change */
  uint32_t previous_holder;
  uint64_t owner;    /* scope, module, composite, tensor or optimizer id per holder (0 for caller) */
  uint64_t previous_owner;
  uint32_t object_kind; /* gs_object_kind (composites) */
  uint32_t code;     /* gs_error_code */
  bool requires_grad;
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  int64_t strides[GS_MAX_DIMS];
  uint32_t n_inputs, n_saved, n_parts, n_values, n_params;
  const uint64_t *inputs;  /* node create: the input nodes (0: an input needing no grad) */
  const uint64_t *saved;   /* node create: saved tensor ids */
  const uint64_t *parts;   /* composite create: part tensor ids */
  const uint64_t *params;  /* optimizer create: the parameters' tensor ids */
  const double *values;    /* values */
  /* Since 1.3, events the program causes (tensor create and dispose, in-place writes, moves,
   * scopes, backward, modules, optimizers, composites, marks, errors) carry the id of where
   * the program called the engine; a site event defines it (its frames, innermost first:
   * return addresses in the binaries that binary events list). 0: not recorded. */
  uint32_t site;
  uint32_t n_frames;
  const uint64_t *frames;
  uint64_t address;        /* binary: the load bias */
  /* Since 1.4, storage_alloc and storage_materialise say where the storage's bytes are now:
   * a gs_memory_origin (0: the engine's allocator, as in every older log), and for bytes
   * received from another process, its pid. */
  uint32_t memory;
  uint32_t peer;
  /* Since 1.5, snapshot_begin and snapshot_end: the objects (tensors and composites) alive
   * when the log began, which the snapshot re-creates. */
  uint64_t count;
  /* Since 1.7, a distributed run (gradscope/distributed.h): dist_init says which rank of how
   * many processes wrote the log and the run's id, the same in every rank's log of one run;
   * the collective events say what went between the ranks. */
  uint32_t rank, world;
  uint64_t run;
  int32_t bucket;          /* a DDP bucket's index; -1: the collective is not a bucket's */
  uint64_t collective;     /* the collective's number on its rank (alike on every rank) */
  uint64_t waited_ns;      /* collective_end, wait_end: how long this rank was blocked */
  uint64_t in_place;       /* since 2.3, bucket_ready: bytes of its gradients that backward
                              wrote into the bucket itself (gradient_as_bucket_view), which DDP
                              did not copy there; 0 in older logs */
  const char *text;        /* string entries and error messages (NUL-terminated) */
  uint32_t text_len;
} gs_trace_event;

GS_API const char *gs_trace_kind_name(gs_trace_kind kind);
/* The GS_TRACE_KIND_* flags of kind (gradscope/trace-kinds.h); 0 for an unknown kind. */
static inline unsigned gs_trace_kind_flags(gs_trace_kind kind) {
  switch (kind) {
#define GS__TRACE_KIND_FLAGS(KIND, kind, value, flags)                                         \
  case GS_TRACE_##KIND: return (flags);
    GS_TRACE_KINDS(GS__TRACE_KIND_FLAGS)
#undef GS__TRACE_KIND_FLAGS
  default: return 0;
  }
}
/* String, site and binary events are table entries that other events refer to (they take no
 * event number of their own), not things that happened: event counts and lists leave them
 * out. */
static inline bool gs_trace_kind_is_table(gs_trace_kind kind) {
  return (gs_trace_kind_flags(kind) & GS_TRACE_KIND_TABLE) != 0;
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct gs_trace_reader gs_trace_reader;

typedef enum gs_trace_status {
  GS_TRACE_EVENT = 1,     /* *event holds the next event */
  GS_TRACE_NEED_MORE = 0, /* everything fed so far is consumed: feed more bytes (or stop) */
  GS_TRACE_DAMAGED = -1,  /* the log is damaged here: see gs_trace_reader_error */
} gs_trace_status;

GS_API gs_trace_reader *gs_trace_reader_new(void);
GS_API void gs_trace_reader_free(gs_trace_reader *reader);
/* Appends n bytes of the log (any split: a chunk may arrive in pieces). */
GS_API void gs_trace_reader_feed(gs_trace_reader *reader, const void *bytes, size_t n);
/* Feeding without the copy, for a reader of a file: room for up to n bytes in the reader's
 * buffer (NULL after damage), valid until the reader's next call; gs_trace_reader_fed then
 * says how many of them the caller wrote (read(2) into the room, then fed). */
GS_API void *gs_trace_reader_feed_space(gs_trace_reader *reader, size_t n);
GS_API void gs_trace_reader_fed(gs_trace_reader *reader, size_t n);
/* The next event, if a whole one is available. Once DAMAGED, it stays so: the events before
 * the damage were all delivered. */
GS_API gs_trace_status gs_trace_reader_next(gs_trace_reader *reader, gs_trace_event *event);
/* As gs_trace_reader_next, without the copy: *event points at the reader's own event, valid
 * (as are its pointers) until the reader's next call. For readers of millions of events. */
GS_API gs_trace_status gs_trace_reader_next_ref(gs_trace_reader *reader,
                                                const gs_trace_event **event);
/* What is wrong and where (byte offset in the log), after DAMAGED; NULL otherwise. */
GS_API const char *gs_trace_reader_error(const gs_trace_reader *reader, uint64_t *offset);
/* At the end of the input: true if bytes are left over that do not make a whole chunk (a log
 * cut by a crash, or a writer still running); *offset receives where they start. */
GS_API bool gs_trace_reader_truncated(const gs_trace_reader *reader, uint64_t *offset);
/* Text of string-table id (or "" if it was not defined). */
GS_API const char *gs_trace_reader_string(const gs_trace_reader *reader, uint32_t id);
/* Where the chunk of the event just returned by gs_trace_reader_next lies in the log: its
 * first byte and its size (chunk header, payload and padding). Feeding a new reader the log's
 * header and then those bytes decodes that chunk's events again: how an index over a huge log
 * re-reads one event without keeping it decoded. False when no chunk is open. */
GS_API bool gs_trace_reader_chunk(const gs_trace_reader *reader, uint64_t *offset,
                                  uint64_t *size);
/* The distributed run the log belongs to, once its dist_init event has been read (since
 * 1.7; gs_trace_reader_next has delivered it): this process's rank, the number of ranks and
 * the run's id, which every rank's log of one run shares. False before, and for a log of a
 * program that never joined a group (one process: rank 0 of 1). */
GS_API bool gs_trace_reader_run(const gs_trace_reader *reader, uint32_t *rank, uint32_t *world,
                                uint64_t *run);
/* The header's fields, once read. */
GS_API bool gs_trace_reader_header(const gs_trace_reader *reader, uint32_t *major,
                                   uint32_t *minor, uint64_t *start_realtime_ns, uint32_t *pid);

#ifdef __cplusplus
}
#endif
