/* ddp.c: DistributedDataParallel, with PyTorch's semantics. Parameters that require grad are
 * put in buckets in reverse order (the order backward makes their gradients final); a
 * backward hook copies each final gradient into its bucket's flat buffer and, once a bucket
 * is full, starts its MPI_Iallreduce, buckets strictly in order so that every rank issues the
 * same collectives in the same order (with every rank on one machine, the sum goes through a
 * shared-memory window instead: shm-reduce.c). Backward's end hook fills what never came (zeros
 * with find_unused_parameters, an error naming the parameter without), waits with the group's
 * deadline, and writes the averages back into the gradients (with gradient_as_bucket_view,
 * makes each gradient a view of its bucket instead, so nothing is copied back and the next
 * backward accumulates in place where staging then finds it). Per-bucket times and bytes are
 * kept for traces, statistics and benchmarks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist-impl.h"

typedef struct ddp_param {
  gs_tensor p;
  const char *name; /* module path, valid while the module lives */
  gs_dtype dtype;
  int64_t numel;
  bool requires_grad;
  int bucket;     /* -1 for buffers */
  int64_t offset; /* elements into the bucket's buffer */
  bool ready;
  gs_tensor home;    /* gradient_as_bucket_view: a view of its place in its bucket, where its
                        gradient's formula may write it (hook_grad_home) */
  bool home_claimed; /* this synchronised backward */
} ddp_param;

typedef struct ddp_bucket {
  gs_dtype dtype;
  int *params; /* indices into d->params, in the order they were added */
  int n_params;
  int64_t numel;
  void *buf;
  gs_tensor whole; /* a tensor over buf (gradient_as_bucket_view), whose views are the grads */
  int pending;
  uint64_t in_place; /* this step: bytes of its gradients backward wrote in it, not copied */
  bool launched;
  MPI_Request req;
  double ready_t, launched_t, finished_t;
  uint64_t reductions;
  uint64_t *ids;       /* its parameters' tensor ids, for the log's bucket_ready */
  uint64_t collective; /* its allreduce's number in the log, this step */
  bool ended;          /* its allreduce's end is logged */
} ddp_bucket;

typedef struct id_index {
  uint64_t id;
  int index;
} id_index;

struct gs_ddp {
  gs_module module;
  gs_ddp_options opt;
  int n_params;
  ddp_param *params;
  id_index *by_id; /* params sorted by handle id, for the hook's lookup */
  int n_buckets;
  ddp_bucket *buckets;
  int next_launch;
  int hook;
  bool armed;       /* a forward outside no_sync happened since the last reduction */
  bool in_backward; /* between the begin and end hooks of a synchronised backward */
  bool reentrant;   /* our own backward (setting a gradient) must not be seen */
  bool no_sync;
  uint64_t forwards;
  char forward_site[256];
  double backward_begin;
  gs_ddp_stats stats;
  gs__shm *shm; /* the buckets' window when every rank is on this machine, else NULL */
};

static int cmp_id(const void *a, const void *b) {
  uint64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
  return x < y ? -1 : x > y;
}

static int find_param(const gs_ddp *d, gs_tensor t) {
  id_index key = {.id = t.id};
  const id_index *hit = bsearch(&key, d->by_id, (size_t)d->n_params, sizeof key, cmp_id);
  return hit ? hit->index : -1;
}

/* FNV-1a over bytes: the parameter checksum and the layout fingerprint. */
static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static double since(const gs_ddp *d) { return gs__dist_now() - d->backward_begin; }

static uint64_t bucket_bytes(const ddp_bucket *b) {
  return (uint64_t)b->numel * gs_dtype_size(b->dtype);
}

/* Logs the end of bucket k's allreduce once it is seen complete; waited: since when this
 * rank was blocked on it (0: it completed while backward went on). */
static void bucket_ended(ddp_bucket *b, int k, double waited_since) {
  if (b->ended)
    return;
  b->ended = true;
  gs__dist_trace_end("allreduce", b->collective, bucket_bytes(b), k, waited_since);
}

