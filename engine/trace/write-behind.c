/* write-behind.c: a log's full buffers written by a thread of the writer's own, so that the
 * recording threads do not pay for write(2) and the chunk's CRC. In bench-trace's profile of
 * the autograd micro-step, the kernel's write path (copying into the page cache, allocating
 * its pages) and the CRC were two fifths of what recording cost the recording thread; a
 * bigger buffer saved none of it (the cost is per byte, not per call).
 *
 * A thread whose buffer fills hands the buffer over (gs__wb_submit) and goes on in a spare
 * one. The chunks wait in a short queue, in the order they were handed over, so each thread's
 * chunks reach the log in its order. The queue holds at most WB_QUEUE chunks: past that a
 * recording thread waits for the writer, so a process killed outright loses at most those
 * chunks besides its threads' unflushed buffers. Everything else that writes (gs_trace_flush,
 * a thread's exit, gs_trace_close, the error handler) waits for the queue first (gs__wb_drain)
 * and then writes as before, so a flush still means the bytes are in the log. A fatal
 * signal's handler stops the writer between chunks and writes what is queued itself
 * (gs__wb_crash_flush), before the threads' buffers.
 *
 * The writer's writes take the sink lock (writer.c), as every other write does: a socket gets
 * whole chunks, never two interleaved. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "writer-impl.h"

#define WB_QUEUE 4

typedef struct wb_chunk {
  int fd;
  uint32_t thread;
  uint64_t base_seq, base_time;
  uint8_t *data; /* a GS__TW_BUFFER_BYTES block */
  size_t used;
} wb_chunk;

static pthread_mutex_t wb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wb_work = PTHREAD_COND_INITIALIZER; /* a chunk was queued */
static pthread_cond_t wb_done = PTHREAD_COND_INITIALIZER; /* a chunk was written */
static wb_chunk queue[WB_QUEUE];                          /* under wb_lock */
static unsigned queue_head, queue_count;
static uint8_t *spares[WB_QUEUE + 1]; /* written blocks, for the next hand-over */
static unsigned spare_count;
static int wb_fd = -1; /* where chunks handed over go (GS__TW_RING too); -1: none are taken */
static bool started;
static pid_t started_in; /* a forked child has no writer thread */
/* Dekker with a fatal signal's handler: the writer marks writing, then reads halt; the
 * handler sets halt, then waits while writing. */
static atomic_int writing, halt;

static void *writer_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&wb_lock);
  for (;;) {
    while (!queue_count)
      pthread_cond_wait(&wb_work, &wb_lock);
    atomic_store(&writing, 1);
    if (atomic_load(&halt)) { /* the process is dying: its handler writes the queue */
      atomic_store(&writing, 0);
      pthread_mutex_unlock(&wb_lock);
      for (;;)
        pause();
    }
    wb_chunk c = queue[queue_head];
    queue_head = (queue_head + 1) % WB_QUEUE;
    queue_count--;
    pthread_mutex_unlock(&wb_lock);
    gs__tw_write_chunk(c.fd, true, c.thread, c.base_seq, c.base_time, c.data, c.used);
    pthread_mutex_lock(&wb_lock);
    if (spare_count < WB_QUEUE + 1)
      spares[spare_count++] = c.data;
    else
      free(c.data);
    atomic_store(&writing, 0);
    pthread_cond_broadcast(&wb_done);
  }
  return NULL;
}

/* Under wb_lock. With every signal blocked: fatal signals are the program threads' (their
 * handler stops this thread). */
static bool ensure_started(void) {
  if (started && started_in == getpid())
    return true;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  started = pthread_create(&thread, NULL, writer_main, NULL) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (started) {
    gs__thread_background(thread); /* a hand-over must not stop the thread that made it */
    pthread_detach(thread);
    started_in = getpid();
  }
  return started;
}

/* Under wb_lock. In the child of a plain fork() (not gs__fork, whose child forgets the log,
 * gs__wb_forget_after_fork) the queue is a copy of the parent's, which the parent's writer
 * writes, and no writer runs here to empty it: waiting for it would hang. */
