/* test-dist.c: the distributed layer under `mpirun -np 2` (tests/common/check-mpi.sh runs it), one
 * mode per test. Plain C with exit codes rather than GLib's TAP: every rank runs the same
 * checks and mpirun's status is the test's.
 *   parity    after K SGD steps DDP's parameters equal a one-process run on the whole batch
 *             (both ranks compute that reference themselves), f64 and f32, with no_sync steps
 *   unused    a parameter that got no gradient is named, and find_unused_parameters allows it
 *   shapes    collectives compute the right values (integer and bool dtypes too) and refuse
 *             mismatched shapes and dtypes
 *   empty     a bucket with no elements (a zero-element f64 parameter beside f32 ones) is
 *             reduced without hanging
 *   drift     parameters changed on one rank are named at the next checked forward
 *   hang      rank 1 sleeps: rank 0 must stop the job naming it (check-mpi.sh times it)
 *   kill      rank 1 kills itself: the job must end non-zero naming it
 *   ddp-hang, ddp-kill   the same between a DDP forward and its backward: rank 0 waits in
 *             the bucket reduction (shared-memory or MPI) and must name rank 1
 * GS_TEST_TRANSPORT=shared-memory or mpi makes parity check which path DDP's buckets took
 * (one machine: shared memory unless GS_DDP_TRANSPORT=mpi; separate hosts: MPI).
 *   sampler   (one process) DistributedSampler's shards as PyTorch's
 *   traced    parity in f64 and the collectives of shapes, for a log per rank
 *             (check-dist-log.sh records it with GS_TRACE=...-%r.gstrace and checks the logs
 *             with test-dist-log: the model's parameters are 664 bytes, STEPS steps)
 *   traced-views  the same with gradient_as_bucket_view */
#include <gradscope/gradscope.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                                     \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "rank %d: FAIL %s:%d: ", gs_dist_rank(), __FILE__, __LINE__);          \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fprintf(stderr, "\n");                                                                 \
      failures++;                                                                            \
    }                                                                                        \
  } while (0)

enum { IN = 6, HIDDEN = 8, OUT = 3, BATCH = 8, STEPS = 6 };

/* The hidden layer's width: HIDDEN, or (wide) enough that each bucket spans several of the
 * shared-memory reduction's 64 KiB chunks, which the ranks claim one at a time. */
static int64_t hidden = HIDDEN;

/* A two-layer tanh MLP in any dtype: children fc1 and fc2 with weight and bias. */
static gs_tensor net_forward(gs_module m, gs_tensor x) {
  gs_scope s = gs_scope_begin("net");
  gs_module fc1 = gs_module_child(m, "fc1"), fc2 = gs_module_child(m, "fc2");
  gs_tensor h = gs_tanh(gs_add(gs_matmul(x, gs_t(gs_module_parameter(fc1, "weight"))),
                               gs_module_parameter(fc1, "bias")));
  gs_tensor y = gs_add(gs_matmul(h, gs_t(gs_module_parameter(fc2, "weight"))),
                       gs_module_parameter(fc2, "bias"));
  gs_move_to_outer(y);
  gs_scope_end(s);
  return y;
}
static const gs_module_type net_type = {"Net", net_forward, NULL};

static gs_module layer(gs_dtype dt, int64_t in, int64_t out, gs_rng *rng) {
  gs_module l = gs_module_new("Layer");
  gs_module_register_parameter(
      l, "weight", gs_parameter_new(gs_uniform(dt, (int64_t[]){out, in}, 2, -0.5, 0.5, rng), true));
  gs_module_register_parameter(
      l, "bias", gs_parameter_new(gs_uniform(dt, (int64_t[]){out}, 1, -0.5, 0.5, rng), true));
  return l;
}

static gs_module net_new(gs_dtype dt, uint64_t seed, bool extra) {
  gs_rng rng;
  gs_rng_seed(&rng, seed);
  gs_module m = gs_module_new_typed(&net_type, NULL);
  gs_module_register_child(m, "fc1", layer(dt, IN, hidden, &rng));
  gs_module fc2 = layer(dt, hidden, OUT, &rng);
  if (extra) /* never used by forward: "fc2.extra" */
    gs_module_register_parameter(
        fc2, "extra", gs_parameter_new(gs_ones(dt, (int64_t[]){OUT}, 1), true));
  gs_module_register_child(m, "fc2", fc2);
  return m;
}

