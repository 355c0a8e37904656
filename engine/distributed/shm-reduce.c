/* shm-reduce.c: DDP's bucket allreduce when every rank runs on one machine, through an MPI-3
 * shared-memory window (MPI_Win_allocate_shared: Open MPI's osc/sm) instead of
 * MPI_Iallreduce. Each rank's buckets live in its part of the window, which the other ranks
 * map too; once every rank has staged bucket k, the ranks claim its 64 KiB chunks one at a
 * time, and the rank that claims one sums it over all ranks (in rank order, so every rank gets
 * the same bits, whoever sums it: shm-sum.c) and writes the sum into every rank's buffer. A
 * 2.7 MB f32 bucket moves 4 bytes per element per rank instead of the pipelined copies through
 * Open MPI's shared-memory FIFOs (2.3 GB/s on this machine), and nothing waits for MPI_Test
 * to move it along. With one rank per core there is no idle core to hide the sums under, so
 * what counts is that no rank sits idle while work is left: chunks go to whichever rank is
 * free (a rank that finished backward first sums the earlier buckets while the other still
 * computes), where fixed shares left the first rank waiting and the last one working.
 *
 * Readiness goes through per-bucket words in the window holding the round (the count of
 * synchronised backwards, the same on every rank): a rank's "staged" word says its buffer
 * holds this round's gradients, its "reduced" word how many chunks it summed this round, and
 * rank 0's "claim" word how many chunks are claimed. Release stores and acquire loads order
 * the data against the words. A rank never writes a peer's buffer before that peer has staged
 * this round, and a rank stages the next round only after every chunk of this one arrived, so
 * no round's writes meet another's.
 *
 * Waits poll with the group's deadline (gs__dist_poll), so a dead or hung peer is named as it
 * is for every other collective. MPI_Win_free synchronises all ranks, and ranks drop their
 * DDP objects at different times (Python's collector), so windows are freed together at
 * gs_dist_finalize, in the order they were made (the same on every rank).
 *
 * With a power-of-two world the reduction also averages (times 1/world, exact), so staging is
 * a plain copy; and gradients may live in the buffers (gradient_as_bucket_view): a window
 * freed while tensors over it are alive leaves this rank's part behind as private memory with
 * the same bytes at the same address. */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dist-impl.h"

enum { LINE = 64 };

/* Chunks of a bucket claimed one at a time (a multiple of a line: no two ranks write one). */
enum { CHUNK_BYTES = 64 * 1024 };

/* One bucket's flags in a rank's part of the window, each on its own cache line. Only that
 * rank writes staged and reduced; every rank claims chunks through rank 0's claim. reduced
 * and claim pack the round's low 32 bits above a count (chunks summed by this rank; chunks
 * claimed). */
typedef struct shm_flags {
  _Alignas(LINE) _Atomic uint64_t staged;
  _Alignas(LINE) _Atomic uint64_t reduced;
  _Alignas(LINE) _Atomic uint64_t claim;
} shm_flags;

struct gs__shm {
  MPI_Win win;
  int n_buckets;
  uint64_t round;
  size_t *offset;     /* bucket k's bytes from the start of a rank's part */
  gs_dtype *dtype;    /* bucket k's */
  int64_t *numel;     /* bucket k's elements */
  uint32_t *chunks;   /* bucket k's chunks */
  char **base;        /* every rank's part, as mapped here */
  uint32_t *summed;   /* this round: chunks of bucket k this rank summed */
  bool *mine_done;    /* this round: no chunk of bucket k is left to claim */
  bool *all_done;     /* this round: every chunk of bucket k is summed */
  size_t part_bytes;  /* this rank's part: its flags and buffers */
  double scale;       /* applied to each sum: 1/world (a power of two) or 1 */
  int pins;           /* tensors over this rank's buffers alive (gs__shm_pin) */
  void *kept;         /* this rank's part mapped again after its window was freed */
  size_t kept_bytes;
  gs__shm *next_made; /* windows in the order made, for gs__shm_finalize */
  bool released;      /* its DDP is gone */
  bool finalized;     /* its window is gone */
};

