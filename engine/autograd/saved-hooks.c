/* saved-hooks.c: saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks): each
 * thread's stack of pack/unpack pairs, the packing of what gs__save keeps while a pair is
 * pushed, and the one place a hooked slot is loaded back (unpacked and checked) for a
 * formula or for gs_node_saved.
 *
 * A pair is refcounted: the stack holds one reference while it is pushed and each packed
 * slot one more, because a node may be backpropagated (and so unpacked) long after its pair
 * was popped, on any thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "trace-writer.h"

typedef struct gs__saved_hooks {
  gs_saved_tensor_hooks fns;
  atomic_int refcount;
} gs__saved_hooks;

/* This thread's pushed pairs, innermost last. */
static GS__THREAD_LOCAL gs__saved_hooks **stack;
static GS__THREAD_LOCAL int depth, capacity;
/* True while a pack hook runs on this thread: what it saves is not packed again. */
static GS__THREAD_LOCAL bool packing;
/* disable_saved_tensors_hooks: the messages of the disables open, innermost last (NULL
 * entries: the default message). */
static GS__THREAD_LOCAL char **disabled_messages;
static GS__THREAD_LOCAL int disabled, disabled_capacity;

static void hooks_release(gs__saved_hooks *h) {
  if (atomic_fetch_sub_explicit(&h->refcount, 1, memory_order_acq_rel) != 1)
    return;
  if (h->fns.free_user_data)
    h->fns.free_user_data(h->fns.user_data);
  free(h);
}

int gs_saved_tensor_hooks_push(const gs_saved_tensor_hooks *hooks) {
  if (disabled) {
    const char *message = disabled_messages[disabled - 1];
    gs__error(GS_ERR_STATE, "saved_tensor_hooks_push", "%s",
              message ? message : "saved-tensor hooks are disabled on this thread");
    return -1;
  }
  if (!hooks || !hooks->pack || !hooks->unpack) {
    gs__error(GS_ERR_ARGUMENT, "saved_tensor_hooks_push",
              "expected a pair with both a pack and an unpack function, got %s",
              !hooks         ? "NULL"
              : !hooks->pack ? "no pack"
                             : "no unpack");
    return -1;
  }
  if (depth == capacity) {
    int cap = capacity ? 2 * capacity : 8;
    gs__saved_hooks **bigger = realloc(stack, (size_t)cap * sizeof *bigger);
    if (!bigger) {
      gs__error(GS_ERR_OUT_OF_MEMORY, "saved_tensor_hooks_push", "no memory for %d pairs", cap);
      return -1;
    }
    stack = bigger;
    capacity = cap;
  }
  gs__saved_hooks *h = malloc(sizeof *h);
  if (!h) {
    gs__error(GS_ERR_OUT_OF_MEMORY, "saved_tensor_hooks_push", "no memory for a hook pair");
    return -1;
  }
  h->fns = *hooks;
  atomic_init(&h->refcount, 1);
  stack[depth++] = h;
  return 0;
}

void gs_saved_tensor_hooks_pop(void) {
  gs__saved_pack_pending();
  if (depth == 0) {
    gs__error(GS_ERR_STATE, "saved_tensor_hooks_pop",
              "no saved-tensor hooks are pushed on this thread");
    return;
  }
  hooks_release(stack[--depth]);
  if (depth == 0) { /* a thread that ends with none pushed leaves nothing behind */
    free(stack);
    stack = NULL;
    capacity = 0;
  }
}

int gs_saved_tensor_hooks_depth(void) { return depth; }

int gs_saved_tensor_hooks_disable(const char *message) {
  if (disabled == disabled_capacity) {
    int cap = disabled_capacity ? 2 * disabled_capacity : 4;
    char **bigger = realloc(disabled_messages, (size_t)cap * sizeof *bigger);
    if (!bigger) {
      gs__error(GS_ERR_OUT_OF_MEMORY, "saved_tensor_hooks_disable", "no memory for %d", cap);
      return disabled;
    }
    disabled_messages = bigger;
    disabled_capacity = cap;
  }
  disabled_messages[disabled] = message ? strdup(message) : NULL;
  return disabled++;
}

void gs_saved_tensor_hooks_enable(void) {
  if (disabled == 0) {
    gs__error(GS_ERR_STATE, "saved_tensor_hooks_enable",
              "saved-tensor hooks are not disabled on this thread");
    return;
  }
  free(disabled_messages[--disabled]);
  if (disabled == 0) {
    free(disabled_messages);
    disabled_messages = NULL;
    disabled_capacity = 0;
  }
}

/* ---- saving ----------------------------------------------------------------------------- */

