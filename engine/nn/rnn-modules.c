/* rnn-modules.c: the RNN, LSTM and GRU modules: their parameters under PyTorch's names, the
 * checks PyTorch makes on inputs and states, and the two entry points, padded and packed,
 * which turn the caller's layout into packed rows for the layer stack (rnn-run.c) and back.
 *
 * Both run with ownership suspended, as pad_packed_sequence does: the many intermediates
 * count nowhere, and only the results become objects of the current scope. */
#include <stdio.h>
#include <stdlib.h>

#include <unistd.h>

#include "core-impl.h"
#include "module-impl.h"
#include "packed-impl.h"
#include "recurrent-impl.h"
#include "rnn-impl.h"
#include "scope-impl.h"

/* A module's configuration (its data). */
typedef struct rnn_config {
  gs_rnn_mode mode;
  int64_t input_size, hidden_size;
  gs_rnn_options opt;
} rnn_config;

static gs_tensor rnn_forward_output(gs_module m, gs_tensor x);
static const gs_module_type rnn_type = {"RNN", rnn_forward_output, free};
static const gs_module_type lstm_type = {"LSTM", rnn_forward_output, free};
static const gs_module_type gru_type = {"GRU", rnn_forward_output, free};

static const gs_module_type *type_of(gs_rnn_mode mode) {
  return mode == GS_RNN_LSTM ? &lstm_type : mode == GS_RNN_GRU ? &gru_type : &rnn_type;
}

static bool check_options(gs_rnn_mode mode, int64_t input_size, int64_t hidden_size,
                          const gs_rnn_options *o, const char *fn) {
  if ((unsigned)mode > GS_RNN_GRU) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a mode of gs_rnn_mode (0 to 3), got %d", (int)mode);
    return false;
  }
  if (input_size <= 0 || hidden_size <= 0 || o->num_layers <= 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected positive input_size, hidden_size and num_layers, "
              "got %lld, %lld and %lld", (long long)input_size, (long long)hidden_size,
              (long long)o->num_layers);
    return false;
  }
  if (!(o->dropout >= 0.0 && o->dropout < 1.0)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected dropout in [0, 1), got %g", o->dropout);
    return false;
  }
  if (o->dtype != GS_F32 && o->dtype != GS_F64) {
    gs__error(GS_ERR_DTYPE, fn, "expected parameters of dtype f32 or f64, got %s",
              gs_dtype_name(o->dtype));
    return false;
  }
  /* Parameters that could never fit are refused up front, not made one layer at a time
   * until memory runs out (num_layers 2^62 would never end). Counted in double: no
   * overflow. */
  double gh = (double)gs__rnn_gate_count(mode) * (double)hidden_size, d = o->bidirectional ? 2 : 1;
  double per_dir = gh * ((double)hidden_size + (o->bias ? 2 : 0));
  double elements = d * (gh * (double)input_size + per_dir) +
                    (double)(o->num_layers - 1) * d * (gh * d * (double)hidden_size + per_dir);
  double bytes = elements * (double)gs_dtype_size(o->dtype);
  double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (memory > 0 && bytes > memory) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn,
              "%lld layers of hidden size %lld would need %.3g bytes of parameters, more than "
              "this machine's %.3g bytes of memory",
              (long long)o->num_layers, (long long)hidden_size, bytes, memory);
    return false;
  }
  return true;
}

/* Registers p (false, with the error reported, if it could not be made). */
static bool add_parameter(gs_module m, const char *name, gs_tensor p) {
  if (!p.id)
    return false;
  gs_module_register_parameter(m, name, p);
  return true;
}