static gs__shm *made; /* oldest first */

static shm_flags *flags_of(const gs__shm *s, int rank, int k) {
  return (shm_flags *)s->base[rank] + k;
}

static void shm_free(gs__shm *s) {
  free(s->offset);
  free(s->dtype);
  free(s->numel);
  free(s->chunks);
  free(s->summed);
  free(s->base);
  free(s->mine_done);
  free(s->all_done);
  free(s);
}

gs__shm *gs__shm_new(const gs_dtype *dtypes, const int64_t *numels, int n_buckets) {
  const char *transport = getenv("GS_DDP_TRANSPORT");
  if (gs__dist.world < 2 || n_buckets == 0 || (transport && strcmp(transport, "mpi") == 0))
    return NULL;
  MPI_Comm node;
  if (MPI_Comm_split_type(gs__dist.data, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
      MPI_SUCCESS)
    return NULL;
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  /* Every rank gets the same node size, so every rank takes the same path. */
  if (node_size != gs__dist.world) {
    MPI_Comm_free(&node);
    return NULL;
  }
  gs__shm *s = calloc(1, sizeof *s);
  size_t total = (size_t)n_buckets * sizeof(shm_flags);
  if (s) {
    s->offset = calloc((size_t)n_buckets, sizeof *s->offset);
    s->dtype = calloc((size_t)n_buckets, sizeof *s->dtype);
    s->numel = calloc((size_t)n_buckets, sizeof *s->numel);
    s->chunks = calloc((size_t)n_buckets, sizeof *s->chunks);
    s->base = calloc((size_t)gs__dist.world, sizeof *s->base);
    s->summed = calloc((size_t)n_buckets, sizeof *s->summed);
    s->mine_done = calloc((size_t)n_buckets, sizeof *s->mine_done);
    s->all_done = calloc((size_t)n_buckets, sizeof *s->all_done);
  }
  int ok = s && s->offset && s->dtype && s->numel && s->chunks && s->base && s->summed &&
           s->mine_done && s->all_done,
      all_ok = 0;
  for (int k = 0; ok && k < n_buckets; k++) {
    size_t es = gs_dtype_size(dtypes[k]), bytes = (size_t)numels[k] * es;
    s->offset[k] = total;
    s->dtype[k] = dtypes[k];
    s->numel[k] = numels[k];
    s->chunks[k] = (uint32_t)((bytes + CHUNK_BYTES - 1) / CHUNK_BYTES);
    total += (bytes + LINE - 1) / LINE * LINE;
  }
  /* Each rank's part on its own pages (noncontiguous), near the rank that writes it. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *mine = NULL;
  MPI_Win win = MPI_WIN_NULL;
  /* The window is made on every rank (it is collective) and then kept only if every rank
   * could also allocate its bookkeeping. */
  /* One line more: MPI's base is only 8-aligned here, and the flags want their own lines. */
  int rc = MPI_Win_allocate_shared((MPI_Aint)((ok ? total : 0) + LINE), 1, info, node, &mine, &win);
  MPI_Info_free(&info);
  ok = ok && rc == MPI_SUCCESS;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, node);
  for (int q = 0; all_ok && q < gs__dist.world; q++) {
    MPI_Aint size;
    int disp;
    void *base = NULL;
    all_ok = MPI_Win_shared_query(win, q, &size, &disp, &base) == MPI_SUCCESS;
    /* Every process maps the segment at a page boundary plus the same offset, so rounding up
     * lands on the same bytes in each. */
    s->base[q] = (char *)(((uintptr_t)base + LINE - 1) / LINE * LINE);
  }
  if (all_ok) {
    memset(s->base[gs__dist.rank], 0, (size_t)n_buckets * sizeof(shm_flags)); /* round 0 */
    atomic_thread_fence(memory_order_release);
  }
  MPI_Barrier(node); /* nobody reads a peer's flags before that peer zeroed them */
  MPI_Comm_free(&node);
  if (!all_ok) {
    if (rc == MPI_SUCCESS)
      MPI_Win_free(&win);
    if (s)
      shm_free(s);
    return NULL;
  }
  s->win = win;
  s->n_buckets = n_buckets;
  s->part_bytes = total;
  int w = gs__dist.world;
  s->scale = (w & (w - 1)) == 0 ? 1.0 / w : 1.0;
  gs__shm **tail = &made;
  while (*tail)
    tail = &(*tail)->next_made;
  *tail = s;
  return s;
}

