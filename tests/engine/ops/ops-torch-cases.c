/* ops-torch-cases.c: writes the cases that ops-torch-compare.py (beside it) checks against
 * PyTorch: convolution, pooling, batch norm and the elementwise and reduction ops added for PyTorch
 * programs. For each case, <case>.safetensors holds the inputs (in0, in1, ...; strided views
 * are written with their values), the outputs (out0, out1, ...), a random weight per floating
 * output (r0, ...) and the gradients of sum(out * r) with respect to each input that requires
 * grad (grad0, ...); its metadata names the op, its arguments as JSON (PyTorch's keyword
 * names) and which inputs require grad. Usage: ops-torch-cases DIR */
#include <gradscope/gradscope.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IN 5
#define MAX_OUT 4

typedef struct op_case {
  const char *name;       /* file name */
  const char *op;         /* what ops-torch-compare.py calls */
  const char *args;       /* JSON object of keyword arguments */
  gs_tensor in[MAX_IN];   /* GS_NO_TENSOR for an absent optional input (None) */
  int n_in;
  const char *requires;   /* '1' per input that requires grad */
  int n_out;
} op_case;

static const char *dir;
static gs_rng rng;
static int written;

/* The op on the case's inputs: writes its n_out outputs. */
typedef void (*op_fn)(const gs_tensor *in, gs_tensor *out, void *user);

static void run(const op_case *c, op_fn fn, void *user) {
  for (int i = 0; i < c->n_in; i++)
    if (c->in[i].id && c->requires[i] == '1')
      gs_set_requires_grad(c->in[i], true);
  gs_tensor outs[MAX_OUT] = {0};
  fn(c->in, outs, user);
  const char *names[3 * MAX_IN + 2 * MAX_OUT];
  gs_tensor tensors[3 * MAX_IN + 2 * MAX_OUT];
  char labels[3 * MAX_IN + 2 * MAX_OUT][16];
  int count = 0;
  gs_tensor loss = GS_NO_TENSOR;
  for (int i = 0; i < c->n_out; i++) {
    if (!outs[i].id) {
      fprintf(stderr, "%s: output %d failed\n", c->name, i);
      exit(1);
    }
    snprintf(labels[count], 16, "out%d", i);
    names[count] = labels[count];
    tensors[count++] = outs[i];
    if (!gs_dtype_is_floating(gs_dtype_of(outs[i])) || !gs_requires_grad(outs[i]))
      continue;
    int64_t shape[8];
    int nd = gs_shape(outs[i], shape);
    gs_tensor r = gs_randn(gs_dtype_of(outs[i]), shape, nd, &rng);
    snprintf(labels[count], 16, "r%d", i);
    names[count] = labels[count];
    tensors[count++] = r;
    gs_tensor prod = gs_mul(outs[i], r);
    gs_tensor part = gs_sum(prod, NULL, 0, false);
    gs_dispose(prod);
    if (loss.id) {
      gs_tensor total = gs_add(loss, part);
      gs_dispose(loss), gs_dispose(part);
      loss = total;
    } else {
      loss = part;
    }
  }
  if (loss.id) {
    gs_backward(loss);
    gs_dispose(loss);
  }
  for (int i = 0; i < c->n_in; i++) {
    if (!c->in[i].id)
      continue;
    snprintf(labels[count], 16, "in%d", i);
    names[count] = labels[count];
    tensors[count++] = c->in[i];
    if (c->requires[i] == '1' && gs_grad(c->in[i]).id) {
      snprintf(labels[count], 16, "grad%d", i);
      names[count] = labels[count];
      tensors[count++] = gs_grad(c->in[i]);
    }
  }
  char n_in[8];
  snprintf(n_in, sizeof n_in, "%d", c->n_in);
  const char *meta[] = {"op", c->op, "args", c->args, "requires", c->requires, "n_in", n_in,
                        NULL};
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->name);
  if (gs_safetensors_save(path, names, tensors, count, meta) != 0)
    exit(1);
  for (int i = 0; i < count; i++)
    if (strncmp(names[i], "grad", 4) != 0) /* gradients belong to their inputs */
      gs_dispose(tensors[i]);
  written++;
}