gs_module gs_rnn_new(gs_rnn_mode mode, int64_t input_size, int64_t hidden_size,
                     const gs_rnn_options *opt) {
  const char *fn = "rnn_new";
  gs_rnn_options o = opt ? *opt : GS_RNN_OPTIONS_DEFAULT;
  if (!check_options(mode, input_size, hidden_size, &o, fn))
    return GS_NO_MODULE;
  rnn_config *config = malloc(sizeof *config);
  if (!config) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_MODULE;
  }
  *config = (rnn_config){mode, input_size, hidden_size, o};
  gs_module m = gs_module_new_typed(type_of(mode), config);
  if (!m.id)
    return m;
  int64_t H = hidden_size, GH = gs__rnn_gate_count(mode) * H;
  int D = o.bidirectional ? 2 : 1;
  /* PyTorch's order: per layer, per direction, weight_ih, weight_hh, bias_ih, bias_hh. A
   * parameter that cannot be made (memory ran out) ends it: the module is disposed. */
  bool ok = true;
  for (int64_t l = 0; l < o.num_layers && ok; l++) {
    for (int d = 0; d < D && ok; d++) {
      int64_t in = l == 0 ? input_size : D * H;
      const char *suffix = d ? "_reverse" : "";
      char name[64];
      snprintf(name, sizeof name, "weight_ih_l%lld%s", (long long)l, suffix);
      ok = add_parameter(m, name, gs__rnn_parameter(o.dtype, (int64_t[]){GH, in}, 2, H, o.rng));
      snprintf(name, sizeof name, "weight_hh_l%lld%s", (long long)l, suffix);
      ok =
          ok && add_parameter(m, name, gs__rnn_parameter(o.dtype, (int64_t[]){GH, H}, 2, H, o.rng));
      if (!o.bias)
        continue;
      snprintf(name, sizeof name, "bias_ih_l%lld%s", (long long)l, suffix);
      ok = ok && add_parameter(m, name, gs__rnn_parameter(o.dtype, &GH, 1, H, o.rng));
      snprintf(name, sizeof name, "bias_hh_l%lld%s", (long long)l, suffix);
      ok = ok && add_parameter(m, name, gs__rnn_parameter(o.dtype, &GH, 1, H, o.rng));
    }
  }
  if (!ok) {
    gs_module_dispose(m);
    return GS_NO_MODULE;
  }
  return m;
}

/* The module's configuration, or NULL after reporting one that is not an RNN, LSTM or GRU. */
static const rnn_config *config_of(gs_module m, const char *fn) {
  gs__module *rec = gs__module_lookup(m, fn);
  if (!rec)
    return NULL;
  if (rec->type != &rnn_type && rec->type != &lstm_type && rec->type != &gru_type) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an RNN, LSTM or GRU module, got a %s",
              rec->type_name);
    return NULL;
  }
  /* The parameters' dtype is what double() or float() (gs_module_to_dtype) left: inputs and
   * states are checked against it. */
  rnn_config *c = rec->data;
  if (rec->n_params > 0) {
    gs__tensor *w = gs__lookup_quiet(rec->params[0].tensor.id);
    if (w)
      c->opt.dtype = w->dtype;
  }
  return c;
}

/* The weights of every layer and direction, by PyTorch's names (malloc'd). */
static gs__rnn_weights *weights_of(gs_module m, const rnn_config *c, const char *fn) {
  int64_t D = c->opt.bidirectional ? 2 : 1;
  gs__rnn_weights *w = calloc((size_t)(c->opt.num_layers * D), sizeof *w);
  if (!w) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  for (int64_t k = 0; k < c->opt.num_layers * D; k++) {
    const char *suffix = k % D ? "_reverse" : "";
    char name[64];
    gs_tensor *slots[4] = {&w[k].w_ih, &w[k].w_hh, &w[k].b_ih, &w[k].b_hh};
    const char *kinds[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    for (int i = 0; i < (c->opt.bias ? 4 : 2); i++) {
      snprintf(name, sizeof name, "%s_l%lld%s", kinds[i], (long long)(k / D), suffix);
      *slots[i] = gs_module_parameter(m, name);
    }
  }
  return w;
}

/* The input's features match input_size and its dtype the parameters'. */
static bool check_input(const rnn_config *c, gs_tensor x, int ndim, const char *what,
                        const char *fn) {
  gs__tensor *t = gs__lookup(x, fn);
  if (!t)
    return false;
  char got[GS__SHAPE_STR];
  if (t->ndim != ndim || t->shape[ndim - 1] != c->input_size) {
    gs__error(GS_ERR_SHAPE, fn, "expected %s with %d dimensions and %lld features (input_size) "
              "in the last, got shape %s", what, ndim, (long long)c->input_size,
              gs__shape_str(got, t->shape, t->ndim));
    return false;
  }
  if (t->dtype != c->opt.dtype) {
    gs__error(GS_ERR_DTYPE, fn, "expected %s of dtype %s (the parameters'), got %s", what,
              gs_dtype_name(c->opt.dtype), gs_dtype_name(t->dtype));
    return false;
  }
  return true;
}

/* h0 and c0, when given, are [L * D, B, H] of the parameters' dtype; c0 only for LSTM. */
static bool check_states(const rnn_config *c, gs_tensor h0, gs_tensor c0, int64_t batch,
                         const char *fn) {
  if (c0.id && c->mode != GS_RNN_LSTM) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected no c0 (only LSTM has a cell state), got one");
    return false;
  }
  int64_t want[3] = {c->opt.num_layers * (c->opt.bidirectional ? 2 : 1), batch, c->hidden_size};
  gs_tensor states[2] = {h0, c0};
  for (int i = 0; i < 2; i++) {
    if (!states[i].id)
      continue;
    gs__tensor *t = gs__lookup(states[i], fn);
    if (!t)
      return false;
    char w[GS__SHAPE_STR], got[GS__SHAPE_STR];
    if (t->ndim != 3 || t->shape[0] != want[0] || t->shape[1] != want[1] ||
        t->shape[2] != want[2]) {
      gs__error(GS_ERR_SHAPE, fn, "expected %s of shape %s (num_layers * num_directions, "
                "batch, hidden_size), got %s", i ? "c0" : "h0", gs__shape_str(w, want, 3),
                gs__shape_str(got, t->shape, t->ndim));
      return false;
    }
    if (t->dtype != c->opt.dtype) {
      gs__error(GS_ERR_DTYPE, fn, "expected %s of dtype %s (the parameters'), got %s",
                i ? "c0" : "h0", gs_dtype_name(c->opt.dtype), gs_dtype_name(t->dtype));
      return false;
    }
  }
  return true;
}

