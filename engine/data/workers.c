/* workers.c: the DataLoader's worker processes (gs_loader_options.num_workers > 0).
 *
 * Fork, not spawn: get_item is a C callback over the caller's memory, which only a copy of this
 * process can run. fork() leaves the child with the forking thread alone, so it goes through
 * gs__fork (base/fork.c), which takes every engine lock around it (a pool's free list, the
 * allocator, the trace buffers), and the child drops what it inherited of the parent's log
 * (gs__trace_forget_inherited) before it opens a log of its own. A worker's BLAS runs on one
 * thread (a worker collates, N of them share the cores with the main process). Setting that
 * count with openblas_set_num_threads restarts the pool that fork() stopped (its fresh thread
 * would spin on sched_yield for about 130 ms beside the worker, and stopping it again at once
 * still cost 1.8 ms of CPU and 3-18 ms before the worker could start), so with the pthreads
 * build the worker sets OpenBLAS's own count instead: with one thread, BLAS never needs the
 * pool, and nothing starts it.
 *
 * Each epoch gets fresh workers (the order, fixed by reset, is inherited). Worker k collates
 * batches k, k + N, k + 2N, ... of the epoch, each straight into shared memory
 * (GS__COLLATE_SHARED), and sends it on its own socketpair as one message: a header and each
 * field's wire record (tensor-socket.c), with the memfd of each segment the main process has
 * not mapped yet riding along. The main process takes batch b from worker b % N,
 * so the order is the one the main process would collate in. Flow control is by credits: a
 * worker reads a credit before each batch; the main process sends `depth` at the start and one
 * per batch taken, so at most `depth` batches per worker exist ahead of the consumer.
 *
 * Segments are used again (interop/segment-pool.c): the first write to a fresh memfd costs a
 * page fault, a zeroed page and a cgroup charge per 4 KiB, a third of collating a 1 MiB batch.
 * The header names each field's pool slot; when the main process's last storage over those
 * pages goes (the caller disposed the batch), it sends the slot back and the worker writes a
 * later batch into the same, already mapped pages. The main process keeps its own mapping of
 * each slot too (interop/segment-cache.c): mapping a segment afresh per batch made its first
 * read fault on every page again, 1.5-2 ms of a 1 MiB batch on a VM. What the main process
 * sends is one byte per message, so no two threads' messages interleave: 0 is a credit, 1 + k
 * gives slot k back.
 * Give-backs are sent without blocking and may be dropped (a full socket, a worker gone): a
 * dropped one only leaves its slot busy, and the worker makes fresh segments when all are.
 *
 * Failures never hang: a dead worker's socket reads as the end of the stream (then waitpid
 * says how it died), a hung one is killed once timeout_ms passes, a failed collation comes as
 * a header carrying the message. Shutting down closes the sockets (a waiting worker sees the
 * end and exits), waits a moment, kills what is left and waits for every pid. Segments in
 * flight go with the sockets: the kernel closes the descriptors queued in them.
 */
#include <cblas.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gradscope/error.h"
#include "gradscope/interop.h"
#include "interop-impl.h"
#include "loader-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

#define HEADER_MAGIC "GSb1"
/* How long shutting down waits for workers to leave by themselves before killing them. */
#define SHUTDOWN_GRACE_MS 1000
/* How long reset waits for a persistent worker to finish its batch and take the new epoch,
 * when the loader has no timeout_ms. */
#define NEXT_EPOCH_WAIT_MS 10000

/* Main process to worker, one byte each: one more batch, 1 + k gives slot k back, or a new
 * epoch (persistent workers; the worker answers with a header whose batch is EPOCH_ACK). */
#define MSG_CREDIT 0
#define MSG_EPOCH 255
#define EPOCH_ACK (-1)
#define NO_SLOT 255 /* a field sent over a segment that is not the pool's */
_Static_assert(NO_SLOT >= GS__SEGMENT_POOL_MAX, "NO_SLOT is no slot of a pool or a cache");

