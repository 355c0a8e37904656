/* flight-recorder.c: the flight recorder's ring (GS_TRACE_RING=64M, gs_trace_open_ring): the
 * newest chunks of the log, kept in memory instead of written, and written out as a whole log
 * when asked (gs_trace_dump), on an error, on a fatal signal and at exit (writer.c decides
 * when; this file keeps the chunks and writes them).
 *
 * The ring holds whole chunks, as the writer makes them, up to its size in bytes. A chunk that
 * no longer fits pushes out the oldest ones; each chunk pushed out is decoded and applied to
 * the state it leaves (flight-state.c), so a dump can begin with a snapshot of what was alive
 * at its first kept chunk and every string, site and binary its chunks name. A dump is:
 * the header, that snapshot, the chunks pushed out but not yet applied, the kept chunks, in
 * the order they were made.
 *
 * Decoding and applying a chunk cost the recording thread more than writing it to a file
 * does (bench-trace: the ring at 1.4-1.9x the file), so a thread of the ring's own does it:
 * pushed-out chunks wait in a queue (at most a quarter of the ring's size: past that the
 * recording thread waits for the applier) and are applied in order. A dump waits only for
 * the chunk being applied, then writes the state and the queue's chunks as they are.
 *
 * Callers hold the writer's sink lock, or are its fatal signal handler, which cannot take it
 * (then the dump is best effort, as the writer's own crash flush is). */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "flight-recorder.h"
#include "flight-state.h"
#include "format.h"

typedef struct ring_chunk {
  struct ring_chunk *next;
  size_t size; /* header, payload and padding */
  uint8_t bytes[];
} ring_chunk;

static struct {
  char *path;
  uint64_t capacity, used;
  ring_chunk *oldest, *newest;
  gs__flight_state *state; /* what the chunks pushed out leave */
  gs_trace_reader *decoder; /* fed the header once, then each chunk pushed out */
  uint32_t reason;           /* string id of the snapshot's reason */
  const char *reason_text;
  uint64_t dropped;          /* chunks pushed out so far */
  /* The applier: chunks pushed out, waiting to be applied (oldest first), under lock. */
  pthread_mutex_t lock;
  pthread_cond_t work, done; /* a chunk to apply (or stop); a chunk applied */
  ring_chunk *queue_oldest, *queue_newest;
  uint64_t queued; /* bytes in the queue */
  bool started, stop;
  pthread_t thread;
  pid_t pid; /* the process the applier runs in: a plain fork()'s child has none */
  /* The applier is applying a chunk (state and decoder are its own then). A fatal signal's
   * handler, which cannot lock, sets halt and waits for applying to clear. */
  atomic_int applying, halt;
} ring = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .work = PTHREAD_COND_INITIALIZER,
          .done = PTHREAD_COND_INITIALIZER};

static GS__THREAD_LOCAL bool in_applier;

bool gs__flight_on(void) { return ring.path != NULL; }

static void apply_chunk(ring_chunk *c) {
  gs_trace_reader_feed(ring.decoder, c->bytes, c->size);
  /* The reader's own event, not a copy of it: copying its 500 bytes an event was a fifth of
   * the applier's time (bench-trace's ring). */
  const gs_trace_event *e;
  while (gs_trace_reader_next_ref(ring.decoder, &e) == GS_TRACE_EVENT)
    gs__flight_state_apply(ring.state, e);
  free(c);
}

static void *applier(void *arg) {
  (void)arg;
  in_applier = true;
  pthread_mutex_lock(&ring.lock);
  for (;;) {
    while (!ring.stop && !ring.queue_oldest)
      pthread_cond_wait(&ring.work, &ring.lock);
    if (!ring.queue_oldest) /* stopping, and nothing left */
      break;
    /* Dekker with a fatal signal's handler: applying first, then halt. */
    atomic_store(&ring.applying, 1);
    if (atomic_load(&ring.halt)) { /* a dump from a signal handler is reading the state */
      atomic_store(&ring.applying, 0);
      pthread_mutex_unlock(&ring.lock);
      while (atomic_load(&ring.halt))
        sched_yield();
      pthread_mutex_lock(&ring.lock);
      continue;
    }
    ring_chunk *c = ring.queue_oldest;
    ring.queue_oldest = c->next;
    if (!ring.queue_oldest)
      ring.queue_newest = NULL;
    ring.queued -= c->size;
    pthread_mutex_unlock(&ring.lock);
    apply_chunk(c);
    pthread_mutex_lock(&ring.lock);
    atomic_store(&ring.applying, 0);
    pthread_cond_broadcast(&ring.done);
  }
  pthread_mutex_unlock(&ring.lock);
  return NULL;
}

