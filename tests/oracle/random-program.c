/* random-program.c: random sequences of public calls for the differential oracle, compiled
 * with oracle-wrap.h so every call that takes an event number is probed. A program makes
 * tensors, views of them (slice, narrow, transpose, select, expand, unsqueeze, reshape),
 * clones and detaches, writes in place through any alias, computes out of place, opens and
 * ends dispose scopes in and out of order, moves tensors between scopes, turns tensors into
 * parameters, runs backward with and without retain_graph, inside and outside no_grad, and
 * disposes; it pushes and pops saved-tensor hooks (nested, and while they are disabled), reads
 * nodes' saved tensors (which unpacks them), and opens and ends named ranges (nested, around
 * forward and backward, and an end out of order); the same seed makes the same program. Errors the
 * engine reports (an in-place write to a leaf that requires grad, a second backward through a freed
 * graph) are part of the program: they return, and the state must still agree. */
#include "random-program.h"

#include <glib.h>

#include "oracle.h"

#define MAX_HANDLES 192
#define MAX_SCOPES 6
#define MAX_HOOKS 3
#define MAX_RANGES 4

typedef struct prog {
  GRand *rand;
  gs_tensor t[MAX_HANDLES];
  int n;
  gs_scope scopes[MAX_SCOPES]; /* begun and not yet ended by the program */
  int n_scopes;
  int no_grad_depth;
  int hooks, hooks_disabled;      /* saved-tensor hook pairs pushed, disables open */
  const char *ranges[MAX_RANGES]; /* named ranges open, innermost last */
  int n_ranges;
} prog;

static int pick(prog *p, int n) { return n > 0 ? (int)g_rand_int_range(p->rand, 0, n) : 0; }

static void keep(prog *p, gs_tensor t) {
  if (t.id && p->n < MAX_HANDLES)
    p->t[p->n++] = t;
  else if (t.id)
    gs_dispose(t); /* no room to remember it: it must not outlive the program */
}

/* An alive tensor the program holds, or GS_NO_TENSOR; handles that died are forgotten. */
static gs_tensor any(prog *p) {
  while (p->n > 0) {
    int i = pick(p, p->n);
    if (gs_is_alive(p->t[i]))
      return p->t[i];
    p->t[i] = p->t[--p->n];
  }
  return GS_NO_TENSOR;
}

/* ---- saved-tensor hooks -------------------------------------------------------------------
 * A pair keeps what it is given as it is, a detach of it or a clone of it (its user_data says
 * which), outside every scope so that no scope's end disposes what a node still needs; its
 * unpack gives back a new handle to what it kept. Their own calls are probed too: they run
 * while the engine records the op that saved the tensor, or the backward that unpacks it. */
enum { KEEP_AS_GIVEN, KEEP_DETACH, KEEP_CLONE, KEEP_KINDS };

typedef struct kept {
  gs_tensor t;
  guint pack; /* its number for the oracle */
} kept;

static bool pack_hook(gs_tensor t, void **packed, void *user_data) {
  kept *k = g_new0(kept, 1);
  k->pack = oracle_saved_packed(t);
  switch (GPOINTER_TO_INT(user_data)) {
  case KEEP_DETACH:
    k->t = gs_detach(t);
    gs_dispose(t);
    break;
  case KEEP_CLONE:
    k->t = gs_clone(t);
    gs_dispose(t);
    break;
  default: k->t = t; break;
  }
  gs_detach_from_scopes(k->t);
  *packed = k;
  return true;
}

static gs_tensor unpack_hook(void *packed, void *user_data) {
  (void)user_data;
  kept *k = packed;
  gs_tensor given = gs_alias(k->t);
  oracle_saved_unpacked(k->pack, given);
  return given;
}

static void free_packed_hook(void *packed, void *user_data) {
  (void)user_data;
  kept *k = packed;
  oracle_hold_probes(TRUE); /* the engine is in the middle of releasing the node */
  gs_dispose(k->t);
  oracle_hold_probes(FALSE);
  g_free(k);
}

