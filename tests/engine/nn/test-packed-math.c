/* test-packed-math.c: the math of PackedSequence (engine/nn/packed-math.c) against results
 * worked out by hand from torch.nn.utils.rnn's documented semantics: the packed layout and
 * its permutations (stable sort, inverse), batch_first, trailing feature dims, pack_sequence,
 * padding back in the original order with total_length, gradients through both directions,
 * every error message, and that nothing is left alive after any call, failed or not. */
#include "packed-impl.h"
#include "test-util.h"

#define NO_PARTS ((gs__packed_parts){GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR})

static gs_tensor from_values(gs_dtype dtype, const int64_t *shape, int ndim,
                             const double *values) {
  gs_tensor f = gs_from_data(GS_F64, shape, ndim, values);
  gs_tensor t = gs_to_dtype(f, dtype);
  gs_dispose(f);
  return t;
}

static gs_tensor i64_list(const int64_t *values, int64_t n) {
  return gs_from_data(GS_I64, &n, 1, values);
}

/* t is an i64 list equal to expected. */
static void assert_list(gs_tensor t, const int64_t *expected, int64_t n) {
  g_assert_cmpint(gs_dtype_of(t), ==, GS_I64);
  double *want = g_new(double, n);
  for (int64_t i = 0; i < n; i++)
    want[i] = (double)expected[i];
  test_assert_values(t, &n, 1, want, 0, 0);
  g_free(want);
}

static void dispose_parts(gs__packed_parts *p) {
  DISPOSE_ALL(p->data, p->batch_sizes, p->sorted_indices, p->unsorted_indices);
}

static void assert_no_parts(const gs__packed_parts *p) {
  g_assert_cmpuint(p->data.id, ==, 0);
  g_assert_cmpuint(p->batch_sizes.id, ==, 0);
  g_assert_cmpuint(p->sorted_indices.id, ==, 0);
  g_assert_cmpuint(p->unsorted_indices.id, ==, 0);
}

/* x[t][b] = 10 t + b, laid out [T, B] or (batch_first) [B, T]: a value names its place. */
static gs_tensor numbered_input(gs_dtype dtype, int64_t steps, int64_t batch, bool batch_first) {
  double values[64];
  g_assert_cmpint(steps * batch, <=, 64);
  for (int64_t t = 0; t < steps; t++)
    for (int64_t b = 0; b < batch; b++)
      values[batch_first ? b * steps + t : t * batch + b] = (double)(10 * t + b);
  int64_t shape[2] = {batch_first ? batch : steps, batch_first ? steps : batch};
  return from_values(dtype, shape, 2, values);
}

/* numbered_input(dtype, steps, batch, batch_first) in *x, lengths in *len, packed into p;
 * the caller disposes all three. */
static void pack_numbered(gs_dtype dtype, int64_t steps, const int64_t *lengths, int64_t batch,
                          bool batch_first, bool enforce_sorted, gs_tensor *x, gs_tensor *len,
                          gs__packed_parts *p) {
  *x = numbered_input(dtype, steps, batch, batch_first);
  *len = i64_list(lengths, batch);
  g_assert_true(gs__pack_padded(*x, *len, batch_first, enforce_sorted, p));
}

/* Packs numbered_input(steps, batch) with lengths and checks the four parts. sorted NULL:
 * the indices must be absent. */
static void check_pack(int64_t steps, const int64_t *lengths, int64_t batch, bool batch_first,
                       bool enforce_sorted, const double *data, int64_t rows,
                       const int64_t *batch_sizes, const int64_t *sorted,
                       const int64_t *unsorted) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor x, len;
  gs__packed_parts p;
  pack_numbered(GS_F32, steps, lengths, batch, batch_first, enforce_sorted, &x, &len, &p);
  g_assert_cmpint(gs_dtype_of(p.data), ==, GS_F32);
  test_assert_values(p.data, &rows, 1, data, 0, 0);
  assert_list(p.batch_sizes, batch_sizes, lengths[sorted ? sorted[0] : 0]);
  if (sorted) {
    assert_list(p.sorted_indices, sorted, batch);
    assert_list(p.unsorted_indices, unsorted, batch);
  } else {
    g_assert_cmpuint(p.sorted_indices.id, ==, 0);
    g_assert_cmpuint(p.unsorted_indices.id, ==, 0);
  }
  dispose_parts(&p);
  gs_dispose(x);
  gs_dispose(len);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

/* Pads p (batch_first, padding value, total_length) and checks the result's dtype, shape and
 * values and, where lengths is not NULL, the lengths it reports (one per sequence); disposes
 * what it made. */