typedef struct batch_header {
  char magic[4];
  int32_t failed;   /* 0: n_fields tensors follow; 1: error holds why */
  int64_t batch;    /* the batch's index in the epoch */
  int32_t n_fields;
  uint8_t slot[GS_DATASET_MAX_FIELDS]; /* each field's segment in the worker's pool, or NO_SLOT */
  /* 1: the field's memory file rides with the message (in field order); 0: the segment in its
   * slot was sent before, and the main process maps it already */
  uint8_t fd_attached[GS_DATASET_MAX_FIELDS];
  char error[484];
} batch_header;
_Static_assert(sizeof(batch_header) == 512 && GS_DATASET_MAX_FIELDS == 4,
               "the header has no padding");

/* What a worker sends per batch, as one message: the header, then a wire record per field
 * (zeros after a failure or in an epoch's answer), with the descriptors the header says ride
 * along. One message wakes the main process once and costs it one system call, where a header
 * and a message per field cost it three wake-ups at worst and seven calls per field. */
typedef struct batch_message {
  batch_header h;
  gs__wire_tensor field[GS_DATASET_MAX_FIELDS];
} batch_message;
_Static_assert(offsetof(batch_message, field) == sizeof(batch_header),
               "the records follow the header with no gap");

/* Every message of a loader over n_fields fields has this length, whatever the header says:
 * the main process reads each in one call, without reading its header first. */
static size_t message_len(int n_fields) {
  return sizeof(batch_header) + (size_t)n_fields * sizeof(gs__wire_tensor);
}

/* The main process's end of a worker's socket. Batches it received hold a reference, to give
 * their segments back when their storages go, which may be on any thread, after the loader is
 * gone: the lock keeps a closed descriptor's number (maybe reused) from being written. */
typedef struct channel {
  pthread_mutex_t lock;
  int sock; /* -1 once closed */
  atomic_int refs;
  pid_t owner; /* the main process: a forked copy never writes to it */
} channel;

typedef struct worker {
  pid_t pid; /* 0 once waited for */
  int sock;  /* the main process's end; -1 once closed */
  channel *ch;
  gs__segment_cache *cache; /* the worker's pool slots as mapped here, or NULL */
} worker;

struct gs__workers {
  gs_data_loader *loader;
  int n;
  int depth;       /* batches each worker may have ahead */
  int64_t batches; /* in this epoch */
  int64_t next;    /* the next batch to take */
  bool ended;      /* shut down: after the last batch or a failure */
  uint64_t seed;   /* the loader's seed at the fork: persistent workers shuffle from it */
  char trace_dest[4096]; /* the main log's file, or "" (workers do not record) */
  worker w[];
};

/* ---- in the worker process -------------------------------------------------------------- */

static bool in_worker;
static gs_worker_info worker_info;
static gs__segment_pool *pool; /* the segments this worker collates into */
static int credits;            /* received and not yet used */
static int new_epochs;         /* epochs announced and not yet started */
static int worker_sock;        /* this worker's end */

static bool read_messages(int sock, bool block);

/* OpenBLAS's own fork handler, which stops its thread pool (pthread_atfork's prepare), and the
 * count of threads its calls split their work into (what openblas_get_num_threads reports):
 * exported by the pthread build, in no header; weak, so a BLAS without them links. */
extern int blas_thread_shutdown_(void) __attribute__((weak));
extern int blas_cpu_number __attribute__((weak));

/* BLAS on the worker's thread alone. openblas_set_num_threads(1) would first restart the pool
 * fork() stopped (a pthread_create, the program's thread-local storage zeroed for the new
 * thread, its start), only for the worker to stop it again: the pthreads build's count is set
 * directly instead, and with one thread no call ever starts the pool. Another build (OpenMP,
 * serial) goes through its own setter. */
static void use_one_blas_thread(void) {
  if (&blas_cpu_number && openblas_get_parallel() == 1) {
    blas_cpu_number = 1;
    return;
  }
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_)
    blas_thread_shutdown_();
}

