/* ops-impl.h: what the op files share: operation codes, typed inner loops and the helpers
 * that turn (operands, dtype rules) into a run of gs__iter_run. */
#pragma once

#include "autograd-impl.h"

/* The vector kernels the ops may use (asked once; cpu-features.c): what the CPU runs, capped
 * by the environment variable GS_CPU_FEATURES (avx512, avx2 or none). Ordered: a level
 * includes those below it. */
typedef enum gs__cpu_level { GS__CPU_NONE, GS__CPU_AVX2, GS__CPU_AVX512 } gs__cpu_level;
/* exported (not public API) so that tests/engine/nn/test-conv.c can check the cap */
__attribute__((visibility("default"))) gs__cpu_level gs__cpu_level_get(void);
/* Whether AVX-512F kernels may run: kernels that keep an AVX-512 copy pick it with this plain
 * test. */
bool gs__cpu_has_avx512f(void);

/* The last sp entries of v[3] (spatial options, depth first: a 2-D op's are the last two),
 * as "[a, b]" or, with sizes, PyTorch's "(a x b)"; into buf (GS__SHAPE_STR bytes). */
static inline const char *gs__spatial_str(char *buf, const int64_t *v, int sp, bool sizes) {
  return sizes ? gs__sizes_str(buf, v + 3 - sp, sp) : gs__shape_str(buf, v + 3 - sp, sp);
}

/* ---- inside backward formulas (formula.c) --------------------------------------------- */

/* Whether input i wants a gradient. */
static inline bool gs__needs_grad(const gs__node *n, int i) { return n->next[i] != NULL; }
/* A handle to saved slot i (disposed after the formula returns). */
gs_tensor gs__saved(gs__node *n, int i);
/* Shapes a formula's gradient for input i: sums broadcast dims away (gs_sum_to, which aligns
 * shapes from the right as broadcasting does: squeeze dims the op added elsewhere first) and
 * converts to the input's dtype. Takes ownership of g (disposes it). */
gs_tensor gs__reduce_grad(gs__node *n, int i, gs_tensor g);
/* Input i's gradient when the formula passes g (borrowed) through unchanged:
 * gs__reduce_grad(n, i, gs__pass_grad_through(g)), without the pass-through handle when g is
 * summed to the input's shape anyway (no graph being created). */
gs_tensor gs__reduce_grad_through(gs__node *n, int i, gs_tensor g);
/* Whether the formula running now must record its graph (a backward with create_graph): a
 * formula with a fast path that records nothing takes its differentiable variant then. */
bool gs__formula_creates_graph(void);
/* Sets it for this thread (the backward pass); returns the previous setting. */
bool gs__formula_set_creates_graph(bool on);
/* zeros (a new zero tensor, taken over) with g written into view, a view of it: the gradient
 * of an op that took a part of its input (slice, select, narrow). Under create_graph, built
 * from differentiable ops (a scatter over the view's positions) so the result's history leads
 * back to g (view-grad.c). */
gs_tensor gs__write_into_zeros(gs_tensor zeros, gs_tensor view, gs_tensor g);
/* Another handle to g (a view): the gradient passes through a formula unchanged. */
/* Makes handle h a non-leaf whose gradient flows to edge (a node; NULL leaves it as it is):
 * for a formula that builds a stand-in for a value whose history is a node (CopySlices). */
void gs__formula_give_history(gs_tensor h, gs__node *edge);
gs_tensor gs__pass_grad_through(gs_tensor g);
/* Registers a handle made inside a formula for disposal when it returns, and passes it on:
 * lets formulas nest calls (gs_mul(g, gs__formula_temp(gs_exp(x)))) without leaking. */
gs_tensor gs__formula_temp(gs_tensor t);
/* x reversed along dim d, inside a formula (an index_select, so what is built on it
 * differentiates again; the result is a formula temporary). */
gs_tensor gs__formula_flip(gs_tensor x, int d);
/* How many such handles are held now, and disposes those registered since mark: the handles
 * the formula that just ran got from gs__saved and gs__formula_temp (backward). A mark, not
 * all: a custom function's backward may run a nested backward while its own are held. */
size_t gs__formula_temps_mark(void);
void gs__formula_temps_dispose_to(size_t mark);

/* clang-format off */
typedef enum gs__binop {
  GS__ADD, GS__SUB, GS__MUL, GS__DIV, GS__POW, GS__MAXIMUM, GS__MINIMUM,
  GS__FLOOR_DIV, GS__REMAINDER, GS__BITAND, GS__BITOR, GS__BITXOR, GS__ATAN2, GS__FMOD,
  /* From here on the results are bool (comparisons and the logical ops): no gradient. */
  GS__EQ, GS__NE, GS__LT, GS__LE, GS__GT, GS__GE,
  GS__LOGICAL_AND, GS__LOGICAL_OR, GS__LOGICAL_XOR,
  GS__BINOP_COUNT
} gs__binop;