/* The whole batch, the same on every rank. */
static void batch(gs_dtype dt, gs_tensor *x, gs_tensor *y) {
  gs_rng rng;
  gs_rng_seed(&rng, 42);
  *x = gs_normal(dt, (int64_t[]){BATCH, IN}, 2, 0, 1, &rng);
  int64_t labels[BATCH];
  for (int i = 0; i < BATCH; i++)
    labels[i] = (int64_t)(gs_rng_next_u64(&rng) % OUT);
  *y = gs_from_data(GS_I64, (int64_t[]){BATCH}, 1, labels);
}

static gs_optimizer sgd_for(gs_module m) {
  gs_tensor p[8];
  int n = gs_module_named_parameters(m, p, NULL, 8);
  gs_sgd_options o = {.lr = 0.1, .momentum = 0.9};
  return gs_sgd_new(p, n, &o);
}

/* Rows [start, start + n) through the model (or the DDP), loss scaled by factor, backward. */
static void step_on(gs_module m, gs_ddp *ddp, gs_tensor x, gs_tensor y, int64_t start, int64_t n,
                    double factor) {
  gs_scope s = gs_scope_begin("step");
  gs_tensor xs = gs_narrow(x, 0, start, n), ys = gs_narrow(y, 0, start, n);
  gs_tensor logits = ddp ? gs_ddp_forward(ddp, xs) : gs_module_forward(m, xs);
  gs_tensor loss = gs_mul_scalar(gs_cross_entropy(logits, ys, GS_REDUCTION_MEAN, 0.0), factor);
  gs_backward(loss);
  gs_scope_end(s);
}

static double max_diff(gs_module a, gs_module b) {
  gs_tensor pa[8], pb[8];
  int n = gs_module_named_parameters(a, pa, NULL, 8);
  gs_module_named_parameters(b, pb, NULL, 8);
  double worst = 0;
  for (int i = 0; i < n; i++) {
    gs_tensor da = gs_to_dtype(pa[i], GS_F64), db = gs_to_dtype(pb[i], GS_F64);
    const double *x = gs_data(da), *y = gs_data(db);
    for (int64_t k = 0; k < gs_numel(da); k++)
      worst = fmax(worst, fabs(x[k] - y[k]));
    gs_dispose(da);
    gs_dispose(db);
  }
  return worst;
}

/* With gradient_as_bucket_view: each parameter's gradient is a view, and those of one bucket
 * lie one after the other in it, from the last parameter on (one bucket: cap 0). */
static void check_bucket_views(gs_module m, bool one_bucket) {
  gs_tensor p[8];
  int n = gs_module_named_parameters(m, p, NULL, 8);
  for (int i = 0; i < n; i++) {
    gs_tensor g = gs_grad(p[i]);
    CHECK(g.id && gs_view_base(g).id, "parameter %d's gradient is not a view of its bucket", i);
    if (one_bucket && i + 1 < n && g.id && gs_grad(p[i + 1]).id)
      CHECK((const char *)gs_data(gs_grad(p[i + 1])) +
                    gs_numel(p[i + 1]) * (int64_t)gs_dtype_size(gs_dtype_of(g)) ==
                (const char *)gs_data(g),
            "parameter %d's gradient does not follow parameter %d's in the bucket", i, i + 1);
  }
}

/* gradient_as_bucket_view: a parameter whose gradient (a view of a bucket) must stay readable
 * after its DDP is freed and the process group is finalized, and the values it had. */
static gs_module kept_module;
static gs_tensor kept_values;

