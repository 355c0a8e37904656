/* timeline-test-util.c: the recorded training run and pixel reading for the timeline tests
 * (see timeline-test-util.h). */
#include "timeline-test-util.h"

#include <gradscope/gradscope.h>

void timeline_training_work(void) {
  const int64_t wshape[] = {16, 16}, xshape[] = {64, 16}, big[] = {128, 64};
  gs_module lin = gs_module_new("Linear");
  gs_tensor w = gs_parameter_new(gs_full(GS_F32, wshape, 2, 0.1), true);
  gs_module_register_parameter(lin, "weight", w);
  for (int step = 0; step < TRAIN_STEPS; step++) {
    if (step % 4 == 0) {
      char label[32];
      g_snprintf(label, sizeof label, "epoch %d", step / 4 + 1);
      gs_trace_mark(label);
    }
    gs_scope s = gs_scope_begin("train step");
    gs_tensor x = gs_full(GS_F32, xshape, 2, 1.0 + step);
    gs_tensor y = gs_relu(gs_matmul(x, w));
    gs_tensor loss = gs_sum(y, NULL, 0, false);
    gs_backward(loss);
    gs_zero_grad(w);
    gs_scope_end(s);
    gs_trace_flush(); /* a chunk per step, as a live reader would receive them */
    if (step == EVAL_STEP) {
      gs_scope e = gs_scope_begin("evaluate");
      gs_tensor activations = gs_ones(GS_F32, big, 2);
      (void)activations;
      gs_scope_end(e);
    }
  }
  gs_module_dispose(lin);
}

guint32 surface_pixel(cairo_surface_t *surface, int x, int y) {
  cairo_surface_flush(surface);
  const unsigned char *data = cairo_image_surface_get_data(surface);
  int stride = cairo_image_surface_get_stride(surface);
  guint32 pixel = ((const guint32 *)(data + (gsize)y * (gsize)stride))[x];
  /* RGB24 leaves the top byte unused: it is opaque. */
  if (cairo_image_surface_get_format(surface) == CAIRO_FORMAT_RGB24)
    pixel |= 0xff000000u;
  return pixel;
}
