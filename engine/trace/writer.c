/* writer.c: writing the event log: buffers, chunks, the string table and the sink. The bytes
 * of a log's header and of a chunk's frame are the capture library's (capture/writer.c); what
 * is here is the engine's: its threads, its event numbers, its locks and where the log goes.
 *
 * Off by default: every event site tests gs__tracing (one predictable branch). On: each thread
 * appends encoded events to its own buffer; a full buffer becomes one chunk (header, CRC-32C,
 * payload) written to the sink under one lock, in one write, by the write-behind thread
 * (write-behind.c) while the recording thread goes on in a spare buffer. gs_trace_flush on any thread
 * writes out every thread's buffer: it claims each buffer, which waits for its thread to finish
 * the event it is writing (the handshake in writer-impl.h), and that thread waits for the
 * claim to end before its next event.
 *
 * Lock order: registry_lock, then claiming a buffer, then sink_lock. The log is
 * flushed on close, at exit, by the error handler before an abort, and best-effort on fatal
 * signals, so a crash loses at most what threads had not flushed.
 *
 * Strings (op names, scope names, labels) go through a string table: each distinct string
 * pointer (static literals and gs__intern'ed text, which live forever) gets an id, defined by a
 * STRING event in each thread's stream before that thread first uses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "flight-recorder.h"
#include "format.h"
#include "trace-writer.h"
#include "writer-impl.h"


atomic_bool gs__tracing;

typedef gs__tw_buffer thread_buffer;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER; /* registry, next_thread_no */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static int sink_fd = -1;
static bool sink_owned; /* we opened it: close it on gs_trace_close */
static char sink_dest[4096]; /* where the log goes, as given: worker processes name theirs after it */
uint64_t gs__tw_start; /* monotonic ns when recording started */
static thread_buffer *registry;
static uint32_t next_thread_no;
static pthread_key_t buffer_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
GS__THREAD_LOCAL thread_buffer *gs__tw_mine; /* this thread's buffer, once it has one */
int gs__tw_values_limit;                     /* GS_TRACE_VALUES */

/* ---- clock and sink ------------------------------------------------------------------- */

static uint64_t clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Event timestamps (gs__tw_now, writer-impl.h): on x86 the invariant TSC, scaled to
 * nanoseconds with a factor measured against CLOCK_MONOTONIC when recording starts (a few ns
 * per event instead of ~20). */
#if defined(__x86_64__)
uint64_t gs__tw_tsc_origin, gs__tw_ns_origin;
uint64_t gs__tw_ns_per_tick_q32;

static void calibrate_clock(void) {
  uint64_t t0 = __rdtsc(), n0 = clock_ns();
  struct timespec pause = {0, 2000000}; /* 2 ms is enough for 1e-4 accuracy */
  nanosleep(&pause, NULL);
  uint64_t t1 = __rdtsc(), n1 = clock_ns();
  double ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 0.0;
  /* Below 2^-32 ns a tick (no real TSC) or above 2^31 (none either): clock_gettime. */
  gs__tw_ns_per_tick_q32 =
      ns_per_tick > 0x1p-32 && ns_per_tick < 0x1p31 ? (uint64_t)(ns_per_tick * 0x1p32 + 0.5) : 0;
  gs__tw_tsc_origin = t1;
  gs__tw_ns_origin = n1;
}
#else
static void calibrate_clock(void) {}
#endif

uint64_t gs__tw_clock_ns(void) { return clock_ns(); }

/* False if the sink failed: then tracing stops (a dead socket must not take the program
 * down). */