static void parity(gs_dtype dt, double cap_mb, double tolerance, bool views) {
  int rank = gs_dist_rank(), world = gs_dist_world_size();
  gs_module ref = net_new(dt, 1, false);
  gs_module mine = net_new(dt, 1 + (uint64_t)rank, false); /* rank 0's arrives by broadcast */
  gs_ddp *ddp = gs_ddp_new(mine, &(gs_ddp_options){.bucket_cap_mb = cap_mb,
                                                   .check_every = 2,
                                                   .gradient_as_bucket_view = views});
  CHECK(ddp, "gs_ddp_new: %s", gs_last_error());
  CHECK(max_diff(ref, mine) == 0, "parameters differ from rank 0's after construction");
  gs_optimizer o_ref = sgd_for(ref), o_mine = sgd_for(mine);
  gs_tensor x, y;
  batch(dt, &x, &y);
  int64_t share = BATCH / world;
  for (int k = 0; k < STEPS; k++) {
    step_on(ref, NULL, x, y, 0, BATCH, 1.0);
    if (hidden != HIDDEN && k == 2 && rank == 1)
      usleep(30000);  /* rank 0 waits first, and sums the chunks rank 1 stages as it comes */
    if (k % 2 == 1) { /* gradient accumulation: two halves, the first without communicating */
      gs_ddp_no_sync_begin(ddp);
      step_on(mine, ddp, x, y, rank * share, share / 2, 0.5);
      gs_ddp_no_sync_end(ddp);
      step_on(mine, ddp, x, y, rank * share + share / 2, share / 2, 0.5);
    } else {
      step_on(mine, ddp, x, y, rank * share, share, 1.0);
    }
    CHECK(gs_ddp_wait(ddp), "gs_ddp_wait");
    if (views)
      check_bucket_views(mine, cap_mb == 0);
    if (k % 2 == 0) { /* one backward on gradients zeroed (or none yet) */
      /* With views, the weight gradients' products are written in their buckets: only the
       * biases are copied there. Without, every gradient is. */
      int64_t es = (int64_t)gs_dtype_size(dt),
              all = (IN * hidden + hidden + hidden * OUT + OUT) * es;
      int64_t want = views ? (hidden + OUT) * es : all;
      int64_t copied = gs_ddp_get_stats(ddp).staged_copy_bytes;
      CHECK(copied == want, "step %d copied %lld gradient bytes into the buckets, expected %lld", k,
            (long long)copied, (long long)want);
    }
    gs_optimizer_step(o_ref);
    gs_optimizer_step(o_mine);
    if (!views || k % 3 != 2) { /* else the next backward adds into the gradients: views */
      gs_optimizer_zero_grad(o_ref);
      gs_optimizer_zero_grad(o_mine);
    }
  }
  double diff = max_diff(ref, mine);
  gs_ddp_stats st = gs_ddp_get_stats(ddp);
  if (rank == 0)
    printf("parity_%s_max_abs_diff=%.3g buckets=%d steps=%llu bytes=%llu\n", gs_dtype_name(dt),
           diff, st.n_buckets, (unsigned long long)st.steps,
           (unsigned long long)st.bytes_reduced);
  CHECK(diff <= tolerance, "%s parameters differ from the one-process run by %g (> %g)",
        gs_dtype_name(dt), diff, tolerance);
  const char *want = getenv("GS_TEST_TRANSPORT");
  if (want)
    CHECK(st.shared_memory == (strcmp(want, "shared-memory") == 0),
          "the buckets went through %s, expected %s", st.shared_memory ? "shared memory" : "MPI",
          want);
  CHECK(st.steps == STEPS, "%llu synchronised backwards, expected %d",
        (unsigned long long)st.steps, STEPS);
  if (cap_mb > 0 && cap_mb < 0.001)
    CHECK(st.n_buckets > 1, "a tiny bucket cap should make several buckets, got %d",
          st.n_buckets);
  gs_ddp_bucket_info bi;
  CHECK(gs_ddp_bucket_info_at(ddp, 0, &bi) && bi.first_param == 3 && bi.reductions == STEPS,
        "bucket 0 should start with the last parameter (3) and have run %d times", STEPS);
  if (views && !kept_module.id) { /* one more step whose gradients outlive DDP and the group */
    step_on(mine, ddp, x, y, rank * share, share, 1.0);
    check_bucket_views(mine, cap_mb == 0);
    kept_values =
        gs_to_dtype(gs_grad(gs_module_parameter(gs_module_child(mine, "fc1"), "weight")), GS_F64);
    gs_detach_from_scopes(kept_values);
    kept_module = mine;
    mine = GS_NO_MODULE;
  }
  gs_ddp_free(ddp);
  gs_optimizer_dispose(o_ref);
  gs_optimizer_dispose(o_mine);
  gs_module_dispose(ref);
  if (mine.id)
    gs_module_dispose(mine);
  gs_dispose(x);
  gs_dispose(y);
}

