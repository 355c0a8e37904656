/* timeline-export.c: the memory timeline as a PNG file with no display: the same frame and
 * drawing as the GTK view, into a cairo image surface (`gradscope export-timeline`). */
#include <glib/gi18n-lib.h>

#include "timeline-draw.h"

gboolean gs_timeline_export_png(gs_trace_model *m, gs_timeline_index *index,
                                const gs_timeline_request *request, gboolean dark,
                                const char *path, GError **error) {
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_frame_compute(frame, m, request);
  cairo_surface_t *surface =
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, request->width, request->height);
  cairo_status_t status = cairo_surface_status(surface);
  if (status == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(surface);
    gs_timeline_decor decor = {.dark = dark, .position = GS_TIMELINE_NO_EVENT,
                               .hover_column = -1};
    gs_timeline_draw(cr, frame, m, index, &decor);
    status = cairo_status(cr);
    cairo_destroy(cr);
  }
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_write_to_png(surface, path);
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                _("cannot write the timeline image to %s: %s"), path,
                cairo_status_to_string(status));
    return FALSE;
  }
  return TRUE;
}