bool gs__tw_write_all(int fd, const void *buf, size_t n) {
  const uint8_t *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* The log's header, made when recording starts: a flight recorder's dumps repeat it (their
 * event times count from its monotonic start). */
static uint8_t log_header[GS__TRACE_HEADER_SIZE];

static void make_header(void) {
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  gs__trace_file_header(log_header, gs__tw_start,
                        (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec, (uint32_t)getpid());
}

/* ---- chunks ----------------------------------------------------------------------------- */

/* A flight recorder's ring (flight-recorder.c) takes the chunks instead of the sink; its
 * fatal signal handler writes the buffers straight into the dump (dump_fd). */
static bool ring_mode;
static int dump_fd = -1;

/* Writes a chunk to fd. From a flush (sink_lock held by the caller, or a signal handler that
 * cannot take it) or from write-behind.c's thread (lock: takes sink_lock, so a socket never
 * gets two chunks interleaved). */
void gs__tw_write_chunk(int fd, bool lock, uint32_t thread, uint64_t base_seq, uint64_t base_time,
                        const uint8_t *data, size_t used) {
  uint8_t header[GS__TRACE_CHUNK_HEADER_SIZE];
  gs__trace_chunk_header(header, thread, base_seq, base_time, data, used);
  static const uint8_t zeros[8];
  size_t pad = (8 - used % 8) % 8;
  struct iovec iov[3] = {{header, sizeof header}, {(void *)data, used}, {(void *)zeros, pad}};
  size_t total = sizeof header + used + pad;
  if (lock)
    pthread_mutex_lock(&sink_lock);
  if (fd == GS__TW_RING) { /* a flight recorder's: kept, or after a crash written into its dump */
    if (ring_mode && dump_fd < 0)
      gs__flight_keep(header, data, used, pad);
    fd = ring_mode ? dump_fd : -1;
    if (fd < 0) {
      if (lock)
        pthread_mutex_unlock(&sink_lock);
      return;
    }
  }
  ssize_t w = writev(fd, iov, 3);
  if (w >= 0 && (size_t)w < total) { /* a short write: finish it byte-exactly */
    uint8_t *whole = malloc(total);
    if (whole) {
      memcpy(whole, header, sizeof header);
      memcpy(whole + sizeof header, data, used);
      memset(whole + sizeof header + used, 0, pad);
      gs__tw_write_all(fd, whole + w, total - (size_t)w);
      free(whole);
    }
  } else if (w < 0) {
    atomic_store(&gs__tracing, false); /* the sink is gone: stop, keep the program running */
  }
  if (lock)
    pthread_mutex_unlock(&sink_lock);
}

/* Writes b's events as one chunk. locked: the caller has b (its thread inside an event, or a
 * claimer) and holds sink_lock, or is a signal handler that can take neither. */
static void flush_buffer_locked(thread_buffer *b) {
  if (b->used == 0 || (sink_fd < 0 && !ring_mode))
    return;
  gs__tw_write_chunk(ring_mode ? GS__TW_RING : sink_fd, false, b->thread_no, b->base_seq,
                     b->base_time, b->data, b->used);
  b->used = 0;
  b->base_seq = b->last_seq;
  b->base_time = b->last_time;
}

/* ---- the handshake between a buffer's thread and its claimers (writer-impl.h) ---------- */

bool gs__tw_asymmetric;

/* Registered before main, while the process has one thread: an owner that reads the flag set
 * is then sure every claimer reads it set too. The registration is the process's, and a
 * forked child keeps it. */
__attribute__((constructor)) static void register_membarrier(void) {
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  gs__tw_asymmetric = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

void gs__tw_wait_unclaimed(gs__tw_buffer *b) {
  do {
    atomic_store_explicit(&b->busy, 0, memory_order_release);
    for (int spins = 0; atomic_load_explicit(&b->claimed, memory_order_acquire); spins++)
      gs__spin_pause(spins);
    if (gs__tw_asymmetric) {
      atomic_store_explicit(&b->busy, 1, memory_order_relaxed);
      atomic_signal_fence(memory_order_seq_cst);
    } else {
      atomic_exchange_explicit(&b->busy, 1, memory_order_seq_cst);
    }
  } while (atomic_load_explicit(&b->claimed, memory_order_seq_cst));
}

/* Takes b from any thread (its own too, between events): b's thread is not inside an event
 * when this returns, and does not start one until unclaim. */
static void claim(thread_buffer *b) {
  gs__spin_lock(&b->claim_lock);
  if (gs__tw_asymmetric) {
    atomic_store_explicit(&b->claimed, 1, memory_order_relaxed);
    /* Every thread passes a full barrier: b's thread either has its busy store visible now,
     * or will see claimed when it loads it. The registration cannot be lost, so this
     * cannot fail. */
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    atomic_exchange_explicit(&b->claimed, 1, memory_order_seq_cst);
  }
  for (int spins = 0; atomic_load_explicit(&b->busy, memory_order_seq_cst); spins++)
    gs__spin_pause(spins);
}

static void unclaim(thread_buffer *b) {
  atomic_store_explicit(&b->claimed, 0, memory_order_release);
  gs__spin_unlock(&b->claim_lock);
}

/* The caller has b (its thread inside an event, or a claimer). The chunks b's thread handed
 * to the write-behind thread go first. */
static void flush_buffer(thread_buffer *b) {
  gs__wb_drain();
  pthread_mutex_lock(&sink_lock);
  flush_buffer_locked(b);
  pthread_mutex_unlock(&sink_lock);
}

/* From any thread, between its own events. */
static void flush_buffer_of(thread_buffer *b) {
  claim(b);
  flush_buffer(b);
  unclaim(b);
}

/* A thread that ends flushes what it buffered and leaves the registry. */
static void thread_exit(void *p) {
  thread_buffer *b = p;
  pthread_mutex_lock(&registry_lock);
  flush_buffer_of(b);
  for (thread_buffer **q = &registry; *q; q = &(*q)->next)
    if (*q == b) {
      *q = b->next;
      break;
    }
  pthread_mutex_unlock(&registry_lock);
  free(b->strings.bits);
  free(b->sites.bits);
  free(b->data);
  free(b);
}

static void make_key(void) { pthread_key_create(&buffer_key, thread_exit); }

gs__tw_buffer *gs__tw_buffer_new(void) {
  thread_buffer *b = calloc(1, sizeof *b);
  uint8_t *data = malloc(GS__TW_BUFFER_BYTES);
  if (!b || !data) {
    free(b), free(data);
    return NULL;
  }
  b->data = data;
  pthread_once(&key_once, make_key);
  pthread_setspecific(buffer_key, b);
  b->claim_lock = (gs__spinlock)GS__SPINLOCK_INIT;
  pthread_mutex_lock(&registry_lock);
  b->thread_no = ++next_thread_no;
  b->next = registry;
  registry = b;
  pthread_mutex_unlock(&registry_lock);
  gs__tw_mine = b;
  return b;
}

static thread_buffer *buffer(void) { return gs__tw_mine ? gs__tw_mine : gs__tw_buffer_new(); }

/* gs__fork (base/fork.c) takes the registry, every buffer and the sink in the order a flush
 * does, so the child never inherits a buffer with an event half-written by a thread it does
 * not have, nor a lock such a thread held. */
static void streams_take(void) {
  pthread_mutex_lock(&registry_lock);
  for (thread_buffer *b = registry; b; b = b->next)
    claim(b);
  pthread_mutex_lock(&sink_lock);
}

static void streams_give(void) {
  pthread_mutex_unlock(&sink_lock);
  for (thread_buffer *b = registry; b; b = b->next)
    unclaim(b);
  pthread_mutex_unlock(&registry_lock);
}

__attribute__((constructor)) static void guard_streams_across_fork(void) {
  gs__fork_guard_add(GS__FORK_RANK_TRACE_STREAMS, streams_take, streams_give);
}

/* ---- strings ----------------------------------------------------------------------------- */

/* Pointer -> id, open addressing; ids from 1. Guarded by a spinlock: lookups are short. */
static gs__spinlock strings_lock = GS__SPINLOCK_INIT;
GS__FORK_GUARD_SPINLOCK(GS__FORK_RANK_TRACE_STRINGS, strings_lock)
static const char **string_keys;
static uint32_t *string_ids;
static size_t string_capacity, string_count;

static uint32_t string_id(const char *s) {
  uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
  gs__spin_lock(&strings_lock);
  if ((string_count + 1) * 2 > string_capacity) {
    size_t cap = string_capacity ? string_capacity * 2 : 1024;
    const char **keys = calloc(cap, sizeof *keys);
    uint32_t *ids = calloc(cap, sizeof *ids);
    if (!keys || !ids) {
      free(keys), free(ids);
      gs__spin_unlock(&strings_lock);
      return 0;
    }
    for (size_t i = 0; i < string_capacity; i++) {
      if (!string_keys[i])
        continue;
      size_t j = (size_t)(((uint64_t)(uintptr_t)string_keys[i] * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
      while (keys[j])
        j = (j + 1) & (cap - 1);
      keys[j] = string_keys[i];
      ids[j] = string_ids[i];
    }
    free(string_keys), free(string_ids);
    string_keys = keys, string_ids = ids, string_capacity = cap;
  }
  size_t j = (size_t)(h >> 20) & (string_capacity - 1);
  while (string_keys[j] && string_keys[j] != s)
    j = (j + 1) & (string_capacity - 1);
  if (!string_keys[j]) {
    string_keys[j] = s;
    string_ids[j] = (uint32_t)++string_count;
  }
  uint32_t id = string_ids[j];
  gs__spin_unlock(&strings_lock);
  return id;
}

/* A per-thread cache of pointer -> id for strings this thread has already defined: the common
 * case (the same op names over and over) takes no lock, and is inline (gs__tw_string). Cleared
 * when a new log starts. */
GS__THREAD_LOCAL const char *gs__tw_string_keys[GS__TW_STRING_CACHE];
GS__THREAD_LOCAL uint32_t gs__tw_string_ids[GS__TW_STRING_CACHE];
GS__THREAD_LOCAL uint64_t gs__tw_string_epoch;
atomic_uint_fast64_t gs__tw_log_epoch; /* advances with every gs_trace_open */

bool gs__tw_first_use(gs__tw_defined *d, uint32_t id) {
  uint64_t epoch = atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed);
  if (d->epoch != epoch) { /* a new log: this stream has defined nothing yet */
    if (d->bits)
      memset(d->bits, 0, d->bytes);
    d->epoch = epoch;
  }
  size_t byte = id / 8;
  if (byte >= d->bytes) {
    size_t n = d->bytes ? d->bytes : 256;
    while (n <= byte)
      n *= 2;
    uint8_t *bits = realloc(d->bits, n);
    if (!bits)
      return false;
    memset(bits + d->bytes, 0, n - d->bytes);
    d->bits = bits, d->bytes = n;
  }
  if (d->bits[byte] & (1u << (id % 8)))
    return false;
  d->bits[byte] |= (uint8_t)(1u << (id % 8));
  return true;
}

/* The id of s, defining it in this thread's stream first if needed. s must live forever. */
uint32_t gs__trace_string(const char *s) {
  if (!s)
    return 0;
  size_t slot = gs__tw_string_slot(s);
  uint64_t epoch = atomic_load_explicit(&gs__tw_log_epoch, memory_order_relaxed);
  if (gs__tw_string_epoch == epoch) {
    if (gs__tw_string_keys[slot] == s)
      return gs__tw_string_ids[slot];
    if (gs__tw_string_keys[slot ^ 1] == s)
      return gs__tw_string_ids[slot ^ 1];
  }
  /* A deferred event goes before a definition this may write: it may be an earlier call's,
   * with that call's time, and the stream's times must not go back. First, before the cache
   * and the stream's bitmap say s is defined: the deferred event may use s too. */
  if (gs__tw_pending)
    gs__tw_emit_pending();
  if (gs__tw_string_epoch != epoch) {
    memset(gs__tw_string_keys, 0, sizeof gs__tw_string_keys);
    gs__tw_string_epoch = epoch;
  }
  uint32_t id = string_id(s);
  /* The set's older entry moves to the other way: two strings of one set alternating (an op
   * and its node's name) then both hit. */
  gs__tw_string_keys[slot ^ 1] = gs__tw_string_keys[slot];
  gs__tw_string_ids[slot ^ 1] = gs__tw_string_ids[slot];
  gs__tw_string_keys[slot] = s;
  gs__tw_string_ids[slot] = id;
  thread_buffer *b = buffer();
  if (!b || !id)
    return id;
  if (gs__tw_first_use(&b->strings, id)) {
    size_t len = strlen(s);
    if (len > GS__TRACE_MAX_TEXT)
      len = GS__TRACE_MAX_TEXT;
    /* String definitions are the table, not engine events: they take no number of their own
     * (they repeat the stream's previous one), so numbers keep increasing in every stream. */
    uint8_t *p = gs__tw_begin_in(b, GS_TRACE_STRING, b->last_seq, 20 + len);
    if (p) {
      p = gs__put_uvarint(p, id);
      p = gs__put_uvarint(p, len);
      memcpy(p, s, len);
      gs__tw_end(p + len);
    }
  }
  return id;
}

/* ---- events ------------------------------------------------------------------------------ */

/* The inline half is in writer-impl.h (gs__tw_begin, gs__tw_end); these are its slow paths. */

uint8_t *gs__tw_make_room_or_leave(gs__tw_buffer *b, size_t need) {
  if (need > GS__TW_BUFFER_BYTES) {
    gs__tw_leave(b);
    return NULL; /* larger than a whole buffer: dropped (bounded by the limits on arrays and text) */
  }
  /* A file's or socket's chunk is written by the write-behind thread (write-behind.c);
   * a ring's is kept here. */
  if (gs__wb_submit(b->thread_no, b->base_seq, b->base_time, &b->data, b->used)) {
    b->used = 0;
    b->base_seq = b->last_seq;
    b->base_time = b->last_time;
  } else {
    flush_buffer(b);
  }
  if (b->used) { /* no sink any more (the log was closed meanwhile): drop the event */
    gs__tw_leave(b);
    return NULL;
  }
  return b->data;
}

/* ---- the public call an event belongs to (trace-writer.h) -------------------------------- */

GS__THREAD_LOCAL uint8_t gs__tw_call_state;
GS__THREAD_LOCAL uint64_t gs__tw_call_time;

gs__trace_call gs__trace_call_open(void) {
  if (gs__tw_call_state != GS__TW_NO_CALL)
    return (gs__trace_call){0, false}; /* nested: the outermost call's */
  gs__trace_call call = {gs__tw_thread_site, true};
  /* A thread working for another keeps the site it was charged to; an interpreter's line
   * (gs_trace_set_site_text) needs no walk. */
  if (!call.outer_site && !gs__tw_text_site)
    gs__tw_thread_site = gs__trace_caller();
  gs__tw_call_state = GS__TW_CALL_UNTIMED;
  gs__tw_call_site_forget(); /* its first event finds the call's site */
  return call;
}

void gs__trace_call_close(gs__trace_call call) {
  gs__tw_thread_site = call.outer_site;
  gs__tw_call_state = GS__TW_NO_CALL;
  gs__tw_call_site_forget();
}

void gs__trace_call_retime(void) {
  if (gs__tw_call_state == GS__TW_CALL_TIMED)
    gs__tw_call_state = GS__TW_CALL_UNTIMED;
}

/* ---- deferred events ----------------------------------------------------------------------- */

/* The deferred event of this thread (gs__trace_defer), and the time it was deferred with
 * (gs__tw_now()'s, 0: read when it is written). */
GS__THREAD_LOCAL gs__trace_deferred_fn gs__tw_pending;
static GS__THREAD_LOCAL void *pending_ctx;
static GS__THREAD_LOCAL uint64_t pending_seq, pending_time;
GS__THREAD_LOCAL uint64_t gs__tw_created_tensor, gs__tw_created_seq;

void gs__tw_emit_pending(void) {
  gs__trace_deferred_fn emit = gs__tw_pending;
  if (!emit)
    return;
  gs__tw_pending = NULL;
  if (!pending_time) {
    emit(pending_ctx, pending_seq);
    return;
  }
  /* Written as part of the call it was deferred in, whichever call this is. */
  uint8_t state = gs__tw_call_state;
  uint64_t time = gs__tw_call_time;
  gs__tw_call_state = GS__TW_CALL_TIMED;
  gs__tw_call_time = pending_time;
  emit(pending_ctx, pending_seq);
  gs__tw_call_state = state;
  gs__tw_call_time = time;
}

/* Defers emit with a time (0: none). */
static void defer_at(gs__trace_deferred_fn emit, void *ctx, uint64_t time) {
  if (gs__tw_pending)
    gs__tw_emit_pending();
  gs__tw_pending = emit;
  pending_ctx = ctx;
  pending_time = time;
  /* Numbered now, written later: the stream's numbers must keep increasing. */
  pending_seq = gs__next_event();
}

/* In a call, the call's time (read now if it has none yet): the event is the call's. */
static uint64_t call_time_now(void) {
  if (gs__tw_call_state == GS__TW_CALL_UNTIMED) {
    gs__tw_call_time = gs__tw_now();
    gs__tw_call_state = GS__TW_CALL_TIMED;
  }
  return gs__tw_call_state == GS__TW_CALL_TIMED ? gs__tw_call_time : 0;
}

void gs__trace_defer(gs__trace_deferred_fn emit, void *ctx) {
  defer_at(emit, ctx, call_time_now());
}

void gs__trace_defer_after_create(gs__trace_deferred_fn emit, void *ctx, uint64_t tensor) {
  uint64_t time = call_time_now();
  gs__tw_buffer *b = gs__tw_mine;
  /* Its tensor's creation was this stream's last event: they are one call's. */
  if (!time && b && tensor && tensor == gs__tw_created_tensor && b->last_seq == gs__tw_created_seq)
    time = gs__tw_start + b->last_time;
  defer_at(emit, ctx, time);
}

/* ---- open, flush, close ------------------------------------------------------------------ */

/* Every thread's buffer, each taken between two of its thread's events. */
static void flush_all(void) {
  pthread_mutex_lock(&registry_lock);
  for (thread_buffer *b = registry; b; b = b->next)
    flush_buffer_of(b);
  pthread_mutex_unlock(&registry_lock);
}

void gs__trace_flush_this_thread(void) {
  if (!gs__tw_mine || !atomic_load(&gs__tracing))
    return;
  gs__tw_emit_pending();
  flush_buffer_of(gs__tw_mine);
}

void gs_trace_flush(void) {
  if (gs__tw_mine && atomic_load(&gs__tracing))
    gs__tw_emit_pending();
  flush_all();
}

static void install_signal_handlers(void);

/* The rank the launcher gave this process (Open MPI's, PMIx's or MPICH's variable): the log
 * opens when the library loads, before gs_dist_init can ask MPI. 0 outside a launcher. */
static long launcher_rank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    char *end;
    long rank = v && *v ? strtol(v, &end, 10) : -1;
    if (v && *v && !*end && rank >= 0)
      return rank;
  }
  return 0;
}

const char *gs__trace_expand_rank(const char *dest, char *out, size_t size) {
  if (!strstr(dest, "%r"))
    return dest;
  size_t used = 0;
  long rank = launcher_rank();
  for (const char *p = dest; *p && used + 1 < size; p++) {
    if (p[0] == '%' && p[1] == 'r') {
      int n = snprintf(out + used, size - used, "%ld", rank);
      used = n < 0 ? used : used + (size_t)n < size ? used + (size_t)n : size - 1;
      p++;
    } else {
      out[used++] = *p;
    }
  }
  out[used] = '\0';
  return out;
}

static int open_sink(const char *dest, bool *owned) {
  *owned = true;
  if (strncmp(dest, "fd:", 3) == 0) {
    *owned = false;
    char *end;
    long fd = strtol(dest + 3, &end, 10);
    return *end || fd < 0 ? -1 : (int)fd;
  }
  if (strncmp(dest, "unix:", 5) == 0) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(dest + 5) >= sizeof addr.sun_path)
      return -1;
    strcpy(addr.sun_path, dest + 5);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }
  return open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* Why a flight recorder's dump begins with a snapshot: the reason its snapshot_begin names. */
static const char ring_reason[] = "the flight recorder kept only the newest events";

/* Starts recording into an open sink, or (ring_path) into a flight recorder's ring of
 * ring_bytes that dumps to ring_path. False if the ring cannot be made. */
static bool start(int fd, bool owned, const char *ring_path, uint64_t ring_bytes) {
  pthread_mutex_lock(&registry_lock);
  /* Fresh streams for every thread (their definition bitmaps follow gs__tw_log_epoch). */
  atomic_fetch_add(&gs__tw_log_epoch, 1);
  for (thread_buffer *b = registry; b; b = b->next) {
    claim(b);
    b->used = 0;
    b->base_seq = b->last_seq = 0;
    b->base_time = b->last_time = 0;
    unclaim(b);
  }
  pthread_mutex_lock(&sink_lock);
  calibrate_clock();
  gs__tw_start = gs__tw_now();
  make_header();
  bool ok = true;
  if (ring_path) {
    /* The reason's id is taken now: a signal handler cannot take it. */
    ok = gs__flight_open(ring_path, ring_bytes, log_header, string_id(ring_reason), ring_reason);
    ring_mode = ok;
    if (ok)
      gs__wb_open(GS__TW_RING);
  } else {
    sink_fd = fd;
    sink_owned = owned;
    gs__tw_write_all(sink_fd, log_header, sizeof log_header);
    gs__wb_open(fd);
  }
  pthread_mutex_unlock(&sink_lock);
  pthread_mutex_unlock(&registry_lock);
  if (!ok)
    return false;
  install_signal_handlers();
  atomic_store(&gs__tracing, true);
  return true;
}

int gs__trace_start(const char *dest) {
  if (atomic_load(&gs__tracing))
    gs_trace_close();
  char ranked[PATH_MAX];
  dest = gs__trace_expand_rank(dest, ranked, sizeof ranked);
  gs__trace_sites_init();
  bool owned;
  errno = 0;
  int fd = open_sink(dest, &owned);
  if (fd < 0)
    return errno ? errno : EINVAL;
  snprintf(sink_dest, sizeof sink_dest, "%s", dest);
  start(fd, owned, NULL, 0);
  gs__trace_write_snapshot(); /* a program that has done work opens its log with what lives */
  return 0;
}

const char *gs__trace_dest(void) { return atomic_load(&gs__tracing) ? sink_dest : NULL; }

void gs__trace_forget_inherited(void) {
  /* The parent's events (this thread's unflushed tail, other threads' buffers) are the
   * parent's to write: writing them here would put them in the log twice. The threads those
   * buffers belonged to do not exist in this process. */
  atomic_store(&gs__tracing, false);
  gs__tw_pending = NULL;
  thread_buffer *mine = gs__tw_mine;
  for (thread_buffer *b = registry, *next; b; b = next) {
    next = b->next;
    if (b != mine) {
      free(b->strings.bits);
      free(b->sites.bits);
      free(b->data);
      free(b);
    }
  }
  registry = mine;
  if (mine) {
    mine->next = NULL;
    mine->used = 0;
  }
  /* The parent's sink (a file, the inspector's socket) stays the parent's: this process's
   * copy of the descriptor must not keep a socket open after the parent closes it. */
  gs__wb_forget_after_fork();
  if (sink_fd >= 0)
    close(sink_fd);
  sink_fd = -1;
  sink_dest[0] = '\0';
  /* So is a flight recorder's ring: a worker that kept it would dump its own events over the
   * parent's file when it closes its log. */
  if (ring_mode) {
    ring_mode = false;
    gs__flight_forget_after_fork();
  }
}

int gs__trace_start_ring(const char *path, uint64_t bytes) {
  if (atomic_load(&gs__tracing))
    gs_trace_close();
  char ranked[PATH_MAX];
  path = gs__trace_expand_rank(path, ranked, sizeof ranked);
  gs__trace_sites_init();
  /* The file is made now, so a path that cannot be written is reported at once, not at the
   * crash the ring was for. */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno ? errno : EINVAL;
  close(fd);
  if (!start(-1, false, path, bytes))
    return ENOMEM;
  /* Worker processes name their own logs after it (they record whole logs, not rings). */
  snprintf(sink_dest, sizeof sink_dest, "%s", path);
  gs__trace_write_snapshot();
  return 0;
}

/* Writes the ring out: the header, the snapshot, the kept chunks. The caller has moved every
 * buffer into the ring (or, in a signal handler, writes them after: from_signal). */
static bool dump_ring(bool from_signal) {
  int fd = gs__flight_dump_open(log_header, from_signal);
  if (fd < 0)
    return false;
  if (from_signal) {
    dump_fd = fd;
    gs__wb_crash_flush(); /* the chunks handed over but not kept yet, then the buffers */
    for (thread_buffer *b = registry; b; b = b->next)
      flush_buffer_locked(b);
    dump_fd = -1;
  }
  return gs__flight_dump_close(fd);
}

int gs_trace_dump(void) {
  if (!ring_mode || !atomic_load(&gs__tracing))
    return -1;
  gs_trace_flush(); /* every buffer into the ring */
  pthread_mutex_lock(&sink_lock);
  bool ok = ring_mode && dump_ring(false);
  pthread_mutex_unlock(&sink_lock);
  return ok ? 0 : -1;
}

void gs__trace_error_flush(void) {
  /* A flight recorder writes itself out at every error: the error is what it was for. */
  if (ring_mode)
    gs_trace_dump();
  else
    gs_trace_flush();
}

void gs_trace_close(void) {
  if (!atomic_load(&gs__tracing))
    return;
  gs_trace_flush();
  atomic_store(&gs__tracing, false);
  flush_all(); /* what threads appended while the switch went off */
  gs__wb_close(); /* nothing queued for the sink is left unwritten when it closes */
  pthread_mutex_lock(&sink_lock);
  if (ring_mode) { /* closing (and exit) writes the ring out */
    dump_ring(false);
    gs__flight_close();
    ring_mode = false;
  }
  if (sink_owned && sink_fd >= 0)
    close(sink_fd);
  sink_fd = -1;
  pthread_mutex_unlock(&sink_lock);
}

bool gs_trace_enabled(void) { return atomic_load(&gs__tracing); }

/* ---- crashes and exit --------------------------------------------------------------------- */

static struct sigaction previous[32];
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};

