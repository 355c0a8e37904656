/* conv.c: the Conv2d layer (torch.nn.Conv2d): gs_conv2d with the module's weight, bias and
 * options, after the border its padding_mode or an uneven padding='same' adds, its parameters
 * initialised as PyTorch initialises them. */
#include <math.h>
#include <stdlib.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/nn.h"
#include "gradscope/ops.h"

static gs_tensor conv2d_forward(gs_module m, gs_tensor x);
static const gs_module_type conv2d_type = {"Conv2d", conv2d_forward, free};

/* x with the layer's border, as torch's Conv2d pads before F.conv2d; x itself when it has
 * no zeros to add. A padding mode pads even by nothing, as torch's F.pad call does (its node
 * is in the graph). */
static gs_tensor add_border(gs_tensor x, const gs_conv2d_layer_options *o) {
  if (o->padding_mode == GS_PADDING_ZEROS && !o->pad[0] && !o->pad[1] && !o->pad[2] && !o->pad[3])
    return x;
  switch (o->padding_mode) {
  case GS_PADDING_REFLECT: return gs_reflection_pad(x, o->pad, 4);
  case GS_PADDING_REPLICATE: return gs_replication_pad(x, o->pad, 4);
  case GS_PADDING_CIRCULAR: return gs_circular_pad(x, o->pad, 4);
  default: return gs_constant_pad_nd(x, o->pad, 4, 0.0);
  }
}

static gs_tensor conv2d_forward(gs_module m, gs_tensor x) {
  const gs_conv2d_layer_options *o = gs__module_data_as(m, &conv2d_type, "conv2d_forward");
  if (!o)
    return GS_NO_TENSOR;
  gs_tensor padded = add_border(x, o);
  if (!padded.id)
    return GS_NO_TENSOR;
  gs_tensor y =
      gs_conv2d(padded, gs_module_parameter(m, "weight"), gs_module_parameter(m, "bias"), &o->conv);
  if (padded.id != x.id) /* the convolution's node keeps what it saved */
    gs_dispose(padded);
  return y;
}

gs_tensor gs_conv2d_forward(gs_module m, gs_tensor x) { return conv2d_forward(m, x); }

bool gs_conv2d_get_options(gs_module m, gs_conv2d_layer_options *out) {
  const gs_conv2d_layer_options *o = gs__module_data_as(m, &conv2d_type, "conv2d_get_options");
  if (!o)
    return false;
  if (!out) {
    gs__error(GS_ERR_ARGUMENT, "conv2d_get_options", "expected somewhere to write, got NULL");
    return false;
  }
  *out = *o;
  return true;
}

gs_module gs_conv2d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                        int64_t kernel_w, const gs_conv2d_options *options, bool bias,
                        gs_rng *rng) {
  gs_conv2d_layer_options o = {.padding_mode = GS_PADDING_ZEROS};
  if (options)
    o.conv = *options;
  return gs_conv2d_new_with(in_channels, out_channels, kernel_h, kernel_w, &o, bias, rng);
}

gs_module gs_conv2d_new_with(int64_t in_channels, int64_t out_channels, int64_t kernel_h,
                             int64_t kernel_w, const gs_conv2d_layer_options *options, bool bias,
                             gs_rng *rng) {
  const char *fn = "conv2d_new";
  gs_conv2d_layer_options opt = options ? *options : (gs_conv2d_layer_options){0};
  int64_t groups = opt.conv.groups ? opt.conv.groups : 1;
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
  if ((unsigned)opt.padding_mode > GS_PADDING_CIRCULAR) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected a padding mode of zeros, reflect, replicate or circular (0 to 3), got %d",
              (int)opt.padding_mode);
    return GS_NO_MODULE;
  }
  for (int i = 0; i < 4; i++)
    if (opt.pad[i] < 0) {
      gs__error(GS_ERR_ARGUMENT, fn, "expected border pads >= 0, got (%lld, %lld, %lld, %lld)",
                (long long)opt.pad[0], (long long)opt.pad[1], (long long)opt.pad[2],
                (long long)opt.pad[3]);
      return GS_NO_MODULE;
    }
  if (opt.padding_mode != GS_PADDING_ZEROS && (opt.conv.padding[0] || opt.conv.padding[1])) {
    gs__error(GS_ERR_ARGUMENT, fn,
              "expected the convolution's padding 0 with a padding mode other than zeros (the "
              "border is all the padding), got (%lld, %lld)",
              (long long)opt.conv.padding[0], (long long)opt.conv.padding[1]);
    return GS_NO_MODULE;
  }
  gs_conv2d_layer_options *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *config = opt;
  config->conv.groups = groups;
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