/* Checks that an averaged f32 gradient holds the same bytes on every rank (rank 0's). */
static void same_on_every_rank(gs_tensor g) {
  gs_tensor g0 = gs_clone(g);
  CHECK(gs_dist_broadcast(g0, 0), "broadcast");
  CHECK(memcmp(gs_data(g), gs_data(g0), (size_t)gs_numel(g) * sizeof(float)) == 0,
        "averaged gradients differ between ranks");
  gs_dispose(g0);
}

static void unused(void) {
  gs_tensor x, y;
  batch(GS_F32, &x, &y);
  gs_module m = net_new(GS_F32, 1, true);
  gs_ddp *ddp = gs_ddp_new(m, NULL);
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_clear_error();
  step_on(m, ddp, x, y, 0, 4, 1.0);
  const char *err = gs_last_error();
  fprintf(stderr, "rank %d: the error: %s\n", gs_dist_rank(), err);
  CHECK(strstr(err, "'fc2.extra'") && strstr(err, "find_unused_parameters") &&
            strstr(err, "test-dist.c:"),
        "the unused-parameter error should name fc2.extra, the forward's site and the option; "
        "got: %s", err);
  gs_ddp_free(ddp);
  gs_set_error_handler(NULL, NULL, NULL);
  /* With find_unused_parameters the same step passes, fc2.extra keeps no gradient (unused on
   * every rank) and the others are averaged. */
  ddp = gs_ddp_new(m, &(gs_ddp_options){.find_unused_parameters = true});
  gs_clear_error();
  step_on(m, ddp, x, y, gs_dist_rank() * 4, 4, 1.0);
  CHECK(gs_last_error()[0] == 0, "find_unused_parameters still failed: %s", gs_last_error());
  CHECK(gs_grad(gs_module_parameter(m, "fc2.extra")).id == 0, "fc2.extra got a gradient");
  same_on_every_rank(gs_grad(gs_module_parameter(m, "fc2.bias")));
  gs_ddp_free(ddp);
  gs_module_dispose(m);
  gs_dispose(x);
  gs_dispose(y);
}

/* A bucket with no elements: an f64 parameter of shape (0,) in an f32 model is alone in its
 * dtype's bucket, which the shared-memory reduction has no chunk of to sum. Steps with it end
 * (its wait does not hang until the deadline) and average the others as before. */
static void empty_bucket(void) {
  gs_tensor x, y;
  batch(GS_F32, &x, &y);
  gs_module m = net_new(GS_F32, 1, false);
  gs_module_register_parameter(gs_module_child(m, "fc2"), "empty",
                               gs_parameter_new(gs_zeros(GS_F64, (int64_t[]){0}, 1), true));
  gs_ddp *ddp = gs_ddp_new(m, &(gs_ddp_options){.find_unused_parameters = true});
  CHECK(ddp, "gs_ddp_new: %s", gs_last_error());
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  for (int k = 0; ddp && k < 3; k++) {
    gs_clear_error();
    step_on(m, ddp, x, y, gs_dist_rank() * 4, 4, 1.0);
    CHECK(gs_ddp_wait(ddp) && gs_last_error()[0] == 0, "step %d with an empty bucket failed: %s", k,
          gs_last_error());
  }
  gs_set_error_handler(NULL, NULL, NULL);
  gs_ddp_stats st = ddp ? gs_ddp_get_stats(ddp) : (gs_ddp_stats){0};
  CHECK(st.n_buckets == 2 && st.steps == 3,
        "expected 2 buckets (f32, and f64 with no elements) and 3 steps, got %d and %llu",
        st.n_buckets, (unsigned long long)st.steps);
  same_on_every_rank(gs_grad(gs_module_parameter(m, "fc1.weight")));
  gs_ddp_free(ddp);
  gs_module_dispose(m);
  gs_dispose(x);
  gs_dispose(y);
}

/* Integer and bool tensors: reduced exactly (a sum past 2^53 that a double would round), bools
 * as PyTorch reduces them (sum/max an or, product/min an and), bytes gathered and broadcast. */