/* Best effort: write every buffer without locks (the lock may be held by the crashed code),
 * then let the signal do what it did before. */
static void on_fatal_signal(int sig) {
  if (atomic_load(&gs__tracing) && ring_mode) {
    gs__wb_crash_halt(); /* the write-behind thread may be keeping a chunk in the ring */
    dump_ring(true);
  } else if (atomic_load(&gs__tracing) && sink_fd >= 0) {
    gs__wb_crash_flush(); /* the buffers handed over before, then what each thread holds */
    for (thread_buffer *b = registry; b; b = b->next)
      flush_buffer_locked(b);
  }
  atomic_store(&gs__tracing, false);
  sigaction(sig, &previous[sig], NULL);
  raise(sig);
}

static void install_signal_handlers(void) {
  static bool installed;
  if (installed)
    return;
  installed = true;
  struct sigaction sa = {.sa_handler = on_fatal_signal};
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
    sigaction(fatal_signals[i], &sa, &previous[fatal_signals[i]]);
}

static void close_at_exit(void) { gs_trace_close(); }

/* Whether a ring opened through the API has been promised its dump at exit. */
static atomic_bool exit_dump_registered;

void gs__trace_dump_at_exit(void) {
  if (!atomic_exchange(&exit_dump_registered, true))
    atexit(close_at_exit);
}

