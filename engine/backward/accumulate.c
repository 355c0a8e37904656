/* accumulate.c: AccumulateGrad, the node a leaf's gradient flows into, and gradients kept for
 * non-leaves (gs_retain_grad): the first gradient becomes the tensor's own, later ones are
 * added into it. Engine/autograd makes these nodes; their formula needs ops, so it lives here
 * and installs itself at start-up. */
#include <stdlib.h>

#include "backward-impl.h"
#include "scope-impl.h"
#include "trace-writer.h"

static void accumulate_into(uint64_t id, gs_tensor grad) {
  gs_tensor leaf_h = {id};
  if (!gs_is_alive(leaf_h))
    return; /* the leaf was disposed: its gradient has nowhere to go */
  gs__tensor *leaf = gs__lookup(leaf_h, "backward");
  gs_tensor existing = {leaf->ag.grad};
  if (leaf->ag.grad && gs_is_alive(existing)) {
    gs_add_(existing, grad);
    if (gs__trace_on())
      gs__trace_grad_accumulate(id, existing.id);
    else
      gs__trace_skip(1);
    return;
  }
  /* The first gradient becomes the leaf's own. A clone is a semantic copy in O(1) (the
   * formula's temporary dies right after, so nothing is ever copied); only a gradient laid out
   * non-contiguously (an expanded one, say) is copied, so later backwards can add into it. */
  gs_tensor own = gs__is_contiguous(gs__lookup(grad, "backward")) ? gs_clone(grad)
                                                                  : gs_contiguous(grad);
  gs__tensor *g = gs__lookup(own, "backward");
  gs__own_lock();
  gs__own_set_holder_locked(&gs__slot_of(g)->own, GS__HELD_BY_TENSOR, id); /* the leaf's */
  gs__own_unlock();
  leaf->ag.grad = own.id; /* the pool's pages never move: the pointer is still good */
  if (gs__trace_on())
    gs__trace_grad_accumulate(id, own.id);
  else
    gs__trace_skip(1);
}

static void accumulate_grad_backward(gs__node *n, gs_tensor grad, gs_tensor *grads) {
  (void)grads;
  accumulate_into(n->leaf, grad);
  /* A leaf's accumulator runs once per pass, after every path into it: its gradient is final. */
  gs_tensor leaf = {n->leaf};
  if (gs_is_alive(leaf))
    gs__backward_hooks_call(GS__HOOK_GRAD_READY, leaf, gs_grad(leaf));
}
GS__BACKWARD(AccumulateGrad, accumulate_grad_backward);

void gs__accumulate_retained(gs__node *n, gs_tensor grad) {
  if (n->retained_output)
    accumulate_into(n->retained_output, grad);
}

int gs_backward_inputs(const gs_tensor *outputs, const gs_tensor *grads, int n_outputs,
                       const gs_tensor *inputs, int n_inputs, bool retain_graph) {
  if (n_inputs <= 0 || !inputs) {
    gs__error(GS_ERR_ARGUMENT, "backward",
              "inputs: expected at least one tensor to accumulate into, got %d", n_inputs);
    return -1;
  }
  gs_tensor *got = calloc((size_t)n_inputs, sizeof *got);
  if (!got) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "backward", "no memory for %d gradients", n_inputs);
    return -1;
  }
  /* All gradients first, then the accumulation: an error in the pass leaves every .grad as it
   * was. An input reached by no gradient keeps its .grad, as in PyTorch. */
  int rc = gs_autograd_grad(outputs, grads, n_outputs, inputs, n_inputs, retain_graph, true, got);
  for (int i = 0; i < n_inputs; i++) {
    if (!got[i].id)
      continue;
    if (rc == 0)
      accumulate_into(inputs[i].id, got[i]);
    gs_dispose(got[i]);
  }
  free(got);
  return rc;
}

__attribute__((constructor)) static void install_accumulate_grad(void) {
  gs__kinds.accumulate_grad = &AccumulateGrad;
}