static void launch_in_order(gs_ddp *d) {
  while (d->next_launch < d->n_buckets && d->buckets[d->next_launch].pending == 0) {
    ddp_bucket *b = &d->buckets[d->next_launch++];
    b->collective = gs__dist_trace_begin("allreduce", bucket_bytes(b), (int)(b - d->buckets));
    b->ended = false;
    if (d->shm) {
      gs__dist_begin("DDP shared-memory reduction of a bucket");
      gs__shm_staged(d->shm, (int)(b - d->buckets));
      b->launched = true;
      b->launched_t = since(d);
      continue;
    }
    char what[96];
    snprintf(what, sizeof what, "DDP allreduce of bucket %d (%lld bytes)",
             (int)(b - d->buckets), (long long)(b->numel * (int64_t)gs_dtype_size(b->dtype)));
    gs__dist_begin(what);
    MPI_Iallreduce(MPI_IN_PLACE, b->buf, (int)b->numel, gs__dist_mpi_type(b->dtype), MPI_SUM,
                   gs__dist.data, &b->req);
    b->launched = true;
    b->launched_t = since(d);
  }
}

static void hook_begin(gs_tensor root, void *user) {
  (void)root;
  gs_ddp *d = user;
  if (d->reentrant || d->no_sync || !d->armed)
    return;
  d->in_backward = true;
  d->backward_begin = gs__dist_now();
  d->stats.hook_s = 0;
  d->stats.staged_copy_bytes = 0;
  d->next_launch = 0;
  if (d->shm)
    gs__shm_begin_round(d->shm);
  for (int i = 0; i < d->n_params; i++)
    d->params[i].ready = d->params[i].home_claimed = false;
  for (int k = 0; k < d->n_buckets; k++) {
    ddp_bucket *b = &d->buckets[k];
    b->pending = b->n_params;
    b->in_place = 0;
    b->launched = false;
    b->req = MPI_REQUEST_NULL;
    b->ready_t = b->launched_t = b->finished_t = 0;
  }
}

/* bucket data [0, n) /= world: the average is taken before the sum, as PyTorch's reducer
 * divides the bucket before its allreduce (exact for a power-of-two world). */
static void divide(void *data, gs_dtype dtype, int64_t n, int world) {
  if (dtype == GS_F32) {
    float *x = data, w = (float)world;
    for (int64_t k = 0; k < n; k++)
      x[k] /= w;
  } else {
    double *x = data, w = world;
    for (int64_t k = 0; k < n; k++)
      x[k] /= w;
  }
}

/* Where parameter i's gradient goes in its bucket. */
static char *slot_of(const gs_ddp *d, int i) {
  const ddp_param *p = &d->params[i];
  return (char *)d->buckets[p->bucket].buf + (size_t)p->offset * gs_dtype_size(p->dtype);
}

/* Whether t is a view of parameter i's place in its bucket (gradient_as_bucket_view). */
static bool in_its_slot(const gs_ddp *d, int i, gs_tensor t) {
  return t.id && d->opt.gradient_as_bucket_view && gs_is_contiguous(t) &&
         gs_data(t) == slot_of(d, i);
}

/* Puts a parameter's gradient divided by the world size (or zeros) in its place in its
 * bucket; undivided when the shared-memory reduction averages. */
static void stage(gs_ddp *d, int i, gs_tensor grad) {
  ddp_param *p = &d->params[i];
  ddp_bucket *b = &d->buckets[p->bucket];
  size_t es = gs_dtype_size(p->dtype);
  char *dst = slot_of(d, i);
  bool averaged = d->shm && gs__shm_averages(d->shm);
  bool in_place = in_its_slot(d, i, grad);
  if (in_place)
    b->in_place += (uint64_t)p->numel * es;
  else
    d->stats.staged_copy_bytes += p->numel * (int64_t)es;
  if (in_place) { /* accumulated or written in place, in its bucket already */
    if (!averaged)
      divide(dst, p->dtype, p->numel, gs__dist.world);
  } else if (grad.id && gs_is_contiguous(grad) && averaged) {
    memcpy(dst, gs_data(grad), (size_t)p->numel * es);
  } else if (grad.id && gs_is_contiguous(grad) && p->dtype == GS_F32) {
    const float *src = gs_data(grad);
    float *out = (float *)dst, w = (float)gs__dist.world;
    for (int64_t k = 0; k < p->numel; k++) /* one pass: copy and divide */
      out[k] = src[k] / w;
  } else if (grad.id) {
    gs_copy_to(grad, dst, (size_t)p->numel * es);
    if (!averaged)
      divide(dst, p->dtype, p->numel, gs__dist.world);
  } else {
    gs_tensor old = gs_grad(p->p);
    if (in_its_slot(d, i, old)) { /* unused now: its earlier gradient leaves the bucket */
      int64_t shape[GS_MAX_DIMS];
      int nd = gs_shape(p->p, shape);
      gs_set_grad(p->p, gs_from_data(p->dtype, shape, nd, gs_data(old)));
    }
    memset(dst, 0, (size_t)p->numel * es);
  }
  p->ready = true;
  if (--b->pending == 0) {
    b->ready_t = since(d);
    gs__dist_trace_bucket_ready(p->bucket, bucket_bytes(b), b->in_place, b->ids, b->n_params);
  }
}