static gs_tensor randn(gs_dtype dt, int ndim, const int64_t *shape) {
  return gs_randn(dt, shape, ndim, &rng);
}

/* A view with the last two dims swapped over a contiguous tensor of the swapped shape: a
 * strided input with shape `shape`. */
static gs_tensor randn_t(gs_dtype dt, int ndim, const int64_t *shape) {
  int64_t swapped[8];
  memcpy(swapped, shape, sizeof(int64_t) * (size_t)ndim);
  swapped[ndim - 1] = shape[ndim - 2];
  swapped[ndim - 2] = shape[ndim - 1];
  gs_tensor base = gs_randn(dt, swapped, ndim, &rng);
  gs_tensor t = gs_transpose(base, -2, -1);
  gs_dispose(base); /* the view keeps the storage */
  return t;
}

#define SHAPE(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}

/* ---- convolution and pooling ---------------------------------------------------------- */

static void op_conv2d(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = gs_conv2d(in[0], in[1], in[2], user);
}

static void op_max_pool2d(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = gs_max_pool2d(in[0], user, &out[1]);
}

static void op_avg_pool2d(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = gs_avg_pool2d(in[0], user);
}

static void conv_cases(gs_dtype dt, const char *sfx) {
  char name[64];
  snprintf(name, sizeof name, "conv2d_bias_%s", sfx);
  run(&(op_case){name, "conv2d", "{}", {randn(dt, SHAPE(2, 3, 7, 6)), randn(dt, SHAPE(4, 3, 3, 3)), randn(dt, SHAPE(4))}, 3, "111", 1},
      op_conv2d, NULL);
  snprintf(name, sizeof name, "conv2d_strided_%s", sfx);
  run(&(op_case){name, "conv2d", "{\"stride\": [2, 1], \"padding\": [1, 2], \"dilation\": [2, 1]}",
                 {randn_t(dt, SHAPE(3, 2, 8, 7)), randn(dt, SHAPE(5, 2, 3, 2)), GS_NO_TENSOR}, 3, "110", 1},
      op_conv2d, &(gs_conv2d_options){.stride = {2, 1}, .padding = {1, 2}, .dilation = {2, 1}});
  snprintf(name, sizeof name, "conv2d_groups_%s", sfx);
  run(&(op_case){name, "conv2d", "{\"padding\": [1, 1], \"groups\": 2}",
                 {randn(dt, SHAPE(2, 4, 5, 5)), randn_t(dt, SHAPE(6, 2, 3, 3)), randn(dt, SHAPE(6))}, 3, "111", 1},
      op_conv2d, &(gs_conv2d_options){.padding = {1, 1}, .groups = 2});
  snprintf(name, sizeof name, "conv2d_unbatched_%s", sfx);
  run(&(op_case){name, "conv2d", "{\"stride\": [2, 2]}",
                 {randn(dt, SHAPE(3, 9, 8)), randn(dt, SHAPE(2, 3, 3, 3)), randn(dt, SHAPE(2))}, 3, "111", 1},
      op_conv2d, &(gs_conv2d_options){.stride = {2, 2}});
  /* A digits-sized layer: a batch of 64 8x8 images, 1 -> 16 channels. */
  snprintf(name, sizeof name, "conv2d_digits_%s", sfx);
  run(&(op_case){name, "conv2d", "{\"padding\": [1, 1]}",
                 {randn(dt, SHAPE(64, 1, 8, 8)), randn(dt, SHAPE(16, 1, 3, 3)), randn(dt, SHAPE(16))}, 3, "111", 1},
      op_conv2d, &(gs_conv2d_options){.padding = {1, 1}});
  /* The digits CNN's second layer (16 -> 32 channels on the pooled 4x4), and a 3x3 without
   * padding on rows 6 wide: both on conv-direct.c's path. */
  snprintf(name, sizeof name, "conv2d_digits_second_%s", sfx);
  run(&(op_case){name, "conv2d", "{\"padding\": [1, 1]}",
                 {randn(dt, SHAPE(8, 16, 4, 4)), randn(dt, SHAPE(32, 16, 3, 3)), randn(dt, SHAPE(32))}, 3, "111", 1},
      op_conv2d, &(gs_conv2d_options){.padding = {1, 1}});
  snprintf(name, sizeof name, "conv2d_direct_no_padding_%s", sfx);
  run(&(op_case){name, "conv2d", "{}",
                 {randn(dt, SHAPE(3, 5, 7, 8)), randn(dt, SHAPE(19, 5, 3, 3)), GS_NO_TENSOR}, 3, "110", 1},
      op_conv2d, NULL);

  snprintf(name, sizeof name, "max_pool2d_%s", sfx);
  run(&(op_case){name, "max_pool2d", "{\"kernel_size\": [2, 2]}", {randn(dt, SHAPE(2, 3, 6, 5))}, 1, "1", 2},
      op_max_pool2d, &(gs_pool2d_options){.kernel = {2}});
  snprintf(name, sizeof name, "max_pool2d_overlap_%s", sfx);
  run(&(op_case){name, "max_pool2d",
                 "{\"kernel_size\": [3, 3], \"stride\": [2, 1], \"padding\": [1, 1], \"dilation\": [1, 2], \"ceil_mode\": true}",
                 {randn_t(dt, SHAPE(2, 2, 7, 8))}, 1, "1", 2},
      op_max_pool2d, &(gs_pool2d_options){.kernel = {3}, .stride = {2, 1}, .padding = {1, 1}, .dilation = {1, 2}, .ceil_mode = true});
  snprintf(name, sizeof name, "avg_pool2d_%s", sfx);
  run(&(op_case){name, "avg_pool2d", "{\"kernel_size\": [3, 2], \"stride\": [2, 2], \"padding\": [1, 1]}",
                 {randn(dt, SHAPE(2, 3, 7, 6))}, 1, "1", 1},
      op_avg_pool2d, &(gs_pool2d_options){.kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1}});
  snprintf(name, sizeof name, "avg_pool2d_exclude_%s", sfx);
  run(&(op_case){name, "avg_pool2d",
                 "{\"kernel_size\": [3, 3], \"stride\": [2, 2], \"padding\": [1, 1], \"ceil_mode\": true, \"count_include_pad\": false}",
                 {randn_t(dt, SHAPE(3, 6, 5))}, 1, "1", 1},
      op_avg_pool2d, &(gs_pool2d_options){.kernel = {3}, .stride = {2}, .padding = {1, 1}, .ceil_mode = true, .count_exclude_pad = true});
}

