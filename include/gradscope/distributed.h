/* gradscope/distributed.h: data-parallel training over Open MPI (engine/distributed).
 *
 * Processes started by `mpirun -np N prog` form one group: gs_dist_init joins it, each gets a
 * rank 0..N-1. The collectives work in place on contiguous tensors of any dtype, straight on
 * the storage's bytes (no copy); a non-contiguous tensor is an error naming the call, and so
 * is GS_DIST_AVG of an integer or bool tensor. Bools reduce as PyTorch's do: a sum or max is
 * an or, a product or min an and. Each collective first exchanges its tensors' shapes (a small allgather), so a call
 * made with different shapes on different ranks is an error on every rank naming both shapes
 * instead of corrupt data or a hang. Collectives never block forever: they poll with a
 * deadline (gs_dist_set_timeout, default 60 s; GS_DIST_TIMEOUT=SECONDS in the environment),
 * and a rank that does not arrive in time is named: the others ask every rank where it is,
 * print "gradscope: error: rank R: ..." saying which rank did not answer (died or hangs) or
 * waits elsewhere, and stop the whole job with MPI_Abort. Such a timeout cannot be handled by
 * an error handler: the group is broken.
 *
 * DistributedDataParallel (gs_ddp_*) follows PyTorch's torch.nn.parallel.DistributedDataParallel:
 * parameters (and buffers: parameters that do not require grad) are broadcast from rank 0 at
 * construction; gradients go in buckets (reverse parameter order, the first capped at 1 MiB,
 * the rest at bucket_cap_mb) whose non-blocking MPI_Iallreduce starts as soon as every
 * gradient in it is final during backward (gs_backward_hooks), in bucket order on every rank;
 * backward's end waits for all of them and leaves the average in each parameter's grad, so
 * gs_optimizer_step needs nothing more. gs_ddp_no_sync_begin/end skip the reduction for
 * gradient accumulation (the next synchronised backward reduces the sum).
 */
#pragma once

#include "data.h"
#include "scope.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the process group --------------------------------------------------------------- */

/* Joins the MPI job (MPI_Init_thread; argc/argv may be NULL); returns false after reporting
 * if MPI cannot start. Calling it again is harmless. A program started without mpirun is a
 * group of one. */
GS_API bool gs_dist_init(int *argc, char ***argv);
/* Leaves the job (MPI_Finalize). Every rank must call it. */
GS_API void gs_dist_finalize(void);
GS_API bool gs_dist_is_initialized(void);
/* This process's rank and the number of processes; 0 and 1 before gs_dist_init. */
GS_API int gs_dist_rank(void);
GS_API int gs_dist_world_size(void);
/* How long a collective waits for the other ranks before naming the missing one and stopping
 * the job (seconds, > 0). */
GS_API void gs_dist_set_timeout(double seconds);
GS_API double gs_dist_timeout(void);

/* ---- collectives (every rank calls the same ones, in the same order) ------------------ */

typedef enum gs_dist_op {
  GS_DIST_SUM = 0,
  GS_DIST_AVG = 1, /* the sum divided by the world size */
  GS_DIST_MAX = 2, /* elementwise over ranks, as torch's ReduceOp.MAX, MIN and PRODUCT */
  GS_DIST_MIN = 3,
  GS_DIST_PRODUCT = 4,
} gs_dist_op;

/* t becomes the sum (average, largest, smallest, product) of every rank's t. False after
 * reporting. */
GS_API bool gs_dist_all_reduce(gs_tensor t, gs_dist_op op);
/* t becomes root's t on every rank. */
GS_API bool gs_dist_broadcast(gs_tensor t, int root);
/* out (world_size times input's elements, same dtype: as torch's all_gather_into_tensor,
 * e.g. [world * n, ...]) receives every rank's input, rank 0's first. */
GS_API bool gs_dist_all_gather(gs_tensor out, gs_tensor input);
/* input (world_size times out's elements) is reduced over ranks by op and rank r
 * keeps the r-th equal part in out, as torch's reduce_scatter_tensor. */
GS_API bool gs_dist_reduce_scatter(gs_tensor out, gs_tensor input, gs_dist_op op);
/* Returns once every rank has called it (or stops the job at the timeout). */
GS_API bool gs_dist_barrier(void);

/* ---- DistributedDataParallel ---------------------------------------------------------- */

typedef struct gs_ddp gs_ddp;

typedef struct gs_ddp_options {
  double bucket_cap_mb;        /* bucket size cap in MiB (0: PyTorch's 25) */
  bool find_unused_parameters; /* a parameter no gradient reached contributes zeros; without
                                  it that is an error naming the parameter */
  bool no_broadcast_buffers;   /* PyTorch's broadcast_buffers=False: do not broadcast the
                                  buffers from rank 0 at every forward */
  int check_every;             /* every N forwards, compare parameter checksums across ranks
                                  and name those that drifted apart (0: never) */
  bool gradient_as_bucket_view; /* PyTorch's option: after a synchronised backward each
                                   gradient is a view of its bucket (no copy back), and later
                                   backwards add into it there; clones of it are copies */
} gs_ddp_options;