/* Parameter i's final gradient: staged, and whatever it completes started and moved on. */
static void hook_work(gs_ddp *d, int i, gs_tensor grad) {
  stage(d, i, grad);
  launch_in_order(d);
  if (d->shm) {
    /* Only notes what peers summed: summing here would take this rank's core from its
     * backward, which every rank waits for, while a rank that finished first has nothing else
     * to do (it sums what every rank has staged as it waits: shm-reduce.c). */
    for (int k = 0; k < d->next_launch; k++) {
      ddp_bucket *b = &d->buckets[k];
      if (!b->ended && gs__shm_progress(d->shm, k, false))
        bucket_ended(b, k, 0);
    }
    return;
  }
  /* Open MPI moves non-blocking collectives along only inside MPI calls: one test of the
   * oldest running bucket per gradient keeps them going while backward computes. */
  for (int k = 0; k < d->next_launch; k++)
    if (d->buckets[k].req != MPI_REQUEST_NULL) {
      if (gs__dist_test(&d->buckets[k].req))
        bucket_ended(&d->buckets[k], k, 0);
      break;
    }
}

static void hook_grad_ready(gs_tensor leaf, gs_tensor grad, void *user) {
  gs_ddp *d = user;
  if (!d->in_backward)
    return;
  int i = find_param(d, leaf);
  if (i < 0 || d->params[i].ready || d->params[i].bucket < 0)
    return;
  double t = gs__dist_now();
  hook_work(d, i, grad);
  d->stats.hook_s += gs__dist_now() - t;
}

/* gradient_as_bucket_view: a parameter's place in its bucket is where the formula of its
 * gradient may write it (the weight gradient's gemm), once a synchronised backward and only
 * while it has no gradient (gs_backward_hooks.grad_home); staging then copies nothing. */
static gs_tensor hook_grad_home(gs_tensor leaf, bool claim, void *user) {
  gs_ddp *d = user;
  if (!d->in_backward || !d->opt.gradient_as_bucket_view)
    return GS_NO_TENSOR;
  int i = find_param(d, leaf);
  if (i < 0 || d->params[i].bucket < 0 || !d->params[i].home.id || d->params[i].ready)
    return GS_NO_TENSOR;
  ddp_param *p = &d->params[i];
  if (!claim)
    return p->home_claimed ? p->home : GS_NO_TENSOR;
  if (p->home_claimed)
    return GS_NO_TENSOR; /* a second path into it: the engine sums the two as usual */
  p->home_claimed = true;
  return p->home;
}

/* gradient_as_bucket_view: makes parameter i's gradient the view of its place in its bucket
 * (which holds the average now). */
static void grad_as_view(gs_ddp *d, int i) {
  ddp_param *p = &d->params[i];
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(p->p, shape);
  gs_tensor part = gs_narrow(d->buckets[p->bucket].whole, 0, p->offset, p->numel);
  gs_tensor view = gs_view(part, shape, nd);
  gs_dispose(part);
  if (gs_set_grad(p->p, view) != 0)
    gs_dispose(view);
}

