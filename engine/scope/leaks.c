/* leaks.c: what is still alive and owned by the caller: tensors created outside every scope
 * (or detached from one) and never disposed. Listed on request, and at exit when
 * GS_LEAK_REPORT=1, each with the op that made it, its shape and the last scope it was in. */
#include <stdlib.h>
#include <string.h>

#include "scope-impl.h"

int gs_leak_report(FILE *out) {
  if (!out)
    out = stderr;
  int count = 0;
  gs__slot *s;
  for (uint32_t index = 0; (s = (gs__slot *)gs__pool_slot_at(&gs__tensors, index)); index++) {
    if (!atomic_load(&s->pool.live) || s->own.holder != GS__HELD_BY_CALLER)
      continue;
    const gs__tensor *t = &s->tensor;
    char shape[GS__SHAPE_STR];
    fprintf(out, "leak: tensor #%u.%u %s %s made by %s at event %llu, %s%s%s\n", index,
            (unsigned)(t->id >> 32), gs__shape_str(shape, t->shape, t->ndim),
            gs_dtype_name(t->dtype), t->created_by ? t->created_by : "?",
            (unsigned long long)t->created_event,
            s->own.last_scope ? "detached from scope '" : "created outside every scope",
            s->own.last_scope ? s->own.last_scope : "", s->own.last_scope ? "'" : "");
    count++;
  }
  if (count)
    fprintf(out, "leak: %d tensor(s) alive and owned by the caller\n", count);
  return count;
}

static void report_at_exit(void) {
  if (gs_leak_report(stderr) == 0)
    fprintf(stderr, "gradscope: no leaked tensors\n");
}

/* GS_LEAK_REPORT=1 asks for the report when the process exits. */
__attribute__((constructor)) static void register_leak_report(void) {
  const char *env = getenv("GS_LEAK_REPORT");
  if (env && strcmp(env, "1") == 0)
    atexit(report_at_exit);
}
