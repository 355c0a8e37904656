/* rnn-torch-cases.c: writes the recurrent cases that rnn-torch-compare.py (beside it) checks
 * against PyTorch. For each case, in f64: a module's state dict (<case>.params.safetensors,
 * PyTorch's names, written by gs_module_save_safetensors), and the inputs, a random linear
 * loss's weights, the engine's outputs and the gradients of that loss with respect to every
 * parameter and input (<case>.data.safetensors, with the case's settings as metadata).
 * Usage: rnn-torch-cases DIR */
#include <gradscope/gradscope.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAVED 64

/* What one case writes beside the state dict. */
typedef struct saved {
  const char *names[MAX_SAVED];
  gs_tensor tensors[MAX_SAVED];
  char *owned_names[MAX_SAVED];
  bool dispose[MAX_SAVED];
  int count;
} saved;

static void keep(saved *s, const char *name, gs_tensor t, bool dispose) {
  if (!t.id)
    return;
  s->owned_names[s->count] = strdup(name);
  s->names[s->count] = s->owned_names[s->count];
  s->tensors[s->count] = t;
  s->dispose[s->count++] = dispose;
}

static void write_case(const char *dir, const char *name, gs_module m, saved *s,
                       const char *const *metadata) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.params.safetensors", dir, name);
  if (gs_module_save_safetensors(m, path, NULL) != 0)
    exit(1);
  snprintf(path, sizeof path, "%s/%s.data.safetensors", dir, name);
  if (gs_safetensors_save(path, s->names, s->tensors, s->count, metadata) != 0)
    exit(1);
  for (int i = 0; i < s->count; i++) {
    if (s->dispose[i])
      gs_dispose(s->tensors[i]);
    free(s->owned_names[i]);
  }
  s->count = 0;
}

/* sum(t * r) for a random r of t's shape, which is kept as name "r_<what>". */
static gs_tensor weighted(saved *s, const char *what, gs_tensor t, gs_rng *rng) {
  int64_t shape[8];
  int nd = gs_shape(t, shape);
  gs_tensor r = gs_randn(GS_F64, shape, nd, rng);
  char name[64];
  snprintf(name, sizeof name, "r_%s", what);
  keep(s, name, r, true);
  gs_tensor prod = gs_mul(t, r);
  gs_tensor sum = gs_sum(prod, NULL, 0, false);
  gs_dispose(prod);
  return sum;
}

static gs_tensor add_into(gs_tensor total, gs_tensor term) {
  if (!total.id)
    return term;
  gs_tensor r = gs_add(total, term);
  gs_dispose(total);
  gs_dispose(term);
  return r;
}

static gs_tensor leaf(const int64_t *shape, int nd, gs_rng *rng) {
  gs_tensor t = gs_randn(GS_F64, shape, nd, rng);
  gs_set_requires_grad(t, true);
  return t;
}

/* Keeps every parameter's gradient as grad.<name>. */
static void keep_param_grads(saved *s, gs_module m) {
  gs_tensor params[64];
  const char *names[64];
  int n = gs_module_named_parameters(m, params, names, 64);
  for (int i = 0; i < n; i++) {
    char name[128];
    snprintf(name, sizeof name, "grad.%s", names[i]);
    keep(s, name, gs_grad(params[i]), false);
  }
}

typedef struct layer_case {
  const char *name;
  gs_rnn_mode mode;
  int64_t input, hidden, layers;
  bool bias, batch_first, bidirectional, packed, with_h0;
  int64_t steps, batch;
  int64_t lengths[8]; /* packed cases: unsorted, distinct */
} layer_case;

