/* tour-scopes: tour 5, dispose scopes and their statistics, as TorchSharp's test of a
 * parameter made from a tensor created in a scope: the scope owns the tensor, the parameter
 * takes its handle (one object, not two), and ending the scope disposes it. The six counters
 * (they only increase) and the live count are printed after each step. */
#include "tour-common.h"

static void print_counters(const char *when) {
  gs_scope_stats s = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  char text[256];
  printf("%s: %s\n", when, gs_scope_stats_format(&s, text, sizeof text));
}

int main(void) {
  gs_thread_scope_stats_reset();
  print_counters("start");

  tour_section("scope");
  gs_scope scope = gs_scope_begin("step");
  print_counters("scope begun");

  tour_section("tensor in the scope");
  int64_t shape[] = {2, 2};
  gs_tensor w = tour_named(gs_zeros(GS_F32, shape, 2), "w");
  print_counters("tensor created");
  CHECK(gs_thread_scope_stats(GS_OBJECT_TENSOR).created_in_scope == 1);

  tour_section("parameter");
  gs_tensor p = tour_named(gs_parameter_new(w, true), "p"); /* w's handle moves into p */
  print_counters("parameter made");
  CHECK(gs_thread_scope_stats(GS_OBJECT_TENSOR).live == 1);

  tour_section("scope end");
  gs_scope_end(scope); /* the scope owned the parameter: it disposes it */
  print_counters("scope ended");
  gs_scope_stats s = gs_thread_scope_stats(GS_OBJECT_TENSOR);
  CHECK(s.live == 0 && s.disposed_in_scope == 1 && !gs_is_alive(p));

  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