static void push_hooks(prog *p) {
  if (p->hooks < MAX_HOOKS) {
    gs_saved_tensor_hooks h = {pack_hook, unpack_hook, free_packed_hook,
                               GINT_TO_POINTER(pick(p, KEEP_KINDS)), NULL};
    /* While disabled, the push is an error that returns: part of the program. */
    if (gs_saved_tensor_hooks_push(&h) == 0)
      p->hooks++;
  }
}

static void hooks_step(prog *p) {
  switch (pick(p, 6)) {
  case 0:
  case 1:
  case 2: push_hooks(p); break;
  case 3:
    if (p->hooks > 0) {
      gs_saved_tensor_hooks_pop();
      p->hooks--;
    }
    break;
  case 4:
    if (p->hooks_disabled < 2) {
      gs_saved_tensor_hooks_disable(pick(p, 2) ? "no hooks in this part" : NULL);
      p->hooks_disabled++;
    }
    break;
  default:
    if (p->hooks_disabled > 0) {
      gs_saved_tensor_hooks_enable();
      p->hooks_disabled--;
    }
    break;
  }
}

/* A saved tensor of the node that made t, read as grad_fn._saved_* reads it: unpacked by its
 * hooks if it was packed, an error if a backward freed it. */
static void read_saved(prog *p, gs_tensor t) {
  gs_node node = GS_NO_NODE;
  int n = 0;
  for (int tries = 0; tries < 4 && n <= 0; tries++, t = any(p)) {
    node = t.id ? gs_grad_fn(t) : GS_NO_NODE;
    n = node.id ? gs_node_n_saved(node) : 0;
  }
  if (n > 0) {
    gs_tensor saved = gs_node_saved(node, pick(p, n));
    if (saved.id)
      gs_dispose(saved);
  }
}

/* ---- named ranges ------------------------------------------------------------------------ */

static const char *const RANGE_NAMES[] = {"forward", "backward", "step", "loss"};

static void range_begin(prog *p, const char *name) {
  if (p->n_ranges < MAX_RANGES) {
    gs_trace_range_begin(name);
    p->ranges[p->n_ranges++] = name;
  }
}

static void range_end(prog *p) {
  if (p->n_ranges > 0)
    gs_trace_range_end(p->ranges[--p->n_ranges]);
}

static void range_step(prog *p) {
  switch (pick(p, 4)) {
  case 0:
  case 1: range_begin(p, RANGE_NAMES[pick(p, G_N_ELEMENTS(RANGE_NAMES))]); break;
  case 2: range_end(p); break;
  default: { /* the end of a range that is not the innermost: an error, and nothing ends */
    const char *name = RANGE_NAMES[pick(p, G_N_ELEMENTS(RANGE_NAMES))];
    if (p->n_ranges > 0 && g_strcmp0(name, p->ranges[p->n_ranges - 1]) != 0)
      gs_trace_range_end(name);
    break;
  }
  }
}

static void make_leaf(prog *p) {
  int ndim = 1 + pick(p, 3);
  int64_t shape[3];
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) {
    shape[d] = 1 + pick(p, 4);
    numel *= shape[d];
  }
  double data[64];
  for (int64_t i = 0; i < numel; i++)
    data[i] = pick(p, 19) - 9;
  gs_tensor t = gs_from_data(pick(p, 4) ? GS_F64 : GS_F32, shape, ndim, data);
  if (t.id && pick(p, 2) == 0)
    gs_set_requires_grad(t, true);
  keep(p, t);
}