static void integers(int rank, int world) {
  const int64_t big = (int64_t)1 << 60;
  gs_tensor s = gs_from_data(GS_I64, (int64_t[]){2}, 1, (int64_t[]){rank + 1, big + rank});
  bool done = gs_dist_all_reduce(s, GS_DIST_SUM);
  const int64_t *sv = gs_data(s);
  CHECK(done && world == 2 && sv[0] == 3 && sv[1] == 2 * big + 1, "i64 sum: %lld %lld",
        (long long)sv[0], (long long)sv[1]);
  gs_tensor mx = gs_from_data(GS_I32, (int64_t[]){2}, 1, (int32_t[]){-rank, rank * 7});
  done = gs_dist_all_reduce(mx, GS_DIST_MAX);
  const int32_t *mv = gs_data(mx);
  CHECK(done && mv[0] == 0 && mv[1] == 7 * (world - 1), "i32 max: %d %d", mv[0], mv[1]);
  /* rank 0 holds {false, true, false}, rank 1 {true, true, false}; the clone copies on write,
   * so each one's data is read after its collective */
  gs_tensor any = gs_from_data(GS_BOOL, (int64_t[]){3}, 1, (bool[]){rank == 1, true, false});
  gs_tensor every = gs_clone(any);
  done = gs_dist_all_reduce(any, GS_DIST_SUM);
  const bool *av = gs_data(any);
  CHECK(done && av[0] && av[1] && !av[2], "bool sum (or): %d %d %d", av[0], av[1], av[2]);
  done = gs_dist_all_reduce(every, GS_DIST_PRODUCT);
  const bool *ev = gs_data(every);
  CHECK(done && !ev[0] && ev[1] && !ev[2], "bool product (and): %d %d %d", ev[0], ev[1], ev[2]);
  gs_tensor bytes = gs_full(GS_U8, (int64_t[]){3}, 1, 200 + rank);
  gs_tensor gathered = gs_zeros(GS_U8, (int64_t[]){3 * world}, 1);
  done = gs_dist_all_gather(gathered, bytes);
  const uint8_t *gv = gs_data(gathered);
  CHECK(done && gv[0] == 200 && gv[3] == 201, "u8 allgather: %d %d", gv[0], gv[3]);
  gs_tensor small = gs_full(GS_I8, (int64_t[]){2}, 1, rank == 1 ? -5 : 3);
  done = gs_dist_broadcast(small, 1);
  const int8_t *bv = gs_data(small);
  CHECK(done && bv[0] == -5 && bv[1] == -5, "i8 broadcast: %d %d", bv[0], bv[1]);
  gs_tensor whole = gs_arange(0, 2 * world, 1, GS_I16), part = gs_zeros(GS_I16, (int64_t[]){2}, 1);
  done = gs_dist_reduce_scatter(part, whole, GS_DIST_SUM);
  const int16_t *pv = gs_data(part);
  CHECK(done && pv[0] == 2 * rank * world, "i16 reduce-scatter: %d", pv[0]);
  gs_tensor ts[] = {s, mx, any, every, bytes, gathered, small, whole, part};
  for (size_t k = 0; k < sizeof ts / sizeof *ts; k++)
    gs_dispose(ts[k]);
}

