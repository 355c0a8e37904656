/* timeline-palette.c: colours for the memory timeline (see timeline-palette.h). Stack hues
 * follow GNOME's palette; dark mode uses lighter tints of the same hues so neighbouring stacks
 * stay distinct on a dark background. */
#include "timeline-palette.h"

#include "trace-model.h"

#define RGB(hex, alpha)                                                                       \
  { ((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex) & 0xff) / 255.0, alpha }

static const gs_timeline_palette light = {
    .background = RGB(0xffffff, 1),
    .text = RGB(0x000000, 0.8),
    .dim_text = RGB(0x000000, 0.55),
    .grid = RGB(0x000000, 0.08),
    .axis = RGB(0x000000, 0.45),
    .scope_band = {RGB(0x3584e4, 0.05), RGB(0x3584e4, 0.11)},
    .backward = RGB(0x9141ac, 0.14),
    .outline = RGB(0x241f31, 0.85),
    .outside = RGB(0x0c7c8c, 1),
    .peak = RGB(0xc01c28, 1),
    .wait = RGB(0x0c7c8c, 1),
    .mark = RGB(0x1c71d8, 0.9),
    .position = RGB(0xe66100, 1),
    .hover = RGB(0x000000, 0.35),
};

static const gs_timeline_palette dark = {
    .background = RGB(0x1e1e1e, 1),
    .text = RGB(0xffffff, 0.87),
    .dim_text = RGB(0xffffff, 0.6),
    .grid = RGB(0xffffff, 0.09),
    .axis = RGB(0xffffff, 0.5),
    .scope_band = {RGB(0x99c1f1, 0.05), RGB(0x99c1f1, 0.12)},
    .backward = RGB(0xdc8add, 0.17),
    .outline = RGB(0xffffff, 0.85),
    .outside = RGB(0x5bc8d4, 1),
    .peak = RGB(0xff7b63, 1),
    .wait = RGB(0x0c7c8c, 1), /* the light tints are too near the categories' blue and green */
    .mark = RGB(0x99c1f1, 0.95),
    .position = RGB(0xffa348, 1),
    .hover = RGB(0xffffff, 0.45),
};

/* parameters, gradients, optimizer state, data, batch data, saved for backward, held by the
 * program (orange: what a leak grows), scope temporaries, other */
static const guint32 category_light[GS_MEM_N_CATEGORIES] = {
    0x1c71d8, 0xe5a50a, 0x813d9c, 0x865e3c, 0x2ec27e, 0xe01b24, 0xe66100, 0x9a9996, 0x5e5c64};
static const guint32 category_dark[GS_MEM_N_CATEGORIES] = {
    0x62a0ea, 0xf8e45c, 0xc061cb, 0xcdab8f, 0x57e389, 0xf66151, 0xffa348, 0x9a9996, 0xc0bfbc};
_Static_assert(GS_MEM_N_CATEGORIES == 9, "timeline-palette.c: a colour for each category");
static const guint32 scope_light[] = {0x1c71d8, 0x2ec27e, 0xe66100, 0x813d9c, 0xc01c28,
                                      0x1a5fb4, 0x26a269, 0xe5a50a, 0x865e3c, 0x3d3846};
static const guint32 scope_dark[] = {0x62a0ea, 0x57e389, 0xffa348, 0xc061cb, 0xf66151,
                                     0x99c1f1, 0x8ff0a4, 0xf8e45c, 0xcdab8f, 0xdeddda};

const gs_timeline_palette *gs_timeline_palette_get(gboolean is_dark) {
  return is_dark ? &dark : &light;
}

static gs_rgba from_hex(guint32 hex, double alpha) {
  gs_rgba c = RGB(hex, alpha);
  return c;
}

gs_rgba gs_timeline_stack_color(gboolean is_dark, gboolean by_scope, guint stack) {
  if (!by_scope)
    return from_hex((is_dark ? category_dark : category_light)[stack % GS_MEM_N_CATEGORIES],
                    0.85);
  if (stack == 0)
    return from_hex(0x9a9996, 0.75);
  const guint32 *hues = is_dark ? scope_dark : scope_light;
  return from_hex(hues[(stack - 1) % G_N_ELEMENTS(scope_light)], 0.85);
}
