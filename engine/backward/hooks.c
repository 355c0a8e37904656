/* hooks.c: the backward hooks (gs_backward_hooks_add): a small fixed table that backward.c
 * and accumulate.c call into. Layers above (distributed/) need to know when a leaf's gradient
 * is final without the backward layer knowing them. The table is read on every backward, so
 * reading it takes no lock: a slot is published by a release store of its `used` flag, and
 * removing a hook while a backward runs on another thread is the caller's race to avoid. */
#include <pthread.h>
#include <stdatomic.h>

#include "backward-impl.h"

typedef struct hook_slot {
  atomic_bool used;
  gs_backward_hooks hooks;
  void *user_data;
} hook_slot;

static hook_slot slots[GS_BACKWARD_HOOKS_MAX];
static atomic_int n_used; /* slots taken: 0 lets backward skip the table in one branch */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;

/* gs__grad_home for the autograd layer: the first registered hook's home for the leaf. */
static gs_tensor hooks_grad_home(uint64_t leaf, bool claim) {
  if (atomic_load_explicit(&n_used, memory_order_relaxed) == 0)
    return GS_NO_TENSOR;
  for (int i = 0; i < GS_BACKWARD_HOOKS_MAX; i++) {
    if (!atomic_load_explicit(&slots[i].used, memory_order_acquire) || !slots[i].hooks.grad_home)
      continue;
    gs_tensor home = slots[i].hooks.grad_home((gs_tensor){leaf}, claim, slots[i].user_data);
    if (home.id)
      return home;
  }
  return GS_NO_TENSOR;
}

int gs_backward_hooks_add(const gs_backward_hooks *hooks, void *user_data) {
  if (!hooks) {
    gs__error(GS_ERR_ARGUMENT, "backward_hooks_add", "expected hooks, got NULL");
    return 0;
  }
  pthread_mutex_lock(&hooks_lock);
  for (int i = 0; i < GS_BACKWARD_HOOKS_MAX; i++) {
    if (atomic_load(&slots[i].used))
      continue;
    slots[i].hooks = *hooks;
    slots[i].user_data = user_data;
    if (hooks->grad_home)
      gs__grad_home = hooks_grad_home; /* stays: it answers nothing once no hook offers */
    atomic_store_explicit(&slots[i].used, true, memory_order_release);
    atomic_fetch_add(&n_used, 1);
    pthread_mutex_unlock(&hooks_lock);
    return i + 1;
  }
  pthread_mutex_unlock(&hooks_lock);
  gs__error(GS_ERR_STATE, "backward_hooks_add",
            "all %d backward hook slots are taken; remove one first", GS_BACKWARD_HOOKS_MAX);
  return 0;
}

void gs_backward_hooks_remove(int handle) {
  if (handle < 1 || handle > GS_BACKWARD_HOOKS_MAX) {
    gs__error(GS_ERR_ARGUMENT, "backward_hooks_remove",
              "expected a handle from gs_backward_hooks_add (1..%d), got %d",
              GS_BACKWARD_HOOKS_MAX, handle);
    return;
  }
  pthread_mutex_lock(&hooks_lock);
  if (atomic_exchange(&slots[handle - 1].used, false))
    atomic_fetch_sub(&n_used, 1);
  pthread_mutex_unlock(&hooks_lock);
}

void gs__backward_hooks_call(gs__backward_hook_point point, gs_tensor t, gs_tensor grad) {
  if (atomic_load_explicit(&n_used, memory_order_relaxed) == 0)
    return;
  for (int i = 0; i < GS_BACKWARD_HOOKS_MAX; i++) {
    if (!atomic_load_explicit(&slots[i].used, memory_order_acquire))
      continue;
    const gs_backward_hooks *h = &slots[i].hooks;
    void *u = slots[i].user_data;
    if (point == GS__HOOK_BEGIN && h->begin)
      h->begin(t, u);
    else if (point == GS__HOOK_GRAD_READY && h->grad_ready)
      h->grad_ready(t, grad, u);
    else if (point == GS__HOOK_END && h->end)
      h->end(t, u);
  }
}