static void make_view(prog *p, gs_tensor t) {
  int ndim = gs_ndim(t);
  int64_t shape[GS_MAX_DIMS];
  gs_shape(t, shape);
  int dim = ndim > 0 ? pick(p, ndim) : 0;
  switch (pick(p, 7)) {
  case 0:
    if (ndim > 0) {
      int64_t start = pick(p, (int)shape[dim]), step = 1 + pick(p, 2);
      keep(p, gs_slice(t, dim, start, shape[dim], step));
    }
    break;
  case 1:
    if (ndim > 0 && shape[dim] > 0) {
      int64_t start = pick(p, (int)shape[dim]);
      keep(p, gs_narrow(t, dim, start, 1 + pick(p, (int)(shape[dim] - start))));
    }
    break;
  case 2:
    if (ndim >= 2)
      keep(p, gs_transpose(t, 0, ndim - 1));
    break;
  case 3:
    if (ndim > 0 && shape[dim] > 0)
      keep(p, gs_select(t, dim, pick(p, (int)shape[dim])));
    break;
  case 4: { /* a new dimension of size 1, expanded */
    if (ndim >= GS_MAX_DIMS - 1)
      break;
    gs_tensor u = gs_unsqueeze(t, 0);
    int64_t big[GS_MAX_DIMS];
    big[0] = 2 + pick(p, 2);
    for (int d = 0; d < ndim; d++)
      big[d + 1] = shape[d];
    if (u.id && pick(p, 2))
      keep(p, gs_expand(u, big, ndim + 1));
    keep(p, u);
    break;
  }
  case 5: {
    int64_t flat = gs_numel(t);
    keep(p, gs_reshape(t, &flat, 1));
    break;
  }
  default: keep(p, gs_unsqueeze(t, ndim > 0 ? pick(p, ndim + 1) : 0)); break;
  }
}

/* t.unsqueeze_(0) or t.t_(): t takes the geometry of that view of itself (gs_as_strided_),
 * refused when autograd tracks t; the view made to read the geometry is disposed. */
static void reshape_in_place(prog *p, gs_tensor t) {
  bool transpose = gs_ndim(t) == 2 && pick(p, 2) == 0;
  gs_tensor v = transpose ? gs_t(t) : gs_unsqueeze(t, 0);
  if (!v.id)
    return;
  int64_t shape[GS_MAX_DIMS], strides[GS_MAX_DIMS];
  int ndim = gs_shape(v, shape);
  for (int i = 0; i < ndim; i++)
    strides[i] = gs_stride(v, i);
  int64_t offset = gs_storage_offset(v);
  gs_dispose(v);
  gs_as_strided_(t, shape, strides, ndim, offset, transpose ? "t_" : "unsqueeze_");
}

static void write_in_place(prog *p, gs_tensor t) {
  switch (pick(p, 6)) {
  case 5: reshape_in_place(p, t); break;
  case 0: gs_add_scalar_(t, pick(p, 5) + 1); break;
  case 1: gs_mul_scalar_(t, pick(p, 3) + 2); break;
  case 2: gs_fill_(t, pick(p, 7) - 3); break;
  case 3: gs_add_(t, t); break;
  default: {
    gs_tensor other = any(p); /* broadcast when it can; an error when it cannot */
    if (other.id)
      gs_mul_(t, other);
    break;
  }
  }
}

static void compute(prog *p, gs_tensor t) {
  switch (pick(p, 7)) {
  case 0: keep(p, gs_mul_scalar(t, 2.0)); break;
  case 1: keep(p, gs_mul(t, t)); break;
  case 2: keep(p, gs_add(t, t)); break;
  case 3: keep(p, gs_sum(t, NULL, 0, false)); break;
  case 4: keep(p, gs_tanh(t)); break; /* saves its result: a pack of the op's own output */
  case 5: keep(p, gs_sigmoid(t)); break;
  default: {
    gs_tensor other = any(p);
    if (other.id)
      keep(p, gs_add(t, other));
    break;
  }
  }
}

static void end_scope(prog *p, int i) {
  gs_scope_end(p->scopes[i]);
  for (int k = i; k + 1 < p->n_scopes; k++)
    p->scopes[k] = p->scopes[k + 1];
  p->n_scopes--;
}