static void shapes(void) {
  int rank = gs_dist_rank(), world = gs_dist_world_size();
  /* values */
  gs_tensor t = gs_full(GS_F64, (int64_t[]){2, 3}, 2, rank + 1.0);
  CHECK(gs_dist_all_reduce(t, GS_DIST_SUM) && gs_item(gs_sum(t, NULL, 0, false)) == 6 * 3.0,
        "allreduce sum");
  CHECK(gs_dist_all_reduce(t, GS_DIST_AVG) && ((const double *)gs_data(t))[0] == 3.0,
        "allreduce avg");
  /* max, min and product, elementwise: rank r holds {r + 1, -(r + 1), 0.5 + r} */
  gs_tensor e = gs_from_data(GS_F32, (int64_t[]){3}, 1,
                             (float[]){rank + 1.0f, -(rank + 1.0f), 0.5f + (float)rank});
  gs_tensor e2 = gs_clone(e), e3 = gs_clone(e); /* copies on write: data read after each */
  bool done = gs_dist_all_reduce(e, GS_DIST_MAX);
  const float *ev = gs_data(e);
  CHECK(done && ev[0] == (float)world && ev[1] == -1.0f && ev[2] == 0.5f + (float)(world - 1),
        "allreduce max: %g %g %g", (double)ev[0], (double)ev[1], (double)ev[2]);
  done = gs_dist_all_reduce(e2, GS_DIST_MIN);
  const float *ev2 = gs_data(e2);
  CHECK(done && ev2[0] == 1.0f && ev2[1] == -(float)world && ev2[2] == 0.5f,
        "allreduce min: %g %g %g", (double)ev2[0], (double)ev2[1], (double)ev2[2]);
  done = gs_dist_all_reduce(e3, GS_DIST_PRODUCT);
  const float *ev3 = gs_data(e3);
  CHECK(done && world == 2 && ev3[0] == 2.0f && ev3[1] == 2.0f && ev3[2] == 0.75f,
        "allreduce product: %g %g %g", (double)ev3[0], (double)ev3[1], (double)ev3[2]);
  gs_tensor b = gs_full(GS_F32, (int64_t[]){4}, 1, rank == 1 ? 7.0 : 0.0);
  CHECK(gs_dist_broadcast(b, 1) && ((const float *)gs_data(b))[3] == 7.0f, "broadcast");
  gs_tensor in = gs_full(GS_F32, (int64_t[]){2}, 1, rank);
  gs_tensor all = gs_zeros(GS_F32, (int64_t[]){2 * world}, 1);
  CHECK(gs_dist_all_gather(all, in) && ((const float *)gs_data(all))[2] == 1.0f, "allgather");
  gs_tensor part = gs_zeros(GS_F32, (int64_t[]){2}, 1);
  gs_tensor whole = gs_arange(0, 2 * world, 1, GS_F32);
  CHECK(gs_dist_reduce_scatter(part, whole, GS_DIST_SUM) &&
            ((const float *)gs_data(part))[0] == (float)(2 * rank * world),
        "reduce-scatter");
  gs_tensor mpart = gs_zeros(GS_F32, (int64_t[]){2}, 1);
  gs_tensor mwhole = gs_full(GS_F32, (int64_t[]){2 * world}, 1, rank == 1 ? 5.0 : -5.0);
  CHECK(gs_dist_reduce_scatter(mpart, mwhole, GS_DIST_MAX) &&
            ((const float *)gs_data(mpart))[1] == 5.0f,
        "reduce-scatter max");
  CHECK(gs_dist_barrier(), "barrier");
  integers(rank, world);
  /* refusals */
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  gs_tensor m = rank == 0 ? gs_zeros(GS_F32, (int64_t[]){3, 4}, 2)
                          : gs_zeros(GS_F32, (int64_t[]){4, 3}, 2);
  CHECK(!gs_dist_all_reduce(m, GS_DIST_SUM), "mismatched shapes were accepted");
  const char *err = gs_last_error();
  fprintf(stderr, "rank %d: the error: %s\n", rank, err);
  CHECK(strstr(err, "[3, 4]") && strstr(err, "[4, 3]"),
        "the mismatch should name both shapes: %s", err);
  gs_tensor i = rank == 0 ? gs_zeros(GS_I64, (int64_t[]){2}, 1) : gs_zeros(GS_F32, (int64_t[]){2}, 1);
  CHECK(!gs_dist_all_reduce(i, GS_DIST_SUM), "an i64 tensor beside an f32 one was accepted");
  err = gs_last_error();
  CHECK(strstr(err, "[2] i64") && strstr(err, "[2] f32"), "dtype mismatch: %s", err);
  gs_tensor iavg = gs_zeros(GS_I64, (int64_t[]){2}, 1);
  CHECK(!gs_dist_all_reduce(iavg, GS_DIST_AVG), "an average of i64 tensors was accepted");
  err = gs_last_error();
  CHECK(strstr(err, "f32 or f64 tensor for GS_DIST_AVG") && strstr(err, "[2] i64"),
        "integer average refusal: %s", err);
  CHECK(!gs_dist_all_reduce(t, rank == 0 ? GS_DIST_MAX : GS_DIST_MIN) &&
            strstr(gs_last_error(), "ranks disagree on the call"),
        "different ops on two ranks were accepted: %s", gs_last_error());
  CHECK(!gs_dist_all_reduce(t, (gs_dist_op)9) && strstr(gs_last_error(), "GS_DIST_PRODUCT, got 9"),
        "an unknown op was accepted: %s", gs_last_error());
  gs_tensor nc = gs_t(m);
  CHECK(!gs_dist_broadcast(nc, 0) && strstr(gs_last_error(), "contiguous"),
        "a transposed tensor was accepted: %s", gs_last_error());
  gs_set_error_handler(NULL, NULL, NULL);
  /* the group still works after refusals */
  CHECK(gs_dist_all_reduce(t, GS_DIST_SUM), "allreduce after refusals");
  gs_tensor ts[] = {t, b, in, all, part, whole, m, i, iavg, nc, e, e2, e3, mpart, mwhole};
  for (size_t k = 0; k < sizeof ts / sizeof *ts; k++)
    gs_dispose(ts[k]);
}

