/* cases-ctc.c: gradcheck cases for the CTC loss. Its gradient is torch's, with log_softmax's
 * normalisation folded in, so it is checked the way the loss is fed: through a log_softmax
 * of free inputs (where it is the true gradient). Targets with a repeated label (which needs
 * a blank between) and samples shorter than the input. */
#include "grad-case.h"

static gs_tensor i64_tensor(const int64_t *v, int64_t n) { return gs_from_data(GS_I64, &n, 1, v); }

/* ctc_loss(log_softmax(in[0], 2)) of targets [1, 2] and [3, 3, 1], input lengths 5 and 4 */
static gs_tensor ctc_case(const gs_tensor *in, bool zero_infinity, const int64_t *in_lengths) {
  gs_tensor lp = gs_log_softmax(in[0], 2);
  gs_tensor targets = i64_tensor((const int64_t[]){1, 2, 3, 3, 1}, 5);
  gs_tensor il = i64_tensor(in_lengths, 2);
  gs_tensor tl = i64_tensor((const int64_t[]){2, 3}, 2);
  gs_tensor r = gs_ctc_loss(lp, targets, il, tl, 0, zero_infinity);
  gs_dispose(lp), gs_dispose(targets), gs_dispose(il), gs_dispose(tl);
  return r;
}

static gs_tensor f_ctc(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return ctc_case(in, false, (const int64_t[]){5, 4});
}

/* the second sample cannot fit [3, 3, 1] in 3 steps: its loss and gradient are 0 */
static gs_tensor f_ctc_zero_infinity(const gs_tensor *in, int n, void *u) {
  (void)n, (void)u;
  return ctc_case(in, true, (const int64_t[]){5, 3});
}

const grad_case grad_cases_ctc[] = {
    {"CtcLossBackward", "[5, 2, 4] through log_softmax", f_ctc, 1, {GI(3, 5, 2, 4)}},
    {"CtcLossBackward",
     "an impossible sample, zero_infinity",
     f_ctc_zero_infinity,
     1,
     {GI_T(3, 5, 2, 4)}},
};
const int grad_cases_ctc_count = G_N_ELEMENTS(grad_cases_ctc);