static gs_tensor pooled_empty(gs_dtype dtype, const int64_t *shape, int ndim, const char *fn) {
  read_messages(worker_sock, false); /* slots given back since the credit came */
  return gs__segment_pool_empty(pool, dtype, shape, ndim, fn);
}

bool gs_data_worker_info(gs_worker_info *info) {
  if (!info || !in_worker)
    return false;
  *info = worker_info;
  return true;
}

static bool send_bytes(int sock, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

/* Reads what the main process sent (credits, slots given back), waiting for something if
 * block: false when it has closed the socket (the loader is shutting down). */
static bool read_messages(int sock, bool block) {
  for (;;) {
    uint8_t m[256];
    ssize_t n = recv(sock, m, sizeof m, block ? 0 : MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && !block && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true;
    if (n <= 0)
      return false;
    for (ssize_t i = 0; i < n; i++) {
      if (m[i] == MSG_CREDIT) {
        credits++;
      } else if (m[i] == MSG_EPOCH) {
        new_epochs++;
        credits = 0; /* the old epoch's: the ones that follow are the new one's */
      } else if (pool)
        gs__segment_pool_given_back(pool, m[i] - 1);
    }
    return true;
  }
}

static batch_header new_header(int64_t batch, int n_fields) {
  batch_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, HEADER_MAGIC, 4);
  h.batch = batch;
  h.n_fields = n_fields;
  memset(h.slot, NO_SLOT, sizeof h.slot);
  return h;
}

/* Seeds the engine's default generator as PyTorch seeds a worker: the epoch's base seed plus
 * the worker's id. */
static void seed_worker(const gs_data_loader *l, int id) {
  worker_info.seed = l->opt.seed + (uint64_t)l->epoch * GS_LOADER_MAX_WORKERS + (uint64_t)id;
  gs_manual_seed(worker_info.seed);
}

/* The worker's log: the main log's path with ".worker-N" before its extension. */
static void open_worker_log(const char *dest, int id) {
  if (!dest[0])
    return;
  const char *slash = strrchr(dest, '/');
  const char *base = slash ? slash + 1 : dest;
  const char *dot = strrchr(base, '.');
  size_t stem = dot && dot != base ? (size_t)(dot - dest) : strlen(dest);
  char path[4200];
  snprintf(path, sizeof path, "%.*s.worker-%d%s", (int)stem, dest, id, dest + stem);
  gs_trace_open(path); /* a failure is reported (the handler returns) and the worker goes on */
}

static _Noreturn void worker_main(gs__workers *ws, int id) {
  /* The other workers' sockets are the main process's: holding them would keep those
   * workers from seeing the end of the stream when the main process closes its ends. */
  for (int j = 0; j < id; j++)
    close(ws->w[j].sock);
  int sock = ws->w[id].sock;
  worker_sock = sock;
  gs__trace_forget_inherited();
  gs__scopes_forget_inherited(); /* its collate scopes are roots of its own log */
  /* A failure is reported to the main process, not acted on here. */
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  open_worker_log(ws->trace_dest, id);
  /* One BLAS thread, and no pool thread beside it (see the top of the file). */
  use_one_blas_thread();
  in_worker = true;
  worker_info = (gs_worker_info){.id = id, .num_workers = ws->n};
  gs_data_loader *l = ws->loader;
  seed_worker(l, id);
  /* Enough for the batches in flight (credits, one on the socket, one the caller holds) of
   * every field; without a pool (no memory), fresh segments as before. */
  int slots = (ws->depth + 3) * l->ds.n_fields;
  pool = gs__segment_pool_new(slots < GS__SEGMENT_POOL_MAX ? slots : GS__SEGMENT_POOL_MAX);
  if (pool)
    l->shared_maker = pooled_empty;

  int nf = l->ds.n_fields;
  int status = 0;
  bool persistent = l->opt.persistent_workers;
  for (int64_t b = id;;) {
    if (new_epochs > 0) { /* persistent: the main process reset the loader */
      new_epochs--;
      l->epoch++;
      gs__loader_order(l, l->epoch); /* the same order the main process drew */
      seed_worker(l, id);
      b = id;
      batch_message ack = {.h = new_header(EPOCH_ACK, 0)};
      if (!send_bytes(sock, &ack, message_len(nf))) {
        status = 1;
        break;
      }
      continue;
    }
    if (b >= ws->batches) { /* the epoch is done: a persistent worker waits for the next */
      if (!persistent || !read_messages(sock, true))
        break;
      continue;
    }
    if (credits == 0) {
      if (!read_messages(sock, true))
        break; /* the main process closed the socket: the loader is shutting down */
      continue;
    }
    credits--;
    int64_t pos = b * l->opt.batch_size;
    gs_tensor parts[GS_DATASET_MAX_FIELDS] = {0};
    batch_message m = {.h = new_header(b, nf)};
    gs_clear_error();
    if (!gs__loader_collate(l, pos, gs__loader_batch_count(l, pos), GS__COLLATE_SHARED, parts,
                            "data_loader_next")) {
      m.h.failed = 1;
      snprintf(m.h.error, sizeof m.h.error, "%s",
               gs_last_error()[0] ? gs_last_error() : "(no message)");
    }
    /* A segment sent before goes without its descriptor when the main process keeps a
     * mapping of each slot (its cache, made before the fork). */
    bool receiver_maps = ws->w[id].cache != NULL;
    int fds[GS_DATASET_MAX_FIELDS], n_fds = 0;
    for (int f = 0; f < nf && !m.h.failed; f++) {
      int fd;
      if (!gs__tensor_wire(parts[f], &m.field[f], &fd, "data_loader_next")) {
        m.h.failed = 1;
        snprintf(m.h.error, sizeof m.h.error, "%s", gs_last_error());
        break;
      }
      bool announced = false;
      int slot = pool ? gs__segment_pool_sent(pool, parts[f], &announced) : -1;
      m.h.slot[f] = slot >= 0 ? (uint8_t)slot : NO_SLOT;
      m.h.fd_attached[f] = !(slot >= 0 && announced && receiver_maps);
      if (m.h.fd_attached[f])
        fds[n_fds++] = fd;
    }
    bool sent = gs__send_with_fds(sock, &m, message_len(nf), fds, m.h.failed ? 0 : n_fds,
                                  "data_loader_next");
    /* Sent: the main process maps the pages, ours can go. */
    for (int f = 0; f < nf; f++)
      if (parts[f].id)
        gs__dispose_as(parts[f], "a worker's sent batch");
    if (!sent || m.h.failed) {
      status = sent ? 0 : 1;
      break;
    }
    b += ws->n;
  }
  if (gs_trace_enabled())
    gs_trace_close();
  /* _exit: the parent's atexit handlers and stdio buffers are the parent's. */
  _exit(status);
}

/* ---- in the main process ---------------------------------------------------------------- */

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static channel *channel_new(int sock) {
  channel *c = malloc(sizeof *c);
  if (!c)
    return NULL;
  pthread_mutex_init(&c->lock, NULL);
  c->sock = sock;
  atomic_init(&c->refs, 1);
  c->owner = gs__pid();
  return c;
}

static void channel_unref(channel *c) {
  if (c && atomic_fetch_sub(&c->refs, 1) == 1) {
    pthread_mutex_destroy(&c->lock);
    free(c);
  }
}

/* One byte to the worker, never blocking: false if it could not be sent. */
static bool channel_send(channel *c, uint8_t byte) {
  if (gs__pid() != c->owner)
    return false;
  pthread_mutex_lock(&c->lock);
  bool ok = c->sock >= 0 && send(c->sock, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1;
  pthread_mutex_unlock(&c->lock);
  return ok;
}

/* A received batch's storage went: its segment goes back to the worker, if the pages were not
 * sent on to yet another process (which may still read them). */
static void give_back(void *user, uint32_t slot, bool reusable) {
  channel *c = user;
  if (reusable)
    channel_send(c, (uint8_t)(1 + slot));
  channel_unref(c);
}

static void close_socket(worker *w) {
  if (w->ch) {
    pthread_mutex_lock(&w->ch->lock);
    w->ch->sock = -1;
    pthread_mutex_unlock(&w->ch->lock);
    channel_unref(w->ch);
    w->ch = NULL;
  }
  if (w->sock >= 0)
    close(w->sock);
  w->sock = -1;
}

/* Closes every socket: a worker waiting on its socket sees the end and leaves. */
static void close_sockets(gs__workers *ws) {
  ws->ended = true;
  for (int i = 0; i < ws->n; i++)
    close_socket(&ws->w[i]);
}

/* Reaps the workers that have left (closing their entries in exits); true if some are still
 * there. */
static bool reap_left(gs__workers *ws, struct pollfd *exits) {
  bool waiting = false;
  for (int i = 0; i < ws->n; i++) {
    if (ws->w[i].pid <= 0)
      continue;
    pid_t r = waitpid(ws->w[i].pid, NULL, WNOHANG);
    if (r == ws->w[i].pid || (r < 0 && errno != EINTR)) {
      ws->w[i].pid = 0; /* gone (or not ours to wait for: SIGCHLD ignored) */
      if (exits[i].fd >= 0)
        close(exits[i].fd);
      exits[i].fd = -1; /* poll skips it: a pidfd stays readable once its process is gone */
    } else {
      waiting = true;
    }
  }
  return waiting;
}

/* Gives the workers (their sockets closed) a moment to leave, kills the rest, and waits for
 * all: no process is left behind. A worker takes a few milliseconds to leave (its memory
 * goes), so the wait wakes at each one's exit through a pidfd, where 1 ms naps overshot it;
 * without pidfds (a kernel before 5.3) it naps. */
static void wait_for_workers(gs__workers *ws) {
  uint64_t deadline = now_ms() + SHUTDOWN_GRACE_MS;
  struct pollfd exits[GS_LOADER_MAX_WORKERS];
  bool pidfds = true;
  for (int i = 0; i < ws->n; i++) {
    exits[i] = (struct pollfd){.fd = ws->w[i].pid > 0 ? pidfd_open(ws->w[i].pid, 0) : -1,
                               .events = POLLIN};
    pidfds = pidfds && (ws->w[i].pid <= 0 || exits[i].fd >= 0);
  }
  while (reap_left(ws, exits)) {
    uint64_t now = now_ms();
    if (now >= deadline)
      break;
    if (pidfds) {
      poll(exits, (nfds_t)ws->n, (int)(deadline - now));
    } else {
      struct timespec pause = {0, 1000000};
      nanosleep(&pause, NULL);
    }
  }
  for (int i = 0; i < ws->n; i++) {
    if (exits[i].fd >= 0)
      close(exits[i].fd);
    if (ws->w[i].pid <= 0)
      continue;
    kill(ws->w[i].pid, SIGKILL);
    while (waitpid(ws->w[i].pid, NULL, 0) < 0 && errno == EINTR)
      ;
    ws->w[i].pid = 0;
  }
}

/* Closes every socket, gives the workers a moment to leave, kills the rest, and waits for all:
 * no process is left behind. */
static void shut_down(gs__workers *ws) {
  close_sockets(ws);
  wait_for_workers(ws);
}

static bool give_credit(worker *w) {
  return w->ch && channel_send(w->ch, MSG_CREDIT);
}

gs__workers *gs__workers_start(gs_data_loader *l) {
  const char *fn = "data_loader_reset";
  int n = l->opt.num_workers;
  gs__workers *ws = calloc(1, sizeof *ws + (size_t)n * sizeof(worker));
  if (!ws) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot allocate %d workers", n);
    return NULL;
  }
  ws->loader = l;
  ws->n = n;
  ws->depth = l->opt.prefetch > 0 ? l->opt.prefetch : 2;
  ws->batches = gs_data_loader_num_batches(l);
  ws->seed = l->opt.seed;
  const char *dest = gs__trace_dest();
  if (dest && strncmp(dest, "unix:", 5) != 0 && strncmp(dest, "fd:", 3) != 0)
    snprintf(ws->trace_dest, sizeof ws->trace_dest, "%s", dest);
  for (int i = 0; i < n; i++)
    ws->w[i].sock = -1;
  /* What the caller printed must not come out again from a worker's copy of the buffers. */
  fflush(NULL);
  for (int i = 0; i < n; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      int err = errno;
      gs__workers_stop(ws);
      gs__error(GS_ERR_STATE, fn, "cannot make a socket for worker %d: %s", i, strerror(err));
      return NULL;
    }
    ws->w[i].sock = sv[0];
    ws->w[i].ch = channel_new(sv[0]);
    if (!ws->w[i].ch) {
      close(sv[1]);
      gs__workers_stop(ws);
      gs__error(GS_ERR_OUT_OF_MEMORY, fn, "cannot allocate worker %d's channel", i);
      return NULL;
    }
    /* Made before the fork, so the worker knows whether the segments it sent before are mapped
     * here (without it, no memory, every batch brings its descriptors and is mapped afresh). */
    ws->w[i].cache = gs__segment_cache_new(GS__SEGMENT_POOL_MAX);
    pid_t pid = gs__fork();
    if (pid == 0) {
      close(sv[0]);
      ws->w[i].sock = sv[1];
      worker_main(ws, i);
    }
    close(sv[1]);
    if (pid < 0) {
      int err = errno;
      gs__workers_stop(ws);
      gs__error(GS_ERR_STATE, fn, "cannot start worker %d (fork): %s", i, strerror(err));
      return NULL;
    }
    ws->w[i].pid = pid;
    for (int c = 0; c < ws->depth; c++)
      give_credit(&ws->w[i]); /* a dead worker is found when its batch is due */
  }
  return ws;
}