static void scope_step(prog *p, gs_tensor t) {
  switch (pick(p, 6)) {
  case 0:
  case 1:
    if (p->n_scopes < MAX_SCOPES)
      p->scopes[p->n_scopes++] = gs_scope_begin(pick(p, 2) ? "step" : "inner");
    break;
  case 2:
    if (p->n_scopes > 0)
      end_scope(p, pick(p, p->n_scopes)); /* in or out of order */
    break;
  case 3:
    if (t.id)
      gs_move_to_outer(t);
    break;
  case 4:
    if (t.id)
      gs_detach_from_scopes(t);
    break;
  default:
    if (t.id && p->n_scopes > 0)
      gs_scope_attach(p->scopes[pick(p, p->n_scopes)], t);
    break;
  }
}

static void backward_step(prog *p) {
  for (int tries = 0; tries < 4; tries++) {
    gs_tensor t = any(p);
    if (!t.id || !gs_requires_grad(t))
      continue;
    gs_tensor loss = gs_sum(t, NULL, 0, false);
    if (!loss.id)
      return;
    keep(p, loss);
    gboolean ranged = pick(p, 2) && p->n_ranges < MAX_RANGES;
    if (ranged)
      range_begin(p, "backward");
    gs_backward_with(loss, GS_NO_TENSOR, pick(p, 2) == 0);
    if (ranged)
      range_end(p);
    return;
  }
}

static void step(prog *p) {
  gs_tensor t = any(p);
  int what = p->n < 3 ? 0 : pick(p, 27);
  switch (what) {
  case 0:
  case 1: make_leaf(p); break;
  case 2:
  case 3:
  case 4: make_view(p, t); break;
  case 5: keep(p, gs_clone(t)); break;
  case 6: keep(p, gs_detach(t)); break;
  case 7:
  case 8:
  case 9: write_in_place(p, t); break;
  case 10:
  case 11:
    /* Under hooks, an op on a tensor that requires grad: it saves, and its saves are packed. */
    for (int tries = 0; p->hooks > 0 && tries < 4 && !gs_requires_grad(t); tries++)
      t = any(p);
    if (pick(p, 3) == 0 && p->n_ranges < MAX_RANGES) { /* a forward inside a range */
      range_begin(p, "forward");
      compute(p, t);
      range_end(p);
    } else {
      compute(p, t);
    }
    break;
  case 12:
  case 13: scope_step(p, t); break;
  case 14: { /* the old handle becomes stale; the parameter takes its place */
    gs_tensor param = gs_parameter_new(t, pick(p, 2));
    keep(p, param);
    break;
  }
  case 15:
  case 16: backward_step(p); break;
  case 17:
    if (p->no_grad_depth < 2 && pick(p, 2)) {
      gs_no_grad_begin();
      p->no_grad_depth++;
    } else if (p->no_grad_depth > 0) {
      gs_no_grad_end();
      p->no_grad_depth--;
    }
    break;
  case 18:
  case 19:
  case 20: hooks_step(p); break;
  case 21:
  case 22: read_saved(p, t); break;
  case 23: range_step(p); break;
  default: gs_dispose(t); break;
  }
}

void random_program_run(guint32 seed, guint steps) {
  random_program_run_with(seed, steps, 0, NULL, NULL);
}

void random_program_run_with(guint32 seed, guint steps, guint at, void (*at_step)(gpointer),
                             gpointer data) {
  prog p = {.rand = g_rand_new_with_seed(seed)};
  if (pick(&p, 3) == 0) /* a third of the programs save under hooks from their start */
    push_hooks(&p);
  for (guint i = 0; i < steps; i++) {
    step(&p);
    if (at_step && i + 1 == at)
      at_step(data);
  }
  while (p.no_grad_depth-- > 0)
    gs_no_grad_end();
  while (p.hooks-- > 0)
    gs_saved_tensor_hooks_pop();
  while (p.hooks_disabled-- > 0)
    gs_saved_tensor_hooks_enable();
  while (p.n_ranges > 0)
    range_end(&p);
  while (p.n_scopes > 0)
    end_scope(&p, p.n_scopes - 1);
  for (int i = 0; i < p.n; i++)
    if (gs_is_alive(p.t[i]))
      gs_dispose(p.t[i]);
  g_rand_free(p.rand);
}