static void check_pad(const gs__packed_parts *p, bool batch_first, double value,
                      int64_t total_length, gs_dtype dtype, const int64_t *shape, int ndim,
                      const double *expected, const int64_t *lengths) {
  gs_tensor got_lengths = GS_NO_TENSOR;
  gs_tensor y = gs__pad_packed(p, batch_first, value, total_length, lengths ? &got_lengths : NULL);
  g_assert_cmpint(gs_dtype_of(y), ==, dtype);
  test_assert_values(y, shape, ndim, expected, 0, 0);
  if (lengths) {
    assert_list(got_lengths, lengths, shape[batch_first ? 0 : 1]);
    gs_dispose(got_lengths);
  }
  gs_dispose(y);
}

/* ---- packing, by hand ------------------------------------------------------------------ */

/* T = 3, B = 3, lengths [3, 1, 2]: sorted order b0, b2, b1; t0 runs all three, t1 b0 and b2,
 * t2 b0 only. */
static void test_pack_padded_unsorted(void) {
  for (int bf = 0; bf < 2; bf++)
    check_pack(3, (int64_t[]){3, 1, 2}, 3, bf, false,
               (double[]){0, 2, 1, 10, 12, 20}, 6, (int64_t[]){3, 2, 1},
               (int64_t[]){0, 2, 1}, (int64_t[]){0, 2, 1});
}

/* lengths [1, 3, 2, 3]: a 3-cycle, so unsorted differs from sorted, and a tie (b1 and b3 both
 * 3 long) that a stable sort keeps in batch order: sorted [1, 3, 2, 0], unsorted [3, 0, 2, 1]. */
static void test_pack_padded_stable_order(void) {
  for (int bf = 0; bf < 2; bf++)
    check_pack(3, (int64_t[]){1, 3, 2, 3}, 4, bf, false,
               (double[]){1, 3, 2, 0, 11, 13, 12, 21, 23}, 9, (int64_t[]){4, 3, 2},
               (int64_t[]){1, 3, 2, 0}, (int64_t[]){3, 0, 2, 1});
  /* Equal lengths throughout: the identity. */
  check_pack(2, (int64_t[]){2, 2, 2}, 3, false, false, (double[]){0, 1, 2, 10, 11, 12}, 6,
             (int64_t[]){3, 3}, (int64_t[]){0, 1, 2}, (int64_t[]){0, 1, 2});
}

/* enforce_sorted keeps the batch order and no permutation; the longest length may be less
 * than T (the steps beyond are dropped). */
static void test_pack_padded_enforce_sorted(void) {
  for (int bf = 0; bf < 2; bf++) {
    check_pack(3, (int64_t[]){3, 2, 2, 1}, 4, bf, true,
               (double[]){0, 1, 2, 3, 10, 11, 12, 20}, 8, (int64_t[]){4, 3, 1}, NULL, NULL);
    check_pack(4, (int64_t[]){2, 1}, 2, bf, true, (double[]){0, 1, 10}, 3, (int64_t[]){2, 1},
               NULL, NULL);
  }
}

/* Trailing feature dims travel with their row: x[t][b][f] = 100 t + 10 b + f, lengths [1, 2]
 * gives rows (t0: b1, b0), (t1: b1). */
static void test_pack_padded_trailing_dims(void) {
  for (int bf = 0; bf < 2; bf++) {
    double values[8];
    for (int t = 0; t < 2; t++)
      for (int b = 0; b < 2; b++)
        for (int f = 0; f < 2; f++)
          values[(bf ? b * 2 + t : t * 2 + b) * 2 + f] = 100 * t + 10 * b + f;
    gs_tensor x = from_values(GS_F64, (int64_t[]){2, 2, 2}, 3, values);
    gs_tensor len = i64_list((int64_t[]){1, 2}, 2);
    gs__packed_parts p;
    g_assert_true(gs__pack_padded(x, len, bf, false, &p));
    g_assert_cmpint(gs_dtype_of(p.data), ==, GS_F64);
    test_assert_values(p.data, (int64_t[]){3, 2}, 2, (double[]){10, 11, 0, 1, 110, 111}, 0, 0);
    assert_list(p.batch_sizes, (int64_t[]){2, 1}, 2);
    assert_list(p.sorted_indices, (int64_t[]){1, 0}, 2);
    assert_list(p.unsorted_indices, (int64_t[]){1, 0}, 2);
    dispose_parts(&p);
    gs_dispose(x);
    gs_dispose(len);
  }
  /* Two trailing dims. */
  double values[2 * 1 * 2 * 3];
  for (int i = 0; i < 12; i++)
    values[i] = i;
  gs_tensor x = from_values(GS_F32, (int64_t[]){2, 1, 2, 3}, 4, values);
  gs_tensor len = i64_list((int64_t[]){2}, 1);
  gs__packed_parts p;
  g_assert_true(gs__pack_padded(x, len, false, true, &p));
  test_assert_values(p.data, (int64_t[]){2, 2, 3}, 3, values, 0, 0);
  dispose_parts(&p);
  gs_dispose(x);
  gs_dispose(len);
}

/* Any input layout and dtype; lengths of another dtype (converted as lengths.to(int64)) or
 * strided. */