/* Per-bucket figures of the last synchronised backward (for traces, stats and benchmarks). */
typedef struct gs_ddp_bucket_info {
  int n_params;        /* parameters in it */
  int first_param;     /* index (named_parameters order) of its first, i.e. highest, one */
  gs_dtype dtype;
  int64_t bytes;       /* reduced per step */
  double ready_s;      /* when its last gradient was final, seconds since backward began */
  double launched_s;   /* when its allreduce started (it starts in bucket order) */
  double finished_s;   /* when it was seen complete */
  uint64_t reductions; /* allreduces it has run so far */
} gs_ddp_bucket_info;

typedef struct gs_ddp_stats {
  uint64_t steps;          /* synchronised backwards */
  uint64_t bytes_reduced;  /* over all steps */
  double backward_s;       /* the last backward, begin to end */
  double wait_s;           /* of which spent waiting for allreduces at its end */
  double hook_s;           /* of which spent in DDP's gradient hooks before that wait
                              (staging into buckets, starting and moving allreduces on) */
  int64_t staged_copy_bytes; /* gradient bytes the last backward copied into the buckets
                                (not those written there by their formula: with
                                gradient_as_bucket_view, a matrix product's weight gradient) */
  int n_buckets;
  bool shared_memory; /* buckets are summed through a shared-memory window (every rank
                         on this machine; GS_DDP_TRANSPORT=mpi turns it off), not
                         MPI_Iallreduce */
} gs_ddp_stats;

/* Wraps module (borrowed: it must outlive the DDP) after broadcasting its parameters from
 * rank 0. Every rank must pass a module with the same parameter names and shapes (an error
 * naming the first difference otherwise). options NULL: the defaults. NULL on error. */
GS_API gs_ddp *gs_ddp_new(gs_module module, const gs_ddp_options *options);
GS_API void gs_ddp_free(gs_ddp *d);
GS_API gs_module gs_ddp_module(const gs_ddp *d);
/* module's forward on x, after the drift check and buffer broadcast when due. The macro
 * records the call site, which the unused-parameter error names. */
GS_API gs_tensor gs_ddp_forward_at(gs_ddp *d, gs_tensor x, const char *file, int line);
#define gs_ddp_forward(d, x) gs_ddp_forward_at((d), (x), __FILE__, __LINE__)
/* What gs_ddp_forward does before the module's forward (drift check, buffer broadcast, the
 * call site, arming the next backward's reduction), for a forward the caller runs itself: a
 * binding whose modules' forward is not the engine's (Python's nn.Module subclasses). False
 * after reporting. */
GS_API bool gs_ddp_before_forward_at(gs_ddp *d, const char *file, int line);
/* Between begin and end, backwards accumulate gradients locally without communicating
 * (PyTorch's no_sync()). */
GS_API void gs_ddp_no_sync_begin(gs_ddp *d);
GS_API void gs_ddp_no_sync_end(gs_ddp *d);
/* Waits for the reduction of the last backward (done at backward's end already; harmless
 * to call again): for code that wants to say so before gs_optimizer_step. */
GS_API bool gs_ddp_wait(gs_ddp *d);
GS_API int gs_ddp_bucket_count(const gs_ddp *d);
GS_API bool gs_ddp_bucket_info_at(const gs_ddp *d, int i, gs_ddp_bucket_info *info);
GS_API gs_ddp_stats gs_ddp_get_stats(const gs_ddp *d);

/* ---- DistributedSampler ---------------------------------------------------------------- */

/* A dataset (data.h) holding this rank's shard of ds, as torch.utils.data.DistributedSampler:
 * with shuffle, epoch e's order is a permutation of ds drawn from a generator seeded with
 * seed + e (the same on every rank); without, 0..N-1. The order is padded by repeating it
 * from its start to total_size = ceil(N / world) * world, and rank r takes the entries r,
 * r + world, r + 2 world, ...: every rank gets ceil(N / world) samples. ds is borrowed (it
 * and its user data must outlive the sampler). Give the sampler's dataset to a loader without
 * shuffle, and call gs_dist_sampler_set_epoch before each epoch's gs_data_loader_reset. */
typedef struct gs_dist_sampler gs_dist_sampler;
GS_API gs_dist_sampler *gs_dist_sampler_new(const gs_dataset *ds, int rank, int world_size,
                                            bool shuffle, uint64_t seed);
GS_API void gs_dist_sampler_free(gs_dist_sampler *s);
GS_API void gs_dist_sampler_set_epoch(gs_dist_sampler *s, int64_t epoch);
/* PyTorch's drop_last: with it the order is cut (not padded) to a multiple of the world size,
 * floor(N / world) samples per rank; without it (the default) padded as above. */
GS_API void gs_dist_sampler_set_drop_last(gs_dist_sampler *s, bool drop_last);
/* The shard as a dataset (length ceil(N / world)); its item i is ds's item index(i). */
GS_API gs_dataset gs_dist_sampler_dataset(gs_dist_sampler *s);
GS_API int64_t gs_dist_sampler_length(const gs_dist_sampler *s);
/* The dataset index of the shard's i-th sample this epoch, or -1 out of range. */
GS_API int64_t gs_dist_sampler_index(const gs_dist_sampler *s, int64_t i);

#ifdef __cplusplus
}
#endif
