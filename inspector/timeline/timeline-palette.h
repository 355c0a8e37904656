/* timeline-palette.h: the memory timeline's colours, one set for light and one for dark
 * (AdwStyleManager's dark mode in the widget, --dark in export), so stacks keep their meaning
 * and contrast on either background. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct gs_rgba {
  double r, g, b, a;
} gs_rgba;

typedef struct gs_timeline_palette {
  gs_rgba background, text, dim_text, grid, axis;
  gs_rgba scope_band[2]; /* alternate outermost scopes */
  gs_rgba backward;      /* backward spans */
  gs_rgba outline;       /* the total's outline */
  gs_rgba outside;       /* the dashed line of bytes outside the engine's allocator */
  gs_rgba peak;
  gs_rgba wait; /* a rank's waits for the others (rank lanes): no category's hue */
  gs_rgba mark;
  gs_rgba position; /* the scrubber's event */
  gs_rgba hover;
} gs_timeline_palette;

const gs_timeline_palette *gs_timeline_palette_get(gboolean dark);
/* The fill of stack i: by category the six categories' fixed colours, by scope stack 0
 * ("outside any scope") gray and the scope groups cycling through distinct hues. */
gs_rgba gs_timeline_stack_color(gboolean dark, gboolean by_scope, guint stack);

G_END_DECLS
