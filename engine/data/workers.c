/* workers.c: the DataLoader's worker processes (gs_loader_options.num_workers > 0).
 *
 * Fork, not spawn: get_item is a C callback over the caller's memory, which only a copy of this
 * process can run. fork() leaves the child with the forking thread alone, so it goes through
 * gs__fork (base/fork.c), which takes every engine lock around it (a pool's free list, the
 * allocator, the trace buffers), and the child drops what it inherited of the parent's log
 * (gs__trace_forget_inherited) before it opens a log of its own. OpenBLAS's own atfork handler
 * restarts its threads in the child, which we limit to one: a worker collates, N of them
 * share the cores with the main process.
 *
 * Each epoch gets fresh workers (the order, fixed by reset, is inherited). Worker k collates
 * batches k, k + N, k + 2N, ... of the epoch, each straight into shared memory
 * (GS__COLLATE_SHARED), and sends it on its own socketpair: a header, then each field with
 * gs_tensor_send (the memfd rides along). The main process takes batch b from worker b % N,
 * so the order is the one the main process would collate in. Flow control is by credits: a
 * worker reads one byte before each batch; the main process sends `depth` at the start and one
 * per batch taken, so at most `depth` batches per worker exist ahead of the consumer.
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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gradscope/error.h"
#include "gradscope/interop.h"
#include "loader-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

#define HEADER_MAGIC "GSb1"
/* How long shutting down waits for workers to leave by themselves before killing them. */
#define SHUTDOWN_GRACE_MS 1000

typedef struct batch_header {
  char magic[4];
  int32_t failed;   /* 0: n_fields tensors follow; 1: error holds why */
  int64_t batch;    /* the batch's index in the epoch */
  int32_t n_fields;
  uint32_t reserved;
  char error[488];
} batch_header;
_Static_assert(sizeof(batch_header) == 512, "the header has no padding");

typedef struct worker {
  pid_t pid; /* 0 once waited for */
  int sock;  /* the main process's end; -1 once closed */
} worker;

struct gs__workers {
  gs_data_loader *loader;
  int n;
  int depth;       /* batches each worker may have ahead */
  int64_t batches; /* in this epoch */
  int64_t next;    /* the next batch to take */
  bool ended;      /* shut down: after the last batch or a failure */
  char trace_dest[4096]; /* the main log's file, or "" (workers do not record) */
  worker w[];
};

/* ---- in the worker process -------------------------------------------------------------- */

static bool in_worker;
static gs_worker_info worker_info;

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

/* Waits for the main process's go-ahead for one more batch: false when it has closed the
 * socket (the loader is shutting down). */