static void drop_parents_queue(void) {
  if (!started || started_in == getpid())
    return;
  for (; queue_count; queue_count--) {
    free(queue[queue_head].data);
    queue_head = (queue_head + 1) % WB_QUEUE;
  }
  started = false;
  atomic_store(&writing, 0);
}

/* A log opened through the API and never closed still gets every full buffer at exit, as
 * when the recording thread wrote them itself. */
static void drain_at_exit(void) { gs__wb_drain(); }

void gs__wb_open(int fd) {
  static bool exit_drain_registered;
  pthread_mutex_lock(&wb_lock);
  wb_fd = fd;
  if (!exit_drain_registered)
    exit_drain_registered = atexit(drain_at_exit) == 0;
  pthread_mutex_unlock(&wb_lock);
}

/* Once this returns, nothing is queued for the old sink and nothing more will be: it may be
 * closed. */
void gs__wb_close(void) {
  pthread_mutex_lock(&wb_lock);
  drop_parents_queue();
  wb_fd = -1;
  while (queue_count || atomic_load(&writing))
    pthread_cond_wait(&wb_done, &wb_lock);
  pthread_mutex_unlock(&wb_lock);
}

void gs__wb_drain(void) {
  pthread_mutex_lock(&wb_lock);
  drop_parents_queue();
  while (queue_count || atomic_load(&writing))
    pthread_cond_wait(&wb_done, &wb_lock);
  pthread_mutex_unlock(&wb_lock);
}

bool gs__wb_submit(uint32_t thread, uint64_t base_seq, uint64_t base_time, uint8_t **data,
                   size_t used) {
  pthread_mutex_lock(&wb_lock);
  drop_parents_queue();
  while (wb_fd != -1 && queue_count == WB_QUEUE)
    pthread_cond_wait(&wb_done, &wb_lock);
  uint8_t *spare = NULL;
  if (wb_fd != -1 && ensure_started())
    spare = spare_count ? spares[--spare_count] : malloc(GS__TW_BUFFER_BYTES);
  if (!spare) { /* no log taking chunks, no thread, or no memory: the caller writes it */
    pthread_mutex_unlock(&wb_lock);
    return false;
  }
  queue[(queue_head + queue_count) % WB_QUEUE] =
      (wb_chunk){wb_fd, thread, base_seq, base_time, *data, used};
  queue_count++;
  *data = spare;
  pthread_cond_signal(&wb_work);
  pthread_mutex_unlock(&wb_lock);
  return true;
}

/* From a fatal signal's handler, which can take no lock: stops the writer between chunks,
 * waiting (about a second at most) for the one it is writing or keeping, so that a ring the
 * writer feeds is whole when the handler dumps it. */
void gs__wb_crash_halt(void) {
  atomic_store(&halt, 1);
  struct timespec ms = {0, 1000000};
  for (int spins = 0; atomic_load(&writing) && spins < 1000; spins++)
    nanosleep(&ms, NULL); /* async-signal-safe, where usleep is not */
}

/* The same handler, then: writes the queued chunks, best effort. */
void gs__wb_crash_flush(void) {
  gs__wb_crash_halt();
  for (; queue_count; queue_count--) {
    wb_chunk *c = &queue[queue_head];
    queue_head = (queue_head + 1) % WB_QUEUE;
    gs__tw_write_chunk(c->fd, false, c->thread, c->base_seq, c->base_time, c->data, c->used);
  }
}

/* In a forked child: the queued chunks are the parent's to write, and the writer thread did
 * not come along. */
void gs__wb_forget_after_fork(void) {
  for (; queue_count; queue_count--) {
    free(queue[queue_head].data);
    queue_head = (queue_head + 1) % WB_QUEUE;
  }
  wb_fd = -1;
  started = false;
  atomic_store(&writing, 0);
}

/* gs__fork takes the queue between the writer's chunks (after the sink: the writer never
 * holds both). */
static void fork_take(void) { pthread_mutex_lock(&wb_lock); }
static void fork_give(void) { pthread_mutex_unlock(&wb_lock); }

__attribute__((constructor)) static void guard_queue_across_fork(void) {
  gs__fork_guard_add(GS__FORK_RANK_TRACE_WRITE_BEHIND, fork_take, fork_give);
}