uint64_t gs__trace_parse_size(const char *text) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(text, &end, 10);
  if (errno || end == text)
    return 0;
  uint64_t unit = 1024 * 1024; /* a bare number is MiB, as the ring is sized in MiB */
  switch (*end) {
  case 'K': case 'k': unit = 1024; end++; break;
  case 'M': case 'm': unit = 1024 * 1024; end++; break;
  case 'G': case 'g': unit = 1024ull * 1024 * 1024; end++; break;
  case 0: break;
  default: return 0;
  }
  if (*end == 'i' && end[1] == 'B') /* "64MiB" */
    end += 2;
  else if (*end == 'B')
    end++;
  if (*end || n == 0 || n > UINT64_MAX / unit)
    return 0;
  return n * unit;
}

/* GS_TRACE=path|unix:SOCKET, GS_TRACE_FD=N and GS_TRACE_VALUES=N start recording on load. */
__attribute__((constructor)) static void open_from_environment(void) {
  const char *values = getenv("GS_TRACE_VALUES");
  if (values)
    gs__tw_values_limit = atoi(values);
  const char *dest = getenv("GS_TRACE");
  const char *fd = getenv("GS_TRACE_FD");
  char fd_dest[32];
  if ((!dest || !*dest) && fd && *fd) {
    snprintf(fd_dest, sizeof fd_dest, "fd:%s", fd);
    dest = fd_dest;
  }
  if (!dest || !*dest)
    return;
  char ranked[PATH_MAX];
  dest = gs__trace_expand_rank(dest, ranked, sizeof ranked);
  const char *ring_size = getenv("GS_TRACE_RING");
  if (ring_size && *ring_size) {
    uint64_t bytes = gs__trace_parse_size(ring_size);
    /* A ring is dumped to a file it rewrites whole: not to a socket or an inherited fd. */
    bool to_file = strncmp(dest, "unix:", 5) != 0 && strncmp(dest, "fd:", 3) != 0;
    int err = bytes >= 64 * 1024 && to_file ? gs__trace_start_ring(dest, bytes) : EINVAL;
    if (err) {
      fprintf(stderr, "gradscope: cannot keep a flight recorder of %s for %s (GS_TRACE_RING): %s\n",
              ring_size, dest,
              !to_file ? "it is dumped to a file: set GS_TRACE to a path"
              : bytes < 64 * 1024 ? "expected a size of at least 64K, such as 64M, 512K or 1G"
                                  : strerror(err));
      return;
    }
    atexit(close_at_exit);
    return;
  }
  bool owned;
  errno = 0;
  int sink = open_sink(dest, &owned);
  if (sink < 0) {
    fprintf(stderr, "gradscope: cannot open the event log at %s (GS_TRACE): %s\n", dest,
            strerror(errno ? errno : EINVAL));
    return;
  }
  snprintf(sink_dest, sizeof sink_dest, "%s", dest);
  start(sink, owned, NULL, 0);
  atexit(close_at_exit);
}