/* Writes the average in the bucket (divided before the sum) into parameter i's gradient. */
static void write_back(gs_ddp *d, int i, const int64_t *global_used) {
  ddp_param *p = &d->params[i];
  ddp_bucket *b = &d->buckets[p->bucket];
  size_t es = gs_dtype_size(p->dtype);
  const char *src = (const char *)b->buf + (size_t)p->offset * es;
  gs_tensor g = gs_grad(p->p);
  if (in_its_slot(d, i, g))
    return; /* the gradient is the average already */
  if (d->opt.gradient_as_bucket_view && (g.id || (global_used && global_used[i] != 0))) {
    grad_as_view(d, i); /* used here or elsewhere: the average, where it lies */
    return;
  }
  if (g.id && gs_is_contiguous(g)) {
    memcpy(gs__data_mut_as(g, "ddp_average_"), src, (size_t)p->numel * es);
    return;
  }
  if (g.id || !global_used || global_used[i] == 0)
    return; /* unused on every rank: its gradient stays as it was, as in PyTorch */
  /* Unused here but used elsewhere: the average becomes this rank's gradient, through a
   * backward from the leaf itself (which accumulates its seed into the leaf's grad). */
  int64_t shape[GS_MAX_DIMS];
  int nd = gs_shape(p->p, shape);
  gs_tensor avg = gs_from_data(p->dtype, shape, nd, src);
  d->reentrant = true;
  gs_backward_with(p->p, avg, false);
  d->reentrant = false;
  gs_dispose(avg);
}

static void finish(gs_ddp *d) {
  if (!d->in_backward)
    return;
  d->in_backward = false;
  d->armed = false;
  /* Parameters no gradient reached: zeros, so the collectives stay matched on every rank
   * whatever happens here. Without find_unused_parameters that is reported as an error. */
  char names[1024] = "";
  size_t used = 0;
  int n_unused = 0;
  for (int i = 0; i < d->n_params; i++) {
    ddp_param *p = &d->params[i];
    if (p->bucket < 0 || p->ready)
      continue;
    stage(d, i, GS_NO_TENSOR);
    if (!d->opt.find_unused_parameters && used < sizeof names) {
      char shape[GS__SHAPE_STR];
      int64_t dims[GS_MAX_DIMS];
      int nd = gs_shape(p->p, dims);
      used += (size_t)snprintf(names + used, sizeof names - used, "%s'%s' %s %s",
                               n_unused ? ", " : "", p->name, gs__shape_str(shape, dims, nd),
                               gs_dtype_name(p->dtype));
    }
    n_unused++;
  }
  launch_in_order(d);
  double wait_begin = gs__dist_now();
  static const char waiting_for[] = "DDP's bucket allreduces";
  gs__dist_trace_wait(GS_TRACE_WAIT_BEGIN, waiting_for, wait_begin);
  for (int k = 0; k < d->n_buckets; k++) {
    ddp_bucket *b = &d->buckets[k];
    char what[96];
    snprintf(what, sizeof what, "the wait for DDP bucket %d's allreduce", k);
    snprintf(gs__dist.doing, sizeof gs__dist.doing, "%s", what);
    double bucket_wait = gs__dist_now();
    if (d->shm)
      gs__shm_wait(d->shm, k);
    else
      gs__dist_wait(&b->req);
    bucket_ended(b, k, bucket_wait);
    b->finished_t = since(d);
    b->reductions++;
    d->stats.bytes_reduced += (uint64_t)(b->numel * (int64_t)gs_dtype_size(b->dtype));
  }
  /* With find_unused_parameters, which parameters were used anywhere: one small allreduce. */
  int64_t *global_used = NULL;
  if (d->opt.find_unused_parameters) {
    global_used = calloc((size_t)d->n_params, sizeof *global_used);
    for (int i = 0; i < d->n_params && global_used; i++)
      global_used[i] = gs_grad(d->params[i].p).id != 0;
    if (global_used) {
      MPI_Request req;
      uint64_t bytes = (uint64_t)d->n_params * sizeof *global_used;
      double t = gs__dist_now();
      uint64_t c = gs__dist_trace_begin("allreduce", bytes, -1);
      gs__dist_begin("DDP exchange of which parameters were used");
      MPI_Iallreduce(MPI_IN_PLACE, global_used, d->n_params, MPI_INT64_T, MPI_SUM,
                     gs__dist.data, &req);
      gs__dist_traced_wait("allreduce", bytes, &req, c, t);
    }
  }
  d->stats.wait_s = gs__dist_now() - wait_begin;
  gs__dist_trace_wait(GS_TRACE_WAIT_END, waiting_for, wait_begin);
  for (int i = 0; i < d->n_params; i++)
    if (d->params[i].bucket >= 0)
      write_back(d, i, global_used);
  free(global_used);
  d->stats.steps++;
  d->stats.backward_s = since(d);
  if (n_unused && !d->opt.find_unused_parameters)
    gs__error(GS_ERR_STATE, "ddp_backward",
              "rank %d: %d parameter%s got no gradient in this backward: %s (forward at %s). "
              "DistributedDataParallel expects every parameter to take part in the loss; "
              "construct it with find_unused_parameters to let unused ones contribute zeros",
              gs__dist.rank, n_unused, n_unused == 1 ? "" : "s", names, d->forward_site);
}