typedef enum gs__unop {
  GS__NEG, GS__ABS, GS__EXP, GS__LOG, GS__SQRT, GS__RSQRT, GS__TANH, GS__SIGMOID, GS__RELU,
  GS__LEAKY_RELU, GS__GELU, GS__CLAMP, GS__SIN, GS__COS, GS__TAN, GS__FLOOR, GS__BITWISE_NOT,
  GS__CEIL, GS__ROUND, GS__ROUND_DECIMALS, GS__TRUNC, GS__FRAC, GS__SIGN, GS__RECIPROCAL,
  GS__SQUARE, GS__LOG1P, GS__EXPM1, GS__LOG2, GS__LOG10, GS__ASIN, GS__ACOS, GS__ATAN,
  GS__SINH, GS__COSH, GS__ERF,
  GS__ASINH, GS__ACOSH, GS__ATANH, GS__ERFC, GS__ERFINV, GS__EXP2, GS__LGAMMA, GS__DIGAMMA,
  GS__POLYGAMMA, /* order in params->decimals */
  GS__I0, GS__I0E, GS__I1, GS__I1E, GS__ERFCX,
  GS__GELU_GRAD, /* d gelu(x) / dx: only for GeluBackward */
  GS__GELU_TANH, /* gelu's tanh form (approximate='tanh'), recorded as GeluBackward too */
  GS__GELU_TANH_GRAD, /* its derivative: only for GeluBackward */
  /* the activations of activations.c, each followed by its derivative (for its backward) */
  GS__SILU,
  GS__SILU_GRAD,
  GS__ELU,
  GS__ELU_GRAD,
  GS__SOFTPLUS,
  GS__SOFTPLUS_GRAD,
  GS__HARDTANH,
  GS__HARDTANH_GRAD,
  GS__HARDSIGMOID,
  GS__HARDSIGMOID_GRAD,
  GS__HARDSWISH,
  GS__HARDSWISH_GRAD,
  GS__LOGSIGMOID,
  GS__LOGSIGMOID_GRAD,
  GS__MISH,
  GS__MISH_GRAD,
  GS__UNOP_COUNT
} gs__unop;
/* clang-format on */

/* Parameters some unary ops take (leaky_relu's slope, clamp's bounds, round's decimals, and
 * the activations' two: elu's alpha and scale, softplus's beta and threshold, hardtanh's min
 * and max). */
typedef struct gs__unary_params {
  double slope;
  int decimals;
  double min, max;
  double arg[2];
} gs__unary_params;

static inline bool gs__binop_is_comparison(gs__binop op) { return op >= GS__EQ; }

/* The inner loop of op computing in dtype, or NULL if dtype does not support op (sub and pow
 * on bool, for instance). Comparison loops write bool. */
gs__loop_fn gs__binary_loop(gs__binop op, gs_dtype dtype);
gs__loop_fn gs__unary_loop(gs__unop op, gs_dtype dtype);
const char *gs__binop_name(gs__binop op);
/* out = a + alpha * b, operands (out, a, b) of one dtype and ctx pointing to alpha in that
 * dtype; NULL for bool. */
gs__loop_fn gs__add_scaled_loop(gs_dtype dtype);
/* relu's gradient, with operands (out, g, y) of one floating dtype: y <= 0 ? 0 : g. NULL for
 * other dtypes. */
gs__loop_fn gs__relu_grad_loop(gs_dtype dtype);
/* cond ? a : b, with operands (out, cond, a, b) and cond bool. */
gs__loop_fn gs__where_loop(gs_dtype dtype);

/* Runs out = a op b for operands already in compute dtype (out may be bool for comparisons);
 * a and b broadcast to out's shape. */
void gs__run_binary(gs__binop op, gs_dtype compute, gs__tensor *out, const gs__tensor *a,
                    const gs__tensor *b);
void gs__run_unary(gs__unop op, gs_dtype compute, gs__tensor *out, const gs__tensor *in,
                   const gs__unary_params *params);

/* The dtype a binary op between a and b computes in (PyTorch's rules, with a 0-dim operand
 * deciding only when its category is higher). */
gs_dtype gs__result_type(const gs__tensor *a, const gs__tensor *b);

/* Reports as fn (with why, which ends in an open parenthesis the value closes) the first
 * value of the integer operand b that bad() refuses; false then. gs__is_negative is pow's. */
bool gs__check_int_operand(const gs__tensor *b, bool (*bad)(int64_t), const char *why,
                           const char *fn);
