/* cases-linalg.c: gradcheck cases for matrix products (every 1-D/2-D/batched combination of
 * matmul, addmm with broadcast bias and scaled terms), the index ops (with indices that repeat,
 * so gradients must add up), and joining and cutting (cat and stack of three inputs along a
 * middle dim, split and chunk pieces used together). Inputs are transposed and sliced views. */
#include "grad-case.h"

/* An i64 index in [0, hi) drawn by the case runner, of the given shape (it never requires
 * grad; a few draws from a small range repeat values). */
#define INDEX(HI, ND, ...)                                                                   \
  {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_CONTIGUOUS, .lo = 0, .hi = HI,       \
   .no_grad = true, .dtype = GS_I64}
#define INDEX_S(HI, ND, ...)                                                                 \
  {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_SLICED, .lo = 0, .hi = HI,           \
   .no_grad = true, .dtype = GS_I64}

/* A fixed index with repeats, for the cases that must see them whatever the random draws. */
static gs_tensor fixed_index(const int64_t *values, int64_t count) {
  return gs_from_data(GS_I64, (int64_t[]){count}, 1, values);
}

/* ---- products --------------------------------------------------------------------------- */

static gs_tensor f_matmul(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_matmul(in[0], in[1]);
}

#define STRICT(NAME, FN)                                                                     \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return FN(in[0], in[1]);                                                                 \
  }
STRICT(f_mm, gs_mm)
STRICT(f_bmm, gs_bmm)
STRICT(f_mv, gs_mv)
STRICT(f_dot, gs_dot)

#define ADDMM(NAME, BETA, ALPHA)                                                             \
  static gs_tensor NAME(const gs_tensor *in, int n, void *u) {                               \
    (void)n, (void)u;                                                                        \
    return gs_addmm(in[0], in[1], in[2], BETA, ALPHA);                                       \
  }
ADDMM(f_addmm, 1.0, 1.0)
ADDMM(f_addmm_scaled, 0.5, -1.5)
ADDMM(f_addmm_beta_zero, 0.0, 2.0)

/* ---- index ops ----------------------------------------------------------------------------- */

static gs_tensor f_index_select_0(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_index_select(in[0], 0, in[1]);
}

/* index 2, 0, 2, 4, 2 along dim 1: position 2 is picked three times. */
static gs_tensor f_index_select_repeats(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor index = fixed_index((int64_t[]){2, 0, 2, 4, 2}, 5);
  gs_tensor r = gs_index_select(in[0], 1, index);
  gs_dispose(index);
  return r;
}

static gs_tensor f_gather_0(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_gather(in[0], 0, in[1]);
}

static gs_tensor f_gather_last(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_gather(in[0], -1, in[1]);
}

static gs_tensor f_scatter_add_0(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_scatter_add(in[0], 0, in[1], in[2]);
}

static gs_tensor f_scatter_add_1(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_scatter_add(in[0], 1, in[1], in[2]);
}

static gs_tensor f_embedding(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_embedding(in[0], in[1]);
}

/* rows 1, 3, 1, 1: row 1 is looked up three times. */
static gs_tensor f_embedding_repeats(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor index = fixed_index((int64_t[]){1, 3, 1, 1}, 4);
  gs_tensor r = gs_embedding(in[0], index);
  gs_dispose(index);
  return r;
}

/* ---- joining and cutting --------------------------------------------------------------- */

static gs_tensor f_cat_middle(const gs_tensor *in, int n, void *u) {
  (void)u;
  return gs_cat(in, n, 1);
}

/* The same input twice and a third one: the first's gradient arrives from two slabs. */
static gs_tensor f_cat_repeated_input(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return gs_cat((gs_tensor[]){in[0], in[1], in[0]}, 3, -1);
}

static gs_tensor f_stack_middle(const gs_tensor *in, int n, void *u) {
  (void)u;
  return gs_stack(in, n, 1);
}

