/* group.c: the process group (gs_dist_init and friends) and the one wait every collective
 * uses. MPI's own waits block forever when a peer dies or hangs; here every wait polls with
 * a deadline and, past it, finds out which rank is missing by asking all of them on a control
 * communicator (ranks that are waiting too answer with what they are waiting in), so the
 * message names the rank instead of leaving the job silently stuck. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist-impl.h"

gs__dist_group gs__dist = {.rank = 0, .world = 1, .timeout_s = 60.0};

enum { TAG_PROBE = 101, TAG_STATUS = 102 };

typedef struct status_msg {
  uint64_t seq;
  char doing[128];
} status_msg;

double gs__dist_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool gs__dist_ready(const char *fn) {
  if (gs__dist.initialized)
    return true;
  gs__error(GS_ERR_STATE, fn, "the process group is not set up: call gs_dist_init first");
  return false;
}

bool gs_dist_init(int *argc, char ***argv) {
  if (gs__dist.initialized)
    return true;
  int already = 0, provided = 0;
  MPI_Initialized(&already);
  if (!already) {
    /* MPI_Iallreduce (DDP's buckets, gs_dist_all_reduce) is libnbc's, whose default schedule
     * on a few ranks reduces to one rank and broadcasts back: 2 transfers in a row. Its ring
     * takes 0.51 ms for the 784-512-512-10 MLP's 2.7 MB on 2 ranks against 0.76 ms, and a DDP
     * step 6.1 ms against 6.9 (bench-ddp). The environment still decides when it sets it. */
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
    /* Funneled: only the thread that called init talks MPI (the loader's threads never do). */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      gs__error(GS_ERR_STATE, "dist_init", "MPI_Init_thread failed: cannot join the MPI job");
      return false;
    }
    gs__dist.we_initialized = true;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &gs__dist.data);
  MPI_Comm_dup(MPI_COMM_WORLD, &gs__dist.ctl);
  /* Errors come back to us (and are reported with the rank) instead of MPI's own abort. */
  MPI_Comm_set_errhandler(gs__dist.data, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(gs__dist.ctl, MPI_ERRORS_RETURN);
  MPI_Comm_rank(gs__dist.data, &gs__dist.rank);
  MPI_Comm_size(gs__dist.data, &gs__dist.world);
  const char *env = getenv("GS_DIST_TIMEOUT");
  if (env && atof(env) > 0)
    gs__dist.timeout_s = atof(env);
  gs__dist.seq = 0;
  gs__dist.initialized = true;
  gs__dist_trace_init();
  return true;
}

void gs_dist_finalize(void) {
  if (!gs__dist.initialized)
    return;
  gs__shm_finalize();
  MPI_Comm_free(&gs__dist.data);
  MPI_Comm_free(&gs__dist.ctl);
  if (gs__dist.we_initialized)
    MPI_Finalize();
  gs__dist.initialized = false;
  gs__dist.we_initialized = false;
  gs__dist.rank = 0;
  gs__dist.world = 1;
}

bool gs_dist_is_initialized(void) { return gs__dist.initialized; }
int gs_dist_rank(void) { return gs__dist.rank; }
int gs_dist_world_size(void) { return gs__dist.world; }

void gs_dist_set_timeout(double seconds) {
  if (!(seconds > 0)) {
    gs__error(GS_ERR_ARGUMENT, "dist_set_timeout", "expected a timeout > 0 seconds, got %g",
              seconds);
    return;
  }
  gs__dist.timeout_s = seconds;
}

double gs_dist_timeout(void) { return gs__dist.timeout_s; }

MPI_Datatype gs__dist_mpi_type(gs_dtype dtype) {
  switch (dtype) {
  case GS_F32:
    return MPI_FLOAT;
  case GS_F64:
    return MPI_DOUBLE;
  case GS_I64:
    return MPI_INT64_T;
  case GS_I32:
    return MPI_INT32_T;
  case GS_I16:
    return MPI_INT16_T;
  case GS_I8:
    return MPI_INT8_T;
  case GS_U8:
    return MPI_UINT8_T;
  case GS_BOOL:
    return MPI_C_BOOL;
  }
  return MPI_BYTE;
}

void gs__dist_begin(const char *what) {
  gs__dist.seq++;
  snprintf(gs__dist.doing, sizeof gs__dist.doing, "%s", what);
}

/* Answers every probe that has arrived: which collective this rank is in. Small messages go
 * eagerly, so the blocking sends here return at once. */