/* ---- batch norm ----------------------------------------------------------------------- */

/* The running estimates are cloned first, so the file keeps their values before the update
 * (in1, in2) and after it (out1, out2). */
static void op_batch_norm(const gs_tensor *in, gs_tensor *out, void *user) {
  bool training = user != NULL;
  out[1] = gs_clone(in[1]);
  out[2] = gs_clone(in[2]);
  out[0] = gs_batch_norm(in[0], out[1], out[2], in[3], in[4], training, 0.1, 1e-5);
}

static void batch_norm_cases(gs_dtype dt, const char *sfx) {
  char name[64];
  int64_t c = 3;
  gs_tensor var = gs_rand(dt, &c, 1, &rng);
  gs_add_scalar_(var, 0.5);
  snprintf(name, sizeof name, "batch_norm_train_2d_%s", sfx);
  run(&(op_case){name, "batch_norm", "{\"training\": true, \"momentum\": 0.1, \"eps\": 1e-05}",
                 {randn_t(dt, SHAPE(4, 3, 5, 6)), randn(dt, SHAPE(3)), gs_clone(var), randn(dt, SHAPE(3)), randn(dt, SHAPE(3))},
                 5, "10011", 3},
      op_batch_norm, (void *)1);
  snprintf(name, sizeof name, "batch_norm_train_1d_%s", sfx);
  run(&(op_case){name, "batch_norm", "{\"training\": true, \"momentum\": 0.1, \"eps\": 1e-05}",
                 {randn_t(dt, SHAPE(8, 3)), randn(dt, SHAPE(3)), gs_clone(var), randn(dt, SHAPE(3)), GS_NO_TENSOR},
                 5, "10010", 3},
      op_batch_norm, (void *)1);
  snprintf(name, sizeof name, "batch_norm_eval_%s", sfx);
  run(&(op_case){name, "batch_norm", "{\"training\": false, \"momentum\": 0.1, \"eps\": 1e-05}",
                 {randn(dt, SHAPE(2, 3, 4)), randn(dt, SHAPE(3)), gs_clone(var), randn(dt, SHAPE(3)), randn(dt, SHAPE(3))},
                 5, "10011", 3},
      op_batch_norm, NULL);
  gs_dispose(var);
}