static void hook_end(gs_tensor root, void *user) {
  (void)root;
  gs_ddp *d = user;
  if (!d->reentrant)
    finish(d);
}

/* Every rank must wrap the same parameters: compare a fingerprint of names, dtypes and shapes
 * and name the first parameter that differs. */
static bool same_layout(gs_ddp *d) {
  const char *fn = "ddp_new";
  int world = gs__dist.world;
  int64_t n = d->n_params;
  int64_t *counts = calloc((size_t)world, sizeof *counts);
  MPI_Request req;
  double t = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("allgather", sizeof n, -1);
  gs__dist_begin("DDP construction (parameter count)");
  MPI_Iallgather(&n, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, gs__dist.data, &req);
  gs__dist_traced_wait("allgather", sizeof n, &req, c, t);
  for (int r = 0; r < world; r++)
    if (counts[r] != n) {
      gs__error(GS_ERR_SHAPE, fn,
                "ranks wrap different modules: rank %d has %lld parameters but rank %d has "
                "%lld",
                gs__dist.rank, (long long)n, r, (long long)counts[r]);
      free(counts);
      return false; /* every rank sees the same counts, so all stop here */
    }
  free(counts);
  uint64_t *mine = calloc((size_t)n + 1, sizeof *mine);
  uint64_t *all = calloc(((size_t)n + 1) * (size_t)world, sizeof *all);
  for (int i = 0; i < n; i++) {
    int64_t dims[GS_MAX_DIMS];
    int nd = gs_shape(d->params[i].p, dims);
    uint64_t h = fnv(0xcbf29ce484222325ull, d->params[i].name, strlen(d->params[i].name));
    h = fnv(h, &d->params[i].dtype, sizeof d->params[i].dtype);
    h = fnv(h, dims, (size_t)nd * sizeof *dims);
    mine[i] = fnv(h, &d->params[i].requires_grad, 1);
  }
  t = gs__dist_now();
  c = gs__dist_trace_begin("allgather", (uint64_t)n * sizeof *mine, -1);
  gs__dist_begin("DDP construction (parameter layout)");
  MPI_Iallgather(mine, (int)n, MPI_UINT64_T, all, (int)n, MPI_UINT64_T, gs__dist.data, &req);
  gs__dist_traced_wait("allgather", (uint64_t)n * sizeof *mine, &req, c, t);
  bool ok = true;
  for (int r = 0; r < world && ok; r++)
    for (int i = 0; i < n && ok; i++)
      if (all[(size_t)r * (size_t)n + (size_t)i] != mine[i]) {
        char shape[GS__SHAPE_STR];
        int64_t dims[GS_MAX_DIMS];
        int nd = gs_shape(d->params[i].p, dims);
        gs__error(GS_ERR_SHAPE, fn,
                  "ranks wrap different modules: parameter %d is '%s' %s %s here (rank %d) "
                  "but differs in name, shape, dtype or requires_grad on rank %d",
                  i, d->params[i].name, gs__shape_str(shape, dims, nd),
                  gs_dtype_name(d->params[i].dtype), gs__dist.rank, r);
        ok = false;
      }
  free(mine);
  free(all);
  return ok;
}

/* Broadcasts the parameters (buffers_only: those that do not require grad) from rank 0. */
static void broadcast_from_0(gs_ddp *d, bool buffers_only, const char *what) {
  gs_no_grad_begin(); /* parameters are leaves that require grad: written under no_grad */
  for (int i = 0; i < d->n_params; i++) {
    ddp_param *p = &d->params[i];
    if (buffers_only && p->requires_grad)
      continue;
    void *data =
        gs__dist.rank == 0 ? (void *)gs_data(p->p) : gs__data_mut_as(p->p, "ddp_broadcast_");
    size_t bytes = (size_t)p->numel * gs_dtype_size(p->dtype);
    double t = gs__dist_now();
    uint64_t c = gs__dist_trace_begin("broadcast", bytes, -1);
    gs__dist_begin(what);
    MPI_Request req;
    MPI_Ibcast(data, (int)bytes, MPI_BYTE, 0, gs__dist.data, &req);
    gs__dist_traced_wait("broadcast", bytes, &req, c, t);
  }
  gs_no_grad_end();
}