bool gs__is_negative(int64_t v);

/* Validates clamp bounds into p (integer dtypes get them rounded inward); false after
 * reporting. */
bool gs__clamp_params(gs_dtype dtype, double min, double max, gs__unary_params *p,
                      const char *fn);

/* What a unary op's node saves for its formula (elementwise.c's table). */
/* What a unary op's node saves: nothing, its input or its output in slot 0, or both (the
 * input in 0, the output in 1). */
typedef enum { GS__SAVE_NOTHING, GS__SAVE_INPUT, GS__SAVE_OUTPUT, GS__SAVE_BOTH } gs__unary_save;
/* The op's node kind (NULL: it records none, as floor) and what it saves. */
const gs__node_kind *gs__unary_rule(gs__unop op, gs__unary_save *save);
/* Applies a unary op to a handle, under the same rules as the public unary ops (for formulas
 * that need an op the API does not expose, like GS__GELU_GRAD). */
gs_tensor gs__unary_op(gs__unop op, gs_tensor t, const gs__unary_params *params,
                       const char *fn);

/* Node kinds the in-place forms share with the out-of-place ops (elementwise.c). */
extern const gs__node_kind AddBackward, SubBackward, MulBackward, DivBackward, PowBackward,
    AddScalarBackward, MulScalarBackward, ClampBackward, CopyBackward, FillBackward;
/* t()'s node kind (views.c): matmul's formula sees a weight read as W^T through it. */
extern const gs__node_kind TBackward;

/* Input i's gradient from the gradient g of one block of it (a piece of a split, the part of
 * scatter_add's src its index covers): zeros of input i's shape and dtype with g written at
 * start (one offset per dim), or g itself when the block is the whole input (join.c). */
gs_tensor gs__grad_of_block(gs__node *n, int i, gs_tensor g, const int64_t *start);

static inline int64_t gs__abs64(int64_t v) { return v < 0 ? -v : v; }

/* Reports a broadcast failure of a and b in PyTorch's terms against fn. */
void gs__report_broadcast(const char *fn, const int64_t *a, int na, const int64_t *b, int nb);

/* ---- joins (join.c) ------------------------------------------------------------------- */

/* Makes the tensor a join writes into: a new contiguous tensor of dtype and shape, or
 * GS_NO_TENSOR after reporting as fn. */
typedef gs_tensor (*gs__stack_maker)(gs_dtype dtype, const int64_t *shape, int ndim,
                                     const char *fn);
/* gs_stack, writing into the tensor make returns (NULL: the engine's allocator), so that the
 * DataLoader's workers stack a batch straight into shared memory, with no copy after. */
gs_tensor gs__stack_into(const gs_tensor *tensors, int count, int dim, gs__stack_maker make,
                         const char *fn);
/* The tensor and the bool mask of masked_fill and masked_select: NULL after reporting a stale
 * handle or a mask of another dtype. */
static inline gs__tensor *gs__lookup_with_mask(gs_tensor h, gs_tensor hmask, const char *fn,
                                               gs__tensor **mask) {
  gs__tensor *t = gs__lookup(h, fn);
  *mask = t ? gs__lookup(hmask, fn) : NULL;
  if (!*mask)
    return NULL;
  if ((*mask)->dtype != GS_BOOL) {
    gs__error(GS_ERR_DTYPE, fn, "expected a bool mask, got %s", gs_dtype_name((*mask)->dtype));
    return NULL;
  }
  return t;
}

/* ---- along a dim and by index (ordering.c, product.c, index.c, index-write.c) ---------- */

/* outer, len and inner of a contiguous tensor of t's shape seen along dim d: a row is len
 * elements inner apart (a 0-D tensor is one row of one). */
static inline void gs__row_layout(const gs__tensor *t, int d, int64_t *outer, int64_t *len,
                                  int64_t *inner) {
  *outer = 1, *len = t->ndim ? t->shape[d] : 1, *inner = 1;
  for (int i = 0; i < t->ndim; i++) {
    if (i < d)
      *outer *= t->shape[i];
    else if (i > d)
      *inner *= t->shape[i];
  }
}

/* An i64 index (or, when takes_i32, an i32 one), or false after reporting as fn. */
bool gs__check_index_dtype(const gs__tensor *index, bool takes_i32, const char *fn);
/* Every value of index (any strides) in [0, size), or false after reporting the first that is
 * not, with its position, the range, and what (the indexed dim) it indexes. */
bool gs__check_index_values(const gs__tensor *index, int64_t size, const char *what,
                            const char *fn);
