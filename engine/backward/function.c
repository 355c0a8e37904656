/* function.c: functions with a backward of their own (gs_function_record), the engine's half
 * of torch.autograd.Function. The caller computes the output however it likes (in Python, the
 * Function's forward under no_grad); recording gives it a node whose formula calls back.
 *
 * Each distinct name is a node kind of its own, made on first use and kept for the process's
 * life (as the names in the event log are), so the log and the inspector show the function by
 * its name ("MySquareBackward") like any built-in node. The node saves the tensors the
 * function asked for as ops save theirs: an in-place write to one after the forward is the
 * same error at backward, and the log lists them.
 *
 * Here, above ops/, because the formula stops the pass when the user's backward fails
 * (gs__formula_stop) and runs user code as a hook does (what it makes is the caller's). That
 * code may run a backward of its own (reentrant checkpointing): backward.c nests the pass. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"

/* The kinds made so far, by interned name; never freed (nodes of them may outlive
 * everything). */
typedef struct custom_kind {
  struct custom_kind *next;
  gs__node_kind kind;
} custom_kind;

static custom_kind *kinds;
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

/* What a custom node keeps (its user field). */
typedef struct function_state {
  gs_function_backward_fn backward;
  void *user_data;
  void (*free_user_data)(void *user_data);
  int dirty; /* the input the forward wrote in place (recorded first, as an in-place op's), or
                -1: the engine's input order is the caller's with that one moved to the front */
} function_state;

static void function_backward(gs__node *n, gs_tensor grad, gs_tensor *grads);

static const gs__node_kind *kind_named(const char *name) {
  const char *interned = gs__intern(name);
  pthread_mutex_lock(&kinds_lock);
  custom_kind *k = kinds;
  while (k && k->kind.name != interned)
    k = k->next;
  if (!k && (k = calloc(1, sizeof *k))) {
    /* Differentiable: a backward written with ops records its graph under create_graph, as
     * the built-in formulas do (torch's once_differentiable is the binding's to honour). */
    k->kind = (gs__node_kind){interned, function_backward, true};
    k->next = kinds;
    kinds = k;
  }
  pthread_mutex_unlock(&kinds_lock);
  return k ? &k->kind : NULL;
}

static void state_free(void *user) {
  function_state *s = user;
  if (s->free_user_data)
    s->free_user_data(s->user_data);
  free(s);
}

/* Caller's input i is the engine's input engine_index(s, i). */
static int engine_index(const function_state *s, int i) {
  if (s->dirty < 0)
    return i;
  return i == s->dirty ? 0 : i < s->dirty ? i + 1 : i;
}

static void function_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  function_state *s = n->user;
  int count = n->n_inputs;
  size_t size = (size_t)(count > 0 ? count : 1);
  bool *needs = calloc(size, sizeof *needs);
  gs_tensor *mine = calloc(size, sizeof *mine);
  gs_tensor *saved = calloc((size_t)(n->n_saved > 0 ? n->n_saved : 1), sizeof *saved);
  if (!needs || !mine || !saved) {
    gs__error(GS_ERR_OUT_OF_MEMORY, n->kind->name, "could not allocate the call's arrays");
    gs__formula_stop();
    free(needs), free(mine), free(saved);
    return;
  }
  for (int i = 0; i < count; i++)
    needs[i] = gs__needs_grad(n, engine_index(s, i));
  for (int i = 0; i < n->n_saved; i++)
    saved[i] = gs__saved(n, i); /* disposed for us when the formula returns */
  gs_function_call call = {.grad_output = grad,
                           .saved = saved,
                           .n_saved = n->n_saved,
                           .needs = needs,
                           .grad_inputs = mine,
                           .n_inputs = count,
                           .user_data = s->user_data};
  gs__ownership_resume(); /* what the user's backward makes is the caller's, as a hook's */
  bool ok = s->backward(&call);
  gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
  for (int i = 0; i < count; i++) {
    if (!mine[i].id)
      continue;
    if (ok && needs[i])
      grads[engine_index(s, i)] = mine[i];
    else
      gs_dispose(mine[i]); /* a gradient nothing needs, or the call failed */
  }
  if (!ok) {
    gs__error(GS_ERR_STATE, "backward", "the backward of %s #%llu failed and stopped the pass",
              n->kind->name, (unsigned long long)n->id);
    gs__formula_stop();
  }
  free(needs), free(mine), free(saved);
}