static bool wait_for_credit(int sock) {
  for (;;) {
    char c;
    ssize_t n = recv(sock, &c, 1, 0);
    if (n == 1)
      return true;
    if (n < 0 && errno == EINTR)
      continue;
    return false;
  }
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

static _Noreturn void worker_main(gs__workers *ws, int id, uint64_t seed) {
  /* The other workers' sockets are the main process's: holding them would keep those
   * workers from seeing the end of the stream when the main process closes its ends. */
  for (int j = 0; j < id; j++)
    close(ws->w[j].sock);
  int sock = ws->w[id].sock;
  gs__trace_forget_inherited();
  gs__scopes_forget_inherited(); /* its collate scopes are roots of its own log */
  /* A failure is reported to the main process, not acted on here. */
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  open_worker_log(ws->trace_dest, id);
  openblas_set_num_threads(1);
  in_worker = true;
  worker_info = (gs_worker_info){.id = id, .num_workers = ws->n, .seed = seed};
  gs_manual_seed(seed);

  gs_data_loader *l = ws->loader;
  int nf = l->ds.n_fields;
  int status = 0;
  for (int64_t b = id; b < ws->batches; b += ws->n) {
    if (!wait_for_credit(sock))
      break;
    int64_t pos = b * l->opt.batch_size;
    gs_tensor parts[GS_DATASET_MAX_FIELDS] = {0};
    batch_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, HEADER_MAGIC, 4);
    h.batch = b;
    h.n_fields = nf;
    gs_clear_error();
    if (!gs__loader_collate(l, pos, gs__loader_batch_count(l, pos), GS__COLLATE_SHARED, parts,
                            "data_loader_next")) {
      h.failed = 1;
      snprintf(h.error, sizeof h.error, "%s", gs_last_error()[0] ? gs_last_error()
                                                                 : "(no message)");
    }
    bool sent = send_bytes(sock, &h, sizeof h);
    for (int f = 0; f < nf && sent && !h.failed; f++)
      sent = gs_tensor_send(sock, parts[f]) == 0;
    /* Sent: the main process maps the pages, ours can go. */
    for (int f = 0; f < nf; f++)
      if (parts[f].id)
        gs__dispose_as(parts[f], "a worker's sent batch");
    if (!sent || h.failed) {
      status = sent ? 0 : 1;
      break;
    }
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

static void close_socket(worker *w) {
  if (w->sock >= 0)
    close(w->sock);
  w->sock = -1;
}

/* Closes every socket, gives the workers a moment to leave, kills the rest, and waits for all:
 * no process is left behind. */
static void shut_down(gs__workers *ws) {
  ws->ended = true;
  for (int i = 0; i < ws->n; i++)
    close_socket(&ws->w[i]);
  uint64_t deadline = now_ms() + SHUTDOWN_GRACE_MS;
  for (;;) {
    bool waiting = false;
    for (int i = 0; i < ws->n; i++) {
      if (ws->w[i].pid <= 0)
        continue;
      pid_t r = waitpid(ws->w[i].pid, NULL, WNOHANG);
      if (r == ws->w[i].pid || (r < 0 && errno != EINTR))
        ws->w[i].pid = 0; /* gone (or not ours to wait for: SIGCHLD ignored) */
      else
        waiting = true;
    }
    if (!waiting)
      return;
    if (now_ms() >= deadline)
      break;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  for (int i = 0; i < ws->n; i++) {
    if (ws->w[i].pid <= 0)
      continue;
    kill(ws->w[i].pid, SIGKILL);
    while (waitpid(ws->w[i].pid, NULL, 0) < 0 && errno == EINTR)
      ;
    ws->w[i].pid = 0;
  }
}

static bool give_credit(worker *w) {
  char c = 1;
  return w->sock >= 0 && send(w->sock, &c, 1, MSG_NOSIGNAL) == 1;
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
  const char *dest = gs__trace_dest();
  if (dest && strncmp(dest, "unix:", 5) != 0 && strncmp(dest, "fd:", 3) != 0)
    snprintf(ws->trace_dest, sizeof ws->trace_dest, "%s", dest);
  for (int i = 0; i < n; i++)
    ws->w[i].sock = -1;
  /* What the caller printed must not come out again from a worker's copy of the buffers. */
  fflush(NULL);
  uint64_t base_seed = l->opt.seed + (uint64_t)l->epoch * GS_LOADER_MAX_WORKERS;
  for (int i = 0; i < n; i++) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      int err = errno;
      shut_down(ws);
      free(ws);
      gs__error(GS_ERR_STATE, fn, "cannot make a socket for worker %d: %s", i, strerror(err));
      return NULL;
    }
    ws->w[i].sock = sv[0];
    pid_t pid = gs__fork();
    if (pid == 0) {
      close(sv[0]);
      ws->w[i].sock = sv[1];
      worker_main(ws, i, base_seed + (uint64_t)i);
    }
    close(sv[1]);
    if (pid < 0) {
      int err = errno;
      shut_down(ws);
      free(ws);
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
  shut_down(ws);
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
 * deadline passed (deadline 0: none). */
static int wait_readable(int sock, uint64_t deadline) {
  for (;;) {
    int timeout = -1;
    if (deadline) {
      uint64_t now = now_ms();
      timeout = now >= deadline ? 0 : (int)(deadline - now);
    }
    struct pollfd p = {.fd = sock, .events = POLLIN};
    int r = poll(&p, 1, timeout);
    if (r > 0)
      return 1;
    if (r == 0)
      return 0;
    if (errno != EINTR)
      return 1; /* let the read that follows say what is wrong */
  }
}

/* Reads the header; 1, 0 at the end of the stream, -1 on a timeout, -2 on a short or bad
 * read. */
static int read_header(int sock, batch_header *h, uint64_t deadline) {
  size_t got = 0;
  while (got < sizeof *h) {
    if (!wait_readable(sock, deadline))
      return -1;
    ssize_t n = recv(sock, (char *)h + got, sizeof *h - got, 0);
    if (n < 0 && errno == EINTR)
      continue;
    /* A worker that died with credits unread resets the connection instead of ending it. */
    if ((n == 0 || (n < 0 && errno == ECONNRESET)) && got == 0)
      return 0;
    if (n <= 0)
      return -2;
    got += (size_t)n;
  }
  return 1;
}

/* True if the peer closed the socket with nothing left to read (it died). */
static bool at_end(int sock) {
  char c;
  ssize_t n;
  while ((n = recv(sock, &c, 1, MSG_PEEK)) < 0 && errno == EINTR)
    ;
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

int gs__workers_take(gs__workers *ws, gs_tensor *parts, const char *fn) {
  if (ws->ended || ws->next >= ws->batches) {
    if (!ws->ended)
      shut_down(ws); /* the epoch is over: the workers have left or are leaving */
    return 0;
  }
  int64_t b = ws->next;
  int id = (int)(b % ws->n);
  worker *w = &ws->w[id];
  int timeout_ms = ws->loader->opt.timeout_ms;
  uint64_t deadline = timeout_ms > 0 ? now_ms() + (uint64_t)timeout_ms : 0;
  batch_header h;
  int r = read_header(w->sock, &h, deadline);
  if (r == -1) {
    kill(w->pid, SIGKILL); /* shut_down waits for it */
    return fail(ws, id, b, fn, "no batch within timeout_ms = %d ms: the worker was stopped",
                timeout_ms);
  }
  if (r == 0)
    return fail_dead(ws, id, b, fn);
  if (r < 0 || memcmp(h.magic, HEADER_MAGIC, 4) != 0 || h.batch != b)
    return fail(ws, id, b, fn, "the worker sent a damaged message");
  if (h.failed) {
    h.error[sizeof h.error - 1] = '\0';
    return fail(ws, id, b, fn, "the worker could not collate it: %s", h.error);
  }
  int nf = ws->loader->ds.n_fields;
  if (h.n_fields != nf)
    return fail(ws, id, b, fn, "the worker sent %d fields instead of %d", h.n_fields, nf);
  /* Engine-held until the loader hands them over, as a collation here would make them. */
  gs_tensor got[GS_DATASET_MAX_FIELDS] = {0};
  int f = 0;
  gs__ownership_suspend();
  for (; f < nf; f++) {
    if (!wait_readable(w->sock, deadline) || at_end(w->sock))
      break;
    got[f] = gs_tensor_recv(w->sock);
    if (!got[f].id)
      break;
  }
  gs__ownership_resume();
  if (f < nf) {
    for (int g = 0; g < f; g++)
      gs__dispose_as(got[g], "a batch a worker could not finish sending");
    if (w->sock >= 0 && at_end(w->sock))
      return fail_dead(ws, id, b, fn);
    kill(w->pid, SIGKILL);
    return fail(ws, id, b, fn, "the worker did not finish sending it (timeout_ms = %d, or a "
                "damaged message) and was stopped", timeout_ms);
  }
  ws->next++;
  give_credit(w); /* room for one more of its batches */
  memcpy(parts, got, (size_t)nf * sizeof *parts);
  return 1;
}