void gs__workers_stop(gs__workers *ws) {
  if (!ws)
    return;
  close_sockets(ws);
  /* Unmapped while the workers leave (2-5 ms a loader on a VM, on the other core's time):
   * nothing is received any more, and storages still over a mapping keep it. */
  for (int i = 0; i < ws->n; i++) {
    gs__segment_cache_free(ws->w[i].cache);
    ws->w[i].cache = NULL;
  }
  wait_for_workers(ws);
  free(ws);
}

/* Reports that worker id failed on batch b (the message says how), ends the epoch and shuts
 * every worker down. Returns -1 for gs__workers_take. */
static int fail(gs__workers *ws, int id, int64_t b, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(gs__workers *ws, int id, int64_t b, const char *fn, const char *fmt, ...) {
  char why[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  pid_t pid = ws->w[id].pid;
  shut_down(ws);
  gs__error(GS_ERR_STATE, fn, "DataLoader worker %d (pid %d), batch %lld: %s", id, (int)pid,
            (long long)b, why);
  return -1;
}

/* How a worker that closed its socket ended, from waitpid: it is dead or about to be. */
static int fail_dead(gs__workers *ws, int id, int64_t b, const char *fn) {
  worker *w = &ws->w[id];
  int st = 0;
  pid_t r;
  while ((r = waitpid(w->pid, &st, 0)) < 0 && errno == EINTR)
    ;
  if (r != w->pid)
    return fail(ws, id, b, fn, "the worker closed its socket (its exit status is unknown)");
  pid_t pid = w->pid;
  w->pid = 0; /* waited for: shut_down must not wait again */
  char how[200];
  if (WIFSIGNALED(st))
    snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(st),
             strsignal(WTERMSIG(st)));
  else
    snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
  shut_down(ws);
  gs__error(GS_ERR_STATE, fn, "DataLoader worker %d (pid %d), batch %lld: the worker %s before "
            "sending it", id, (int)pid, (long long)b, how);
  return -1;
}

/* Waits until the worker's socket has something (a message or the end); 1, or 0 when the
 * deadline passed. */
static int wait_readable(int sock, uint64_t deadline) {
  for (;;) {
    uint64_t now = now_ms();
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r = poll(&p, 1, now >= deadline ? 0 : (int)(deadline - now));
    if (r > 0)
      return 1;
    if (r == 0)
      return 0;
    if (errno != EINTR)
      return 1; /* let the read that follows say what is wrong */
  }
}

/* Reads len bytes of a worker's message into buf, the descriptors riding with them into fds;
 * 1, 0 at the end of the stream before any byte, -1 on a timeout, -2 on a short or bad read.
 * Without a deadline (0) the read itself waits: no poll() first, one system call a message. */
static int read_message(int sock, void *buf, size_t len, uint64_t deadline, gs__received_fds *fds) {
  size_t got = 0;
  while (got < len) {
    if (deadline && !wait_readable(sock, deadline))
      return -1;
    struct iovec iov = {(char *)buf + got, len - got};
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(int) * GS__MAX_SENT_FDS)];
    } control;
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf};
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n > 0)
      gs__keep_fds(fds, &mh);
    /* A worker that died with credits unread resets the connection instead of ending it. */
    if ((n == 0 || (n < 0 && errno == ECONNRESET)) && got == 0)
      return 0;
    if (n <= 0)
      return -2;
    got += (size_t)n;
  }
  return 1;
}

