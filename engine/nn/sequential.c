/* sequential.c: Sequential, torch.nn.Sequential in C: children named "0", "1", ... applied in
 * order. Only the output survives a forward: each intermediate is disposed as soon as the next
 * module has used it, so a Sequential leaves exactly one new handle in the current scope, as a
 * single op does. */
#include <stdio.h>

#include "core-impl.h"
#include "module-impl.h"
#include "gradscope/nn.h"

static gs_tensor sequential_forward(gs_module seq, gs_tensor x);
static const gs_module_type sequential_type = {"Sequential", sequential_forward, NULL};

/* A Sequential's data is NULL, so the type is tested first; the data lookup only reports. */
static bool is_sequential(gs_module m, const char *fn) {
  if (gs_module_is_a(m, &sequential_type))
    return true;
  gs__module_data_as(m, &sequential_type, fn); /* reports a stale handle or the wrong type */
  return false;
}

static gs_tensor sequential_forward(gs_module seq, gs_tensor x) {
  if (!is_sequential(seq, "sequential_forward"))
    return GS_NO_TENSOR;
  int n = gs_module_child_count(seq);
  if (n < 0)
    return GS_NO_TENSOR;
  if (n == 0) /* an empty Sequential is the identity, as PyTorch's; a new handle all the same */
    return gs_clone(x);
  gs_tensor y = x;
  for (int i = 0; i < n; i++) {
    gs_tensor next = gs_module_forward(gs_module_child_at(seq, i, NULL), y);
    /* An intermediate goes as soon as it is used (the graph keeps what backward needs);
     * never the caller's input, nor a result a module passed through unchanged. */
    if (y.id != x.id && y.id != next.id)
      gs_dispose(y);
    if (!next.id)
      return GS_NO_TENSOR;
    y = next;
  }
  return y;
}

gs_module gs_sequential_new(const gs_module *mods, int n) {
  const char *fn = "sequential_new";
  if (n < 0 || (n > 0 && !mods)) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected an array of %d modules, got %s", n,
              n < 0 ? "a negative count" : "NULL");
    return GS_NO_MODULE;
  }
  /* Check every module before taking any, so a failed call leaves them all to the caller. */
  for (int i = 0; i < n; i++) {
    if (!gs_module_type_name(mods[i]))
      return GS_NO_MODULE; /* reported: stale or empty */
    if (gs_module_parent(mods[i]).id) {
      gs__error(GS_ERR_STATE, fn, "module %d (%s) already belongs to a parent module", i,
                gs_module_type_name(mods[i]));
      return GS_NO_MODULE;
    }
    for (int j = 0; j < i; j++)
      if (mods[j].id == mods[i].id) {
        gs__error(GS_ERR_ARGUMENT, fn, "module %d is module %d again: a module can be in one "
                  "place of a tree only", i, j);
        return GS_NO_MODULE;
      }
  }
  gs_module seq = gs_module_new_typed(&sequential_type, NULL);
  for (int i = 0; i < n && seq.id; i++)
    gs_sequential_append(seq, mods[i]);
  return seq;
}

void gs_sequential_append(gs_module seq, gs_module m) {
  if (!is_sequential(seq, "sequential_append"))
    return;
  char name[16];
  snprintf(name, sizeof name, "%d", gs_module_child_count(seq));
  gs_module_register_child(seq, name, m);
}