int gs_function_record(gs_tensor output, const gs_tensor *inputs, int n_inputs,
                       const gs_function *fn) {
  static const char *name = "function_record";
  void (*free_user_data)(void *) = fn ? fn->free_user_data : NULL;
  void *user_data = fn ? fn->user_data : NULL;
  int result = -1;
  const gs__tensor **ins = NULL;
  if (!fn || !fn->backward || !fn->name || !fn->name[0]) {
    gs__error(GS_ERR_ARGUMENT, name, "expected a function with a name and a backward, got %s",
              !fn             ? "NULL"
              : !fn->backward ? "no backward"
                              : "no name");
    goto out;
  }
  if (n_inputs < 0 || (n_inputs > 0 && !inputs) || fn->n_saved < 0 ||
      (fn->n_saved > 0 && !fn->saved)) {
    gs__error(GS_ERR_ARGUMENT, name,
              "expected arrays of inputs and saved tensors, got %d inputs "
              "at %p and %d saved at %p",
              n_inputs, (const void *)inputs, fn->n_saved, (const void *)fn->saved);
    goto out;
  }
  gs__tensor *out = gs__lookup(output, fn->name);
  if (!out)
    goto out;
  ins = calloc((size_t)(n_inputs > 0 ? n_inputs : 1), sizeof *ins);
  if (!ins) {
    gs__error(GS_ERR_OUT_OF_MEMORY, name, "could not allocate %d inputs", n_inputs);
    goto out;
  }
  int dirty = -1;
  for (int i = 0; i < n_inputs; i++) {
    if (!(ins[i] = gs__lookup(inputs[i], fn->name)))
      goto out;
    if (inputs[i].id == output.id)
      dirty = i;
  }
  for (int i = 0; i < fn->n_saved; i++)
    if (!gs__lookup(fn->saved[i], fn->name))
      goto out;
  if (!gs__any_requires_grad(n_inputs, ins)) {
    result = 0;
    goto out;
  }
  if (dirty < 0 && (out->ag.grad_fn || out->ag.requires_grad)) {
    gs__error(GS_ERR_STATE, fn->name,
              "expected an output with no history of its own (computed with grad mode off), got "
              "tensor #%u.%u, which %s",
              (unsigned)(output.id & 0xffffffffu), (unsigned)(output.id >> 32),
              out->ag.grad_fn ? "already has a grad_fn" : "is a leaf that requires grad");
    goto out;
  }
  if (!gs_dtype_is_floating(out->dtype)) {
    gs__error(GS_ERR_DTYPE, fn->name,
              "expected a floating-point output to carry a gradient, got %s (mark it "
              "non-differentiable)",
              gs_dtype_name(out->dtype));
    goto out;
  }
  if (dirty >= 0 && !gs__autograd_check_inplace(out, true, fn->name))
    goto out;
  /* An output written in place goes first: gs__record then treats it as an in-place op's. */
  if (dirty > 0) {
    const gs__tensor *d = ins[dirty];
    memmove(&ins[1], &ins[0], (size_t)dirty * sizeof *ins);
    ins[0] = d;
  }
  function_state *s = malloc(sizeof *s);
  const gs__node_kind *kind = s ? kind_named(fn->name) : NULL;
  if (!kind) {
    free(s);
    gs__error(GS_ERR_OUT_OF_MEMORY, name, "could not allocate the node of %s", fn->name);
    goto out;
  }
  gs__node *n = gs__record(kind, out, n_inputs, ins, fn->n_saved);
  if (!n) {
    free(s);
    goto out;
  }
  *s = (function_state){fn->backward, user_data, free_user_data, dirty};
  n->user = s;
  n->free_user = state_free;
  for (int i = 0; i < fn->n_saved; i++) {
    gs__tensor *t = gs__lookup(fn->saved[i], fn->name);
    if (t == out)
      gs__save_result(n, i, t);
    else
      gs__save(n, i, t);
  }
  free(ins);
  return 1;
out:
  free(ins);
  if (free_user_data)
    free_user_data(user_data);
  return result;
}

bool gs_node_is_function(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_is_function");
  return n && n->kind->backward == function_backward;
}
