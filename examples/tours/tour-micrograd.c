/* tour-micrograd: tour 4, autograd from scratch, on micrograd's own example:
 * L = (a * b + c) * f. Each op records a node beside its output; backward walks the nodes in
 * reverse and accumulates dL/dx into each leaf. Record with GS_TRACE_VALUES=16 to see every
 * value and gradient on the graph. */
#include "tour-common.h"

static gs_tensor leaf(double value, const char *name) {
  gs_tensor t = tour_named(gs_scalar(GS_F64, value), name);
  gs_set_requires_grad(t, true);
  return t;
}

int main(void) {
  tour_section("forward");
  gs_tensor a = leaf(2.0, "a"), b = leaf(-3.0, "b"), c = leaf(10.0, "c"), f = leaf(-2.0, "f");
  gs_tensor e = tour_named(gs_mul(a, b), "e"); /* MulBackward: saves a and b */
  gs_tensor d = tour_named(gs_add(e, c), "d"); /* AddBackward: saves nothing */
  gs_tensor L = tour_named(gs_mul(d, f), "L"); /* L = -8 */
  CHECK(gs_item(L) == -8.0);

  tour_section("backward");
  gs_backward(L); /* dL/dd = f = -2, dL/df = d = 4, dL/de = dL/dc = -2, dL/da = 6, dL/db = -4 */
  printf("L = %g; dL/da = %g, dL/db = %g, dL/dc = %g, dL/df = %g\n", gs_item(L),
         gs_item(gs_grad(a)), gs_item(gs_grad(b)), gs_item(gs_grad(c)), gs_item(gs_grad(f)));
  CHECK(gs_item(gs_grad(a)) == 6.0 && gs_item(gs_grad(b)) == -4.0);
  CHECK(gs_item(gs_grad(c)) == -2.0 && gs_item(gs_grad(f)) == 4.0);

  gs_tensor all[] = {a, b, c, f, e, d, L};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    gs_dispose(all[i]);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
