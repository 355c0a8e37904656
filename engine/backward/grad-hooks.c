/* grad-hooks.c: hooks on the gradient that flows into a tensor (gs_register_grad_hook), as
 * PyTorch's Tensor.register_hook. A hook hangs on the node the tensor's gradient goes to:
 * its grad_fn for a non-leaf, its AccumulateGrad for a leaf; backward runs a node's hooks on
 * the summed gradient just before the node runs, and what they return is what the node sees
 * (what a leaf accumulates). A hook is user code: the tensors it makes belong to the caller's
 * scope, not to backward's temporaries.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward-impl.h"
#include "scope-impl.h"

static atomic_uint_fast64_t next_hook_id;
/* Registration and removal against one another; backward reads a node's list under the
 * backward lock, and a hook removed while its node's hooks run is only marked (below). */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
/* The nodes whose hooks are running on this thread, innermost first: a hook may start a
 * nested backward, which runs other nodes' hooks meanwhile. */
typedef struct running_hooks {
  const gs__node *node;
  struct running_hooks *outer;
} running_hooks;
static GS__THREAD_LOCAL running_hooks *running;

static bool hooks_running(const gs__node *n) {
  for (const running_hooks *r = running; r; r = r->outer)
    if (r->node == n)
      return true;
  return false;
}

/* Appends a hook (fn before the node's formula, or post_fn after it) to n's list; with n NULL
 * (refused, already reported) or on failure, lets its user data go and returns none. */