static void answer_probes(void) {
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PROBE, gs__dist.ctl, &flag, &st) != MPI_SUCCESS || !flag)
      return;
    int dummy;
    MPI_Recv(&dummy, 1, MPI_INT, st.MPI_SOURCE, TAG_PROBE, gs__dist.ctl, MPI_STATUS_IGNORE);
    status_msg m = {.seq = gs__dist.seq};
    snprintf(m.doing, sizeof m.doing, "%s", gs__dist.doing);
    MPI_Send(&m, (int)sizeof m, MPI_BYTE, st.MPI_SOURCE, TAG_STATUS, gs__dist.ctl);
  }
}

bool gs__dist_test(MPI_Request *req) {
  int done = 0;
  if (*req == MPI_REQUEST_NULL)
    return true;
  int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "gradscope: error: rank %d: %s #%llu failed in MPI: %s\n", gs__dist.rank,
            gs__dist.doing, (unsigned long long)gs__dist.seq, text);
    gs_trace_flush();
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return done != 0;
}

/* Past the deadline: asks every other rank where it is, waits a short grace for answers, and
 * stops the job with a message naming the ranks that did not answer (dead or hung) and those
 * waiting in another collective (ranks calling collectives in different orders). */
static _Noreturn void diagnose(double waited) {
  int world = gs__dist.world, me = gs__dist.rank;
  status_msg *answers = calloc((size_t)world, sizeof *answers);
  bool *answered = calloc((size_t)world, sizeof *answered);
  int probe = 0;
  for (int q = 0; q < world; q++)
    if (q != me)
      MPI_Send(&probe, 1, MPI_INT, q, TAG_PROBE, gs__dist.ctl);
  double grace = gs__dist.timeout_s < 2.0 ? gs__dist.timeout_s : 2.0;
  double until = gs__dist_now() + grace;
  int missing = world - 1;
  while (missing > 0 && gs__dist_now() < until) {
    answer_probes();
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_STATUS, gs__dist.ctl, &flag, &st);
    if (!flag) {
      nanosleep(&(struct timespec){0, 1000000}, NULL);
      continue;
    }
    status_msg m;
    MPI_Recv(&m, (int)sizeof m, MPI_BYTE, st.MPI_SOURCE, TAG_STATUS, gs__dist.ctl,
             MPI_STATUS_IGNORE);
    if (answers && !answered[st.MPI_SOURCE]) {
      answers[st.MPI_SOURCE] = m;
      answered[st.MPI_SOURCE] = true;
      missing--;
    }
  }
  char msg[2048];
  size_t used = (size_t)snprintf(msg, sizeof msg,
                                 "rank %d: %s (collective #%llu) waited %.1f s for the other "
                                 "ranks (the timeout, gs_dist_set_timeout or GS_DIST_TIMEOUT)",
                                 me, gs__dist.doing, (unsigned long long)gs__dist.seq, waited);
  for (int q = 0; q < world && used < sizeof msg; q++) {
    if (q == me)
      continue;
    if (!answered || !answered[q])
      used += (size_t)snprintf(msg + used, sizeof msg - used,
                               "; rank %d did not answer within %.1f s: it has died or hangs", q,
                               grace);
    else if (answers[q].seq != gs__dist.seq)
      used += (size_t)snprintf(msg + used, sizeof msg - used,
                               "; rank %d is in %s (collective #%llu) instead: the ranks call "
                               "collectives in different orders",
                               q, answers[q].doing, (unsigned long long)answers[q].seq);
  }
  fprintf(stderr, "gradscope: error: %s\n", msg);
  fflush(stderr);
  /* Not through the error handler: the group is broken, nothing can be retried, and the
   * default handler's abort() would leave stopping the others to mpirun's guesswork. */
  gs_trace_flush();
  MPI_Abort(MPI_COMM_WORLD, 1);
  abort(); /* MPI_Abort does not return */
}

void gs__dist_poll(double start) {
  answer_probes();
  double now = gs__dist_now();
  if (now > start + gs__dist.timeout_s)
    diagnose(now - start);
}

void gs__dist_wait(MPI_Request *req) {
  double start = gs__dist_now(), deadline = start + gs__dist.timeout_s;
  /* Open MPI moves a non-blocking collective on only inside MPI_Test, so every pause between
   * polls stalls the transfer on both ranks (a 2.7 MB allreduce took 4x MPI_Allreduce's time
   * with 20-200 us sleeps). Poll, yielding the core between polls to any runnable thread (a
   * computing rank on the same machine gets it; an idle machine returns at once), for the
   * first YIELD_S; only a wait longer than that (a slow peer) sleeps between polls. */
  const double YIELD_S = 0.05;
  for (;;) {
    if (gs__dist_test(req))
      return;
    answer_probes();
    double now = gs__dist_now();
    if (now > deadline)
      diagnose(now - start);
    if (now - start < YIELD_S)
      sched_yield();
    else
      nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}
