/* graph-render.c: cairo + Pango drawing of a gs_layout (see graph-render.h). */
#include "graph-render.h"

#include <cairo-svg.h>
#include <glib/gi18n.h>
#include <math.h>
#include <pango/pangocairo.h>

typedef struct rgb {
  double r, g, b;
} rgb;

#define RGB(hex)                                                                           \
  ((rgb){((hex) >> 16 & 0xff) / 255.0, ((hex) >> 8 & 0xff) / 255.0, ((hex)&0xff) / 255.0})

static rgb item_fill(gs_graph_item_kind kind) {
  switch (kind) {
  case GS_GRAPH_OP: return RGB(0xd3d3d3);     /* lightgray */
  case GS_GRAPH_LEAF: return RGB(0xadd8e6);   /* lightblue */
  case GS_GRAPH_SAVED: return RGB(0xffa500);  /* orange */
  case GS_GRAPH_OUTPUT: return RGB(0xcaff70); /* darkolivegreen1 */
  case GS_GRAPH_TENSOR: return RGB(0xffffff);
  case GS_GRAPH_GROUP: return RGB(0xffffe0);  /* lightyellow */
  }
  return RGB(0xffffff);
}

static void set_rgb(cairo_t *cr, rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

void gs_graph_viewport_fit(const gs_layout *l, double width, double height,
                           gs_graph_viewport *vp) {
  const double margin = 12;
  double w = MAX(l->width, 1), h = MAX(l->height, 1);
  double scale = MIN((width - 2 * margin) / w, (height - 2 * margin) / h);
  if (scale <= 0)
    scale = MIN(width / w, height / h);
  vp->scale = scale;
  vp->width = width;
  vp->height = height;
  /* Centre: the layout's middle at the surface's middle. */
  vp->x = w / 2 - width / 2 / scale;
  vp->y = h / 2 - height / 2 / scale;
}

/* A rectangle in layout units intersects the viewport? */
static gboolean visible(const gs_graph_viewport *vp, double x0, double y0, double x1, double y1) {
  double vx1 = vp->x + vp->width / vp->scale, vy1 = vp->y + vp->height / vp->scale;
  return x1 >= vp->x && x0 <= vx1 && y1 >= vp->y && y0 <= vy1;
}

static PangoLayout *text_layout(cairo_t *cr, double size) {
  PangoLayout *layout = pango_cairo_create_layout(cr);
  /* 72 dpi: one Pango point is one layout unit, the unit Graphviz measured labels in. */
  pango_cairo_context_set_resolution(pango_layout_get_context(layout), 72);
  PangoFontDescription *font = pango_font_description_from_string("Monospace");
  pango_font_description_set_size(font, (int)(size * PANGO_SCALE));
  pango_layout_set_font_description(layout, font);
  pango_font_description_free(font);
  pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER);
  pango_layout_context_changed(layout);
  return layout;
}

static void draw_text(cairo_t *cr, PangoLayout *layout, const char *text, double cx, double cy) {
  if (!text || !*text)
    return;
  pango_layout_set_text(layout, text, -1);
  int w, h;
  pango_layout_get_size(layout, &w, &h);
  cairo_move_to(cr, cx - w / (2.0 * PANGO_SCALE), cy - h / (2.0 * PANGO_SCALE));
  pango_cairo_show_layout(cr, layout);
}

static void draw_clusters(cairo_t *cr, const gs_layout *l, const gs_graph_viewport *vp,
                          const gs_graph_style *style, PangoLayout *text) {
  for (guint i = 0; i < l->clusters->len; i++) {
    const gs_layout_cluster *c = &g_array_index(l->clusters, gs_layout_cluster, i);
    if (!visible(vp, c->x0, c->y0, c->x1, c->y1))
      continue;
    double shade = style->dark ? 0.16 + 0.04 * (c->depth % 3) : 0.97 - 0.03 * (c->depth % 3);
    cairo_new_path(cr);
    cairo_rectangle(cr, c->x0, c->y0, c->x1 - c->x0, c->y1 - c->y0);
    cairo_set_source_rgb(cr, shade, shade, shade + (style->dark ? 0.02 : 0));
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
    if (text && c->label) {
      double g = style->dark ? 0.8 : 0.25;
      cairo_set_source_rgb(cr, g, g, g);
      draw_text(cr, text, c->label, c->lx, c->ly);
    }
  }
}