static void run_layer_case(const char *dir, const layer_case *c, gs_rng *rng) {
  gs_rnn_options o = GS_RNN_OPTIONS_DEFAULT;
  o.num_layers = c->layers, o.bias = c->bias, o.batch_first = c->batch_first;
  o.bidirectional = c->bidirectional, o.dtype = GS_F64, o.rng = rng;
  gs_module m = gs_rnn_new(c->mode, c->input, c->hidden, &o);
  int64_t D = c->bidirectional ? 2 : 1;
  saved s = {0};
  int64_t xs[3] = {c->batch_first ? c->batch : c->steps, c->batch_first ? c->steps : c->batch,
                   c->input};
  gs_tensor x = leaf(xs, 3, rng);
  int64_t states[3] = {c->layers * D, c->batch, c->hidden};
  gs_tensor h0 = c->with_h0 ? leaf(states, 3, rng) : GS_NO_TENSOR;
  gs_tensor c0 = c->with_h0 && c->mode == GS_RNN_LSTM ? leaf(states, 3, rng) : GS_NO_TENSOR;
  keep(&s, "x", x, true);
  keep(&s, "h0", h0, true);
  keep(&s, "c0", c0, true);
  gs_tensor out, hn, cn = GS_NO_TENSOR, lengths = GS_NO_TENSOR;
  gs_packed_sequence in = GS_NO_PACKED_SEQUENCE, po = GS_NO_PACKED_SEQUENCE;
  if (c->packed) {
    lengths = gs_from_data(GS_I64, &c->batch, 1, c->lengths);
    keep(&s, "lengths", lengths, true);
    in = gs_pack_padded_sequence(x, lengths, c->batch_first, false);
    po = gs_rnn_forward_packed(m, in, h0, c0, &hn, c->mode == GS_RNN_LSTM ? &cn : NULL);
    out = gs_packed_data(po); /* compared as packed rows: the same layout as torch's */
  } else {
    out = gs_rnn_forward(m, x, h0, c0, &hn, c->mode == GS_RNN_LSTM ? &cn : NULL);
  }
  gs_tensor loss = weighted(&s, "out", out, rng);
  loss = add_into(loss, weighted(&s, "h_n", hn, rng));
  if (cn.id)
    loss = add_into(loss, weighted(&s, "c_n", cn, rng));
  gs_backward(loss);
  gs_dispose(loss);
  keep(&s, "out", out, !c->packed);
  keep(&s, "h_n", hn, true);
  keep(&s, "c_n", cn, true);
  keep(&s, "grad.x", gs_grad(x), false);
  keep(&s, "grad.h0", h0.id ? gs_grad(h0) : GS_NO_TENSOR, false);
  keep(&s, "grad.c0", c0.id ? gs_grad(c0) : GS_NO_TENSOR, false);
  keep_param_grads(&s, m);
  static const char *kinds[] = {"RNN_TANH", "RNN_RELU", "LSTM", "GRU"};
  char input[16], hidden[16], layers[16];
  snprintf(input, sizeof input, "%lld", (long long)c->input);
  snprintf(hidden, sizeof hidden, "%lld", (long long)c->hidden);
  snprintf(layers, sizeof layers, "%lld", (long long)c->layers);
  const char *meta[] = {"kind", "layer", "mode", kinds[c->mode], "input_size", input,
                        "hidden_size", hidden, "num_layers", layers,
                        "bias", c->bias ? "1" : "0", "batch_first", c->batch_first ? "1" : "0",
                        "bidirectional", c->bidirectional ? "1" : "0",
                        "packed", c->packed ? "1" : "0", NULL};
  write_case(dir, c->name, m, &s, meta);
  gs_packed_sequence_dispose(po);
  gs_packed_sequence_dispose(in);
  gs_module_dispose(m);
}

static void run_cell_case(const char *dir, const char *name, gs_rnn_mode mode, gs_rng *rng) {
  int64_t B = 3, I = 4, H = 5;
  gs_module m = gs_rnn_cell_new(mode, I, H, true, GS_F64, rng);
  saved s = {0};
  gs_tensor x = leaf((int64_t[]){B, I}, 2, rng), h = leaf((int64_t[]){B, H}, 2, rng);
  gs_tensor c = mode == GS_RNN_LSTM ? leaf((int64_t[]){B, H}, 2, rng) : GS_NO_TENSOR;
  keep(&s, "x", x, true);
  keep(&s, "h0", h, true);
  keep(&s, "c0", c, true);
  gs_tensor c1 = GS_NO_TENSOR;
  gs_tensor h1 = gs_rnn_cell_forward(m, x, h, c, &c1);
  gs_tensor loss = weighted(&s, "h_n", h1, rng);
  if (c1.id)
    loss = add_into(loss, weighted(&s, "c_n", c1, rng));
  gs_backward(loss);
  gs_dispose(loss);
  keep(&s, "h_n", h1, true);
  keep(&s, "c_n", c1, true);
  keep(&s, "grad.x", gs_grad(x), false);
  keep(&s, "grad.h0", gs_grad(h), false);
  keep(&s, "grad.c0", c.id ? gs_grad(c) : GS_NO_TENSOR, false);
  keep_param_grads(&s, m);
  static const char *kinds[] = {"RNN_TANH", "RNN_RELU", "LSTM", "GRU"};
  const char *meta[] = {"kind", "cell", "mode", kinds[mode], "input_size", "4",
                        "hidden_size", "5", NULL};
  write_case(dir, name, m, &s, meta);
  gs_module_dispose(m);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  gs_rng rng;
  gs_rng_seed(&rng, 17);
  static const layer_case cases[] = {
      {"lstm-packed-2-layers-bidirectional", GS_RNN_LSTM, 5, 4, 2, true, false, true, true, true, 6, 4, {3, 6, 1, 4}},
      {"gru-packed-2-layers-bidirectional", GS_RNN_GRU, 5, 4, 2, true, false, true, true, true, 6, 4, {3, 6, 1, 4}},
      {"lstm-packed-batch-first", GS_RNN_LSTM, 3, 6, 1, true, true, false, true, false, 5, 3, {2, 5, 4}},
      {"rnn-tanh-padded-batch-first-2-layers", GS_RNN_TANH, 3, 5, 2, true, true, false, false, true, 4, 3, {0}},
      {"rnn-relu-packed-bidirectional-no-bias", GS_RNN_RELU, 4, 3, 1, false, false, true, true, true, 5, 3, {4, 2, 5}},
      {"lstm-padded-bidirectional", GS_RNN_LSTM, 4, 3, 1, true, false, true, false, true, 5, 2, {0}},
      {"gru-padded-3-layers", GS_RNN_GRU, 4, 3, 3, true, false, false, false, false, 4, 2, {0}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_layer_case(argv[1], &cases[i], &rng);
  run_cell_case(argv[1], "rnn-tanh-cell", GS_RNN_TANH, &rng);
  run_cell_case(argv[1], "rnn-relu-cell", GS_RNN_RELU, &rng);
  run_cell_case(argv[1], "lstm-cell", GS_RNN_LSTM, &rng);
  run_cell_case(argv[1], "gru-cell", GS_RNN_GRU, &rng);
  return gs_live_tensor_count() == 0 ? 0 : 1;
}
