/* grad-hooks.c: hooks on the gradient that flows into a tensor (gs_register_grad_hook), as
 * PyTorch's Tensor.register_hook. A hook hangs on the node the tensor's gradient goes to:
 * its grad_fn for a non-leaf, its AccumulateGrad for a leaf; backward runs a node's hooks on
 * the summed gradient just before the node runs, and what they return is what the node sees
 * (what a leaf accumulates). A hook is user code: the tensors it makes belong to the caller's
 * scope, not to backward's temporaries.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"

static atomic_uint_fast64_t next_hook_id;
/* Registration and removal against one another; backward reads a node's list under the
 * backward lock, and a hook removed while its node's hooks run is only marked (below). */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
/* The node whose hooks are running on this thread, if any. */
static GS__THREAD_LOCAL gs__node *running;

gs_grad_hook gs_register_grad_hook(gs_tensor h, gs_grad_hook_fn fn, void *user_data,
                                   void (*free_user_data)(void *user_data)) {
  const char *name = "register_grad_hook";
  gs_grad_hook none = {0, 0};
  gs__tensor *t = gs__lookup(h, name);
  if (t && !fn)
    gs__error(GS_ERR_ARGUMENT, name, "expected a hook function, got NULL");
  if (t && fn)
    gs__refresh_view(t);
  if (t && fn && !t->ag.requires_grad)
    gs__error(GS_ERR_STATE, name,
              "tensor #%u.%u does not require grad: no gradient flows into it to hook",
              (unsigned)(h.id & 0xffffffffu), (unsigned)(h.id >> 32));
  gs__node *n = t && fn && t->ag.requires_grad ? gs__grad_edge(t) : NULL;
  gs__grad_hook *hook = n ? calloc(1, sizeof *hook) : NULL;
  if (n && !hook)
    gs__error(GS_ERR_OUT_OF_MEMORY, name, "could not allocate a hook");
  gs_node node = hook ? gs__node_handle(n) : GS_NO_NODE;
  if (!node.id) {
    free(hook);
    if (free_user_data)
      free_user_data(user_data);
    return none;
  }
  *hook = (gs__grad_hook){.id = atomic_fetch_add(&next_hook_id, 1) + 1,
                          .fn = fn,
                          .user_data = user_data,
                          .free_user_data = free_user_data};
  pthread_mutex_lock(&hooks_lock);
  gs__grad_hook **tail = &n->hooks;
  while (*tail)
    tail = &(*tail)->next;
  *tail = hook;
  pthread_mutex_unlock(&hooks_lock);
  return (gs_grad_hook){node.id, hook->id};
}

void gs_grad_hook_remove(gs_grad_hook hook) {
  if (!hook.id || !gs_node_is_alive((gs_node){hook.node}))
    return; /* never made, or freed with its node */
  gs__node *n = gs__node_lookup((gs_node){hook.node}, "grad_hook_remove");
  gs__grad_hook *unlinked = NULL;
  pthread_mutex_lock(&hooks_lock);
  for (gs__grad_hook **at = &n->hooks; *at; at = &(*at)->next) {
    gs__grad_hook *h = *at;
    if (h->id != hook.id)
      continue;
    if (running == n) { /* the loop below holds it: freed when the node's hooks are done */
      h->removed = true;
    } else {
      *at = h->next;
      unlinked = h;
    }
    break;
  }
  pthread_mutex_unlock(&hooks_lock);
  if (unlinked) /* its free_user_data may take a binding's lock: not under ours */
    gs__grad_hook_free(unlinked);
}

/* Frees the hooks removed while n's hooks ran. */
static void sweep_removed(gs__node *n) {
  gs__grad_hook *unlinked = NULL;
  pthread_mutex_lock(&hooks_lock);
  for (gs__grad_hook **at = &n->hooks; *at;) {
    gs__grad_hook *h = *at;
    if (h->removed) {
      *at = h->next;
      h->next = unlinked;
      unlinked = h;
    } else {
      at = &h->next;
    }
  }
  pthread_mutex_unlock(&hooks_lock);
  while (unlinked) {
    gs__grad_hook *h = unlinked;
    unlinked = h->next;
    gs__grad_hook_free(h);
  }
}

/* A replacement must be a gradient of the same shape and dtype; false after reporting. */
static bool check_replacement(const gs__node *n, gs_tensor grad, gs_tensor replacement) {
  gs__tensor *g = gs__lookup(grad, "backward");
  gs__tensor *r = gs__lookup(replacement, "backward");
  if (!g || !r)
    return false;
  if (r->dtype == g->dtype && r->ndim == g->ndim &&
      memcmp(r->shape, g->shape, (size_t)g->ndim * sizeof(int64_t)) == 0)
    return true;
  char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
  gs__error(GS_ERR_SHAPE, "backward",
            "a gradient hook on the input of %s #%llu returned a gradient %s %s; expected "
            "one like the gradient it was given, %s %s",
            n->kind->name, (unsigned long long)n->id, gs__shape_str(got, r->shape, r->ndim),
            gs_dtype_name(r->dtype), gs__shape_str(want, g->shape, g->ndim),
            gs_dtype_name(g->dtype));
  return false;
}

bool gs__grad_hooks_run(gs__node *n, gs_tensor *grad) {
  bool ok = true;
  running = n;
  for (gs__grad_hook *h = n->hooks; h && ok; h = h->next) {
    if (h->removed)
      continue;
    gs_tensor replacement = GS_NO_TENSOR;
    gs__ownership_resume(); /* what the hook makes is the caller's, as if made by it */
    ok = h->fn(*grad, &replacement, h->user_data);
    gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
    if (!ok) {
      gs__error(GS_ERR_STATE, "backward",
                "a gradient hook on the input of %s #%llu stopped the backward pass", n->kind->name,
                (unsigned long long)n->id);
    } else if (replacement.id && !check_replacement(n, *grad, replacement)) {
      ok = false;
    }
    if (!replacement.id)
      continue;
    if (!ok) {
      gs_dispose(replacement);
      continue;
    }
    gs_dispose(*grad); /* the pass disposes the replacement as it did grad */
    *grad = replacement;
  }
  running = NULL;
  sweep_removed(n);
  return ok;
}
