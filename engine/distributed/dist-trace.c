/* dist-trace.c: what the distributed layer writes into the event log (doc/trace-format.md,
 * "Distributed runs"): which rank of which run this process is, and each collective's begin
 * and end with its bytes and how long this rank was blocked in it, so that the logs of one
 * run's ranks can be read together and a straggler found. Every event takes its number
 * whether or not the log is on (trace-writer.h). */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "dist-impl.h"
#include "trace-writer.h"

/* A run id no other run is likely to share: the kernel's random bytes, else the clock and
 * pid (a run id only tells runs apart; it guards nothing). */
static uint64_t new_run_id(void) {
  uint64_t id = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, &id, sizeof id) != (ssize_t)sizeof id)
      id = 0;
    close(fd);
  }
  if (!id) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    id = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 40);
  }
  return id ? id : 1; /* 0 reads as "no run" */
}

static void write_dist_init(void) {
  if (gs__trace_on())
    gs__trace_dist_init((uint32_t)gs__dist.rank, (uint32_t)gs__dist.world, gs__dist.run);
  else
    gs__trace_skip(1);
}

void gs__dist_trace_init(void) {
  gs__dist.run = gs__dist.rank == 0 ? new_run_id() : 0;
  gs__dist_begin("the run id's broadcast from rank 0 (gs_dist_init)");
  MPI_Request req;
  MPI_Ibcast(&gs__dist.run, 1, MPI_UINT64_T, 0, gs__dist.data, &req);
  gs__dist_wait(&req);
  gs__dist.collectives = 0;
  write_dist_init();
}

/* A log opened after gs_dist_init (gs_trace_open, a flight recorder) says which rank of which
 * run it is in its snapshot. */
static uint64_t snapshot_run(void) {
  if (gs__dist.initialized)
    gs__trace_snapshot_event(&(gs_trace_event){.kind = GS_TRACE_DIST_INIT,
                                               .rank = (uint32_t)gs__dist.rank,
                                               .world = (uint32_t)gs__dist.world,
                                               .run = gs__dist.run});
  return 0; /* no tensors or composites */
}

__attribute__((constructor)) static void register_snapshot(void) {
  gs__trace_add_snapshot_hook(5, snapshot_run);
}

uint64_t gs__dist_trace_begin(const char *op, uint64_t nbytes, int bucket) {
  uint64_t c = ++gs__dist.collectives;
  if (gs__trace_on())
    gs__trace_collective(GS_TRACE_COLLECTIVE_BEGIN, op, c, nbytes, bucket, 0);
  else
    gs__trace_skip(1);
  return c;
}

static uint64_t ns_since(double since) {
  double s = gs__dist_now() - since;
  return s > 0 ? (uint64_t)(s * 1e9) : 0;
}

void gs__dist_trace_end(const char *op, uint64_t collective, uint64_t nbytes, int bucket,
                        double since) {
  if (gs__trace_on())
    gs__trace_collective(GS_TRACE_COLLECTIVE_END, op, collective, nbytes, bucket,
                         since > 0 ? ns_since(since) : 0);
  else
    gs__trace_skip(1);
}

void gs__dist_trace_wait(gs_trace_kind kind, const char *what, double since) {
  if (gs__trace_on())
    gs__trace_wait(kind, what, kind == GS_TRACE_WAIT_END ? ns_since(since) : 0);
  else
    gs__trace_skip(1);
}

void gs__dist_trace_bucket_ready(int bucket, uint64_t nbytes, uint64_t in_place,
                                 const uint64_t *params, int n) {
  if (gs__trace_on())
    gs__trace_bucket_ready(bucket, nbytes, in_place, params, n);
  else
    gs__trace_skip(gs__trace_optimizer_events(n));
}

void gs__dist_traced_wait(const char *op, uint64_t nbytes, MPI_Request *req, uint64_t collective,
                          double since) {
  gs__dist_wait(req);
  gs__dist_trace_end(op, collective, nbytes, -1, since);
}
