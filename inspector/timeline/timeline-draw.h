/* timeline-draw.h: draws a computed timeline frame with cairo: outermost scopes and backward
 * passes shaded, stacked areas (one filled path per stack over the pixel columns), the total's
 * outline and minimum, a byte axis in KiB/MiB, event numbers and user marks on the time axis,
 * the peak marked with its value, the scrubber's event as a vertical line, and a legend.
 * The GTK view draws into a GtkSnapshot's cairo node, export into an image surface. */
#pragma once

#include <cairo.h>
#include <glib.h>

#include "timeline-frame.h"
#include "timeline-index.h"
#include "trace-model.h"

G_BEGIN_DECLS

/* What changes without recomputing the frame. */
typedef struct gs_timeline_decor {
  gboolean dark;
  guint64 position; /* the scrubber's event, or GS_TIMELINE_NO_EVENT */
  int hover_column; /* highlighted plot column, or -1 */
  /* A tensor's life (chosen in another view), events life_first..life_last, drawn as a band
   * with life_label over it when has_life (FALSE in a zero-initialised decor). */
  gboolean has_life;
  guint64 life_first, life_last;
  const char *life_label;
} gs_timeline_decor;

/* Draws frame (computed over m) at (0, 0) .. (width, height) of cr. m is not const only
 * because labels of marks and scopes are decoded from their events (index remembers them);
 * index may be NULL (no marks, no spans). */
void gs_timeline_draw(cairo_t *cr, const gs_timeline_frame *frame, gs_trace_model *m,
                      gs_timeline_index *index, const gs_timeline_decor *decor);

/* Computes and draws request into a new PNG file at path. FALSE with error set if the file
 * cannot be written. */
gboolean gs_timeline_export_png(gs_trace_model *m, gs_timeline_index *index,
                                const gs_timeline_request *request, gboolean dark,
                                const char *path, GError **error);

G_END_DECLS