static void edge_dash(cairo_t *cr, gs_graph_edge_kind kind) {
  static const double dotted[] = {1.5, 3}, dashed[] = {5, 3};
  switch (kind) {
  case GS_GRAPH_EDGE_VIEW:
  case GS_GRAPH_EDGE_DETACH: cairo_set_dash(cr, dotted, 2, 0); break;
  case GS_GRAPH_EDGE_SAVED:
  case GS_GRAPH_EDGE_COW: cairo_set_dash(cr, dashed, 2, 0); break;
  default: cairo_set_dash(cr, NULL, 0, 0); break;
  }
}

/* An arrowhead from the spline's end (bx, by) to its tip (tx, ty); open circle for detaches. */
static void draw_arrow(cairo_t *cr, double bx, double by, double tx, double ty, gboolean circle) {
  cairo_set_dash(cr, NULL, 0, 0);
  if (circle) {
    double r = hypot(tx - bx, ty - by) / 2;
    cairo_new_sub_path(cr);
    cairo_arc(cr, (bx + tx) / 2, (by + ty) / 2, r, 0, 2 * G_PI);
    cairo_stroke(cr);
    return;
  }
  double dx = tx - bx, dy = ty - by, len = hypot(dx, dy);
  if (len <= 0)
    return;
  double nx = -dy / len * len / 3, ny = dx / len * len / 3;
  cairo_move_to(cr, tx, ty);
  cairo_line_to(cr, bx + nx, by + ny);
  cairo_line_to(cr, bx - nx, by - ny);
  cairo_close_path(cr);
  cairo_fill(cr);
}

static void draw_edges(cairo_t *cr, const gs_layout *l, const gs_graph_viewport *vp,
                       const gs_graph_style *style, PangoLayout *text) {
  rgb ink = style->dark ? RGB(0xdedede) : RGB(0x202020);
  rgb share = style->dark ? RGB(0xa0a0a0) : RGB(0x707070);
  /* An alias's in-place write into a drawn tensor: darkorange3, as export-dot draws it. */
  rgb wrote = style->dark ? RGB(0xff9a3c) : RGB(0xcd6600);
  for (guint i = 0; i < l->edges->len; i++) {
    const gs_layout_edge *e = &g_array_index(l->edges, gs_layout_edge, i);
    if (e->n_points < 4)
      continue;
    double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
    for (guint k = 0; k < e->n_points; k++) {
      x0 = MIN(x0, e->points[2 * k]);
      x1 = MAX(x1, e->points[2 * k]);
      y0 = MIN(y0, e->points[2 * k + 1]);
      y1 = MAX(y1, e->points[2 * k + 1]);
    }
    if (!visible(vp, x0 - 10, y0 - 10, x1 + 10, y1 + 10))
      continue;
    const gs_graph_edge *ge = &g_array_index(l->graph->edges, gs_graph_edge, e->edge);
    gboolean sharing = ge->kind >= GS_GRAPH_EDGE_VIEW, wrote_edge = ge->kind == GS_GRAPH_EDGE_WROTE;
    rgb color = wrote_edge ? wrote : sharing ? share : ink;
    set_rgb(cr, color);
    cairo_set_line_width(cr, ge->kind == GS_GRAPH_EDGE_SAVED ? 0.8 : wrote_edge ? 1.5 : 1);
    edge_dash(cr, ge->kind);
    cairo_new_path(cr);
    cairo_move_to(cr, e->points[0], e->points[1]);
    for (guint k = 1; k + 2 < e->n_points; k += 3)
      cairo_curve_to(cr, e->points[2 * k], e->points[2 * k + 1], e->points[2 * k + 2],
                     e->points[2 * k + 3], e->points[2 * k + 4], e->points[2 * k + 5]);
    cairo_stroke(cr);
    gboolean circle = ge->kind == GS_GRAPH_EDGE_DETACH;
    if (e->arrow_end)
      draw_arrow(cr, e->points[2 * (e->n_points - 1)], e->points[2 * (e->n_points - 1) + 1], e->ex,
                 e->ey, circle);
    if (e->arrow_start)
      draw_arrow(cr, e->points[0], e->points[1], e->sx, e->sy, circle);
    if (text && e->label) {
      set_rgb(cr, wrote_edge ? wrote : share);
      draw_text(cr, text, e->label, e->lx, e->ly);
    }
  }
  cairo_set_dash(cr, NULL, 0, 0);
}

static void node_path(cairo_t *cr, const gs_graph_item *item, const gs_layout_node *n) {
  cairo_new_path(cr);
  if (item->kind == GS_GRAPH_SAVED) {
    cairo_save(cr);
    cairo_translate(cr, n->x, n->y);
    cairo_scale(cr, n->width / 2, n->height / 2);
    cairo_arc(cr, 0, 0, 1, 0, 2 * G_PI);
    cairo_restore(cr);
  } else {
    cairo_rectangle(cr, n->x - n->width / 2, n->y - n->height / 2, n->width, n->height);
  }
}