/* The index values of a 1-D or 0-D index tensor, normalised into [0, size) when wrap (negative
 * values count from the end, as take's), as a new contiguous i64 tensor; GS_NO_TENSOR after
 * reporting one outside [-size, size) (or [0, size) without wrap). */
gs_tensor gs__checked_positions(const gs__tensor *index, int64_t size, bool wrap, const char *what,
                                const char *fn);
/* The inner loops of index.c, for index-tensors.c's runs over element offsets (ctx: a jump
 * of one element's bytes): out = src[offset] for elements of es bytes, and a scatter's write
 * (or add, multiply) at dst[offset]; NULL for a dtype the mode does not take. */
gs__loop_fn gs__gather_loop(size_t es);
/* A scatter's operands checked as torch checks them (index i64 with t's ndim, no larger than
 * src, when given, in any dim nor than t in any dim but dim, its values in range; src of t's
 * dtype): dim wrapped, or -1 after reporting. */
int gs__check_scatter_operands(const gs__tensor *t, int dim, const gs__tensor *index,
                               const gs__tensor *src, const char *fn);
gs__loop_fn gs__scatter_loop(gs_scatter_reduce mode, gs_dtype dtype);
/* scatter_reduce's result of checked operands (d wrapped), recorded under kind: torch's
 * scatter_reduce and index_reduce share it (scatter-reduce.c). */
gs_tensor gs__scatter_reduced_as(const struct gs__node_kind *kind, const gs__tensor *t, int d,
                                 const gs__tensor *index, const gs__tensor *src,
                                 gs_scatter_reduction reduce, bool include_self, const char *fn);
extern const struct gs__node_kind IndexReduceBackward;
/* The checks batch_norm and group_norm share (batch-norm.c), false after reporting: an input
 * [N, C, ...] of a floating dtype; a [C] operand (weight, bias, running stats; NULL: absent)
 * of the input's dtype. */
bool gs__check_channels_input(const gs__tensor *x, const char *fn);
bool gs__check_channel_operand(const gs__tensor *t, const char *what, int64_t c, gs_dtype dtype,
                               const char *fn);
/* Inside a backward formula (group and layer norm, group-norm.c): x normalised over its dim k
 * by its mean and biased variance plus eps, recomputed with ops so a double backward follows
 * them: *xhat, and *invstd (keepdim); both formula temporaries. */
void gs__formula_normalise(gs_tensor x, int k, double eps, gs_tensor *xhat, gs_tensor *invstd);
/* That normalisation's input gradient for gh (the output's gradient times the weight, shaped as
 * x): invstd * (gh - mean(gh) - xhat * mean(gh * xhat)), means over dim k (a temporary). */
gs_tensor gs__formula_normalise_grad(gs_tensor gh, gs_tensor xhat, gs_tensor invstd, int k);
/* Records the node of an affine normalisation made as h (group norm, layer norm): inputs x,
 * then w and b when given (NULL: absent); ints {param, w's input number, b's input number, -1
 * for an absent one}; reals {eps}; saved slots {x, w} (group-norm.c). */
void gs__record_affine_norm(const gs__node_kind *kind, gs_tensor h, const gs__tensor *x,
                            const gs__tensor *w, const gs__tensor *b, int64_t param, double eps,
                            const char *fn);
/* false after reporting if t has overlapping elements (an expanded dim): an in-place write
 * would write one element several times (inplace.c). */
bool gs__check_writable(const gs__tensor *t, const char *fn);

/* Records the one node of an op whose result r was computed with grad mode off by other ops
 * (so the graph shows the op itself, under its own kind, as torch records it): NULL when r
 * is not floating or nothing needs a gradient. n_saved slots are reserved for gs__save. */
static inline gs__node *gs__record_result(const gs__node_kind *kind, gs_tensor r, int n_inputs,
                                          const gs__tensor *const *inputs, int n_saved,
                                          const char *fn) {
  gs__tensor *out = r.id ? gs__lookup(r, fn) : NULL;
  return out && gs_dtype_is_floating(out->dtype) ? gs__record(kind, out, n_inputs, inputs, n_saved)
                                                 : NULL;
}

/* special-functions.c: scalar functions the kernels call (in double; torch's values at the
 * poles). */
double gs__lgamma(double x);
double gs__erfinv(double y);
double gs__digamma(double x);
/* The n-th derivative of digamma (n >= 0; n = 0 is digamma itself). */
double gs__polygamma(int n, double x);
/* The modified Bessel functions of the first kind of orders 0 and 1, and the same scaled by
 * exp(-|x|); the scaled complementary error function exp(x^2) erfc(x). */
double gs__i0(double x);
double gs__i0e(double x);
double gs__i1(double x);
double gs__i1e(double x);
double gs__erfcx(double x);