/* True if the peer closed the socket with nothing left to read (it died). Never waits: a live
 * worker with nothing more to send is not at the end. */
static bool at_end(int sock) {
  char c;
  ssize_t n;
  while ((n = recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT)) < 0 && errno == EINTR)
    ;
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* Makes the n_fields tensors of m's wire records, received from w (engine-held, as a
 * collation here would make them), over the descriptors in fds or the slots' mappings, each
 * set to give its segment back when its last storage goes. Returns how many were made: fewer
 * than n_fields when the message was damaged. Every descriptor in fds is taken or closed. */
static int receive_fields(worker *w, batch_message *m, int nf, gs__received_fds *fds,
                          gs_tensor *got) {
  int f = 0;
  int attached = 0;
  for (int g = 0; g < nf; g++)
    attached += m->h.fd_attached[g] != 0;
  if (attached != fds->count || fds->dropped)
    nf = 0; /* damaged: the descriptors do not match the fields */
  gs__ownership_suspend();
  for (int k = 0; f < nf; f++) {
    int fd = m->h.fd_attached[f] ? fds->fd[k] : -1;
    if (fd >= 0)
      fds->fd[k++] = -1; /* taken: the cache keeps or closes it */
    got[f] = gs__segment_cache_take(w->cache, m->h.slot[f], &m->field[f], fd, "tensor_recv");
    if (!got[f].id)
      break;
  }
  gs__ownership_resume();
  gs__close_fds(fds);
  for (int g = 0; g < f; g++) {
    if (m->h.slot[g] == NO_SLOT || !w->ch)
      continue;
    atomic_fetch_add(&w->ch->refs, 1);
    if (!gs__shared_on_release(got[g], give_back, w->ch, m->h.slot[g]))
      channel_unref(w->ch);
  }
  return f;
}