static void test_pack_padded_layouts_dtypes_lengths(void) {
  /* Time-major input stored batch-major (a transposed view): flattening it must copy. */
  gs_tensor stored = numbered_input(GS_I64, 3, 3, true);
  gs_tensor x = gs_transpose(stored, 0, 1);
  gs_tensor len = from_values(GS_F64, (int64_t[]){3}, 1, (double[]){3.0, 1.0, 2.9});
  gs__packed_parts p;
  g_assert_true(gs__pack_padded(x, len, false, false, &p));
  g_assert_cmpint(gs_dtype_of(p.data), ==, GS_I64);
  test_assert_values(p.data, (int64_t[]){6}, 1, (double[]){0, 2, 1, 10, 12, 20}, 0, 0);
  assert_list(p.batch_sizes, (int64_t[]){3, 2, 1}, 3);
  dispose_parts(&p);
  gs_dispose(len);

  /* Lengths every other element of a longer list. */
  gs_tensor wide = i64_list((int64_t[]){9, 3, 9, 1, 9, 2}, 6);
  len = gs_slice(wide, 0, 1, 6, 2);
  g_assert_true(gs__pack_padded(x, len, false, false, &p));
  test_assert_values(p.data, (int64_t[]){6}, 1, (double[]){0, 2, 1, 10, 12, 20}, 0, 0);
  dispose_parts(&p);
  DISPOSE_ALL(len, wide, x, stored);

  x = from_values(GS_BOOL, (int64_t[]){2, 2}, 2, (double[]){1, 0, 0, 1});
  len = from_values(GS_BOOL, (int64_t[]){2}, 1, (double[]){1, 1});
  g_assert_true(gs__pack_padded(x, len, false, true, &p));
  g_assert_cmpint(gs_dtype_of(p.data), ==, GS_BOOL);
  test_assert_values(p.data, (int64_t[]){2}, 1, (double[]){1, 0}, 0, 0);
  assert_list(p.batch_sizes, (int64_t[]){2}, 1);
  dispose_parts(&p);
  gs_dispose(len);
  gs_dispose(x);
}

/* pack_sequence([1, 2, 3], [4, 5], [6]): rows (1, 4, 6), (2, 5), (3). */
static void test_pack_sequence_sorted(void) {
  gs_tensor seq[3] = {
      from_values(GS_F32, (int64_t[]){3}, 1, (double[]){1, 2, 3}),
      from_values(GS_F32, (int64_t[]){2}, 1, (double[]){4, 5}),
      from_values(GS_F32, (int64_t[]){1}, 1, (double[]){6}),
  };
  gs__packed_parts p;
  g_assert_true(gs__pack_sequence(seq, 3, true, &p));
  g_assert_cmpint(gs_dtype_of(p.data), ==, GS_F32);
  test_assert_values(p.data, (int64_t[]){6}, 1, (double[]){1, 4, 6, 2, 5, 3}, 0, 0);
  assert_list(p.batch_sizes, (int64_t[]){3, 2, 1}, 3);
  g_assert_cmpuint(p.sorted_indices.id, ==, 0);
  g_assert_cmpuint(p.unsorted_indices.id, ==, 0);
  dispose_parts(&p);
  for (int i = 0; i < 3; i++)
    gs_dispose(seq[i]);
}

/* Sequences of lengths 1, 3, 2 with two features: sorted [1, 2, 0], unsorted [2, 0, 1]. */
static void test_pack_sequence_unsorted(void) {
  gs_tensor seq[3] = {
      from_values(GS_F64, (int64_t[]){1, 2}, 2, (double[]){1, 2}),
      from_values(GS_F64, (int64_t[]){3, 2}, 2, (double[]){3, 4, 5, 6, 7, 8}),
      from_values(GS_F64, (int64_t[]){2, 2}, 2, (double[]){9, 10, 11, 12}),
  };
  gs__packed_parts p;
  g_assert_true(gs__pack_sequence(seq, 3, false, &p));
  test_assert_values(p.data, (int64_t[]){6, 2}, 2,
                     (double[]){3, 4, 9, 10, 1, 2, 5, 6, 11, 12, 7, 8}, 0, 0);
  assert_list(p.batch_sizes, (int64_t[]){3, 2, 1}, 3);
  assert_list(p.sorted_indices, (int64_t[]){1, 2, 0}, 3);
  assert_list(p.unsorted_indices, (int64_t[]){2, 0, 1}, 3);
  dispose_parts(&p);
  /* One sequence, viewed (not contiguous). */
  gs_tensor view = gs_transpose(seq[1], 0, 1); /* [2, 3]: two steps of three features */
  g_assert_true(gs__pack_sequence(&view, 1, true, &p));
  test_assert_values(p.data, (int64_t[]){2, 3}, 2, (double[]){3, 5, 7, 4, 6, 8}, 0, 0);
  assert_list(p.batch_sizes, (int64_t[]){1, 1}, 2);
  dispose_parts(&p);
  gs_dispose(view);
  for (int i = 0; i < 3; i++)
    gs_dispose(seq[i]);
}