static void free_buffer(void *data, void *user) {
  (void)user;
  free(data);
}

/* gradient_as_bucket_view: the tensor over b's buffer that the gradients will be views of. Its
 * bytes are seen outside (other ranks write the sums into them), so a clone of a gradient
 * copies instead of sharing them copy-on-write; and the buffer outlives the DDP while a view
 * does (a window is then kept mapped, a malloc'd buffer freed with the last view). */
static bool bucket_tensor(gs_ddp *d, ddp_bucket *b) {
  if (d->shm)
    gs__shm_pin(d->shm);
  b->whole = gs_from_blob(b->dtype, (int64_t[]){b->numel}, 1, NULL, b->buf,
                          d->shm ? gs__shm_unpin : free_buffer, d->shm);
  if (!b->whole.id) {
    if (d->shm)
      gs__shm_unpin(NULL, d->shm);
    return false;
  }
  gs_detach_from_scopes(b->whole); /* the DDP's, whatever scope it was made in */
  gs__lookup(b->whole, "ddp_new")->storage->buffer->seen_outside = true;
  return true;
}

/* Buckets as PyTorch's compute_bucket_assignment_by_size: parameters in reverse order, one
 * open bucket per dtype, closed once it reaches its limit: 1 MiB for a dtype's first bucket
 * (so the first allreduce starts early), bucket_cap_mb after. */
static bool make_buckets(gs_ddp *d) {
  double cap = (d->opt.bucket_cap_mb > 0 ? d->opt.bucket_cap_mb : 25.0) * 1024 * 1024;
  double first_cap = cap < 1024 * 1024 ? cap : 1024 * 1024;
  d->buckets = calloc((size_t)d->n_params + 1, sizeof *d->buckets);
  if (!d->buckets)
    return false;
  int open[GS_DTYPE_COUNT], closed[GS_DTYPE_COUNT];
  for (int t = 0; t < GS_DTYPE_COUNT; t++)
    open[t] = -1, closed[t] = 0;
  for (int i = d->n_params - 1; i >= 0; i--) {
    ddp_param *p = &d->params[i];
    if (!p->requires_grad)
      continue;
    int t = p->dtype;
    if (open[t] < 0) {
      open[t] = d->n_buckets++;
      d->buckets[open[t]] = (ddp_bucket){.dtype = p->dtype, .req = MPI_REQUEST_NULL};
      d->buckets[open[t]].params = calloc((size_t)d->n_params, sizeof(int));
      if (!d->buckets[open[t]].params)
        return false;
    }
    ddp_bucket *b = &d->buckets[open[t]];
    p->bucket = open[t];
    p->offset = b->numel;
    b->params[b->n_params++] = i;
    b->numel += p->numel;
    double limit = closed[t] == 0 ? first_cap : cap;
    if ((double)b->numel * (double)gs_dtype_size(b->dtype) >= limit) {
      open[t] = -1;
      closed[t]++;
    }
  }
  gs_dtype *dtypes = calloc((size_t)d->n_buckets + 1, sizeof *dtypes);
  int64_t *numels = calloc((size_t)d->n_buckets + 1, sizeof *numels);
  if (!dtypes || !numels) {
    free(dtypes);
    free(numels);
    return false;
  }
  for (int k = 0; k < d->n_buckets; k++) {
    dtypes[k] = d->buckets[k].dtype;
    numels[k] = d->buckets[k].numel;
  }
  d->shm = gs__shm_new(dtypes, numels, d->n_buckets);
  free(dtypes);
  free(numels);
  for (int k = 0; k < d->n_buckets; k++) {
    ddp_bucket *b = &d->buckets[k];
    b->buf =
        d->shm ? gs__shm_buffer(d->shm, k) : malloc((size_t)b->numel * gs_dtype_size(b->dtype));
    b->ids = calloc((size_t)b->n_params, sizeof *b->ids);
    if (!b->buf || !b->ids)
      return false;
    if (d->opt.gradient_as_bucket_view && !bucket_tensor(d, b))
      return false;
    for (int j = 0; j < b->n_params; j++)
      b->ids[j] = d->params[b->params[j]].p.id;
  }
  for (int i = 0; d->opt.gradient_as_bucket_view && i < d->n_params; i++) {
    ddp_param *p = &d->params[i];
    if (p->bucket < 0)
      continue;
    int64_t shape[GS_MAX_DIMS];
    int nd = gs_shape(p->p, shape);
    gs_tensor part = gs_narrow(d->buckets[p->bucket].whole, 0, p->offset, p->numel);
    p->home = part.id ? gs_view(part, shape, nd) : GS_NO_TENSOR;
    gs_dispose(part);
    if (!p->home.id)
      return false;
    gs_detach_from_scopes(p->home); /* the DDP's, as its bucket's tensor */
  }
  return true;
}