static gs_tensor f_stack_last(const gs_tensor *in, int n, void *u) {
  (void)u;
  return gs_stack(in, n, -1);
}

/* Keeps piece `keep` of count pieces and disposes the rest. */
static gs_tensor keep_piece(gs_tensor *pieces, int count, int keep) {
  for (int i = 0; i < count; i++)
    if (i != keep)
      gs_dispose(pieces[i]);
  return pieces[keep];
}

/* x [6, 4] split into rows 0-1, 2-3, 4-5; y = piece0 * 2 + piece2 (the middle piece unused,
 * so its rows get zero); then y split along dim 1 into [2, 3] and [2, 1], the first kept: the
 * last op is a split, and two pieces of the first split reach the output. */
static gs_tensor f_split_pieces_combined(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor p[3], q[2];
  g_assert_cmpint(gs_split(in[0], 2, 0, p, 3), ==, 3);
  gs_tensor twice = gs_mul_scalar(p[0], 2.0);
  gs_tensor y = gs_add(twice, p[2]);
  g_assert_cmpint(gs_split(y, 3, 1, q, 2), ==, 2);
  gs_dispose(p[0]), gs_dispose(p[1]), gs_dispose(p[2]), gs_dispose(twice), gs_dispose(y);
  return keep_piece(q, 2, 0);
}

/* The short last piece of a split: [2, 6] in pieces of 4 leaves [2, 2]. */
static gs_tensor f_split_last_piece(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor p[2];
  g_assert_cmpint(gs_split(in[0], 4, -1, p, 2), ==, 2);
  return keep_piece(p, 2, 1);
}

/* x [2, 5, 3] in chunks of 2, 2 and 1 along dim 1; y = c0 * c1 + c2 (c2 broadcast); y then
 * chunked along dim 2 into [.., 2] and [.., 1], the second kept. */
static gs_tensor f_chunk_pieces_combined(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  gs_tensor c[3], d[2];
  g_assert_cmpint(gs_chunk(in[0], 3, 1, c, 3), ==, 3);
  gs_tensor product = gs_mul(c[0], c[1]);
  gs_tensor y = gs_add(product, c[2]);
  g_assert_cmpint(gs_chunk(y, 2, 2, d, 2), ==, 2);
  gs_dispose(c[0]), gs_dispose(c[1]), gs_dispose(c[2]), gs_dispose(product), gs_dispose(y);
  return keep_piece(d, 2, 1);
}

