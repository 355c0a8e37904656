/* gradscope/trace.h: the event log: recording it, and reading it back.
 *
 * The recorder is off unless asked for (GS_TRACE=path, GS_TRACE=unix:/path/to/socket,
 * GS_TRACE_FD=N, or gs_trace_open). When off, each event site costs one predictable branch.
 * When on, events go into per-thread buffers that are written as CRC-checked chunks, so a
 * crash loses at most the unflushed tail. doc/trace-format.md specifies the bytes.
 *
 * The reader is the only code that parses the format: it is fed bytes as they arrive (from a
 * file, a growing file or a socket: the same code) and hands back decoded events.
 */
#pragma once

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GS_TRACE_VERSION_MAJOR 1
#define GS_TRACE_VERSION_MINOR 6

/* ---- recording ------------------------------------------------------------------------ */

/* Starts recording to dest: a file path, "unix:/path/to/socket" or "fd:N". Returns 0, or -1
 * after reporting (the recorder stays off). Recording from the environment (GS_TRACE,
 * GS_TRACE_FD) starts by itself when the library loads. */
GS_API int gs_trace_open(const char *dest);
/* A flight recorder: records as gs_trace_open does, but keeps only the newest `bytes` of the
 * log in memory (whole chunks) and writes them to path, as a log that opens with a snapshot of
 * what was alive at its first event, when gs_trace_dump is called, when an error is raised,
 * on a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM) and at exit or
 * gs_trace_close. GS_TRACE=path with GS_TRACE_RING=64M (K, M or G) does the same from the
 * environment. Returns 0, or -1 after reporting (the recorder stays off). */
GS_API int gs_trace_open_ring(const char *path, uint64_t bytes);
/* Writes a flight recorder's ring out now (each dump replaces the last). 0, or -1 when no
 * ring is recording or the file cannot be written. */
GS_API int gs_trace_dump(void);
/* Flushes every thread's buffer and stops recording (a flight recorder is dumped first). */
GS_API void gs_trace_close(void);
/* Writes every thread's buffered events now. */
GS_API void gs_trace_flush(void);
GS_API bool gs_trace_enabled(void);
/* A user mark ("epoch 3", "step 120"): shown on timelines and in dumps. */
GS_API void gs_trace_mark(const char *label);
/* Gives t a name in the log (shown on graphs instead of its number). */
GS_API void gs_trace_name(gs_tensor t, const char *name);
/* Charges this thread's next events to a call site given as text, "function (file:line)",
 * instead of the return address the engine finds: for programs run by an interpreter, whose
 * lines the engine cannot see (the Python module sets it from the current Python frame before
 * each engine call, while the log is on). The text is copied; NULL or "" returns to the
 * engine's own walk. Since format 1.5 (the site event's trailing name). */
GS_API void gs_trace_set_site_text(const char *text);

/* ---- events --------------------------------------------------------------------------- */