static gs__rnn_config stack_config(gs_module m, const rnn_config *c) {
  return (gs__rnn_config){c->mode, c->opt.num_layers, c->hidden_size, c->opt.bidirectional,
                          c->opt.dropout, gs_module_is_training(m), c->opt.rng};
}

/* Runs the stack with ownership suspended; the caller adopts what it keeps. */
static bool run_suspended(gs_module m, const rnn_config *c, gs_tensor data, const int64_t *bs,
                          int64_t steps, gs_tensor h0, gs_tensor c0, gs_tensor *out,
                          gs_tensor *h_n, gs_tensor *c_n, const char *fn) {
  gs__rnn_weights *w = weights_of(m, c, fn);
  if (!w)
    return false;
  gs__rnn_config cfg = stack_config(m, c);
  bool ok = gs__rnn_run(&cfg, w, data, bs, steps, h0, c0, out, h_n, c_n, fn);
  free(w);
  return ok;
}

gs_tensor gs_rnn_forward(gs_module m, gs_tensor input, gs_tensor h0, gs_tensor c0,
                         gs_tensor *h_n, gs_tensor *c_n) {
  const char *fn = "rnn_forward";
  if (h_n)
    *h_n = GS_NO_TENSOR;
  if (c_n)
    *c_n = GS_NO_TENSOR;
  const rnn_config *c = config_of(m, fn);
  if (!c || !check_input(c, input, 3, c->opt.batch_first ? "input [B, T, input_size]"
                                                         : "input [T, B, input_size]", fn))
    return GS_NO_TENSOR;
  bool bf = c->opt.batch_first;
  int64_t T = gs_size(input, bf ? 1 : 0), B = gs_size(input, bf ? 0 : 1);
  if (!check_states(c, h0, c0, B, fn))
    return GS_NO_TENSOR;
  if (T < 1 || B < 1) {
    gs__error(GS_ERR_SHAPE, fn, "expected at least one time step and one sequence, got %lld "
              "steps of %lld sequences", (long long)T, (long long)B);
    return GS_NO_TENSOR;
  }
  int64_t *bs = malloc(sizeof(int64_t) * (size_t)T);
  if (!bs) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return GS_NO_TENSOR;
  }
  for (int64_t t = 0; t < T; t++)
    bs[t] = B; /* every sequence runs every step */
  gs_tensor out = GS_NO_TENSOR, hn = GS_NO_TENSOR, cn = GS_NO_TENSOR;
  gs__ownership_suspend();
  /* [T, B, in] rows in time order are the packed layout of a batch that is never short. */
  gs_tensor tb = bf ? gs_transpose(input, 0, 1) : gs_clone(input);
  gs_tensor rows = gs_reshape(tb, (int64_t[]){T * B, c->input_size}, 2);
  gs_tensor y = GS_NO_TENSOR;
  if (rows.id && run_suspended(m, c, rows, bs, T, h0, c0, &y, h_n ? &hn : NULL,
                               c_n ? &cn : NULL, fn)) {
    int64_t DH = gs_size(y, 1);
    gs_tensor shaped = gs_reshape(y, (int64_t[]){T, B, DH}, 3);
    out = bf && shaped.id ? gs_transpose(shaped, 0, 1) : gs_clone(shaped);
    gs_dispose(shaped);
  }
  gs_dispose(y);
  gs_dispose(rows);
  gs_dispose(tb);
  gs__ownership_resume();
  free(bs);
  gs__own_adopt(out);
  gs__own_adopt(hn);
  gs__own_adopt(cn);
  if (h_n)
    *h_n = hn;
  if (c_n)
    *c_n = cn;
  return out;
}