/* ---- elementwise and reductions ------------------------------------------------------- */

static void op_unary(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = ((gs_tensor(*)(gs_tensor))user)(in[0]);
}

typedef struct moment_args {
  gs_tensor (*fn)(gs_tensor, const int *, int, double, bool);
  int dims[2], ndims;
  double correction;
  bool keepdim;
} moment_args;

static void op_moment(const gs_tensor *in, gs_tensor *out, void *user) {
  const moment_args *a = user;
  out[0] = a->fn(in[0], a->dims, a->ndims, a->correction, a->keepdim);
}

static void op_masked_fill(const gs_tensor *in, gs_tensor *out, void *user) {
  (void)user;
  out[0] = gs_masked_fill(in[0], in[1], -2.5);
}

static void elementwise_cases(gs_dtype dt, const char *sfx) {
  char name[64];
  static const struct {
    const char *op;
    gs_tensor (*fn)(gs_tensor);
  } unary[] = {{"sin", gs_sin}, {"cos", gs_cos}, {"tan", gs_tan}};
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
    snprintf(name, sizeof name, "%s_%s", unary[i].op, sfx);
    run(&(op_case){name, unary[i].op, "{}", {randn_t(dt, SHAPE(3, 4, 5))}, 1, "1", 1}, op_unary,
        (void *)unary[i].fn);
  }
  snprintf(name, sizeof name, "var_dim1_%s", sfx);
  run(&(op_case){name, "var", "{\"dim\": [1], \"unbiased\": true, \"keepdim\": false}",
                 {randn_t(dt, SHAPE(3, 4, 5))}, 1, "1", 1},
      op_moment, &(moment_args){gs_var, {1}, 1, 1.0, false});
  snprintf(name, sizeof name, "var_all_biased_%s", sfx);
  run(&(op_case){name, "var", "{\"unbiased\": false}", {randn(dt, SHAPE(4, 6))}, 1, "1", 1},
      op_moment, &(moment_args){gs_var, {0}, 0, 0.0, false});
  snprintf(name, sizeof name, "std_dims_keep_%s", sfx);
  run(&(op_case){name, "std", "{\"dim\": [0, -1], \"unbiased\": true, \"keepdim\": true}",
                 {randn_t(dt, SHAPE(3, 4, 5))}, 1, "1", 1},
      op_moment, &(moment_args){gs_std, {0, -1}, 2, 1.0, true});
  snprintf(name, sizeof name, "masked_fill_%s", sfx);
  gs_tensor row = randn(dt, SHAPE(5));
  gs_tensor mask = gs_gt_scalar(row, 0.0);
  gs_dispose(row);
  run(&(op_case){name, "masked_fill", "{\"value\": -2.5}", {randn_t(dt, SHAPE(3, 4, 5)), mask}, 2, "10", 1},
      op_masked_fill, NULL);
}