void *gs__shm_buffer(gs__shm *s, int k) { return s->base[gs__dist.rank] + s->offset[k]; }

bool gs__shm_averages(const gs__shm *s) { return s->scale != 1.0; }

void gs__shm_pin(gs__shm *s) { s->pins++; }

void gs__shm_unpin(void *data, void *shm) {
  (void)data;
  gs__shm *s = shm;
  if (--s->pins > 0 || !s->finalized)
    return;
  if (s->kept) /* the last tensor over a window freed while pinned */
    munmap(s->kept, s->kept_bytes);
  s->kept = NULL;
  if (s->released)
    shm_free(s);
}

void gs__shm_begin_round(gs__shm *s) {
  s->round++;
  memset(s->summed, 0, (size_t)s->n_buckets * sizeof *s->summed);
  memset(s->mine_done, 0, (size_t)s->n_buckets * sizeof *s->mine_done);
  memset(s->all_done, 0, (size_t)s->n_buckets * sizeof *s->all_done);
}

void gs__shm_staged(gs__shm *s, int k) {
  atomic_store_explicit(&flags_of(s, gs__dist.rank, k)->staged, s->round, memory_order_release);
}

/* Whether every rank has staged bucket k this round. */
static bool all_staged(const gs__shm *s, int k) {
  for (int q = 0; q < gs__dist.world; q++)
    if (atomic_load_explicit(&flags_of(s, q, k)->staged, memory_order_acquire) != s->round)
      return false;
  return true;
}

/* The next unclaimed chunk of bucket k this round, now this rank's, or -1 when none is left.
 * The first claim of a round finds the last round's count (every rank has staged this
 * round, so each finished the last); a claim from a round ahead means a peer saw every chunk
 * of this one summed. */
static int64_t claim_chunk(const gs__shm *s, int k) {
  _Atomic uint64_t *c = &flags_of(s, 0, k)->claim;
  uint32_t round = (uint32_t)s->round;
  uint64_t v = atomic_load_explicit(c, memory_order_acquire);
  for (;;) {
    uint32_t seen = (uint32_t)(v >> 32), next = (uint32_t)v;
    if (seen == round - 1)
      next = 0;
    else if (seen != round)
      return -1;
    if (next >= s->chunks[k]) /* every chunk claimed, or none to claim (an empty bucket) */
      return -1;
    uint64_t want = (uint64_t)round << 32 | (next + 1);
    if (atomic_compare_exchange_weak_explicit(c, &v, want, memory_order_acq_rel,
                                              memory_order_acquire))
      return next;
  }
}

/* Whether every chunk of bucket k is summed this round: the ranks' counts add up, or one
 * rank is a round ahead (it saw them add up). */
static bool all_summed(const gs__shm *s, int k) {
  uint32_t round = (uint32_t)s->round;
  uint64_t total = 0;
  for (int q = 0; q < gs__dist.world; q++) {
    uint64_t v = atomic_load_explicit(&flags_of(s, q, k)->reduced, memory_order_acquire);
    if ((uint32_t)(v >> 32) == round + 1)
      return true;
    if ((uint32_t)(v >> 32) == round)
      total += (uint32_t)v;
  }
  return total == s->chunks[k];
}