typedef enum gs_trace_kind {
  GS_TRACE_STRING = 1,          /* a string-table entry: id, text */
  GS_TRACE_STORAGE_ALLOC,       /* storage, nbytes, memory, peer (see also gs_trace_event.alloc) */
  GS_TRACE_STORAGE_SHARE,       /* storage shares source's bytes copy-on-write: storage, source, nbytes */
  GS_TRACE_STORAGE_MATERIALISE, /* storage copied its bytes into a buffer of its own (before a
                                 * write, or into shared memory): storage, nbytes, memory */
  GS_TRACE_STORAGE_FREE,        /* storage (see also gs_trace_event.freed) */
  GS_TRACE_TENSOR_CREATE,       /* see gs_trace_tensor_create */
  GS_TRACE_TENSOR_DISPOSE,      /* tensor, reason (string), freed */
  GS_TRACE_TENSOR_MOVE,         /* tensor moved to new handle (a parameter): tensor, target */
  GS_TRACE_TENSOR_NAME,         /* tensor, name (string) */
  GS_TRACE_INPLACE_WRITE,       /* tensor, storage, version (after), op (string) */
  GS_TRACE_OWNER_CHANGE,        /* object, holder, owner: see gs_trace_owner_change */
  GS_TRACE_SCOPE_BEGIN,         /* scope, outer, name (string) */
  GS_TRACE_SCOPE_END,           /* scope */
  GS_TRACE_NODE_CREATE,         /* see gs_trace_node_create */
  GS_TRACE_NODE_FREE_SAVED,     /* node: backward freed its saved tensors */
  GS_TRACE_NODE_RELEASE,        /* node: nothing refers to it any more */
  GS_TRACE_BACKWARD_BEGIN,      /* tensor (the root), node (its grad_fn) */
  GS_TRACE_BACKWARD_END,        /* tensor */
  GS_TRACE_GRAD_ACCUMULATE,     /* tensor (the leaf), target (its grad tensor) */
  GS_TRACE_MODULE_CREATE,       /* module, name (its type) */
  GS_TRACE_MODULE_PARAMETER,    /* module, name (the parameter's), tensor */
  GS_TRACE_COMPOSITE_CREATE,    /* object, object_kind, parts (tensor ids) */
  GS_TRACE_MARK,                /* name (the label) */
  GS_TRACE_ERROR,               /* code, text (the message) */
  GS_TRACE_VALUES,              /* tensor, values (its first elements, as f64) */
  /* since 1.1 */
  GS_TRACE_MODULE_CHILD,        /* module (the parent), child (a module), name (the child's) */
  GS_TRACE_OPTIMIZER_CREATE,    /* optimizer, name (its type: "SGD", "Adam", "AdamW"), params */
  /* since 1.3 */
  GS_TRACE_SITE,                /* site (its id), frames: where the program called the engine;
                                 * since 1.5 name: an interpreter's site as text, "function
                                 * (file:line)" (0 for an address site; frames is then empty) */
  GS_TRACE_BINARY,              /* a loaded binary: address (its load bias), offset (its code's
                                 * address in the file), nbytes (the code's size), name (path),
                                 * text (GNU build id, hex; "" if none) */
  /* since 1.5 (doc/trace-format.md, "Snapshots") */
  GS_TRACE_SNAPSHOT_BEGIN = 30, /* name (why: a string id), count (objects alive): the events up
                                 * to snapshot_end re-create what was alive when the log began */
  GS_TRACE_SNAPSHOT_END,        /* count: the snapshot is complete */
  /* since 1.6 */
  GS_TRACE_REQUIRES_GRAD,       /* tensor, requires_grad: a leaf's flag changed after it was made
                                 * (gs_set_requires_grad, gs_parameter_new); a tensor a graph
                                 * node makes requires grad from its node_create on */
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
  const char *text;        /* string entries and error messages (NUL-terminated) */
  uint32_t text_len;
} gs_trace_event;

GS_API const char *gs_trace_kind_name(gs_trace_kind kind);
/* String, site and binary events are table entries that other events refer to (they take no
 * event number of their own), not things that happened: event counts and lists leave them
 * out. */
static inline bool gs_trace_kind_is_table(gs_trace_kind kind) {
  return kind == GS_TRACE_STRING || kind == GS_TRACE_SITE || kind == GS_TRACE_BINARY;
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
/* The next event, if a whole one is available. Once DAMAGED, it stays so: the events before
 * the damage were all delivered. */
GS_API gs_trace_status gs_trace_reader_next(gs_trace_reader *reader, gs_trace_event *event);
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
/* The header's fields, once read. */
GS_API bool gs_trace_reader_header(const gs_trace_reader *reader, uint32_t *major,
                                   uint32_t *minor, uint64_t *start_realtime_ns, uint32_t *pid);

/* ---- call sites ----------------------------------------------------------------------- */

/* Turns the addresses of call sites (site events' frames) into functions and source lines,
 * with the binaries a log lists (binary events) or those loaded in this process. One thread at
 * a time. GS_TRACE_STACKS=N records N frames per site instead of one (glibc's unwinder:
 * microseconds per new event rather than nanoseconds). */
typedef struct gs_symbols gs_symbols;

typedef struct gs_symbol {
  const char *function; /* NULL without a symbol for the address */
  const char *file;     /* the source file as the debug info names it; NULL without it */
  int line;
  const char *binary;   /* path of the binary the address is in; NULL: in none known */
  uint64_t offset;      /* the address less the binary's load bias */
  bool stale;           /* the binary is gone or was rebuilt since the run (its build id
                         * differs): only binary and offset are known */
} gs_symbol;

GS_API gs_symbols *gs_symbols_new(void);
GS_API void gs_symbols_free(gs_symbols *symbols);
/* A binary as a binary event gives it: path, load bias (address), where its code starts in the
 * file (offset) and its size (nbytes), GNU build id in hex (text; "" if unknown). */
GS_API void gs_symbols_add_binary(gs_symbols *symbols, const char *path, uint64_t bias,
                                  uint64_t code_offset, uint64_t code_size,
                                  const char *build_id);
/* Every binary loaded in this process now. */
GS_API void gs_symbols_add_this_process(gs_symbols *symbols);
/* What is at a return address (a site's frame: the call before it is looked up). False if it
 * lies in no known binary. The strings stay valid until the next add or free. */
GS_API bool gs_symbols_lookup(gs_symbols *symbols, uint64_t address, gs_symbol *out);
/* "main (leak.c:17)"; without debug info "main (leak+0x1234)"; without a symbol
 * "leak+0x1234"; outside every binary "0x7f...". Returns what snprintf does. */
GS_API int gs_symbol_format(const gs_symbol *symbol, uint64_t address, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
