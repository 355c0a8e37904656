/* activations.c: ReLU, Tanh, Sigmoid and GELU as modules (no parameters), so they can sit in a
 * Sequential; each forward is the op of the same name. ReLU(inplace=True) writes into its
 * input (gs_relu_) and returns that same handle, as torch's module returns its input. */
#include "gradscope/error.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

static gs_tensor relu_forward(gs_module m, gs_tensor x) { (void)m; return gs_relu(x); }
static gs_tensor relu_inplace_forward(gs_module m, gs_tensor x) {
  (void)m;
  gs_clear_error(); /* so the check below sees this write's outcome alone */
  gs_relu_(x);
  return gs_last_error_code() == GS_OK ? x : GS_NO_TENSOR;
}
static gs_tensor tanh_forward(gs_module m, gs_tensor x) { (void)m; return gs_tanh(x); }
static gs_tensor sigmoid_forward(gs_module m, gs_tensor x) { (void)m; return gs_sigmoid(x); }
static gs_tensor gelu_forward(gs_module m, gs_tensor x) { (void)m; return gs_gelu(x); }
static gs_tensor gelu_tanh_forward(gs_module m, gs_tensor x) {
  (void)m;
  return gs_gelu_tanh(x);
}

static const gs_module_type relu_type = {"ReLU", relu_forward, NULL};
static const gs_module_type relu_inplace_type = {"ReLU", relu_inplace_forward, NULL};
static const gs_module_type tanh_type = {"Tanh", tanh_forward, NULL};
static const gs_module_type sigmoid_type = {"Sigmoid", sigmoid_forward, NULL};
static const gs_module_type gelu_type = {"GELU", gelu_forward, NULL};
static const gs_module_type gelu_tanh_type = {"GELU", gelu_tanh_forward, NULL};

gs_module gs_relu_new(void) { return gs_module_new_typed(&relu_type, NULL); }
gs_module gs_relu_inplace_new(void) { return gs_module_new_typed(&relu_inplace_type, NULL); }
gs_module gs_tanh_new(void) { return gs_module_new_typed(&tanh_type, NULL); }
gs_module gs_sigmoid_new(void) { return gs_module_new_typed(&sigmoid_type, NULL); }
gs_module gs_gelu_new(void) { return gs_module_new_typed(&gelu_type, NULL); }
gs_module gs_gelu_tanh_new(void) { return gs_module_new_typed(&gelu_tanh_type, NULL); }
