/* tour-clone-detach: tour 2, clone is copy-on-write, detach shares the version counter.
 * clone() is a copy in meaning (Burn's and PyTorch's) but costs nothing until one side writes;
 * detach() is the same bytes and the same version counter, so every write through it is seen
 * by the original. */
#include "tour-common.h"

int main(void) {
  tour_section("clone");
  gs_tensor a = tour_named(gs_arange(0, 4, 1, GS_F32), "a");
  gs_tensor c = tour_named(gs_clone(a), "c"); /* shares a's bytes copy-on-write */
  CHECK(gs_is_copy_on_write(c));

  tour_section("write the clone");
  gs_add_scalar_(c, 10.0); /* the first write copies the bytes; a is untouched */
  CHECK(gs_get(a, (int64_t[]){0}) == 0.0 && gs_get(c, (int64_t[]){0}) == 10.0);
  CHECK(gs_version(a) == 0);

  tour_section("detach");
  gs_tensor d = tour_named(gs_detach(a), "d"); /* same storage, same version counter */
  CHECK(gs_storage_id(d) == gs_storage_id(a));

  tour_section("write through detach");
  gs_mul_scalar_(d, 2.0); /* a sees the write, and its version goes up */
  printf("a[1] = %g, version of a = %lld, version of c = %lld\n", gs_get(a, (int64_t[]){1}),
         (long long)gs_version(a), (long long)gs_version(c));
  CHECK(gs_get(a, (int64_t[]){1}) == 2.0 && gs_version(a) == 1);

  gs_dispose(a), gs_dispose(c), gs_dispose(d);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
