/* grad-case.h: one gradcheck case: a function ending in the op under test, the node kind it
 * must produce, and the inputs to check it on. The cases of each op family live in their own
 * cases-*.c file; test-gradcheck.c runs them all and fails when a node kind has none. */
#pragma once

#include "test-util.h"

#define GRAD_CASE_MAX_INPUTS 4

typedef struct grad_input {
  int ndim;
  int64_t shape[GS_MAX_DIMS];
  test_layout layout; /* contiguous, transposed or sliced: gradcheck refuses expanded inputs */
  double lo, hi;      /* values uniform in [lo, hi) */
  bool no_grad;       /* an input that does not require grad (an index, a condition) */
  gs_dtype dtype;     /* for no_grad inputs (f64 otherwise) */
} grad_input;

typedef struct grad_case {
  const char *kind;  /* the node kind the output's grad_fn must be, e.g. "MulBackward" */
  const char *label; /* what this case varies, e.g. "broadcast [3, 4] * [4]" */
  gs_tensor (*fn)(const gs_tensor *inputs, int n_inputs, void *user_data);
  int n_inputs;
  grad_input inputs[GRAD_CASE_MAX_INPUTS];
  /* Non-default gradcheck settings (eps 0: the defaults), for paths through f32, where a
   * step of 1e-6 drowns in rounding. */
  gs_gradcheck_options options;
} grad_case;

/* Shorthands for inputs: plain f64 in [-2, 2), and with a layout or range. */
#define GI(ND, ...) {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_CONTIGUOUS, .lo = -2, .hi = 2}
#define GI_T(ND, ...) {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_TRANSPOSED, .lo = -2, .hi = 2}
#define GI_S(ND, ...) {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_SLICED, .lo = -2, .hi = 2}
#define GI_POS(ND, ...) {.ndim = ND, .shape = {__VA_ARGS__}, .layout = LAYOUT_CONTIGUOUS, .lo = 0.5, .hi = 2}

/* Registers t for disposal at the end of the current case and returns it: lets a case nest
 * calls (gs_reshape(gs__keep(gs_t(x)), ...)) without leaking the inner result. */
gs_tensor gs__keep(gs_tensor t);

/* Disposes the handles the case that just ran kept (gs__keep). */
void grad_case_dispose_kept(void);
/* The case's inputs, made as every check makes them (float64 where they require grad, drawn
 * from one seed): c->n_inputs handles the caller disposes. */
void grad_case_make_inputs(const grad_case *c, gs_tensor *inputs);

/* Every family's table of cases (grad-families.c). */
typedef struct grad_family {
  const struct grad_case *cases;
  const int *count;
} grad_family;
extern const grad_family grad_families[];
extern const size_t grad_family_count;

/* Each family's table, and its length. */
extern const grad_case grad_cases_elementwise[];
extern const int grad_cases_elementwise_count;
extern const grad_case grad_cases_views[];
extern const int grad_cases_views_count;
extern const grad_case grad_cases_reduce[];
extern const int grad_cases_reduce_count;
extern const grad_case grad_cases_linalg[];
extern const int grad_cases_linalg_count;
extern const grad_case grad_cases_recurrent[];
extern const int grad_cases_recurrent_count;
extern const grad_case grad_cases_conv[];
extern const int grad_cases_conv_count;
extern const grad_case grad_cases_conv_transpose[];
extern const int grad_cases_conv_transpose_count;
extern const grad_case grad_cases_conv1d[];
extern const int grad_cases_conv1d_count;
extern const grad_case grad_cases_conv3d[];
extern const int grad_cases_conv3d_count;
extern const grad_case grad_cases_norm[];
extern const int grad_cases_norm_count;
extern const grad_case grad_cases_ordering[];
extern const int grad_cases_ordering_count;
extern const grad_case grad_cases_index_write[];
extern const int grad_cases_index_write_count;
extern const grad_case grad_cases_lu[];
extern const int grad_cases_lu_count;
extern const grad_case grad_cases_decompose[];
extern const int grad_cases_decompose_count;
extern const grad_case grad_cases_activations[];
extern const int grad_cases_activations_count;
extern const grad_case grad_cases_resample[];
extern const int grad_cases_resample_count;
extern const grad_case grad_cases_ctc[];
extern const int grad_cases_ctc_count;