/* A new handle over what slot s holds now (a view of it that requires no grad). */
static gs_tensor saved_handle(const gs__node *node, const gs__saved_tensor *s) {
  gs__tensor copy = s->value;
  copy.origin = GS__ORIGIN_VIEW;
  copy.source = s->tensor;
  /* Outside the view history of what it was saved from: a view saved before a write through
   * it (the input of an in-place op) would otherwise get an AsStridedBackward from the base's
   * new history on its first use, and a pack hook's copy of it would require grad and lead
   * back to the node that saved it: a cycle of references that nothing frees. */
  copy.view_base = 0;
  copy.base_history = 0;
  gs__storage_retain(copy.storage);
  return gs__register(&copy, node->kind->name);
}

/* The node whose saves wait for their pack (retained), or NULL. An op saves its slots one
 * after the other and its node's creation is logged at the first event after them, so the
 * pack hooks, which make tensors (events), run once the last slot is saved, or, if an op
 * leaves its last slot empty, at the next thing that needs them done (see
 * gs__saved_pack_pending). */
static GS__THREAD_LOCAL gs__node *pending_node;

/* Gives slot s (pending on its pair) to the pack hook. */
static void pack_slot(gs__node *node, gs__saved_tensor *s) {
  gs__saved_hooks *h = s->pending;
  s->pending = NULL;
  s->storage_id = s->value.storage->id;
  gs_tensor t = saved_handle(node, s);
  /* The pack hook decides what keeps the bytes: the node keeps only the geometry. */
  gs__tensor_release(&s->value);
  void *packed = NULL;
  packing = true;
  bool ok = t.id && h->fns.pack(t, &packed, h->fns.user_data);
  packing = false;
  if (!ok) {
    hooks_release(h);
    s->lost = true;
    gs__error(GS_ERR_STATE, node->kind->name,
              "the saved-tensor pack hook failed on the tensor %s #%llu saves (slot %d), so a "
              "backward through it cannot run",
              node->kind->name, (unsigned long long)node->id, (int)(s - node->saved));
    return;
  }
  s->hooks = h; /* the pending reference */
  s->packed = packed;
  /* A write through a view saves into the op's node, which the log never shows: it lists
   * these saved tensors under the CopySlices node wrapping it, and so does this event. */
  if (gs__trace_on())
    gs__trace_saved(GS_TRACE_SAVED_PACK, node->wrapped ? node->wrapper_id : node->id, s->tensor,
                    s->storage_id);
  else
    gs__trace_skip(1);
}

void gs__saved_pack_pending(void) {
  gs__node *n = pending_node;
  if (!n)
    return;
  pending_node = NULL; /* a hook's own ops find nothing pending */
  for (int i = 0; i < n->n_saved; i++)
    if (n->saved[i].pending)
      pack_slot(n, &n->saved[i]);
  gs__node_release(n);
}

void gs__saved_pack(gs__node *node, gs__saved_tensor *s) {
  if (depth == 0 || packing || !s->value.storage)
    return;
  if (pending_node != node)
    gs__saved_pack_pending();
  gs__saved_hooks *h = stack[depth - 1];
  atomic_fetch_add_explicit(&h->refcount, 1, memory_order_relaxed);
  s->pending = h;
  if (!pending_node) {
    gs__node_retain(node);
    pending_node = node;
  }
  if (s - node->saved == node->n_saved - 1)
    gs__saved_pack_pending();
}