/* Claims and sums chunks of bucket k until none is left, once every rank staged it. */
static void sum_chunks(gs__shm *s, int k) {
  if (s->mine_done[k] || !all_staged(s, k))
    return;
  int64_t per = CHUNK_BYTES / (int64_t)gs_dtype_size(s->dtype[k]);
  for (int64_t c; (c = claim_chunk(s, k)) >= 0;) {
    int64_t lo = c * per, hi = lo + per < s->numel[k] ? lo + per : s->numel[k];
    gs__shm_sum(s->base, s->offset[k], gs__dist.world, gs__dist.rank, s->dtype[k], lo, hi,
                s->scale);
    s->summed[k]++;
    atomic_store_explicit(&flags_of(s, gs__dist.rank, k)->reduced,
                          (uint64_t)(uint32_t)s->round << 32 | s->summed[k], memory_order_release);
  }
  s->mine_done[k] = true;
}

bool gs__shm_progress(gs__shm *s, int k, bool sum) {
  if (!s->all_done[k]) {
    if (sum)
      sum_chunks(s, k);
    s->all_done[k] = all_summed(s, k);
  }
  return s->all_done[k];
}

void gs__shm_wait(gs__shm *s, int k) {
  double start = gs__dist_now();
  /* While peers sum their chunks of k, what is left of later buckets every rank has staged is
   * summed here. The peers are computing on other cores, or (oversubscribed) want this one:
   * spin briefly, then yield the core, then, for a slow peer, sleep between polls. */
  for (unsigned spins = 0; !gs__shm_progress(s, k, true); spins++) {
    for (int later = k + 1; later < s->n_buckets; later++)
      gs__shm_progress(s, later, true);
    if (spins < 2000)
      continue;
    gs__dist_poll(start);
    if (gs__dist_now() - start < 0.05)
      sched_yield();
    else
      nanosleep(&(struct timespec){0, 100000}, NULL);
  }
}

void gs__shm_release(gs__shm *s) {
  if (s && s->finalized && s->pins == 0)
    shm_free(s);
  else if (s)
    s->released = true; /* the window itself goes at gs__shm_finalize */
}

/* Frees s's window; while tensors over this rank's part are alive, that part is first copied
 * aside and mapped again, private, at the same address once the window is gone. */
static void free_window(gs__shm *s) {
  if (s->pins == 0) {
    MPI_Win_free(&s->win);
    return;
  }
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t lo = (uintptr_t)s->base[gs__dist.rank] / (uintptr_t)page * (uintptr_t)page;
  uintptr_t hi = ((uintptr_t)s->base[gs__dist.rank] + s->part_bytes + (uintptr_t)page - 1) /
                 (uintptr_t)page * (uintptr_t)page;
  void *keep = malloc(hi - lo);
  if (keep)
    memcpy(keep, (void *)lo, hi - lo);
  MPI_Win_free(&s->win);
  void *again = keep ? mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
                     : MAP_FAILED;
  if (again == (void *)lo) {
    memcpy(again, keep, hi - lo);
    s->kept = again;
    s->kept_bytes = hi - lo;
  } else /* a tensor over it would read unmapped memory: say so rather than crash later */
    fprintf(stderr,
            "gradscope: rank %d: DDP gradients that are views of their bucket are still alive "
            "as the process group ends, and their memory could not be kept (%s); clear them "
            "(zero_grad) before gs_dist_finalize\n",
            gs__dist.rank, keep ? "the address range was taken" : "out of memory");
  free(keep);
}

void gs__shm_finalize(void) {
  while (made) {
    gs__shm *s = made;
    made = s->next_made;
    free_window(s);
    s->finalized = true;
    if (s->released && s->pins == 0)
      shm_free(s); /* else its DDP (or its last pinned tensor) frees it */
  }
}
