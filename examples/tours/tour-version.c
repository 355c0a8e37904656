/* tour-version: tour 3, the version counter and the in-place error. Backward needs the
 * tensors its formulas saved as they were; a write through a detached alias changes them,
 * and backward says so (which tensor, which versions, which op wrote it). The fix: write on a
 * copy, so the saved bytes stay as they were. */
#include "tour-common.h"

int main(void) {
  tour_caught caught = {0};
  void *previous_data;
  gs_error_handler previous = gs_set_error_handler(tour_keep_error, &caught, &previous_data);

  tour_section("forward");
  const double a_values[] = {1, 2, 3};
  int64_t shape3[] = {3};
  gs_tensor a = tour_named(gs_from_data(GS_F64, shape3, 1, a_values), "a");
  gs_set_requires_grad(a, true);
  gs_tensor b = tour_named(gs_mul(a, a), "b"); /* MulBackward saves a, at version 0 */
  gs_tensor loss = tour_named(gs_sum(b, NULL, 0, false), "loss");

  tour_section("in-place write");
  gs_tensor alias = tour_named(gs_detach(a), "alias");
  gs_add_scalar_(alias, 1.0); /* bumps the version a and alias share to 1 */

  tour_section("backward");
  gs_backward(loss); /* fails: a is at version 1, MulBackward saved it at version 0 */
  printf("backward: %s\n", caught.last);
  CHECK(caught.count == 1 && strstr(caught.last, "version"));

  tour_section("fix");
  gs_tensor b2 = tour_named(gs_mul(a, a), "b2");
  gs_tensor loss2 = tour_named(gs_sum(b2, NULL, 0, false), "loss2");
  gs_tensor copy = tour_named(gs_clone(alias), "copy"); /* its own version counter */
  gs_add_scalar_(copy, 1.0); /* copies the bytes first: a's version stays where it was */
  gs_backward(loss2);
  CHECK(caught.count == 1);
  CHECK(gs_get(gs_grad(a), (int64_t[]){0}) == 4.0); /* d(a*a)/da = 2a, a[0] is 2 now */

  gs_set_error_handler(previous, previous_data, NULL);
  gs_tensor all[] = {a, b, loss, alias, b2, loss2, copy};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    gs_dispose(all[i]);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