bool gs__workers_next_epoch(gs__workers *ws) {
  /* A worker draws the new epoch's order from the seed it was forked with: after
   * gs_data_loader_set_seed only fresh workers shuffle as the caller asked. */
  if (ws->ended || ws->seed != ws->loader->opt.seed)
    return false;
  int nf = ws->loader->ds.n_fields;
  /* Without a timeout a hung worker must not hang reset: past NEXT_EPOCH_WAIT_MS the workers
   * are stopped and fresh ones forked, as without persistent_workers. */
  int timeout_ms = ws->loader->opt.timeout_ms > 0 ? ws->loader->opt.timeout_ms
                                                  : NEXT_EPOCH_WAIT_MS;
  for (int i = 0; i < ws->n; i++)
    if (!ws->w[i].ch || !channel_send(ws->w[i].ch, MSG_EPOCH))
      return false;
  /* What each worker sent of the old epoch before it read the news goes, up to its answer. */
  for (int i = 0; i < ws->n; i++) {
    worker *w = &ws->w[i];
    for (;;) {
      uint64_t deadline = now_ms() + (uint64_t)timeout_ms;
      batch_message m;
      gs__received_fds fds = {.count = 0};
      if (read_message(w->sock, &m, message_len(nf), deadline, &fds) != 1 ||
          memcmp(m.h.magic, HEADER_MAGIC, 4) != 0 || m.h.failed ||
          (m.h.batch != EPOCH_ACK && m.h.n_fields != nf)) {
        gs__close_fds(&fds);
        return false;
      }
      if (m.h.batch == EPOCH_ACK) {
        gs__close_fds(&fds); /* none come with an answer (a damaged one: closed) */
        break;
      }
      gs_tensor got[GS_DATASET_MAX_FIELDS] = {0};
      int f = receive_fields(w, &m, nf, &fds, got);
      for (int g = 0; g < f; g++)
        gs__dispose_as(got[g], "a batch of an epoch ended early");
      if (f < nf)
        return false;
    }
  }
  ws->next = 0;
  for (int i = 0; i < ws->n; i++)
    for (int c = 0; c < ws->depth; c++)
      give_credit(&ws->w[i]);
  return true;
}