/* ---- padding --------------------------------------------------------------------------- */

/* pad of the T = 3, B = 3, lengths [3, 1, 2] batch: back in the original order, padding after
 * each end, lengths in the original order; total_length adds padded steps. */
static void test_pad_by_hand(void) {
  gs_tensor x, len;
  gs__packed_parts p;
  pack_numbered(GS_F32, 3, (int64_t[]){3, 1, 2}, 3, false, false, &x, &len, &p);
  check_pad(&p, false, -1, -1, GS_F32, (int64_t[]){3, 3}, 2,
            (double[]){0, 1, 2, 10, -1, 12, 20, -1, -1}, (int64_t[]){3, 1, 2});
  check_pad(&p, true, 0.5, 5, GS_F32, (int64_t[]){3, 5}, 2,
            (double[]){0, 10, 20, 0.5, 0.5, 1, 0.5, 0.5, 0.5, 0.5, 2, 12, 0.5, 0.5, 0.5}, NULL);
  /* total_length equal to the longest length changes nothing. */
  check_pad(&p, false, 0, 3, GS_F32, (int64_t[]){3, 3}, 2, (double[]){0, 1, 2, 10, 0, 12, 20, 0, 0},
            NULL);

  /* Without unsorted_indices, PyTorch's PackedSequence inverts sorted_indices. */
  gs__packed_parts only_sorted = p;
  only_sorted.unsorted_indices = GS_NO_TENSOR;
  gs_dispose(p.unsorted_indices);
  gs_tensor cycle = i64_list((int64_t[]){1, 2, 0}, 3); /* a 3-cycle: its inverse differs */
  only_sorted.sorted_indices = cycle;
  /* sorted position j is original index cycle[j]: the 3-long sequence (0, 10, 20) is b1, the
   * 2-long (2, 12) b2, the 1-long (1) b0 */
  check_pad(&only_sorted, false, -1, -1, GS_F32, (int64_t[]){3, 3}, 2,
            (double[]){1, 0, 2, -1, 10, 12, -1, 20, -1}, (int64_t[]){1, 3, 2});
  DISPOSE_ALL(cycle, p.data, p.batch_sizes, p.sorted_indices, x, len);
}

/* A batch with no padding at all (every sequence T long) and one with trailing dims, i64. */
static void test_pad_without_padding_and_trailing(void) {
  gs_tensor x, len;
  gs__packed_parts p;
  pack_numbered(GS_F64, 2, (int64_t[]){2, 2, 2}, 3, true, true, &x, &len, &p);
  check_pad(&p, true, 9, -1, GS_F64, (int64_t[]){3, 2}, 2, (double[]){0, 10, 1, 11, 2, 12}, NULL);
  dispose_parts(&p);
  gs_dispose(len);
  gs_dispose(x);

  gs_tensor seq[2] = {
      from_values(GS_I64, (int64_t[]){1, 2}, 2, (double[]){1, 2}),
      from_values(GS_I64, (int64_t[]){2, 2}, 2, (double[]){3, 4, 5, 6}),
  };
  g_assert_true(gs__pack_sequence(seq, 2, false, &p));
  check_pad(&p, true, -3, 3, GS_I64, (int64_t[]){2, 3, 2}, 3,
            (double[]){1, 2, -3, -3, -3, -3, 3, 4, 5, 6, -3, -3}, NULL);
  dispose_parts(&p);
  gs_dispose(seq[0]);
  gs_dispose(seq[1]);
}

/* pad(pack(x)) is x where a sequence runs and padding after it, for random inputs in every
 * layout, with and without batch_first, enforce_sorted, trailing dims and total_length. */
static void check_round_trip(gs_dtype dtype, test_layout layout, bool batch_first,
                             bool enforce_sorted, int trailing, int64_t extra, gs_rng *rng) {
  enum { T = 4, B = 5 };
  static const int64_t unsorted_lengths[B] = {2, 4, 1, 4, 3};
  static const int64_t sorted_lengths[B] = {4, 4, 3, 2, 1};
  const int64_t *lengths = enforce_sorted ? sorted_lengths : unsorted_lengths;
  test_set_context("round trip %s %s batch_first=%d enforce_sorted=%d trailing=%d extra=%lld",
                   gs_dtype_name(dtype), test_layout_name(layout), batch_first, enforce_sorted,
                   trailing, (long long)extra);
  int64_t shape[4] = {batch_first ? B : T, batch_first ? T : B, 3, 2};
  int ndim = 2 + trailing;
  gs_tensor x = test_make(dtype, shape, ndim, layout, -5, 5, rng);
  double *xv = test_values(x);
  gs_tensor len = i64_list(lengths, B);
  gs__packed_parts p;
  g_assert_true(gs__pack_padded(x, len, batch_first, enforce_sorted, &p));
  double pad = dtype == GS_BOOL ? 1 : -7;

  int64_t out_shape[4] = {batch_first ? B : T + extra, batch_first ? T + extra : B, 3, 2};
  int64_t inner = test_numel(shape + 2, trailing), n = test_numel(out_shape, ndim);
  double *want = g_new(double, n);
  for (int64_t i = 0; i < n; i++) {
    int64_t pos[4];
    test_unravel(i, out_shape, ndim, pos);
    int64_t t = pos[batch_first ? 1 : 0], b = pos[batch_first ? 0 : 1];
    int64_t src = (batch_first ? b * T + t : t * B + b) * inner + i % inner;
    want[i] = t < lengths[b] ? xv[src] : pad;
  }
  check_pad(&p, batch_first, pad, extra ? T + extra : -1, dtype, out_shape, ndim, want, lengths);
  g_free(want);
  g_free(xv);
  dispose_parts(&p);
  gs_dispose(len);
  gs_dispose(x);
  test_set_context("%s", "");
}