static gs_tensor elu_07(gs_tensor t) { return gs_elu(t, 0.7); }
static gs_tensor softplus_2_3(gs_tensor t) { return gs_softplus(t, 2.0, 3.0); }
static gs_tensor softplus_default(gs_tensor t) { return gs_softplus(t, 1.0, 20.0); }
static gs_tensor hardtanh_m08_12(gs_tensor t) { return gs_hardtanh(t, -0.8, 1.2); }

/* The activations on spread values that include every kink (-3, 0, 1.5, 3, 6, the hardtanh
 * bounds), where torch's one-sided slopes must match. */
static void activation_cases(gs_dtype dt, const char *sfx) {
  static const struct {
    const char *op, *args;
    gs_tensor (*fn)(gs_tensor);
  } acts[] = {
      {"silu", "{}", gs_silu},
      {"elu", "{\"alpha\": 0.7}", elu_07},
      {"selu", "{}", gs_selu},
      {"softplus", "{\"beta\": 2.0, \"threshold\": 3.0}", softplus_2_3},
      {"softplus", "{}", softplus_default},
      {"hardtanh", "{\"min_val\": -0.8, \"max_val\": 1.2}", hardtanh_m08_12},
      {"relu6", "{}", gs_relu6},
      {"hardsigmoid", "{}", gs_hardsigmoid},
      {"hardswish", "{}", gs_hardswish},
      {"logsigmoid", "{}", gs_logsigmoid},
      {"mish", "{}", gs_mish},
  };
  /* A low-discrepancy spread over [-7, 7), then the kinks. 3 comes last, in the scalar tail
   * torch's CPU kernels leave after their vector blocks (37 = 32 + 5): hardswish's slope at 3
   * is 1.5 there (and on CUDA), 1 in torch's CPU vector path. */
  double v[37];
  for (int i = 0; i < 27; i++)
    v[i] = -7 + 14 * fmod(i * 0.6180339887498949, 1.0);
  static const double kinks[10] = {-3, 0, 6, -0.8, 1.2, 1.5, -6, 25, -30, 3};
  memcpy(v + 27, kinks, sizeof kinks);
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s%zu_%s", acts[i].op, i, sfx);
    gs_tensor x64 = gs_from_data(GS_F64, (int64_t[]){37}, 1, v);
    gs_tensor x = gs_to_dtype(x64, dt);
    gs_dispose(x64);
    run(&(op_case){name, acts[i].op, acts[i].args, {x}, 1, "1", 1}, op_unary, (void *)acts[i].fn);
  }
}

/* ---- transposed convolution (conv-transpose.c) ---------------------------------------- */

static void op_conv_transpose2d(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = gs_conv_transpose2d(in[0], in[1], in[2], user);
}

static void conv_transpose_cases(gs_dtype dt, const char *sfx) {
  char name[64];
  snprintf(name, sizeof name, "conv_transpose2d_bias_%s", sfx);
  run(&(op_case){name,
                 "conv_transpose2d",
                 "{}",
                 {randn(dt, SHAPE(2, 3, 5, 4)), randn(dt, SHAPE(3, 4, 3, 3)), randn(dt, SHAPE(4))},
                 3,
                 "111",
                 1},
      op_conv_transpose2d, NULL);
  snprintf(name, sizeof name, "conv_transpose2d_strided_%s", sfx);
  run(&(op_case){name,
                 "conv_transpose2d",
                 "{\"stride\": [2, 3], \"padding\": [1, 0], \"output_padding\": [1, 2], "
                 "\"dilation\": [1, 2]}",
                 {randn_t(dt, SHAPE(2, 2, 4, 5)), randn(dt, SHAPE(2, 3, 3, 2)), GS_NO_TENSOR},
                 3,
                 "110",
                 1},
      op_conv_transpose2d,
      &(gs_conv_transpose2d_options){
          .stride = {2, 3}, .padding = {1, 0}, .output_padding = {1, 2}, .dilation = {1, 2}});
  snprintf(name, sizeof name, "conv_transpose2d_groups_%s", sfx);
  run(&(op_case){name,
                 "conv_transpose2d",
                 "{\"stride\": [2, 2], \"padding\": [1, 1], \"groups\": 2}",
                 {randn(dt, SHAPE(2, 4, 6, 6)), randn_t(dt, SHAPE(4, 3, 4, 4)),
                  randn(dt, SHAPE(6))},
                 3,
                 "111",
                 1},
      op_conv_transpose2d,
      &(gs_conv_transpose2d_options){.stride = {2, 2}, .padding = {1, 1}, .groups = 2});
  snprintf(name, sizeof name, "conv_transpose2d_unbatched_%s", sfx);
  run(&(op_case){name,
                 "conv_transpose2d",
                 "{}",
                 {randn(dt, SHAPE(3, 4, 5)), randn(dt, SHAPE(3, 2, 2, 3)), randn(dt, SHAPE(2))},
                 3,
                 "111",
                 1},
      op_conv_transpose2d, NULL);
}