void gs_graph_mark_rgb(gs_graph_mark mark, double *r, double *g, double *b) {
  /* libadwaita's red 3 and green 5: apart from the version-error red (a failed check) by
   * being darker than it, and apart from each other for the common red-green deficiencies by
   * lightness as well as hue. */
  if (mark == GS_GRAPH_MARK_ADDED)
    *r = 0.15, *g = 0.55, *b = 0.25;
  else if (mark == GS_GRAPH_MARK_REMOVED)
    *r = 0.75, *g = 0.11, *b = 0.16;
  else if (mark == GS_GRAPH_MARK_OUTSIDE)
    *r = *g = *b = 0.6;
  else
    *r = *g = *b = 0.15;
}

static void draw_nodes(cairo_t *cr, const gs_layout *l, const gs_graph_viewport *vp,
                       const gs_graph_style *style, PangoLayout *text) {
  for (guint i = 0; i < l->nodes->len; i++) {
    const gs_layout_node *n = &g_array_index(l->nodes, gs_layout_node, i);
    if (!visible(vp, n->x - n->width / 2 - 4, n->y - n->height / 2 - 4, n->x + n->width / 2 + 4,
                 n->y + n->height / 2 + 4))
      continue;
    const gs_graph_item *item = &g_array_index(l->graph->items, gs_graph_item, n->item);
    if (item->kind == GS_GRAPH_GROUP) {
      /* A stack of boxes: more of the same behind it. */
      for (int k = 2; k >= 1; k--) {
        cairo_rectangle(cr, n->x - n->width / 2 + 3 * k, n->y - n->height / 2 - 3 * k, n->width,
                        n->height);
        set_rgb(cr, item_fill(item->kind));
        cairo_fill_preserve(cr);
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        cairo_set_line_width(cr, 0.8);
        cairo_stroke(cr);
      }
    }
    node_path(cr, item, n);
    set_rgb(cr, item_fill(item->kind));
    cairo_fill_preserve(cr);
    gboolean error = (item->flags & GS_GRAPH_VERSION_ERROR) != 0;
    gboolean selected = (gint)i == style->selected;
    gs_graph_mark mark =
        style->marks ? (gs_graph_mark)GPOINTER_TO_INT(g_hash_table_lookup(style->marks, item->key))
                     : GS_GRAPH_MARK_NONE;
    if (mark == GS_GRAPH_MARK_OUTSIDE) {
      /* Faded into the background, a dashed outline: drawn, since it is alive, but not part
       * of what is compared. */
      cairo_set_source_rgba(cr, style->dark ? 0.12 : 1, style->dark ? 0.12 : 1,
                            style->dark ? 0.12 : 1, 0.6);
      cairo_fill_preserve(cr);
      cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
      static const double dash[] = {3, 2};
      cairo_set_dash(cr, dash, 2, 0);
    } else if (mark != GS_GRAPH_MARK_NONE) {
      /* A tint of the mark's colour over the kind's fill, and a thick outline of it: the kind
       * stays readable, the difference stands out. */
      double r, g, b;
      gs_graph_mark_rgb(mark, &r, &g, &b);
      cairo_set_source_rgba(cr, r, g, b, 0.35);
      cairo_fill_preserve(cr);
      cairo_set_source_rgb(cr, r, g, b);
    } else if (selected)
      cairo_set_source_rgb(cr, 0.21, 0.52, 0.89); /* libadwaita's accent blue */
    else if (error)
      cairo_set_source_rgb(cr, 0.88, 0.11, 0.14);
    else
      cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    gboolean marked = mark == GS_GRAPH_MARK_ADDED || mark == GS_GRAPH_MARK_REMOVED;
    cairo_set_line_width(cr, selected || error || marked ? 3 : 1);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    if (selected && error) {
      /* Keep the error visible on a selected node: a red inner ring. */
      cairo_save(cr);
      cairo_translate(cr, n->x, n->y);
      cairo_scale(cr, 1 - 6 / MAX(n->width, 7), 1 - 6 / MAX(n->height, 7));
      cairo_translate(cr, -n->x, -n->y);
      node_path(cr, item, n);
      cairo_restore(cr);
      cairo_set_source_rgb(cr, 0.88, 0.11, 0.14);
      cairo_set_line_width(cr, 1.5);
      cairo_stroke(cr);
    }
    if (text) {
      /* Node fills are light in both styles: dark text always. */
      cairo_set_source_rgb(cr, 0, 0, 0);
      draw_text(cr, text, n->label, n->x, n->y);
    }
  }
}

