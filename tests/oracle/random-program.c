/* random-program.c: random sequences of public calls for the differential oracle, compiled
 * with oracle-wrap.h so every call that takes an event number is probed. A program makes
 * tensors, views of them (slice, narrow, transpose, select, expand, unsqueeze, reshape),
 * clones and detaches, writes in place through any alias, computes out of place, opens and
 * ends dispose scopes in and out of order, moves tensors between scopes, turns tensors into
 * parameters, runs backward with and without retain_graph, inside and outside no_grad, and
 * disposes; the same seed makes the same program. Errors the engine reports (an in-place
 * write to a leaf that requires grad, a second backward through a freed graph) are part of
 * the program: they return, and the state must still agree. */
#include "random-program.h"

#include <glib.h>

#define MAX_HANDLES 192
#define MAX_SCOPES 6

typedef struct prog {
  GRand *rand;
  gs_tensor t[MAX_HANDLES];
  int n;
  gs_scope scopes[MAX_SCOPES]; /* begun and not yet ended by the program */
  int n_scopes;
  int no_grad_depth;
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
  if (t.id && pick(p, 3) == 0)
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

static void write_in_place(prog *p, gs_tensor t) {
  switch (pick(p, 5)) {
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
  switch (pick(p, 5)) {
  case 0: keep(p, gs_mul_scalar(t, 2.0)); break;
  case 1: keep(p, gs_mul(t, t)); break;
  case 2: keep(p, gs_add(t, t)); break;
  case 3: keep(p, gs_sum(t, NULL, 0, false)); break;
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
    gs_backward_with(loss, GS_NO_TENSOR, pick(p, 2) == 0);
    return;
  }
}

static void step(prog *p) {
  gs_tensor t = any(p);
  int what = p->n < 3 ? 0 : pick(p, 20);
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
  case 11: compute(p, t); break;
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
  default: gs_dispose(t); break;
  }
}

void random_program_run(guint32 seed, guint steps) {
  random_program_run_with(seed, steps, 0, NULL, NULL);
}

void random_program_run_with(guint32 seed, guint steps, guint at, void (*at_step)(gpointer),
                             gpointer data) {
  prog p = {.rand = g_rand_new_with_seed(seed)};
  for (guint i = 0; i < steps; i++) {
    step(&p);
    if (at_step && i + 1 == at)
      at_step(data);
  }
  while (p.no_grad_depth-- > 0)
    gs_no_grad_end();
  while (p.n_scopes > 0)
    end_scope(&p, p.n_scopes - 1);
  for (int i = 0; i < p.n; i++)
    if (gs_is_alive(p.t[i]))
      gs_dispose(p.t[i]);
  g_rand_free(p.rand);
}