static gs_grad_hook attach(gs__node *n, gs_grad_hook_fn fn, gs_node_post_hook_fn post_fn,
                           void *user_data, void (*free_user_data)(void *user_data),
                           const char *name) {
  gs__grad_hook *hook = n ? calloc(1, sizeof *hook) : NULL;
  if (n && !hook)
    gs__error(GS_ERR_OUT_OF_MEMORY, name, "could not allocate a hook");
  gs_node node = hook ? gs__node_handle(n) : GS_NO_NODE;
  if (!node.id) {
    free(hook);
    if (free_user_data)
      free_user_data(user_data);
    return (gs_grad_hook){0, 0};
  }
  *hook = (gs__grad_hook){.id = atomic_fetch_add(&next_hook_id, 1) + 1,
                          .fn = fn,
                          .post_fn = post_fn,
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

static gs_grad_hook on_node(gs_node node, gs_grad_hook_fn fn, gs_node_post_hook_fn post_fn,
                            void *user_data, void (*free_user_data)(void *user_data),
                            const char *name) {
  gs__node *n = gs__node_lookup(node, name);
  if (n && !fn && !post_fn)
    gs__error(GS_ERR_ARGUMENT, name, "expected a hook function, got NULL");
  return attach(fn || post_fn ? n : NULL, fn, post_fn, user_data, free_user_data, name);
}

gs_grad_hook gs_register_grad_hook(gs_tensor h, gs_grad_hook_fn fn, void *user_data,
                                   void (*free_user_data)(void *user_data)) {
  const char *name = "register_grad_hook";
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
  return attach(n, fn, NULL, user_data, free_user_data, name);
}

gs_grad_hook gs_node_register_pre_hook(gs_node node, gs_grad_hook_fn fn, void *user_data,
                                       void (*free_user_data)(void *user_data)) {
  return on_node(node, fn, NULL, user_data, free_user_data, "node_register_pre_hook");
}

gs_grad_hook gs_node_register_post_hook(gs_node node, gs_node_post_hook_fn fn, void *user_data,
                                        void (*free_user_data)(void *user_data)) {
  return on_node(node, NULL, fn, user_data, free_user_data, "node_register_post_hook");
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
    if (hooks_running(n)) { /* a loop below holds it: freed when the node's hooks are done */
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

/* A replacement must be a gradient of dtype and shape (what it replaces); false after
 * reporting, the hook named by who ("a gradient hook on the input of", "a hook after") and
 * the input it was for (where >= 0). */
static bool check_replacement(const gs__node *n, const char *who, int where, gs_tensor replacement,
                              gs_dtype dtype, int ndim, const int64_t *shape) {
  gs__tensor *r = gs__lookup(replacement, "backward");
  if (!r)
    return false;
  if (r->dtype == dtype && r->ndim == ndim &&
      memcmp(r->shape, shape, (size_t)ndim * sizeof(int64_t)) == 0)
    return true;
  char want[GS__SHAPE_STR], got[GS__SHAPE_STR], input[32] = "";
  if (where >= 0)
    snprintf(input, sizeof input, " for input %d", where);
  gs__error(GS_ERR_SHAPE, "backward",
            "%s %s #%llu returned a gradient %s %s%s; expected one like the gradient %s, %s %s",
            who, n->kind->name, (unsigned long long)n->id, gs__shape_str(got, r->shape, r->ndim),
            gs_dtype_name(r->dtype), input, where >= 0 ? "it replaces" : "it was given",
            gs__shape_str(want, shape, ndim), gs_dtype_name(dtype));
  return false;
}

bool gs__grad_hooks_run(gs__node *n, gs_tensor *grad) {
  bool ok = true;
  running_hooks frame = {n, running};
  running = &frame;
  for (gs__grad_hook *h = n->hooks; h && ok; h = h->next) {
    if (h->removed || !h->fn)
      continue;
    gs_tensor replacement = GS_NO_TENSOR;
    gs__ownership_resume(); /* what the hook makes is the caller's, as if made by it */
    ok = h->fn(*grad, &replacement, h->user_data);
    gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
    if (!ok) {
      gs__error(GS_ERR_STATE, "backward",
                "a gradient hook on the input of %s #%llu stopped the backward pass", n->kind->name,
                (unsigned long long)n->id);
    } else if (replacement.id) {
      gs__tensor *g = gs__lookup(*grad, "backward");
      ok = g && check_replacement(n, "a gradient hook on the input of", -1, replacement, g->dtype,
                                  g->ndim, g->shape);
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
  running = frame.outer;
  sweep_removed(n);
  return ok;
}

static bool has_post_hooks(const gs__node *n) {
  for (const gs__grad_hook *h = n->hooks; h; h = h->next)
    if (h->post_fn && !h->removed)
      return true;
  return false;
}

bool gs__node_post_hooks_run(gs__node *n, gs_tensor *grads, gs_tensor grad_output) {
  if (!has_post_hooks(n))
    return true; /* nothing to set up for */
  bool ok = true;
  running_hooks frame = {n, running};
  running = &frame;
  gs_tensor stack[8];
  gs_tensor *repl = n->n_inputs <= 8 ? stack : calloc((size_t)n->n_inputs, sizeof *repl);
  if (!repl)
    abort(); /* a few handles: failing here means the process is already lost */
  for (gs__grad_hook *h = n->hooks; h && ok; h = h->next) {
    if (h->removed || !h->post_fn)
      continue;
    for (int i = 0; i < n->n_inputs; i++)
      repl[i] = grads[i];
    gs__ownership_resume(); /* what the hook makes is the caller's, as if made by it */
    ok = h->post_fn(grads, n->n_inputs, grad_output, repl, h->user_data);
    gs__ownership_suspend_for(GS__REASON_BACKWARD_TEMPORARY);
    if (!ok)
      gs__error(GS_ERR_STATE, "backward", "a hook after %s #%llu stopped the backward pass",
                n->kind->name, (unsigned long long)n->id);
    for (int i = 0; i < n->n_inputs; i++) {
      if (repl[i].id == grads[i].id)
        continue; /* kept */
      if (repl[i].id && ok) {
        /* like the gradient it replaces, or (an input given none) like the input */
        gs__tensor *g = grads[i].id ? gs__lookup(grads[i], "backward") : NULL;
        const gs__input_meta *in = &n->inputs[i];
        ok = check_replacement(n, "a hook after", i, repl[i], g ? g->dtype : in->dtype,
                               g ? g->ndim : in->ndim, g ? g->shape : in->shape);
      }
      if (!ok) {
        if (repl[i].id)
          gs_dispose(repl[i]);
        continue;
      }
      if (grads[i].id)
        gs_dispose(grads[i]); /* the pass disposes the replacement as it did the gradient */
      grads[i] = repl[i];     /* or none: the input takes no gradient from n */
    }
  }
  if (repl != stack)
    free(repl);
  running = frame.outer;
  sweep_removed(n);
  return ok;
}