/* Starts the applier with every signal blocked: fatal signals belong to the program's
 * threads (their handler waits for the applier). False if it cannot start. */
static bool start_applier(void) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  ring.started = pthread_create(&ring.thread, NULL, applier, NULL) == 0;
  if (ring.started) /* as the write-behind thread: a pushed-out chunk can wait for a slice */
    gs__thread_background(ring.thread);
  ring.pid = getpid();
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return ring.started;
}

/* Whether the state is the applier's to change, in this process. In the child of a plain
 * fork() (not gs__fork, which takes the lock between chunks around it) the applier did not
 * come along: its lock may be held and its chunk half applied, for good. */
static bool applier_elsewhere(void) { return ring.started && ring.pid != getpid(); }

/* Waits, holding the lock, until the applier is between chunks: the state, the decoder and
 * the queue are then the caller's until it unlocks. */
static void lock_between_chunks(void) {
  pthread_mutex_lock(&ring.lock);
  while (atomic_load(&ring.applying))
    pthread_cond_wait(&ring.done, &ring.lock);
}

bool gs__flight_open(const char *path, uint64_t capacity, const uint8_t *header,
                     uint32_t reason, const char *reason_text) {
  gs__flight_close();
  ring.path = strdup(path);
  ring.state = gs__flight_state_new();
  ring.decoder = gs_trace_reader_new();
  if (!ring.path || !ring.state || !ring.decoder) {
    gs__flight_close();
    return false;
  }
  ring.capacity = capacity;
  ring.reason = reason;
  ring.reason_text = reason_text;
  gs_trace_reader_feed(ring.decoder, header, GS__TRACE_HEADER_SIZE);
  return true;
}

static void free_chunks(ring_chunk *c) {
  while (c) {
    ring_chunk *next = c->next;
    free(c);
    c = next;
  }
}

/* Forgets the ring without touching the applier's memory or locks (fresh ones for the
 * next ring). */
static void reset(void) {
  memset(&ring, 0, sizeof ring);
  ring.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
  ring.work = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
  ring.done = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
}

void gs__flight_close(void) {
  if (applier_elsewhere()) { /* nothing here can be trusted to be whole: leave it */
    reset();
    return;
  }
  if (ring.started) {
    pthread_mutex_lock(&ring.lock);
    ring.stop = true;
    pthread_cond_signal(&ring.work);
    pthread_mutex_unlock(&ring.lock);
    pthread_join(ring.thread, NULL); /* it applies the queue first: nothing is lost */
  }
  free_chunks(ring.queue_oldest);
  free_chunks(ring.oldest);
  free(ring.path);
  gs__flight_state_free(ring.state);
  if (ring.decoder)
    gs_trace_reader_free(ring.decoder);
  reset();
}

void gs__flight_forget_after_fork(void) {
  /* gs__fork held the lock between chunks (fork_take): all is whole; only the applier is
   * not in this process. */
  ring.started = false;
  gs__flight_close();
}

static void fork_take(void) { lock_between_chunks(); }
static void fork_give(void) { pthread_mutex_unlock(&ring.lock); }

__attribute__((constructor)) static void guard_ring_across_fork(void) {
  gs__fork_guard_add(GS__FORK_RANK_TRACE_RING, fork_take, fork_give);
}

/* Hands the oldest chunk to the applier (or applies it here if the applier cannot start),
 * then waits while the queue holds more than a quarter of the ring. */