/* The engine's message for a failed version check, across the top in surface units: it says
 * why the red items are red, whatever the zoom. */
static void draw_banner(cairo_t *cr, const gs_graph_viewport *vp, const char *message) {
  cairo_save(cr);
  PangoLayout *text = text_layout(cr, 10);
  pango_layout_set_alignment(text, PANGO_ALIGN_LEFT);
  pango_layout_set_wrap(text, PANGO_WRAP_WORD_CHAR);
  pango_layout_set_width(text, (int)MAX(50, vp->width - 24) * PANGO_SCALE);
  pango_layout_set_text(text, message, -1);
  int w, h;
  pango_layout_get_pixel_size(text, &w, &h);
  cairo_rectangle(cr, 0, 0, vp->width, h + 12);
  cairo_set_source_rgba(cr, 0.88, 0.11, 0.14, 0.92);
  cairo_fill(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_move_to(cr, 12, 6);
  pango_cairo_show_layout(cr, text);
  g_object_unref(text);
  cairo_restore(cr);
}

void gs_graph_render(cairo_t *cr, const gs_layout *l, const gs_graph_viewport *vp,
                     const gs_graph_style *style) {
  cairo_save(cr);
  if (style->dark)
    cairo_set_source_rgb(cr, 0.14, 0.14, 0.14);
  else
    cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_rectangle(cr, 0, 0, vp->width, vp->height);
  cairo_fill(cr);
  if (!l || l->nodes->len == 0) {
    /* Say so rather than show a blank surface. */
    PangoLayout *text = text_layout(cr, 12);
    cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
    draw_text(cr, text, _("No autograd graph is alive at this event"), vp->width / 2,
              vp->height / 2);
    g_object_unref(text);
    cairo_restore(cr);
    return;
  }
  cairo_scale(cr, vp->scale, vp->scale);
  cairo_translate(cr, -vp->x, -vp->y);
  /* 10-point labels under about 4 pixels are noise: draw shapes only. */
  PangoLayout *text = style->no_text || vp->scale * 10 < 4 ? NULL : text_layout(cr, 10);
  PangoLayout *small = text ? text_layout(cr, 8) : NULL;
  draw_clusters(cr, l, vp, style, text);
  draw_edges(cr, l, vp, style, small);
  draw_nodes(cr, l, vp, style, text);
  if (text && l->title) {
    cairo_set_source_rgb(cr, style->dark ? 0.9 : 0.1, style->dark ? 0.9 : 0.1,
                         style->dark ? 0.9 : 0.1);
    draw_text(cr, text, l->title, l->title_x, l->title_y);
  }
  g_clear_object(&text);
  g_clear_object(&small);
  cairo_restore(cr);
  if (l->graph->version_error && !style->no_text)
    draw_banner(cr, vp, l->graph->version_error);
}

gboolean gs_graph_render_to_file(const gs_layout *l, const char *path, int width, int height,
                                 GError **error) {
  g_autofree char *lower = g_ascii_strdown(path, -1);
  gboolean png = g_str_has_suffix(lower, ".png"), svg = g_str_has_suffix(lower, ".svg");
  if (!png && !svg) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "cannot tell the format of '%s': the name should end in .png or .svg", path);
    return FALSE;
  }
  if (width <= 0 || height <= 0 || width > 32767 || height > 32767) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "an image of %d x %d: sizes go from 1 to 32767", width, height);
    return FALSE;
  }
  cairo_surface_t *surface = png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height)
                                 : cairo_svg_surface_create(path, width, height);
  cairo_t *cr = cairo_create(surface);
  gs_graph_viewport vp;
  gs_graph_viewport_fit(l, width, height, &vp);
  if (l->graph->version_error && height > 120) {
    /* Leave the top to the banner so it covers no node. */
    const double banner = 56;
    gs_graph_viewport_fit(l, width, height - banner, &vp);
    vp.y -= banner / vp.scale;
    vp.height = height;
  }
  gs_graph_style style = {-1, FALSE, FALSE, NULL};
  gs_graph_render(cr, l, &vp, &style);
  cairo_destroy(cr);
  cairo_status_t status;
  if (png)
    status = cairo_surface_write_to_png(surface, path);
  else {
    cairo_surface_finish(surface);
    status = cairo_surface_status(surface);
  }
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "could not write '%s': %s", path,
                cairo_status_to_string(status));
    return FALSE;
  }
  return TRUE;
}
