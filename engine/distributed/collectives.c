/* collectives.c: allreduce, broadcast, allgather, reduce-scatter and barrier on tensors, in
 * place on the storage's bytes. Before the data moves, every rank's description of its
 * tensors (dtype, shape, the call's argument, whether it passed the local checks) goes round
 * in one small allgather: so a call with different shapes on different ranks is refused on
 * every rank with both shapes named, and a rank whose own checks failed makes the others
 * fail too instead of waiting for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist-impl.h"

/* One tensor as a call describes it to the other ranks. */
typedef struct desc {
  int64_t valid; /* passed this rank's checks */
  int64_t dtype, ndim, shape[GS_MAX_DIMS];
  int64_t arg; /* the op, or the root */
} desc;

enum { DESC_WORDS = (int)(sizeof(desc) / sizeof(int64_t)) };

static char *desc_str(char *buf, size_t size, const desc *d) {
  char shape[GS__SHAPE_STR];
  if (!d->valid)
    snprintf(buf, size, "a tensor it refused (see its error)");
  else
    snprintf(buf, size, "%s %s", gs__shape_str(shape, d->shape, (int)d->ndim),
             gs_dtype_name((gs_dtype)d->dtype));
  return buf;
}

/* Checks t for fn locally (reported on this rank) and describes it. A reduction's arg is its
 * op: an average of integers is not an integer, so GS_DIST_AVG takes floats only. */
static desc describe(const char *fn, const char *role, gs_tensor t, int64_t arg, bool reduction) {
  desc d = {.arg = arg};
  if (!gs_is_alive(t)) {
    gs__lookup(t, fn); /* reports the stale handle, naming what disposed it */
    return d;
  }
  gs_dtype dt = gs_dtype_of(t);
  char shape[GS__SHAPE_STR];
  int64_t dims[GS_MAX_DIMS];
  int nd = gs_shape(t, dims);
  if (reduction && arg == GS_DIST_AVG && !gs_dtype_is_floating(dt)) {
    gs__error(GS_ERR_DTYPE, fn,
              "expected %s to be an f32 or f64 tensor for GS_DIST_AVG, got %s %s (an average "
              "of integers is not an integer: reduce with GS_DIST_SUM and divide)",
              role, gs__shape_str(shape, dims, nd), gs_dtype_name(dt));
    return d;
  }
  if (!gs_is_contiguous(t)) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected %s to be contiguous (the collective works on its storage's bytes), "
              "got a strided %s %s: pass gs_contiguous of it",
              role, gs__shape_str(shape, dims, nd), gs_dtype_name(dt));
    return d;
  }
  d.valid = 1;
  d.dtype = dt;
  d.ndim = nd;
  memcpy(d.shape, dims, (size_t)nd * sizeof *dims);
  return d;
}

/* Exchanges n descriptions with every rank and compares them with rank 0's; false (reported
 * alike on every rank) if any rank refused its tensors or described different ones. */
static bool agree(const char *fn, const char *what, const desc *mine, int n,
                  const char *const *roles) {
  int world = gs__dist.world;
  desc *all = calloc((size_t)world * (size_t)n, sizeof *all);
  if (!all) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "could not allocate the shape exchange");
    return false;
  }
  char doing[96];
  snprintf(doing, sizeof doing, "%s (its shape exchange)", what);
  gs__dist_begin(doing);
  MPI_Request req;
  MPI_Iallgather(mine, n * DESC_WORDS, MPI_INT64_T, all, n * DESC_WORDS, MPI_INT64_T,
                 gs__dist.data, &req);
  gs__dist_wait(&req);
  bool ok = true;
  for (int i = 0; i < n; i++)
    if (!mine[i].valid)
      ok = false; /* this rank's own error was reported by describe, and it stands */
  for (int r = 0; r < world && ok; r++) {
    for (int i = 0; i < n && ok; i++) {
      const desc *d = &all[r * n + i], *d0 = &all[i];
      char a[GS__SHAPE_STR + 16], b[GS__SHAPE_STR + 16];
      if (!d->valid) {
        gs__error(GS_ERR_STATE, fn, "rank %d refused its %s (see its error), so no rank runs it",
                  r, roles[i]);
        ok = false;
      } else if (r > 0 && d0->valid && memcmp(d, d0, sizeof *d) != 0) {
        if (d->arg != d0->arg)
          gs__error(GS_ERR_ARGUMENT, fn,
                    "ranks disagree on the call: rank 0 passed %lld but rank %d passed %lld "
                    "(the op or the root must be the same on every rank)",
                    (long long)d0->arg, r, (long long)d->arg);
        else
          gs__error(GS_ERR_SHAPE, fn,
                    "ranks passed different %ss: rank 0 gave %s but rank %d gave %s (every "
                    "rank must pass the same shape and dtype)",
                    roles[i], desc_str(a, sizeof a, d0), r, desc_str(b, sizeof b, d));
        ok = false;
      }
    }
  }
  free(all);
  return ok;
}