void gs_ddp_free(gs_ddp *d) {
  if (!d)
    return;
  if (d->hook)
    gs_backward_hooks_remove(d->hook);
  for (int i = 0; i < d->n_params && d->params; i++)
    if (d->params[i].home.id)
      gs_dispose(d->params[i].home);
  for (int k = 0; k < d->n_buckets; k++) {
    free(d->buckets[k].params);
    if (d->buckets[k].whole.id) /* its buffer goes with the last tensor over it */
      gs_dispose(d->buckets[k].whole);
    else if (!d->shm)
      free(d->buckets[k].buf);
    free(d->buckets[k].ids);
  }
  gs__shm_release(d->shm);
  free(d->buckets);
  free(d->params);
  free(d->by_id);
  free(d);
}

gs_ddp *gs_ddp_new(gs_module module, const gs_ddp_options *options) {
  const char *fn = "ddp_new";
  if (!gs__dist_ready(fn))
    return NULL;
  int n = gs_module_named_parameters(module, NULL, NULL, 0);
  if (n < 0)
    return NULL; /* the stale module was reported */
  gs_ddp *d = calloc(1, sizeof *d);
  if (!d)
    return NULL;
  d->module = module;
  if (options)
    d->opt = *options;
  if (d->opt.bucket_cap_mb < 0 || d->opt.check_every < 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected bucket_cap_mb >= 0 and check_every >= 0, got %g and %d",
              d->opt.bucket_cap_mb, d->opt.check_every);
    free(d);
    return NULL;
  }
  d->n_params = n;
  d->params = calloc((size_t)n + 1, sizeof *d->params);
  d->by_id = calloc((size_t)n + 1, sizeof *d->by_id);
  gs_tensor *ts = calloc((size_t)n + 1, sizeof *ts);
  const char **names = calloc((size_t)n + 1, sizeof *names);
  if (!d->params || !d->by_id || !ts || !names) {
    free(ts);
    free(names);
    gs_ddp_free(d);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the DDP bookkeeping");
    return NULL;
  }
  gs_module_named_parameters(module, ts, names, n);
  for (int i = 0; i < n; i++) {
    ddp_param *p = &d->params[i];
    p->p = ts[i];
    p->name = names[i];
    p->dtype = gs_dtype_of(ts[i]);
    p->numel = gs_numel(ts[i]);
    p->requires_grad = gs_requires_grad(ts[i]);
    p->bucket = -1;
    d->by_id[i] = (id_index){ts[i].id, i};
  }
  free(ts);
  free(names);
  qsort(d->by_id, (size_t)n, sizeof *d->by_id, cmp_id);
  for (int i = 0; i < n; i++) {
    ddp_param *p = &d->params[i];
    if (p->requires_grad && p->dtype != GS_F32 && p->dtype != GS_F64) {
      gs__error(GS_ERR_DTYPE, fn, "parameter '%s' is %s: only f32 and f64 gradients can be "
                "averaged", p->name, gs_dtype_name(p->dtype));
      gs_ddp_free(d);
      return NULL;
    }
  }
  if (!same_layout(d)) {
    gs_ddp_free(d);
    return NULL;
  }
  broadcast_from_0(d, false, "DDP construction (broadcast of the parameters from rank 0)");
  if (!make_buckets(d)) {
    gs_ddp_free(d);
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the gradient buckets");
    return NULL;
  }
  d->stats.n_buckets = d->n_buckets;
  d->stats.shared_memory = d->shm != NULL;
  d->hook = gs_backward_hooks_add(&(gs_backward_hooks){.begin = hook_begin,
                                                       .grad_ready = hook_grad_ready,
                                                       .end = hook_end,
                                                       .grad_home = hook_grad_home},
                                  d);
  if (!d->hook) {
    gs_ddp_free(d);
    return NULL;
  }
  return d;
}