static void drift(void) {
  gs_tensor x, y;
  batch(GS_F32, &x, &y);
  gs_module m = net_new(GS_F32, 1, false);
  gs_ddp *ddp = gs_ddp_new(m, &(gs_ddp_options){.check_every = 1});
  gs_set_error_handler(gs_error_handler_return, NULL, NULL);
  if (gs_dist_rank() == 1) { /* an update only this rank makes */
    gs_no_grad_begin();
    ((float *)gs_data_mut(gs_module_parameter(m, "fc1.bias")))[0] += 1e-3f;
    gs_no_grad_end();
  }
  gs_tensor out = gs_ddp_forward(ddp, x);
  const char *err = gs_last_error();
  fprintf(stderr, "rank %d: the error: %s\n", gs_dist_rank(), err);
  CHECK(out.id == 0 && strstr(err, "'fc1.bias' on rank 1") && !strstr(err, "fc2"),
        "the drift should name fc1.bias on rank 1 only: %s", err);
  gs_set_error_handler(NULL, NULL, NULL);
  gs_ddp_free(ddp);
  gs_module_dispose(m);
  gs_dispose(x);
  gs_dispose(y);
}

static void sampler(void) {
  gs_tensor rows = gs_arange(0, 10, 1, GS_F32);
  gs_dataset ds = gs_tensor_dataset(&rows, 1);
  /* N = 10 over 3 ranks: 4 each, total 12, padded with the order's first two entries. */
  int64_t want[3][4] = {{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}};
  for (int r = 0; r < 3; r++) {
    gs_dist_sampler *s = gs_dist_sampler_new(&ds, r, 3, false, 0);
    CHECK(gs_dist_sampler_length(s) == 4, "length %lld", (long long)gs_dist_sampler_length(s));
    for (int i = 0; i < 4; i++)
      CHECK(gs_dist_sampler_index(s, i) == want[r][i], "rank %d index %d: %lld, want %lld", r, i,
            (long long)gs_dist_sampler_index(s, i), (long long)want[r][i]);
    /* through a loader: the rows come in the shard's order */
    gs_dataset shard = gs_dist_sampler_dataset(s);
    gs_data_loader *l = gs_data_loader_new(&shard, &(gs_loader_options){.batch_size = 4});
    gs_tensor got;
    CHECK(gs_data_loader_next(l, &got), "loader");
    for (int i = 0; i < 4; i++)
      CHECK(((const float *)gs_data(got))[i] == (float)want[r][i], "loaded row %d", i);
    gs_dispose(got);
    gs_data_loader_free(l);
    gs_dist_sampler_free(s);
  }
  /* shuffled: every epoch the shards of 2 ranks cover all 10 once, the same on every rank for
   * one epoch and seed, and epochs differ */
  gs_dist_sampler *a = gs_dist_sampler_new(&ds, 0, 2, true, 7);
  gs_dist_sampler *b = gs_dist_sampler_new(&ds, 1, 2, true, 7);
  int64_t first[5];
  bool differ = false;
  for (int epoch = 0; epoch < 3; epoch++) {
    gs_dist_sampler_set_epoch(a, epoch);
    gs_dist_sampler_set_epoch(b, epoch);
    int seen[10] = {0};
    for (int i = 0; i < 5; i++) {
      seen[gs_dist_sampler_index(a, i)]++;
      seen[gs_dist_sampler_index(b, i)]++;
      if (epoch == 0)
        first[i] = gs_dist_sampler_index(a, i);
      else if (first[i] != gs_dist_sampler_index(a, i))
        differ = true;
    }
    for (int k = 0; k < 10; k++)
      CHECK(seen[k] == 1, "epoch %d: row %d in %d shards", epoch, k, seen[k]);
  }
  CHECK(differ, "the shards did not change between epochs");
  gs_dist_sampler_free(a);
  gs_dist_sampler_free(b);
  gs_dataset_release(&ds);
  gs_dispose(rows);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "sampler") == 0) {
    sampler();
    printf("%s: %d failures\n", mode, failures);
    return failures ? 1 : 0;
  }
  if (!gs_dist_init(&argc, &argv))
    return 1;
  if (gs_dist_world_size() != 2) {
    fprintf(stderr, "test-dist: run under mpirun -np 2 (world size is %d)\n", gs_dist_world_size());
    return 1;
  }
  if (strcmp(mode, "parity") == 0) {
    parity(GS_F64, 0.0002, 1e-12, false); /* buckets of ~200 bytes: several, launched in order */
    parity(GS_F32, 0, 1e-5, false);
    parity(GS_F64, 0.0002, 1e-12, true);
    parity(GS_F32, 0, 1e-5, true);
    hidden = 5000; /* buckets of 2 and 5 chunks (f64), of 4 (f32, the last one partial) */
    parity(GS_F64, 0.1, 1e-12, true);
    parity(GS_F32, 0, 1e-5, false);
    hidden = HIDDEN;
  } else if (strcmp(mode, "traced") == 0) {
    parity(GS_F64, 0.0002, 1e-12, false);
    shapes();
  } else if (strcmp(mode, "traced-views") == 0) { /* as traced, with gradient_as_bucket_view */
    parity(GS_F64, 0.0002, 1e-12, true);
    shapes();
  } else if (strcmp(mode, "unused") == 0) {
    unused();
  } else if (strcmp(mode, "shapes") == 0) {
    shapes();
  } else if (strcmp(mode, "empty") == 0) {
    empty_bucket();
  } else if (strcmp(mode, "drift") == 0) {
    drift();
  } else if (strcmp(mode, "hang") == 0 || strcmp(mode, "kill") == 0) {
    gs_tensor t = gs_ones(GS_F32, (int64_t[]){4}, 1);
    gs_dist_all_reduce(t, GS_DIST_SUM); /* one that works first */
    if (gs_dist_rank() == 1) {
      if (mode[0] == 'k')
        raise(SIGKILL);
      sleep(120);
    }
    gs_dist_all_reduce(t, GS_DIST_SUM);
    fprintf(stderr, "rank %d: the allreduce returned without rank 1\n", gs_dist_rank());
    return 3;
  } else if (strcmp(mode, "ddp-hang") == 0 || strcmp(mode, "ddp-kill") == 0) {
    gs_module m = net_new(GS_F32, 1, false);
    gs_ddp *ddp = gs_ddp_new(m, NULL);
    gs_tensor x, y;
    batch(GS_F32, &x, &y);
    step_on(m, ddp, x, y, gs_dist_rank() * 4, 4, 1.0); /* one step that works first */
    gs_scope s = gs_scope_begin("step");
    gs_tensor loss = gs_cross_entropy(gs_ddp_forward(ddp, x), y, GS_REDUCTION_MEAN, 0.0);
    if (gs_dist_rank() == 1) {
      if (mode[4] == 'k')
        raise(SIGKILL);
      sleep(120);
    }
    gs_backward(loss);
    gs_scope_end(s);
    fprintf(stderr, "rank %d: DDP's backward returned without rank 1\n", gs_dist_rank());
    return 3;
  } else {
    fprintf(stderr, "test-dist: unknown mode '%s'\n", mode);
    return 2;
  }
  int rank = gs_dist_rank();
  gs_dist_finalize();
  if (kept_module.id) { /* the bucket's memory stays readable, with the same values */
    gs_tensor g = gs_to_dtype(
        gs_grad(gs_module_parameter(gs_module_child(kept_module, "fc1"), "weight")), GS_F64);
    const double *a = gs_data(g), *b = gs_data(kept_values);
    int64_t n = gs_numel(g), same = 0;
    for (int64_t k = 0; k < n; k++)
      same += a[k] == b[k];
    CHECK(same == n && n > 0,
          "a gradient viewing its bucket changed after gs_dist_finalize (%lld of %lld the same)",
          (long long)same, (long long)n);
    gs_dispose(g);
    gs_dispose(kept_values);
    gs_module_dispose(kept_module);
  }
  printf("rank %d: %s: %d failures\n", rank, mode, failures);
  return failures ? 1 : 0;
}
