/* tour-storage: tour 1, storage, shape and strides. One storage seen through several views
 * (view, transpose), contiguous() copying only when the strides ask for it, a tensor over
 * memory the program owns (gs_from_blob, no copy) and a NumPy .npy file mapped as a storage
 * (its pages are the tensor's bytes). Run under GS_TRACE=run.gstrace and open the log with
 * `gradscope-inspector --tour storage`. */
#include <stdlib.h>
#include <unistd.h>

#include "tour-common.h"

static void show(const char *name, gs_tensor t) {
  char desc[128];
  int64_t strides[GS_MAX_DIMS];
  int ndim = gs_strides(t, strides);
  printf("%s %s strides", name, gs_describe(t, desc, sizeof desc));
  for (int i = 0; i < ndim; i++)
    printf("%s%lld", i ? "," : " ", (long long)strides[i]);
  printf(" storage #%llu contiguous %s\n", (unsigned long long)gs_storage_id(t),
         gs_is_contiguous(t) ? "yes" : "no");
}

int main(void) {
  tour_section("views");
  int64_t shape23[] = {2, 3};
  gs_tensor x = tour_named(gs_arange(0, 6, 1, GS_F32), "x");
  gs_tensor m = tour_named(gs_view(x, shape23, 2), "m");  /* [[0 1 2] [3 4 5]], strides 3,1 */
  gs_tensor t = tour_named(gs_transpose(m, 0, 1), "t");   /* [3, 2], strides 1,3: same bytes */
  show("x", x), show("m", m), show("t", t);
  CHECK(gs_storage_id(t) == gs_storage_id(x) && !gs_is_contiguous(t));

  tour_section("contiguous");
  gs_tensor t_rows = tour_named(gs_contiguous(t), "t_contiguous"); /* copies: new strides 2,1 */
  gs_tensor m_rows = gs_contiguous(m); /* m is already row-major: the same tensor's view */
  show("t.contiguous()", t_rows), show("m.contiguous()", m_rows);
  CHECK(gs_storage_id(t_rows) != gs_storage_id(x) && gs_storage_id(m_rows) == gs_storage_id(x));

  tour_section("blob");
  float blob[4] = {1, 2, 3, 4};
  int64_t shape4[] = {4};
  gs_tensor b = tour_named(gs_from_blob(GS_F32, shape4, 1, NULL, blob, NULL, NULL), "b");
  blob[0] = 100; /* the program's own write: the tensor sees it, nothing was copied */
  CHECK(gs_get(b, (int64_t[]){0}) == 100.0);

  tour_section("numpy");
  char path[256];
  const char *dir = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/tour-storage-%d.npy", dir && *dir ? dir : "/tmp", (int)getpid());
  CHECK(gs_npy_save(path, m) == 0); /* the file numpy.save would write: numpy.load reads it */
  gs_tensor mapped = tour_named(gs_npy_load_mode(path, GS_NPY_MAP_PRIVATE), "from_npy");
  show("from_npy", mapped);
  CHECK(gs_get(mapped, (int64_t[]){1, 2}) == 5.0);
  unlink(path); /* the mapping keeps the pages */

  gs_tensor all[] = {x, m, t, t_rows, m_rows, b, mapped};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    gs_dispose(all[i]);
  CHECK(gs_live_tensor_count() == 0);
  printf("checks_failed=%d\n", tour_failures);
  return tour_failures ? 1 : 0;
}
