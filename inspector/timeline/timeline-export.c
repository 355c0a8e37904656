/* timeline-export.c: the memory timeline, or a distributed run's stacked rank lanes, as a PNG
 * file with no display: the same drawing as the GTK views (gs_timeline_draw,
 * gs_rank_lanes_draw) into a cairo image surface (`gradscope export-timeline`). */
#include <glib/gi18n-lib.h>

#include "rank-lanes.h"
#include "timeline-draw.h"

typedef void (*draw_fn)(cairo_t *cr, gconstpointer data);

/* One picture drawn by draw into a width x height image written to path: the writing and its
 * errors are the same for every picture the CLI exports. */
static gboolean export_png(int width, int height, draw_fn draw, gconstpointer data,
                           const char *path, GError **error) {
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
  cairo_status_t status = cairo_surface_status(surface);
  if (status == CAIRO_STATUS_SUCCESS) {
    cairo_t *cr = cairo_create(surface);
    draw(cr, data);
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

typedef struct one_log {
  const gs_timeline_frame *frame;
  gs_trace_model *model;
  gs_timeline_index *index;
  gboolean dark;
} one_log;

static void draw_one_log(cairo_t *cr, gconstpointer data) {
  const one_log *d = data;
  gs_timeline_decor decor = {.dark = d->dark, .position = GS_TIMELINE_NO_EVENT, .hover_column = -1};
  gs_timeline_draw(cr, d->frame, d->model, d->index, &decor);
}

gboolean gs_timeline_export_png(gs_trace_model *m, gs_timeline_index *index,
                                const gs_timeline_request *request, gboolean dark, const char *path,
                                GError **error) {
  g_autoptr(gs_timeline_frame) frame = gs_timeline_frame_new();
  gs_timeline_frame_compute(frame, m, request);
  one_log d = {.frame = frame, .model = m, .index = index, .dark = dark};
  return export_png(request->width, request->height, draw_one_log, &d, path, error);
}

typedef struct lanes {
  const gs_rank_run *run;
  const gs_rank_lanes_view *view;
} lanes;

static void draw_lanes(cairo_t *cr, gconstpointer data) {
  const lanes *d = data;
  gs_rank_lanes_draw(cr, d->run, d->view);
}

gboolean gs_rank_lanes_export_png(const gs_rank_run *run, const gs_rank_lanes_view *view,
                                  const char *path, GError **error) {
  lanes d = {.run = run, .view = view};
  return export_png(view->width, view->height, draw_lanes, &d, path, error);
}
