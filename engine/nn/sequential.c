/* sequential.c: Sequential, torch.nn.Sequential in C: children named "0", "1", ... applied in
 * order, with torch's list edits (append, insert, del seq[i], seq[a:b] sharing the modules). Only
 * the output survives a forward: each intermediate is disposed as soon as the next module has used
 * it, so a Sequential leaves exactly one new handle in the current scope, as a single op does. */
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
  /* Check every module before taking any, so a failed call leaves them all to the caller:
   * each slot takes one of the caller's holds, so a module listed k times needs k holds. */
  for (int i = 0; i < n; i++) {
    if (!gs_module_type_name(mods[i]))
      return GS_NO_MODULE; /* reported: stale or empty */
    int uses = 0, first = i;
    for (int j = 0; j < n; j++)
      if (mods[j].id == mods[i].id) {
        uses++;
        if (j < first)
          first = j;
      }
    if (first != i)
      continue;
    int holds = gs_module_holder_count(mods[i]);
    if (holds < uses) {
      gs__error(GS_ERR_STATE, fn,
                "module %d (%s) is listed %d time%s but the caller holds it %d time%s: each "
                "slot takes one hold (gs_module_retain it to share it)",
                i, gs_module_type_name(mods[i]), uses, uses == 1 ? "" : "s", holds,
                holds == 1 ? "" : "s");
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
  char name[24];
  snprintf(name, sizeof name, "%d", gs_module_child_count(seq));
  gs_module_register_child(seq, name, m);
}

/* Position i of a Sequential of n (negative: from the end) within [0, limit], or -1 after
 * reporting. */
static int position(int64_t i, int n, int limit, const char *fn) {
  int64_t at = i < 0 ? i + n : i;
  if (at < 0 || at > limit) {
    gs__error(GS_ERR_INDEX, fn, "index %lld is out of range for a Sequential of %d modules",
              (long long)i, n);
    return -1;
  }
  return (int)at;
}

/* After a slot at position from was emptied, the children from..n-1 still carry the names
 * from+1..n: each takes its position's name again (in rising order, so a new name is free). */
static void renumber_down(gs_module seq, int from) {
  int n = gs_module_child_count(seq);
  char old[24], name[24];
  for (int i = from; i < n; i++) {
    snprintf(old, sizeof old, "%d", i + 1);
    snprintf(name, sizeof name, "%d", i);
    gs_module_rename_child(seq, old, name);
  }
}

void gs_sequential_insert(gs_module seq, int64_t i, gs_module m) {
  const char *fn = "sequential_insert";
  if (!is_sequential(seq, fn) || !gs_module_type_name(m))
    return;
  int n = gs_module_child_count(seq);
  int at = position(i, n, n, fn);
  if (at < 0)
    return;
  /* Make room: the children at and after at move up by one, then m takes the free name. */
  char name[24];
  for (int k = n - 1; k >= at; k--) {
    char old[24];
    snprintf(old, sizeof old, "%d", k);
    snprintf(name, sizeof name, "%d", k + 1);
    gs_module_rename_child(seq, old, name);
  }
  snprintf(name, sizeof name, "%d", at);
  int before = gs_module_child_count(seq);
  gs_module_insert_child(seq, at, name, m);
  if (gs_module_child_count(seq) == before) /* refused: put the names back */
    renumber_down(seq, at);
}

void gs_sequential_remove(gs_module seq, int64_t i) {
  const char *fn = "sequential_remove";
  if (!is_sequential(seq, fn))
    return;
  int n = gs_module_child_count(seq);
  int at = n ? position(i, n, n - 1, fn) : position(i, 0, -1, fn);
  if (at < 0)
    return;
  char name[24];
  snprintf(name, sizeof name, "%d", at);
  gs_module_remove_child(seq, name);
  renumber_down(seq, at);
}

gs_module gs_sequential_slice(gs_module seq, int64_t start, int64_t stop, int64_t step) {
  const char *fn = "sequential_slice";
  if (!is_sequential(seq, fn))
    return GS_NO_MODULE;
  if (step == 0) {
    gs__error(GS_ERR_ARGUMENT, fn, "expected a slice step other than 0, got 0");
    return GS_NO_MODULE;
  }
  int n = gs_module_child_count(seq);
  /* Python's slice.indices: clamp into range, negatives counting from the end. */
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  start = start < 0 ? (start + n < lo ? lo : start + n) : (start > hi ? hi : start);
  stop = stop < 0 ? (stop + n < lo ? lo : stop + n) : (stop > hi ? hi : stop);
  gs_module out = gs_module_new_typed(&sequential_type, NULL);
  for (int64_t i = start; out.id && (step > 0 ? i < stop : i > stop); i += step) {
    const char *name = NULL;
    gs_module c = gs_module_child_at(seq, (int)i, &name);
    /* Under its name in seq, as torch's slice keeps the keys ("1", "2" for seq[1:]); the new
     * slot takes the new hold. */
    gs_module_register_child(out, name, gs_module_retain(c));
  }
  return out;
}