static void push_out_oldest(void) {
  ring_chunk *c = ring.oldest;
  ring.oldest = c->next;
  if (!ring.oldest)
    ring.newest = NULL;
  ring.used -= c->size;
  ring.dropped++;
  if (!ring.started && !start_applier()) {
    apply_chunk(c);
    return;
  }
  c->next = NULL;
  pthread_mutex_lock(&ring.lock);
  if (ring.queue_newest)
    ring.queue_newest->next = c;
  else
    ring.queue_oldest = c;
  ring.queue_newest = c;
  ring.queued += c->size;
  pthread_cond_signal(&ring.work);
  while (ring.queued > ring.capacity / 4 && ring.queue_oldest != c)
    pthread_cond_wait(&ring.done, &ring.lock);
  pthread_mutex_unlock(&ring.lock);
}

void gs__flight_keep(const uint8_t *header, const uint8_t *payload, size_t len, size_t pad) {
  size_t size = GS__TRACE_CHUNK_HEADER_SIZE + len + pad;
  while (ring.oldest && ring.used + size > ring.capacity)
    push_out_oldest();
  ring_chunk *c = malloc(sizeof *c + size);
  if (!c) { /* no memory: the chunk is lost, and so is what the snapshot would know of it */
    return;
  }
  c->next = NULL;
  c->size = size;
  memcpy(c->bytes, header, GS__TRACE_CHUNK_HEADER_SIZE);
  memcpy(c->bytes + GS__TRACE_CHUNK_HEADER_SIZE, payload, len);
  memset(c->bytes + GS__TRACE_CHUNK_HEADER_SIZE + len, 0, pad);
  if (ring.newest)
    ring.newest->next = c;
  else
    ring.oldest = c;
  ring.newest = c;
  ring.used += size;
}

static bool write_fd(const void *bytes, size_t n, void *ctx) {
  return gs__tw_write_all(*(int *)ctx, bytes, n);
}

/* A fatal signal's handler cannot wait on the lock: it stops the applier between chunks by
 * spinning (at most about a second). True if the state may be read. */
static bool halt_applier(void) {
  /* The applier itself crashed, or is not in this process: its state may be half changed. */
  if (in_applier || applier_elsewhere())
    return false;
  atomic_store(&ring.halt, 1);
  for (long spins = 0; atomic_load(&ring.applying); spins++)
    if (spins > 100000000L)
      return false;
  return true;
}

static int dump_open(const uint8_t *header, bool state_ok) {
  /* Written beside, then renamed over: a crash during the dump leaves the previous one. The
   * name is built without allocating (a signal handler may be here). */
  char tmp[4096];
  size_t n = strlen(ring.path);
  if (n + 5 > sizeof tmp)
    return -1;
  memcpy(tmp, ring.path, n);
  memcpy(tmp + n, ".tmp", 5);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  bool ok = write_fd(header, GS__TRACE_HEADER_SIZE, &fd);
  /* An incomplete state (memory ran out while applying) still writes what it has. */
  if (ok && state_ok && !gs__flight_state_empty(ring.state))
    gs__flight_state_write(ring.state, ring.reason, ring.reason_text, write_fd, &fd);
  for (ring_chunk *c = ring.queue_oldest; ok && c; c = c->next) /* pushed out, not applied */
    ok = write_fd(c->bytes, c->size, &fd);
  for (ring_chunk *c = ring.oldest; ok && c; c = c->next)
    ok = write_fd(c->bytes, c->size, &fd);
  if (!ok) {
    close(fd);
    unlink(tmp);
    return -1;
  }
  return fd;
}

int gs__flight_dump_open(const uint8_t *header, bool from_signal) {
  if (!ring.path)
    return -1;
  if (applier_elsewhere())
    return dump_open(header, false);
  if (from_signal) {
    int fd = dump_open(header, halt_applier());
    atomic_store(&ring.halt, 0);
    return fd;
  }
  lock_between_chunks();
  int fd = dump_open(header, true);
  pthread_mutex_unlock(&ring.lock);
  return fd;
}

bool gs__flight_dump_close(int fd) {
  char tmp[4096];
  size_t n = strlen(ring.path);
  memcpy(tmp, ring.path, n);
  memcpy(tmp + n, ".tmp", 5);
  bool ok = close(fd) == 0;
  return ok && rename(tmp, ring.path) == 0;
}

uint64_t gs__flight_dropped(void) { return ring.dropped; }