/* The bytes a described tensor holds (0 for one a rank refused). */
static uint64_t desc_bytes(const desc *d) {
  if (!d->valid)
    return 0;
  uint64_t n = 1;
  for (int64_t i = 0; i < d->ndim; i++)
    n *= (uint64_t)d->shape[i];
  return n * gs_dtype_size((gs_dtype)d->dtype);
}

/* AVG's division after the sum (describe let only floats through). */
static void scale(void *data, gs_dtype dt, int64_t n, double by) {
  if (dt == GS_F32) {
    float *p = data;
    for (int64_t i = 0; i < n; i++)
      p[i] = (float)((double)p[i] / by);
  } else {
    double *p = data;
    for (int64_t i = 0; i < n; i++)
      p[i] /= by;
  }
}

static bool bad_op(const char *fn, gs_dist_op op) {
  if (op >= GS_DIST_SUM && op <= GS_DIST_PRODUCT)
    return false;
  gs__error(GS_ERR_ARGUMENT, fn,
            "expected GS_DIST_SUM, GS_DIST_AVG, GS_DIST_MAX, GS_DIST_MIN or GS_DIST_PRODUCT, "
            "got %d",
            (int)op);
  return true;
}

/* The MPI reduction behind op (AVG sums, then divides). MPI reduces C bools only by logical
 * operators, so bools take PyTorch's meaning (its NCCL backend's): a sum or max is an or, a
 * product or min an and. */
static MPI_Op mpi_op(gs_dist_op op, gs_dtype dt) {
  if (dt == GS_BOOL)
    return op == GS_DIST_PRODUCT || op == GS_DIST_MIN ? MPI_LAND : MPI_LOR;
  switch (op) {
  case GS_DIST_MAX:
    return MPI_MAX;
  case GS_DIST_MIN:
    return MPI_MIN;
  case GS_DIST_PRODUCT:
    return MPI_PROD;
  default:
    return MPI_SUM;
  }
}

bool gs_dist_all_reduce(gs_tensor t, gs_dist_op op) {
  const char *fn = "dist_all_reduce";
  if (!gs__dist_ready(fn) || bad_op(fn, op))
    return false;
  desc d = describe(fn, "the tensor", t, op, true);
  char what[GS__SHAPE_STR + 32];
  snprintf(what, sizeof what, "allreduce of %s", desc_str((char[GS__SHAPE_STR + 16]){0},
                                                          GS__SHAPE_STR + 16, &d));
  /* Logged from before the shape exchange: a late rank is waited for there. */
  double since = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("allreduce", desc_bytes(&d), -1);
  if (!agree(fn, what, &d, 1, (const char *[]){"tensor"})) {
    gs__dist_trace_end("allreduce", c, desc_bytes(&d), -1, since);
    return false;
  }
  int64_t n = gs_numel(t);
  void *data = gs_data_mut(t);
  gs__dist_begin(what);
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, data, (int)n, gs__dist_mpi_type((gs_dtype)d.dtype),
                 mpi_op(op, (gs_dtype)d.dtype), gs__dist.data, &req);
  gs__dist_traced_wait("allreduce", desc_bytes(&d), &req, c, since);
  if (op == GS_DIST_AVG)
    scale(data, (gs_dtype)d.dtype, n, gs__dist.world);
  return true;
}

bool gs_dist_broadcast(gs_tensor t, int root) {
  const char *fn = "dist_broadcast";
  if (!gs__dist_ready(fn))
    return false;
  if (root < 0 || root >= gs__dist.world) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a root rank in 0..%d, got %d", gs__dist.world - 1,
              root);
    return false;
  }
  desc d = describe(fn, "the tensor", t, root, false);
  char what[GS__SHAPE_STR + 32];
  snprintf(what, sizeof what, "broadcast of %s", desc_str((char[GS__SHAPE_STR + 16]){0},
                                                          GS__SHAPE_STR + 16, &d));
  double since = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("broadcast", desc_bytes(&d), -1);
  if (!agree(fn, what, &d, 1, (const char *[]){"tensor"})) {
    gs__dist_trace_end("broadcast", c, desc_bytes(&d), -1, since);
    return false;
  }
  void *data = gs__dist.rank == root ? (void *)gs_data(t) : gs_data_mut(t);
  gs__dist_begin(what);
  MPI_Request req;
  MPI_Ibcast(data, (int)gs_numel(t), gs__dist_mpi_type((gs_dtype)d.dtype), root, gs__dist.data,
             &req);
  gs__dist_traced_wait("broadcast", desc_bytes(&d), &req, c, since);
  return true;
}

