/* dist-impl.h: what the distributed layer's files share: the process group's state and the
 * deadline-polled wait every collective goes through (group.c). */
#pragma once

#include <mpi.h>

#include "core-impl.h"
#include "gradscope/distributed.h"

typedef struct gs__dist_group {
  bool initialized;
  bool we_initialized; /* MPI_Init was ours, so MPI_Finalize is too */
  int rank, world;
  MPI_Comm data; /* collectives on tensors */
  MPI_Comm ctl;  /* where-are-you probes when a wait times out: never mixed with data */
  double timeout_s;
  uint64_t seq;        /* collectives begun on this rank: the same on every rank in step */
  char doing[128];     /* what the current wait is for, as probes are answered */
  uint64_t run;        /* the run's id, rank 0's, broadcast at gs_dist_init */
  uint64_t collectives; /* collectives logged on this rank (their numbers in the log) */
} gs__dist_group;

extern gs__dist_group gs__dist;

/* Seconds on the monotonic clock. */
double gs__dist_now(void);
/* False after reporting (as an error of fn) if gs_dist_init has not run. */
bool gs__dist_ready(const char *fn);
/* Starts collective number ++seq, described for probes ("allreduce of [3, 4] f32"). */
void gs__dist_begin(const char *what);
/* Polls req until it completes, answering other ranks' probes meanwhile. Past the timeout it
 * asks every rank where it is, prints which did not answer or waits elsewhere, and stops the
 * job (MPI_Abort): it returns only when req completed. */
void gs__dist_wait(MPI_Request *req);
/* For a wait that polls something other than an MPI request (shm-reduce.c), begun at start:
 * answers other ranks' probes, and past the timeout diagnoses and stops the job as
 * gs__dist_wait does. */
void gs__dist_poll(double start);
/* One MPI_Test (which also drives Open MPI's progress of non-blocking collectives). */
bool gs__dist_test(MPI_Request *req);
/* The MPI datatype of a floating dtype, or of raw bytes for the others. */
MPI_Datatype gs__dist_mpi_type(gs_dtype dtype);

/* dist-trace.c: the log's side (doc/trace-format.md, "Distributed runs"). */
/* At gs_dist_init, once rank and world are known: rank 0's new run id to every rank, then the
 * dist_init event. */
void gs__dist_trace_init(void);
/* A collective's begin (op: a literal such as "allreduce"; bucket: a DDP bucket, -1 none):
 * returns its number, which its end repeats. */
uint64_t gs__dist_trace_begin(const char *op, uint64_t nbytes, int bucket);
/* Its end; since: when this rank began waiting for it (gs__dist_now), 0 if it did not. */
void gs__dist_trace_end(const char *op, uint64_t collective, uint64_t nbytes, int bucket,
                        double since);
/* A wait for collectives already begun (wait_begin or wait_end; since: its begin). */
void gs__dist_trace_wait(gs_trace_kind kind, const char *what, double since);
void gs__dist_trace_bucket_ready(int bucket, uint64_t nbytes, uint64_t in_place,
                                 const uint64_t *params, int n);
/* gs__dist_wait(req), then the end of collective (begun at since, not a bucket's). */
void gs__dist_traced_wait(const char *op, uint64_t nbytes, MPI_Request *req, uint64_t collective,
                          double since);

/* shm-reduce.c: DDP's bucket allreduce through a shared-memory window when every rank is on
 * this machine. */
typedef struct gs__shm gs__shm;
/* Collective over the group: a window holding n_buckets buffers of numels[k] elements of
 * dtypes[k] (f32 or f64) on every rank, or NULL (the same on every rank) when the ranks span
 * machines, MPI refuses, or GS_DDP_TRANSPORT=mpi asks for MPI_Iallreduce. */
gs__shm *gs__shm_new(const gs_dtype *dtypes, const int64_t *numels, int n_buckets);
/* This rank's buffer of bucket k, where its gradients are staged. */
void *gs__shm_buffer(gs__shm *s, int k);
/* Whether the reduction averages (the sum times 1/world, exact for a power-of-two world, so
 * the same bits as dividing before the sum): then gradients are staged undivided. */
bool gs__shm_averages(const gs__shm *s);
/* Tensors over this rank's buffers (gradient_as_bucket_view) are alive: pin before making
 * one, unpin from its storage's release. A window freed while pinned leaves this rank's part
 * mapped as private memory holding the same bytes, so those tensors stay valid. */
void gs__shm_pin(gs__shm *s);
void gs__shm_unpin(void *data, void *shm);
/* Starts the next synchronised backward (every rank calls it once per reduction). */
void gs__shm_begin_round(gs__shm *s);
/* This rank's bucket k holds this round's gradients. */
void gs__shm_staged(gs__shm *s, int k);
/* Whether every chunk of bucket k is summed into every buffer; with sum, after summing
 * every chunk of it no rank has claimed yet, if every rank has staged it. Never blocks. */
bool gs__shm_progress(gs__shm *s, int k, bool sum);
/* Blocks (with the group's deadline) until gs__shm_progress(s, k) is true, summing what is
 * left of bucket k and of later buckets meanwhile. */
void gs__shm_wait(gs__shm *s, int k);
/* Its DDP is done with it; the window is freed at gs__shm_finalize. */
void gs__shm_release(gs__shm *s);
/* At gs_dist_finalize: frees every window, in the order they were made on every rank. */
void gs__shm_finalize(void);
/* shm-sum.c: elements [lo, hi) of the f32 or f64 buffers at off in every rank's part (base:
 * the parts as mapped here; me: this rank), summed in rank order, times scale, written into
 * all of them. */
void gs__shm_sum(char *const *base, size_t off, int world, int me, gs_dtype dtype, int64_t lo,
                 int64_t hi, double scale);