gs_module gs_ddp_module(const gs_ddp *d) { return d ? d->module : GS_NO_MODULE; }

/* Compares a checksum of every parameter across ranks; false after naming those that
 * differ from rank 0's (every rank reports the same). */
static bool check_drift(gs_ddp *d) {
  int world = gs__dist.world, n = d->n_params;
  uint64_t *mine = calloc((size_t)n + 1, sizeof *mine);
  uint64_t *all = calloc(((size_t)n + 1) * (size_t)world, sizeof *all);
  if (!mine || !all) {
    free(mine);
    free(all);
    return true;
  }
  for (int i = 0; i < n; i++) {
    size_t bytes = (size_t)d->params[i].numel * gs_dtype_size(d->params[i].dtype);
    mine[i] = fnv(0xcbf29ce484222325ull, gs_data(d->params[i].p), bytes);
  }
  MPI_Request req;
  double t = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("allgather", (uint64_t)n * sizeof *mine, -1);
  gs__dist_begin("DDP parameter checksum exchange");
  MPI_Iallgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, gs__dist.data, &req);
  gs__dist_traced_wait("allgather", (uint64_t)n * sizeof *mine, &req, c, t);
  char msg[1024] = "";
  size_t used = 0;
  int bad = 0;
  for (int i = 0; i < n; i++)
    for (int r = 1; r < world; r++)
      if (all[(size_t)r * (size_t)n + (size_t)i] != all[i]) {
        if (used < sizeof msg)
          used += (size_t)snprintf(msg + used, sizeof msg - used, "%s'%s' on rank %d",
                                   bad ? ", " : "", d->params[i].name, r);
        bad++;
      }
  free(mine);
  free(all);
  if (!bad)
    return true;
  gs__error(GS_ERR_STATE, "ddp_forward",
            "parameters drifted apart across ranks by forward %llu: %s differ%s from rank 0's. "
            "Every rank must apply the same update (same optimizer and options, no update "
            "outside DDP's averaged gradients)",
            (unsigned long long)d->forwards, msg, bad == 1 ? "s" : "");
  return false;
}

bool gs_ddp_before_forward_at(gs_ddp *d, const char *file, int line) {
  const char *fn = "ddp_forward";
  if (!d) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a DDP, got NULL");
    return false;
  }
  d->forwards++;
  if (d->opt.check_every > 0 && d->forwards % (uint64_t)d->opt.check_every == 0 &&
      !check_drift(d))
    return false;
  if (!d->opt.no_broadcast_buffers)
    broadcast_from_0(d, true, "DDP broadcast of the buffers from rank 0");
  snprintf(d->forward_site, sizeof d->forward_site, "%s:%d", file ? file : "?", line);
  d->armed = !d->no_sync;
  return true;
}

gs_tensor gs_ddp_forward_at(gs_ddp *d, gs_tensor x, const char *file, int line) {
  if (!gs_ddp_before_forward_at(d, file, line))
    return GS_NO_TENSOR;
  return gs_module_forward(d->module, x);
}

void gs_ddp_no_sync_begin(gs_ddp *d) {
  if (d)
    d->no_sync = true;
}

void gs_ddp_no_sync_end(gs_ddp *d) {
  if (d)
    d->no_sync = false;
}

bool gs_ddp_wait(gs_ddp *d) {
  if (!d)
    return false;
  finish(d); /* nothing left when backward's end already finished */
  return true;
}

int gs_ddp_bucket_count(const gs_ddp *d) { return d ? d->n_buckets : 0; }

bool gs_ddp_bucket_info_at(const gs_ddp *d, int i, gs_ddp_bucket_info *info) {
  if (!d || !info || i < 0 || i >= d->n_buckets)
    return false;
  const ddp_bucket *b = &d->buckets[i];
  *info = (gs_ddp_bucket_info){
      .n_params = b->n_params,
      .first_param = b->params[0],
      .dtype = b->dtype,
      .bytes = b->numel * (int64_t)gs_dtype_size(b->dtype),
      .ready_s = b->ready_t,
      .launched_s = b->launched_t,
      .finished_s = b->finished_t,
      .reductions = b->reductions,
  };
  return true;
}

gs_ddp_stats gs_ddp_get_stats(const gs_ddp *d) { return d ? d->stats : (gs_ddp_stats){0}; }