static void test_round_trip(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 77);
  static const gs_dtype dtypes[] = {GS_F32, GS_F64, GS_I64, GS_BOOL};
  for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++)
    for (int layout = 0; layout < LAYOUT_COUNT; layout++)
      for (int flags = 0; flags < 4; flags++)
        for (int trailing = 0; trailing <= 2; trailing++)
          check_round_trip(dtypes[d], layout, flags & 1, flags & 2, trailing, trailing, &rng);
}

/* ---- gradients ------------------------------------------------------------------------- */

typedef struct round_trip_fn {
  gs_tensor lengths, weights;
  bool batch_first, enforce_sorted;
  int64_t total_length;
} round_trip_fn;

/* sum(pad(p) * weights), padding with value: every padded place weighted differently, so a
 * gradient that lands in the wrong place shows. */
static gs_tensor weighted_pad_sum(const gs__packed_parts *p, bool batch_first, double value,
                                  int64_t total_length, gs_tensor weights) {
  gs_tensor y = gs__pad_packed(p, batch_first, value, total_length, NULL);
  gs_tensor weighted = gs_mul(y, weights);
  gs_tensor out = gs_sum(weighted, NULL, 0, false);
  gs_dispose(weighted);
  gs_dispose(y);
  return out;
}

/* sum(pad(pack(x)) * w): every padded position weighted differently, so a gradient that lands
 * in the wrong place shows. */
static gs_tensor weighted_round_trip(const gs_tensor *in, int n, void *user_data) {
  (void)n;
  const round_trip_fn *f = user_data;
  gs__packed_parts p;
  if (!gs__pack_padded(in[0], f->lengths, f->batch_first, f->enforce_sorted, &p))
    return GS_NO_TENSOR;
  gs_tensor out = weighted_pad_sum(&p, f->batch_first, 3.0, f->total_length, f->weights);
  dispose_parts(&p);
  return out;
}

static void test_round_trip_gradcheck(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 3);
  for (int flags = 0; flags < 4; flags++) {
    bool bf = flags & 1, sorted = flags & 2;
    round_trip_fn f = {.batch_first = bf, .enforce_sorted = sorted, .total_length = 4};
    f.lengths = i64_list(sorted ? (int64_t[]){3, 2, 1} : (int64_t[]){1, 3, 2}, 3);
    int64_t xs[3] = {3, 3, 2}, ys[3] = {bf ? 3 : 4, bf ? 4 : 3, 2};
    gs_tensor x = test_make(GS_F64, xs, 3, LAYOUT_CONTIGUOUS, -1, 1, &rng);
    gs_set_requires_grad(x, true);
    f.weights = test_make(GS_F64, ys, 3, LAYOUT_CONTIGUOUS, -2, 2, &rng);
    gs_gradcheck_result r;
    bool ok = gs_gradcheck(weighted_round_trip, &f, &x, 1, NULL, &r);
    if (!ok)
      g_printerr("batch_first=%d enforce_sorted=%d: %s\n", bf, sorted, r.message);
    g_assert_true(ok);
    DISPOSE_ALL(x, f.weights, f.lengths);
  }
}

/* The gradient itself, exactly: d sum(pad(pack(x)) * w) / dx is w where a sequence runs and 0
 * on x's padding; and d sum(pad(parts) * w) / d data is w at each packed row's place. */