static gs_tensor rnn_forward_output(gs_module m, gs_tensor x) {
  return gs_rnn_forward(m, x, GS_NO_TENSOR, GS_NO_TENSOR, NULL, NULL);
}

/* batch_sizes' values (malloc'd), or NULL after reporting. */
static int64_t *read_batch_sizes(gs_tensor bs, int64_t *steps, const char *fn) {
  gs__tensor *t = gs__lookup(bs, fn);
  if (!t)
    return NULL;
  int64_t *values = malloc(sizeof(int64_t) * (size_t)(t->shape[0] > 0 ? t->shape[0] : 1));
  if (!values) {
    gs__error(GS_ERR_OUT_OF_MEMORY, fn, "out of memory");
    return NULL;
  }
  const int64_t *first = (const int64_t *)gs__tensor_data(t);
  for (int64_t i = 0; i < t->shape[0]; i++)
    values[i] = first[i * t->strides[0]];
  *steps = t->shape[0];
  return values;
}

/* A state in the caller's batch order put in the packed order (dim 1 by sorted_indices), or
 * the reverse; a new handle either way (the state itself when there is no permutation). */
static gs_tensor permute_batch(gs_tensor state, gs_tensor index) {
  if (!state.id)
    return GS_NO_TENSOR;
  return index.id ? gs_index_select(state, 1, index) : gs_clone(state);
}

gs_packed_sequence gs_rnn_forward_packed(gs_module m, gs_packed_sequence input, gs_tensor h0,
                                         gs_tensor c0, gs_tensor *h_n, gs_tensor *c_n) {
  const char *fn = "rnn_forward_packed";
  if (h_n)
    *h_n = GS_NO_TENSOR;
  if (c_n)
    *c_n = GS_NO_TENSOR;
  const rnn_config *c = config_of(m, fn);
  gs__packed_parts in;
  if (!c || !gs__packed_parts_of(input, &in, fn) ||
      !check_input(c, in.data, 2, "packed data [rows, input_size]", fn))
    return GS_NO_PACKED_SEQUENCE;
  int64_t steps;
  int64_t *bs = read_batch_sizes(in.batch_sizes, &steps, fn);
  if (!bs)
    return GS_NO_PACKED_SEQUENCE;
  gs_packed_sequence result = GS_NO_PACKED_SEQUENCE;
  gs_tensor hn = GS_NO_TENSOR, cn = GS_NO_TENSOR;
  if (check_states(c, h0, c0, bs[0], fn)) {
    gs__ownership_suspend();
    gs_tensor h0s = permute_batch(h0, in.sorted_indices), c0s = permute_batch(c0, in.sorted_indices);
    gs_tensor y = GS_NO_TENSOR, hs = GS_NO_TENSOR, cs = GS_NO_TENSOR;
    if (run_suspended(m, c, in.data, bs, steps, h0s, c0s, &y, h_n ? &hs : NULL,
                      c_n ? &cs : NULL, fn)) {
      hn = permute_batch(hs, in.unsorted_indices);
      cn = permute_batch(cs, in.unsorted_indices);
      /* The output shares the input's layout: its own copies of the batch sizes and indices
       * (copy-on-write clones: no bytes move). */
      gs__packed_parts out = {y, gs_clone(in.batch_sizes),
                              in.sorted_indices.id ? gs_clone(in.sorted_indices) : GS_NO_TENSOR,
                              in.unsorted_indices.id ? gs_clone(in.unsorted_indices)
                                                     : GS_NO_TENSOR};
      y = GS_NO_TENSOR;
      gs__ownership_resume();
      result = gs__packed_from_parts(&out, fn);
      gs__ownership_suspend();
    }
    gs_dispose(y);
    gs_dispose(hs);
    gs_dispose(cs);
    gs_dispose(h0s);
    gs_dispose(c0s);
    gs__ownership_resume();
  }
  free(bs);
  gs__own_adopt(hn);
  gs__own_adopt(cn);
  if (h_n)
    *h_n = hn;
  if (c_n)
    *c_n = cn;
  return result;
}
