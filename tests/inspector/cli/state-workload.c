/* state-workload.c: the clone/detach program for `gradscope state`'s test
 * (test-state.py). After each call it prints the engine's own answers, as name=value lines:
 * the event counter (what `state --at` is asked for) and, for each tensor, its storage,
 * version, copy-on-write and first value, so the test compares the JSON with the engine. */
#include <gradscope/gradscope.h>
#include <stdio.h>

static void say(const char *step, const char *name, gs_tensor t) {
  printf("%s.%s=%llu %llu %lld %d %g %d\n", step, name, (unsigned long long)t.id,
         (unsigned long long)gs_storage_id(t), (long long)gs_version(t),
         gs_is_copy_on_write(t), gs_get(t, (int64_t[]){0}), gs_requires_grad(t));
}

int main(void) {
  gs_scope step = gs_scope_begin("step");
  gs_tensor x = gs_from_data(GS_F64, (int64_t[]){3}, 1, (double[]){1, 2, 3});
  gs_set_requires_grad(x, true);
  gs_trace_name(x, "x");
  gs_tensor h = gs_mul_scalar(x, 2.0);
  gs_tensor c = gs_clone(h);
  printf("after_clone=%llu\n", (unsigned long long)gs_event_counter());
  say("after_clone", "h", h);
  say("after_clone", "c", c);
  gs_tensor d = gs_detach(h);
  gs_add_scalar_(c, 100.0);
  gs_mul_scalar_(d, 10.0);
  printf("after_writes=%llu\n", (unsigned long long)gs_event_counter());
  say("after_writes", "x", x);
  say("after_writes", "h", h);
  say("after_writes", "c", c);
  say("after_writes", "d", d);
  printf("scope=%llu\n", (unsigned long long)step.id);
  gs_scope_end(step);
  printf("after_end=%llu\n", (unsigned long long)gs_event_counter());
  return gs_live_tensor_count() == 0 ? 0 : 1;
}