static void test_gradients_exact(void) {
  double w[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  gs_tensor x = from_values(GS_F64, (int64_t[]){3, 3}, 2, (double[9]){0});
  gs_set_requires_grad(x, true);
  round_trip_fn f = {.lengths = i64_list((int64_t[]){3, 1, 2}, 3),
                     .weights = from_values(GS_F64, (int64_t[]){3, 3}, 2, w),
                     .total_length = -1};
  gs_tensor loss = weighted_round_trip(&x, 1, &f);
  gs_backward(loss);
  /* lengths [3, 1, 2]: (t1, b1), (t2, b1) and (t2, b2) are padding. */
  test_assert_values(gs_grad(x), (int64_t[]){3, 3}, 2, (double[]){1, 2, 3, 4, 0, 6, 7, 0, 0}, 0,
                     0);
  gs_dispose(loss);

  /* From the packed data: rows (b0, b2, b1), (b0, b2), (b0) at t = 0, 1, 2. */
  gs__packed_parts p;
  g_assert_true(gs__pack_padded(x, f.lengths, false, false, &p));
  gs_tensor data = gs_detach(p.data);
  gs_set_requires_grad(data, true);
  gs__packed_parts leaf_parts = p;
  leaf_parts.data = data;
  loss = weighted_pad_sum(&leaf_parts, false, 0, -1, f.weights);
  gs_backward(loss);
  test_assert_values(gs_grad(data), (int64_t[]){6}, 1, (double[]){1, 3, 2, 4, 6, 7}, 0, 0);
  gs_dispose(loss);
  gs_dispose(data);
  dispose_parts(&p);
  DISPOSE_ALL(f.lengths, f.weights, x);
}

typedef struct sequence_fn {
  gs_tensor weights;
} sequence_fn;

static gs_tensor weighted_sequences(const gs_tensor *in, int n, void *user_data) {
  const sequence_fn *f = user_data;
  gs__packed_parts p;
  if (!gs__pack_sequence(in, n, false, &p))
    return GS_NO_TENSOR;
  gs_tensor out = weighted_pad_sum(&p, true, 0, -1, f->weights);
  dispose_parts(&p);
  return out;
}

/* Every sequence of pack_sequence gets its own gradient back. */
static void test_pack_sequence_gradcheck(void) {
  gs_rng rng;
  gs_rng_seed(&rng, 4);
  gs_tensor seq[3];
  static const int64_t lengths[3] = {2, 3, 1};
  for (int i = 0; i < 3; i++) {
    seq[i] = test_make(GS_F64, (int64_t[]){lengths[i], 2}, 2, LAYOUT_CONTIGUOUS, -1, 1, &rng);
    gs_set_requires_grad(seq[i], true);
  }
  sequence_fn f = {test_make(GS_F64, (int64_t[]){3, 3, 2}, 3, LAYOUT_CONTIGUOUS, -2, 2, &rng)};
  gs_gradcheck_result r;
  bool ok = gs_gradcheck(weighted_sequences, &f, seq, 3, NULL, &r);
  if (!ok)
    g_printerr("%s\n", r.message);
  g_assert_true(ok);
  for (int i = 0; i < 3; i++)
    gs_dispose(seq[i]);
  gs_dispose(f.weights);
}

/* ---- errors ---------------------------------------------------------------------------- */

/* Packing input [T, B] (batch-major when batch_first) with the given lengths must fail with
 * a message containing what, leaving nothing alive and *out empty. */
static void expect_pack_error(const int64_t *input_shape, int ndim, gs_tensor lengths,
                              bool batch_first, bool enforce_sorted, const char *what) {
  gs_tensor x = gs_zeros(GS_F32, input_shape, ndim);
  uint64_t live = gs_live_tensor_count();
  gs__packed_parts p = {x, x, x, x}; /* must be overwritten */
  EXPECT_ERROR(g_assert_false(gs__pack_padded(x, lengths, batch_first, enforce_sorted, &p)),
               what);
  assert_no_parts(&p);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
  gs_dispose(x);
}

static void test_pack_padded_errors(void) {
  int64_t tb[2] = {3, 2};
  gs_tensor len = i64_list((int64_t[]){2, 3}, 2);
  expect_pack_error(tb, 2, len, false, true,
                    "expected lengths in decreasing order when enforce_sorted is true, got [2, 3] "
                    "(pass enforce_sorted = false to have the batch sorted)");
  gs_dispose(len);

  int64_t t3b3[2] = {3, 3};
  len = i64_list((int64_t[]){2, 0, 1}, 3);
  expect_pack_error(t3b3, 2, len, false, false,
                    "expected every length to be at least 1, got 0 at position 1 of lengths "
                    "[2, 0, 1]");
  gs_dispose(len);
  len = i64_list((int64_t[]){-1, 2, 1}, 3);
  expect_pack_error(t3b3, 2, len, true, true, "got -1 at position 0 of lengths [-1, 2, 1]");
  gs_dispose(len);
  len = i64_list((int64_t[]){2, 4, 1}, 3);
  expect_pack_error(t3b3, 2, len, false, false,
                    "expected every length to be at most the input's 3 time steps, got 4 at "
                    "position 1 of lengths [2, 4, 1]");
  /* With batch_first, T is dim 1: [3, 2] has 2 steps. */
  gs_tensor len2 = i64_list((int64_t[]){2, 3, 1}, 3);
  expect_pack_error((int64_t[]){3, 2}, 2, len2, true, false, "at most the input's 2 time steps");
  gs_dispose(len2);
  gs_dispose(len);

  len = i64_list((int64_t[]){2, 1}, 2);
  expect_pack_error(t3b3, 2, len, false, false,
                    "expected lengths of shape [3] (one per sequence in the batch), got [2]");
  gs_dispose(len);
  len = gs_zeros(GS_I64, (int64_t[]){1, 3}, 2);
  expect_pack_error(t3b3, 2, len, false, false, "expected lengths of shape [3]");
  gs_dispose(len);
  len = gs_scalar(GS_I64, 3);
  expect_pack_error(t3b3, 2, len, false, false, "expected lengths of shape [3] (one per "
                    "sequence in the batch), got []");
  expect_pack_error((int64_t[]){3}, 1, len, false, false,
                    "expected input of at least 2 dimensions ([T, B, *]), got shape [3]");
  expect_pack_error((int64_t[]){3}, 1, len, true, false, "([B, T, *] with batch_first)");
  expect_pack_error((int64_t[]){0, 3}, 2, len, false, false,
                    "cannot pack an empty tensor, got input of shape [0, 3]");
  gs_dispose(len);

  /* Stale handles, and NULL for the result. */
  len = i64_list((int64_t[]){1}, 1);
  gs_tensor x = gs_ones(GS_F32, (int64_t[]){1, 1}, 2);
  gs_tensor stale = gs_ones(GS_F32, (int64_t[]){1, 1}, 2);
  gs_dispose(stale);
  gs__packed_parts p;
  EXPECT_ERROR(g_assert_false(gs__pack_padded(stale, len, false, true, &p)), "is stale");
  assert_no_parts(&p);
  EXPECT_ERROR(g_assert_false(gs__pack_padded(x, stale, false, true, &p)), "is stale");
  assert_no_parts(&p);
  EXPECT_ERROR(g_assert_false(gs__pack_padded(x, len, false, true, NULL)), "got NULL");
  gs_dispose(x);
  gs_dispose(len);

  /* A long batch is quoted up to 16 values. */
  int64_t rising[20];
  for (int i = 0; i < 20; i++)
    rising[i] = 1 + i / 10;
  len = i64_list(rising, 20);
  expect_pack_error((int64_t[]){2, 20}, 2, len, false, true,
                    "got [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, ...] (pass");
  gs_dispose(len);
}

static void expect_sequence_error(const gs_tensor *seq, int count, bool enforce_sorted,
                                  const char *what) {
  uint64_t live = gs_live_tensor_count();
  gs__packed_parts p = {seq ? seq[0] : GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR, GS_NO_TENSOR};
  EXPECT_ERROR(g_assert_false(gs__pack_sequence(seq, count, enforce_sorted, &p)), what);
  assert_no_parts(&p);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_pack_sequence_errors(void) {
  gs_tensor s[4] = {
      gs_zeros(GS_F32, (int64_t[]){3, 2}, 2),
      gs_zeros(GS_F32, (int64_t[]){2, 3}, 2),
      gs_zeros(GS_F64, (int64_t[]){2, 2}, 2),
      gs_zeros(GS_F32, (int64_t[]){0, 2}, 2),
  };
  expect_sequence_error(s, 2, false,
                        "expected every sequence to have sequence 0's trailing shape [2], got "
                        "[3] for sequence 1");
  gs_tensor flat = gs_zeros(GS_F32, (int64_t[]){3}, 1);
  expect_sequence_error((gs_tensor[]){s[0], flat}, 2, false,
                        "trailing shape [2], got [] for sequence 1");
  gs_dispose(flat);
  expect_sequence_error((gs_tensor[]){s[0], s[2]}, 2, false,
                        "expected every sequence to have sequence 0's dtype f32, got f64 for "
                        "sequence 1");
  expect_sequence_error((gs_tensor[]){s[0], s[3]}, 2, false,
                        "expected every length to be at least 1, got 0 at position 1 of lengths "
                        "[3, 0]");
  gs_tensor scalar = gs_scalar(GS_F32, 1);
  expect_sequence_error((gs_tensor[]){s[0], scalar}, 2, false,
                        "expected sequences of at least 1 dimension ([L, *]), got a 0-D tensor "
                        "for sequence 1");
  gs_dispose(scalar);
  gs_tensor shorter = gs_zeros(GS_F32, (int64_t[]){2, 2}, 2);
  expect_sequence_error((gs_tensor[]){shorter, s[0]}, 2, true,
                        "expected lengths in decreasing order when enforce_sorted is true, got "
                        "[2, 3] (pass enforce_sorted = false to have the batch sorted)");
  gs_dispose(shorter);
  expect_sequence_error(s, 0, false, "expected a non-empty list of sequences, got 0 sequences");
  expect_sequence_error(NULL, 2, false,
                        "expected a non-empty list of sequences, got 2 sequences (NULL)");
  gs_tensor stale = gs_zeros(GS_F32, (int64_t[]){1}, 1);
  gs_dispose(stale);
  expect_sequence_error((gs_tensor[]){s[0], stale}, 2, false, "is stale");
  for (int i = 0; i < 4; i++)
    gs_dispose(s[i]);
}

static void expect_pad_error(const gs__packed_parts *p, int64_t total_length, const char *what) {
  uint64_t live = gs_live_tensor_count();
  gs_tensor lengths = {12345};
  gs_tensor y;
  EXPECT_ERROR(y = gs__pad_packed(p, false, 0, total_length, &lengths), what);
  g_assert_cmpuint(y.id, ==, 0);
  g_assert_cmpuint(lengths.id, ==, 0);
  g_assert_cmpuint(gs_live_tensor_count(), ==, live);
}

static void test_pad_errors(void) {
  gs_tensor x, len;
  gs__packed_parts p;
  pack_numbered(GS_F32, 3, (int64_t[]){3, 1, 2}, 3, false, false, &x, &len, &p);
  expect_pad_error(&p, 2, "expected total_length to be at least the length of the longest "
                   "sequence (3), got total_length = 2");
  expect_pad_error(&p, -2, "got total_length = -2");
  expect_pad_error(NULL, -1, "expected a packed sequence's parts, got NULL");

  /* Parts that do not describe a packed sequence. */
  gs__packed_parts bad = p;
  gs_tensor rising = i64_list((int64_t[]){2, 3, 1}, 3);
  bad.batch_sizes = rising;
  expect_pad_error(&bad, -1, "expected batch_sizes to be non-empty, positive and "
                   "non-increasing, got [2, 3, 1]");
  gs_tensor empty = gs_zeros(GS_I64, (int64_t[]){0}, 1);
  bad.batch_sizes = empty;
  expect_pad_error(&bad, -1, "non-increasing, got []");
  gs_tensor floats = from_values(GS_F32, (int64_t[]){3}, 1, (double[]){3, 2, 1});
  bad.batch_sizes = floats;
  expect_pad_error(&bad, -1, "expected batch_sizes to be a 1-D i64 tensor, got [3] f32");
  gs_tensor short_sizes = i64_list((int64_t[]){3, 2}, 2);
  bad.batch_sizes = short_sizes;
  expect_pad_error(&bad, -1, "expected packed data of 5 rows (the sum of batch_sizes [3, 2]), "
                   "got shape [6]");
  bad = p;
  gs_tensor repeated = i64_list((int64_t[]){0, 2, 0}, 3);
  bad.unsorted_indices = repeated;
  expect_pad_error(&bad, -1, "expected unsorted_indices to be a permutation of the batch's 3 "
                   "sequences, got [0, 2, 0]");
  gs_tensor out_of_range = i64_list((int64_t[]){0, 3}, 2);
  bad.unsorted_indices = GS_NO_TENSOR;
  bad.sorted_indices = out_of_range;
  expect_pad_error(&bad, -1, "expected sorted_indices to be a permutation of the batch's 3 "
                   "sequences, got [0, 3]");
  bad = p;
  gs_tensor stale = gs_zeros(GS_F32, (int64_t[]){1}, 1);
  gs_dispose(stale);
  bad.data = stale;
  expect_pad_error(&bad, -1, "is stale");

  DISPOSE_ALL(x, rising, empty, floats, short_sizes, repeated, out_of_range, len);
  dispose_parts(&p);
}

int main(int argc, char **argv) {
  test_init(&argc, &argv);
  g_test_add_func("/packed-math/pack-padded/unsorted", test_pack_padded_unsorted);
  g_test_add_func("/packed-math/pack-padded/stable-order", test_pack_padded_stable_order);
  g_test_add_func("/packed-math/pack-padded/enforce-sorted", test_pack_padded_enforce_sorted);
  test_add_leak_checked("/packed-math/pack-padded/trailing-dims", test_pack_padded_trailing_dims);
  test_add_leak_checked("/packed-math/pack-padded/layouts-dtypes-lengths",
                        test_pack_padded_layouts_dtypes_lengths);
  test_add_leak_checked("/packed-math/pack-sequence/sorted", test_pack_sequence_sorted);
  test_add_leak_checked("/packed-math/pack-sequence/unsorted", test_pack_sequence_unsorted);
  test_add_leak_checked("/packed-math/pad/by-hand", test_pad_by_hand);
  test_add_leak_checked("/packed-math/pad/without-padding-and-trailing",
                        test_pad_without_padding_and_trailing);
  test_add_leak_checked("/packed-math/pad/round-trip", test_round_trip);
  test_add_leak_checked("/packed-math/grad/round-trip-gradcheck", test_round_trip_gradcheck);
  test_add_leak_checked("/packed-math/grad/exact", test_gradients_exact);
  test_add_leak_checked("/packed-math/grad/pack-sequence-gradcheck", test_pack_sequence_gradcheck);
  test_add_leak_checked("/packed-math/errors/pack-padded", test_pack_padded_errors);
  test_add_leak_checked("/packed-math/errors/pack-sequence", test_pack_sequence_errors);
  test_add_leak_checked("/packed-math/errors/pad", test_pad_errors);
  return g_test_run();
}