int gs__workers_take(gs__workers *ws, gs_tensor *parts, const char *fn) {
  if (ws->ended || ws->next >= ws->batches) {
    /* The epoch is over: the workers leave, or persistent ones wait for the next. */
    if (!ws->ended && !ws->loader->opt.persistent_workers)
      shut_down(ws);
    return 0;
  }
  int64_t b = ws->next;
  int id = (int)(b % ws->n);
  worker *w = &ws->w[id];
  int timeout_ms = ws->loader->opt.timeout_ms;
  uint64_t deadline = timeout_ms > 0 ? now_ms() + (uint64_t)timeout_ms : 0;
  batch_message m;
  batch_header *h = &m.h;
  gs__received_fds fds = {.count = 0};
  int nf = ws->loader->ds.n_fields;
  int r = read_message(w->sock, &m, message_len(nf), deadline, &fds);
  if (r != 1 || memcmp(h->magic, HEADER_MAGIC, 4) != 0 || h->batch != b || h->failed ||
      h->n_fields != nf)
    gs__close_fds(&fds); /* no fields to take them */
  if (r == -1) {
    kill(w->pid, SIGKILL); /* shut_down waits for it */
    return fail(ws, id, b, fn, "no batch within timeout_ms = %d ms: the worker was stopped",
                timeout_ms);
  }
  /* The end of the stream, before the message or in the middle of it: the worker died. */
  if (r == 0 || (r == -2 && at_end(w->sock)))
    return fail_dead(ws, id, b, fn);
  if (r < 0 || memcmp(h->magic, HEADER_MAGIC, 4) != 0 || h->batch != b)
    return fail(ws, id, b, fn, "the worker sent a damaged message");
  if (h->failed) {
    h->error[sizeof h->error - 1] = '\0';
    return fail(ws, id, b, fn, "the worker could not collate it: %s", h->error);
  }
  if (h->n_fields != nf)
    return fail(ws, id, b, fn, "the worker sent %d fields instead of %d", h->n_fields, nf);
  gs_tensor got[GS_DATASET_MAX_FIELDS] = {0};
  int f = receive_fields(w, &m, nf, &fds, got);
  if (f < nf) {
    for (int g = 0; g < f; g++)
      gs__dispose_as(got[g], "a batch a worker could not finish sending");
    if (w->sock >= 0 && at_end(w->sock))
      return fail_dead(ws, id, b, fn);
    kill(w->pid, SIGKILL);
    return fail(ws, id, b, fn,
                "the worker sent it in a damaged message (its segments could "
                "not be mapped here) and was stopped");
  }
  ws->next++;
  give_credit(w); /* room for one more of its batches */
  memcpy(parts, got, (size_t)nf * sizeof *parts);
  return 1;
}
