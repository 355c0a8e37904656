/* conv.c: the Conv2d layer (torch.nn.Conv2d): gs_conv2d with the module's weight, bias and
 * options, its parameters initialised as PyTorch initialises them. */
#include <math.h>
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

static gs_tensor conv2d_forward(gs_module m, gs_tensor x);
static const gs_module_type conv2d_type = {"Conv2d", conv2d_forward, free};

static gs_tensor conv2d_forward(gs_module m, gs_tensor x) {
  const gs_conv2d_options *opt = gs__module_data_as(m, &conv2d_type, "conv2d_forward");
  if (!opt)
    return GS_NO_TENSOR;
  return gs_conv2d(x, gs_module_parameter(m, "weight"), gs_module_parameter(m, "bias"), opt);
}

gs_tensor gs_conv2d_forward(gs_module m, gs_tensor x) { return conv2d_forward(m, x); }

gs_module gs_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                        int64_t kernel_w, const gs_conv2d_options *options, bool bias,
                        gs_rng *rng) {
  const char *fn = "conv2d_new";
  gs_conv2d_options opt = options ? *options : (gs_conv2d_options){0};
  int64_t groups = opt.groups ? opt.groups : 1;
  if (in_channels <= 0 || out_channels <= 0 || kernel_h <= 0 || kernel_w <= 0 || groups <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected positive channels, kernel size and groups, got in %lld, out %lld, "
              "kernel [%lld, %lld], groups %lld",
              (long long)in_channels, (long long)out_channels, (long long)kernel_h,
              (long long)kernel_w, (long long)groups);
    return GS_NO_MODULE;
  }
  if (in_channels % groups || out_channels % groups) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected in_channels (%lld) and out_channels (%lld) divisible by groups (%lld)",
              (long long)in_channels, (long long)out_channels, (long long)groups);
    return GS_NO_MODULE;
  }
  gs_conv2d_options *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *config = opt;
  config->groups = groups;
  gs_module m = gs_module_new_typed(&conv2d_type, config);
  if (!m.id)
    return m;
  int64_t wshape[4] = {out_channels, in_channels / groups, kernel_h, kernel_w};
  gs_tensor w = gs_parameter_new(gs_empty(GS_F32, wshape, 4), true);
  /* torch.nn.Conv2d.reset_parameters: kaiming_uniform_(a = sqrt(5)), then the bias uniform in
   * +-1/sqrt(fan_in), fan_in = in / groups * kh * kw. */
  gs_init_kaiming_uniform_(w, sqrt(5.0), rng);
  gs_module_register_parameter(m, "weight", w);
  if (bias) {
    gs_tensor b = gs_parameter_new(gs_empty(GS_F32, &out_channels, 1), true);
    double bound = 1.0 / sqrt((double)(wshape[1] * kernel_h * kernel_w));
    gs_init_uniform_(b, -bound, bound, rng);
    gs_module_register_parameter(m, "bias", b);
  }
  return m;
}