const grad_case grad_cases_linalg[] = {
    {"MatmulBackward", "1-D . 1-D", f_matmul, 2, {GI(1, 4), GI_S(1, 4)}},
    {"MatmulBackward", "1-D x 2-D", f_matmul, 2, {GI_S(1, 3), GI_T(2, 3, 4)}},
    {"MatmulBackward", "2-D x 1-D", f_matmul, 2, {GI_T(2, 3, 4), GI(1, 4)}},
    {"MatmulBackward", "2-D x 2-D", f_matmul, 2, {GI_T(2, 3, 4), GI_S(2, 4, 5)}},
    {"MatmulBackward", "batch [2, 1] x batch [3]", f_matmul, 2, {GI(4, 2, 1, 3, 4), GI_T(3, 3, 4, 2)}},
    {"MatmulBackward", "2-D x batch [2]", f_matmul, 2, {GI_S(2, 3, 4), GI(3, 2, 4, 2)}},
    {"MatmulBackward", "batch [2] x 2-D", f_matmul, 2, {GI_T(3, 2, 3, 4), GI_S(2, 4, 2)}},
    {"MatmulBackward", "1-D x batch [2]", f_matmul, 2, {GI(1, 3), GI_S(3, 2, 3, 4)}},
    {"MatmulBackward", "batch [2] x 1-D", f_matmul, 2, {GI_T(3, 2, 3, 4), GI_S(1, 4)}},
    {"MmBackward", "2-D x 2-D", f_mm, 2, {GI_S(2, 3, 4), GI_T(2, 4, 5)}},
    {"BmmBackward", "batch 3", f_bmm, 2, {GI_T(3, 3, 2, 4), GI_S(3, 3, 4, 2)}},
    {"MvBackward", "2-D x 1-D", f_mv, 2, {GI_S(2, 3, 4), GI_S(1, 4)}},
    {"DotBackward", "1-D . 1-D", f_dot, 2, {GI_S(1, 5), GI(1, 5)}},
    {"AddmmBackward", "bias [5] broadcast over rows", f_addmm, 3, {GI(1, 5), GI_T(2, 3, 4), GI_S(2, 4, 5)}},
    {"AddmmBackward", "bias [3, 1], beta 0.5, alpha -1.5", f_addmm_scaled, 3, {GI(2, 3, 1), GI_S(2, 3, 4), GI_T(2, 4, 5)}},
    {"AddmmBackward", "full sliced bias, beta 0.5, alpha -1.5", f_addmm_scaled, 3, {GI_S(2, 3, 5), GI(2, 3, 4), GI(2, 4, 5)}},
    {"AddmmBackward", "beta 0: the bias gets zero", f_addmm_beta_zero, 3, {GI(0, 0), GI_T(2, 3, 4), GI(2, 4, 5)}},
    {"IndexSelectBackward", "dim 0, 6 draws from 4 rows", f_index_select_0, 2, {GI_T(2, 4, 3), INDEX(4, 1, 6)}},
    {"IndexSelectBackward", "dim 1, index 2, 0, 2, 4, 2", f_index_select_repeats, 1, {GI_S(3, 2, 5, 3)}},
    {"GatherBackward", "dim 0, index [5, 4] from 3 rows", f_gather_0, 2, {GI_T(2, 3, 4), INDEX(3, 2, 5, 4)}},
    {"GatherBackward", "dim -1, sliced index [3, 6]", f_gather_last, 2, {GI_S(2, 3, 4), INDEX_S(4, 2, 3, 6)}},
    {"ScatterAddBackward", "dim 0, src larger than the index", f_scatter_add_0, 3, {GI(2, 3, 4), INDEX(3, 2, 5, 2), GI_T(2, 5, 3)}},
    {"ScatterAddBackward", "dim 1, index covers src", f_scatter_add_1, 3, {GI_S(2, 4, 3), INDEX(3, 2, 4, 5), GI_T(2, 4, 5)}},
    {"EmbeddingBackward", "index [2, 4] from 5 rows", f_embedding, 2, {GI_T(2, 5, 3), INDEX(5, 2, 2, 4)}},
    {"EmbeddingBackward", "rows 1, 3, 1, 1", f_embedding_repeats, 1, {GI_S(2, 4, 3)}},
    {"CatBackward", "3 inputs along dim 1", f_cat_middle, 3, {GI(3, 2, 1, 3), GI_T(3, 2, 3, 3), GI_S(3, 2, 2, 3)}},
    {"CatBackward", "one input twice, dim -1", f_cat_repeated_input, 2, {GI_T(2, 3, 2), GI_S(2, 3, 4)}},
    {"StackBackward", "3 inputs along dim 1", f_stack_middle, 3, {GI(2, 3, 4), GI_T(2, 3, 4), GI_S(2, 3, 4)}},
    {"StackBackward", "3 inputs along dim -1", f_stack_last, 3, {GI_S(2, 2, 3), GI(2, 2, 3), GI_T(2, 2, 3)}},
    {"SplitBackward", "split pieces combined, then split again", f_split_pieces_combined, 1, {GI_T(2, 6, 4)}},
    {"SplitBackward", "the short last piece", f_split_last_piece, 1, {GI_S(2, 2, 6)}},
    {"SplitBackward", "chunk pieces combined, then chunked again", f_chunk_pieces_combined, 1, {GI_S(3, 2, 5, 3)}},
};
const int grad_cases_linalg_count = G_N_ELEMENTS(grad_cases_linalg);