/* big must hold world_size times small's elements, in the same dtype. */
static bool check_sizes(const char *fn, gs_tensor big, const char *big_role, gs_tensor small,
                        const char *small_role) {
  if (gs_dtype_of(big) == gs_dtype_of(small) &&
      gs_numel(big) == gs_numel(small) * gs__dist.world)
    return true;
  gs__error(GS_ERR_SHAPE, fn,
            "expected %s to hold world_size (%d) times %s's %lld elements as %s, got %lld %s",
            big_role, gs__dist.world, small_role, (long long)gs_numel(small),
            gs_dtype_name(gs_dtype_of(small)), (long long)gs_numel(big),
            gs_dtype_name(gs_dtype_of(big)));
  return false;
}

bool gs_dist_all_gather(gs_tensor out, gs_tensor input) {
  const char *fn = "dist_all_gather";
  if (!gs__dist_ready(fn))
    return false;
  desc d[2] = {describe(fn, "out", out, 0, false), describe(fn, "input", input, 0, false)};
  if (d[0].valid && d[1].valid && !check_sizes(fn, out, "out", input, "input"))
    d[0].valid = 0;
  /* Its bytes: what this rank sends (its input). */
  double since = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("allgather", desc_bytes(&d[1]), -1);
  if (!agree(fn, "allgather", d, 2, (const char *[]){"out", "input"})) {
    gs__dist_trace_end("allgather", c, desc_bytes(&d[1]), -1, since);
    return false;
  }
  int64_t n = gs_numel(input);
  MPI_Datatype type = gs__dist_mpi_type((gs_dtype)d[1].dtype);
  void *dst = gs_data_mut(out);
  gs__dist_begin("allgather");
  MPI_Request req;
  MPI_Iallgather(gs_data(input), (int)n, type, dst, (int)n, type, gs__dist.data, &req);
  gs__dist_traced_wait("allgather", desc_bytes(&d[1]), &req, c, since);
  return true;
}

bool gs_dist_reduce_scatter(gs_tensor out, gs_tensor input, gs_dist_op op) {
  const char *fn = "dist_reduce_scatter";
  if (!gs__dist_ready(fn) || bad_op(fn, op))
    return false;
  desc d[2] = {describe(fn, "out", out, op, true), describe(fn, "input", input, op, true)};
  if (d[0].valid && d[1].valid && !check_sizes(fn, input, "input", out, "out"))
    d[1].valid = 0;
  /* Its bytes: what this rank contributes (its input). */
  double since = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("reduce_scatter", desc_bytes(&d[1]), -1);
  if (!agree(fn, "reduce-scatter", d, 2, (const char *[]){"out", "input"})) {
    gs__dist_trace_end("reduce_scatter", c, desc_bytes(&d[1]), -1, since);
    return false;
  }
  int64_t n = gs_numel(out);
  MPI_Datatype type = gs__dist_mpi_type((gs_dtype)d[0].dtype);
  void *dst = gs_data_mut(out);
  gs__dist_begin("reduce-scatter");
  MPI_Request req;
  MPI_Ireduce_scatter_block(gs_data(input), dst, (int)n, type, mpi_op(op, (gs_dtype)d[0].dtype),
                            gs__dist.data, &req);
  gs__dist_traced_wait("reduce_scatter", desc_bytes(&d[1]), &req, c, since);
  if (op == GS_DIST_AVG)
    scale(dst, (gs_dtype)d[0].dtype, n, gs__dist.world);
  return true;
}

bool gs_dist_barrier(void) {
  if (!gs__dist_ready("dist_barrier"))
    return false;
  double since = gs__dist_now();
  uint64_t c = gs__dist_trace_begin("barrier", 0, -1);
  gs__dist_begin("barrier");
  MPI_Request req;
  MPI_Ibarrier(gs__dist.data, &req);
  gs__dist_traced_wait("barrier", 0, &req, c, since);
  return true;
}
