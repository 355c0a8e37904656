/* grad-families.c: every family's table of gradcheck cases, in one list that the gradcheck and
 * the double-backward check both walk, the inputs a case runs on, and the handles cases keep
 * while they run. */
#include "grad-case.h"

const grad_family grad_families[] = {
    {grad_cases_elementwise, &grad_cases_elementwise_count},
    {grad_cases_views, &grad_cases_views_count},
    {grad_cases_reduce, &grad_cases_reduce_count},
    {grad_cases_linalg, &grad_cases_linalg_count},
    {grad_cases_recurrent, &grad_cases_recurrent_count},
    {grad_cases_conv, &grad_cases_conv_count},
    {grad_cases_conv_transpose, &grad_cases_conv_transpose_count},
    {grad_cases_conv1d, &grad_cases_conv1d_count},
    {grad_cases_conv3d, &grad_cases_conv3d_count},
    {grad_cases_norm, &grad_cases_norm_count},
    {grad_cases_ordering, &grad_cases_ordering_count},
    {grad_cases_activations, &grad_cases_activations_count},
    {grad_cases_index_write, &grad_cases_index_write_count},
    {grad_cases_lu, &grad_cases_lu_count},
    {grad_cases_decompose, &grad_cases_decompose_count},
    {grad_cases_resample, &grad_cases_resample_count},
    {grad_cases_ctc, &grad_cases_ctc_count},
};
const size_t grad_family_count = G_N_ELEMENTS(grad_families);

void grad_case_make_inputs(const grad_case *c, gs_tensor *inputs) {
  gs_rng rng;
  gs_rng_seed(&rng, 1234);
  for (int i = 0; i < c->n_inputs; i++) {
    const grad_input *in = &c->inputs[i];
    gs_dtype dtype = in->no_grad ? in->dtype : GS_F64;
    inputs[i] = test_make(dtype, in->shape, in->ndim, in->layout, in->lo, in->hi, &rng);
    if (!in->no_grad)
      gs_set_requires_grad(inputs[i], true);
  }
}

/* Handles cases keep for the duration of one evaluation (gs__keep). */
static GArray *kept;

gs_tensor gs__keep(gs_tensor t) {
  if (!kept)
    kept = g_array_new(false, false, sizeof(gs_tensor));
  g_array_append_val(kept, t);
  return t;
}

void grad_case_dispose_kept(void) {
  for (guint i = 0; kept && i < kept->len; i++)
    gs_dispose(g_array_index(kept, gs_tensor, i));
  if (kept)
    g_array_set_size(kept, 0);
}