/* ---- 1-D convolution (conv1d.c) --------------------------------------------------------- */

static void op_conv1d(const gs_tensor *in, gs_tensor *out, void *user) {
  out[0] = gs_conv1d(in[0], in[1], in[2], user);
}

static void conv1d_cases(gs_dtype dt, const char *sfx) {
  char name[64];
  snprintf(name, sizeof name, "conv1d_bias_%s", sfx);
  run(&(op_case){name,
                 "conv1d",
                 "{}",
                 {randn(dt, SHAPE(2, 3, 9)), randn(dt, SHAPE(4, 3, 3)), randn(dt, SHAPE(4))},
                 3,
                 "111",
                 1},
      op_conv1d, NULL);
  snprintf(name, sizeof name, "conv1d_strided_%s", sfx);
  run(&(op_case){name,
                 "conv1d",
                 "{\"stride\": 2, \"padding\": 2, \"dilation\": 2}",
                 {randn_t(dt, SHAPE(3, 2, 11)), randn(dt, SHAPE(5, 2, 3)), GS_NO_TENSOR},
                 3,
                 "110",
                 1},
      op_conv1d, &(gs_conv1d_options){.stride = 2, .padding = 2, .dilation = 2});
  snprintf(name, sizeof name, "conv1d_groups_%s", sfx);
  run(&(op_case){name,
                 "conv1d",
                 "{\"padding\": 1, \"groups\": 2}",
                 {randn(dt, SHAPE(2, 4, 7)), randn_t(dt, SHAPE(6, 2, 3)), randn(dt, SHAPE(6))},
                 3,
                 "111",
                 1},
      op_conv1d, &(gs_conv1d_options){.padding = 1, .groups = 2});
  snprintf(name, sizeof name, "conv1d_unbatched_%s", sfx);
  run(&(op_case){name,
                 "conv1d",
                 "{}",
                 {randn(dt, SHAPE(3, 8)), randn(dt, SHAPE(2, 3, 4)), randn(dt, SHAPE(2))},
                 3,
                 "111",
                 1},
      op_conv1d, NULL);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ops-torch-cases DIR\n");
    return 2;
  }
  dir = argv[1];
  gs_rng_seed(&rng, 31);
  conv_cases(GS_F64, "f64");
  conv_cases(GS_F32, "f32");
  batch_norm_cases(GS_F64, "f64");
  batch_norm_cases(GS_F32, "f32");
  elementwise_cases(GS_F64, "f64");
  elementwise_cases(GS_F32, "f32");
  activation_cases(GS_F64, "f64");
  activation_cases(GS_F32, "f32");
  conv_transpose_cases(GS_F64, "f64");
  conv_transpose_cases(GS_F32, "f32");
  conv1d_cases(GS_F64, "f64");
  conv1d_cases(GS_F32, "f32");
  printf("# %d cases written\n", written);
  return 0;
}