void gs__saved_free_packed(gs__saved_tensor *s) {
  if (s->pending) { /* never packed */
    hooks_release(s->pending);
    s->pending = NULL;
  }
  gs__saved_hooks *h = s->hooks;
  if (!h)
    return;
  s->hooks = NULL;
  if (h->fns.free_packed)
    h->fns.free_packed(s->packed, h->fns.user_data);
  s->packed = NULL;
  hooks_release(h);
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Unpacks slot i of n into its value; false after reporting. */
static bool load_slot(gs__node *n, int i, const char *fn) {
  gs__saved_tensor *s = &n->saved[i];
  gs__saved_hooks *h = s->hooks;
  gs_tensor u = h->fns.unpack(s->packed, h->fns.user_data);
  gs__tensor *t = u.id ? gs__lookup_quiet(u.id) : NULL;
  if (!t) {
    gs__error(GS_ERR_STATE, fn, "the saved-tensor unpack hook of %s #%llu (slot %d) gave no tensor",
              n->kind->name, (unsigned long long)n->id, i);
    return false;
  }
  char want[GS__SHAPE_STR], got[GS__SHAPE_STR];
  if (t->dtype != s->value.dtype || t->ndim != s->value.ndim ||
      memcmp(t->shape, s->value.shape, (size_t)t->ndim * sizeof(int64_t)) != 0) {
    gs__error(t->dtype != s->value.dtype ? GS_ERR_DTYPE : GS_ERR_SHAPE, fn,
              "the saved-tensor unpack hook of %s #%llu (slot %d) must give back a tensor like "
              "the one packed, %s %s; got %s %s",
              n->kind->name, (unsigned long long)n->id, i,
              gs__shape_str(want, s->value.shape, s->value.ndim), gs_dtype_name(s->value.dtype),
              gs__shape_str(got, t->shape, t->ndim), gs_dtype_name(t->dtype));
    gs_dispose(u);
    return false;
  }
  int64_t now = atomic_load_explicit(&t->storage->version, memory_order_relaxed);
  if (t->storage->id == s->storage_id && now != s->version) {
    gs__error(GS_ERR_STATE, fn,
              "one of the variables needed for gradient computation has been modified by an "
              "inplace operation: tensor %s %s saved by %s #%llu (slot %d, given back by its "
              "unpack hook) is at version %lld; expected version %lld. It was modified in place "
              "by %s (event %llu).",
              gs__shape_str(want, s->value.shape, s->value.ndim), gs_dtype_name(s->value.dtype),
              n->kind->name, (unsigned long long)n->id, i, (long long)now, (long long)s->version,
              t->storage->last_write_op ? t->storage->last_write_op : "a write",
              (unsigned long long)t->storage->last_write_event);
    gs_dispose(u);
    return false;
  }
  if (gs__trace_on())
    gs__trace_saved(GS_TRACE_SAVED_UNPACK, n->id, u.id, t->storage->id);
  else
    gs__trace_skip(1);
  /* The slot reads the unpacked tensor's bytes and layout until it is unloaded. */
  gs__storage_retain(t->storage);
  gs__tensor value = *t;
  value.id = 0;
  value.ag = (gs__autograd_meta){0};
  s->value = value;
  gs_dispose(u);
  return true;
}

/* Loads slot i (counted: nested loads unpack once); false after reporting. */
static bool load_one(gs__node *n, int i, const char *fn) {
  gs__saved_tensor *s = &n->saved[i];
  if (s->lost) {
    gs__error(GS_ERR_STATE, fn,
              "%s #%llu has no saved tensor in slot %d: its saved-tensor pack hook failed when "
              "the node was recorded",
              n->kind->name, (unsigned long long)n->id, i);
    return false;
  }
  if (!s->hooks || s->loads++ > 0)
    return true;
  if (load_slot(n, i, fn))
    return true;
  s->loads--;
  return false;
}

static void unload_one(gs__saved_tensor *s) {
  if (s->hooks && s->loads > 0 && --s->loads == 0 && s->value.storage)
    gs__tensor_release(&s->value);
}

bool gs__node_load_saved(gs__node *n, const char *fn) {
  gs__saved_pack_pending();
  for (int i = 0; i < n->n_saved; i++) {
    if (load_one(n, i, fn))
      continue;
    for (int k = 0; k < i; k++) /* undo what loaded before the failure */
      unload_one(&n->saved[k]);
    return false;
  }
  return true;
}

void gs__node_unload_saved(gs__node *n) {
  for (int i = 0; i < n->n_saved; i++)
    unload_one(&n->saved[i]);
}

/* ---- gs_node_saved ---------------------------------------------------------------------- */

int gs_node_n_saved(gs_node h) {
  gs__node *n = gs__node_lookup(h, "node_n_saved");
  return n ? n->n_saved : -1;
}

gs_tensor gs_node_saved(gs_node h, int i) {
  gs__node *n = gs__node_lookup(h, "node_saved");
  if (!n)
    return GS_NO_TENSOR;
  if (i < 0 || i >= n->n_saved) {
    gs__error(GS_ERR_INDEX, "node_saved", "%s #%llu saved %d tensor%s, got slot %d", n->kind->name,
              (unsigned long long)n->id, n->n_saved, n->n_saved == 1 ? "" : "s", i);
    return GS_NO_TENSOR;
  }
  if (n->released || (!gs__saved_present(&n->saved[i]) && !n->saved[i].lost)) {
    gs__error(GS_ERR_STATE, "node_saved",
              "%s #%llu has no saved tensor in slot %d: a backward freed them (at event %llu); "
              "pass retain_graph to keep them",
              n->kind->name, (unsigned long long)n->id, i, (unsigned long long)n->released_event);
    return GS_NO_TENSOR;
  }
  gs__saved_pack_pending();
  if (!load_one(n, i, "node_saved"))
    return GS_NO_TENSOR;
  gs_tensor t = saved_handle(n, &n->saved[i]);
  unload_one(&n->saved[i]);
  return t;
}
