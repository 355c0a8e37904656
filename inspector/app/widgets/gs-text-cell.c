/* gs-text-cell.c: one line of text in a cell of a long list, shaped only when drawn (see
 * gs-text-cell.h for why a GtkLabel costs too much there). */
#include "gs-text-cell.h"

#include <math.h>
#include <string.h>

struct _GsTextCell {
  GtkWidget parent_instance;
  char *text;
  float xalign;
  gboolean natural_width;
  gsize kept;      /* bytes at the text's start never cut (gs_text_cell_set_text_keeping) */
  int kept_width;  /* their width in pixels, -1 until shaped */
  PangoLayout *layout;   /* made when first needed; dropped when the text or style changes */
  PangoFontDescription *font; /* the font the cell was last measured with */
};

G_DEFINE_FINAL_TYPE(GsTextCell, gs_text_cell, GTK_TYPE_WIDGET)

/* A line's height and a character's average width per font: every cell of a column shares
 * a font, and asking the font is all the measuring a cell does. Main thread only, as all
 * of GTK. */
typedef struct font_size {
  int height;
  double char_width; /* pixels */
} font_size;

static GHashTable *font_sizes;

static const font_size *size_of_font(GsTextCell *self) {
  PangoContext *context = gtk_widget_get_pango_context(GTK_WIDGET(self));
  const PangoFontDescription *font = pango_context_get_font_description(context);
  if (!font_sizes)
    font_sizes = g_hash_table_new_full((GHashFunc)pango_font_description_hash,
                                       (GEqualFunc)pango_font_description_equal,
                                       (GDestroyNotify)pango_font_description_free, g_free);
  /* GTK gives every widget's context a font; without one, the answer is measured anew. */
  static font_size unkept;
  font_size *size = font ? g_hash_table_lookup(font_sizes, font) : NULL;
  if (size)
    return size;
  size = font ? g_new0(font_size, 1) : &unkept;
  /* Letters with an ascender and a descender: the line's logical height is the font's. */
  g_autoptr(PangoLayout) probe = gtk_widget_create_pango_layout(GTK_WIDGET(self), "Xg");
  pango_layout_get_pixel_size(probe, NULL, &size->height);
  PangoFontMetrics *metrics = pango_context_get_metrics(context, font, NULL);
  size->char_width = (double)pango_font_metrics_get_approximate_char_width(metrics) / PANGO_SCALE;
  pango_font_metrics_unref(metrics);
  if (font)
    g_hash_table_insert(font_sizes, pango_font_description_copy(font), size);
  return size;
}

static PangoLayout *ensure_layout(GsTextCell *self) {
  if (!self->layout) {
    self->layout = gtk_widget_create_pango_layout(GTK_WIDGET(self), self->text);
    pango_layout_set_single_paragraph_mode(self->layout, TRUE);
    pango_layout_set_ellipsize(self->layout, PANGO_ELLIPSIZE_END);
  }
  return self->layout;
}

static void gs_text_cell_measure(GtkWidget *widget, GtkOrientation orientation, int for_size,
                                 int *minimum, int *natural, int *minimum_baseline,
                                 int *natural_baseline) {
  (void)for_size;
  GsTextCell *self = GS_TEXT_CELL(widget);
  *minimum_baseline = *natural_baseline = -1;
  if (orientation == GTK_ORIENTATION_VERTICAL) {
    *minimum = *natural = size_of_font(self)->height;
    return;
  }
  /* A column's natural width only shares out the room between columns: estimated from the
   * characters, not shaped (a summary's sentence would be shaped for every row made). */
  *minimum = *natural = 0;
  if (self->natural_width && self->text && *self->text)
    *natural = (int)ceil((double)g_utf8_strlen(self->text, -1) * size_of_font(self)->char_width);
  /* The kept part is shaped, not estimated: it must fit exactly, and it is short. */
  if (self->kept > 0) {
    if (self->kept_width < 0) {
      g_autoptr(PangoLayout) probe = gtk_widget_create_pango_layout(widget, NULL);
      /* with the ellipsis that follows it when the rest is cut */
      g_autofree char *shown = g_strdup_printf("%.*s…", (int)self->kept, self->text);
      pango_layout_set_text(probe, shown, -1);
      pango_layout_get_pixel_size(probe, &self->kept_width, NULL);
    }
    *minimum = self->kept_width;
    *natural = MAX(*natural, *minimum);
  }
}

static void gs_text_cell_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  GsTextCell *self = GS_TEXT_CELL(widget);
  int width = gtk_widget_get_width(widget), height = gtk_widget_get_height(widget);
  if (!self->text || !*self->text || width <= 0)
    return;
  PangoLayout *layout = ensure_layout(self);
  if (pango_layout_get_width(layout) != width * PANGO_SCALE)
    pango_layout_set_width(layout, width * PANGO_SCALE);
  PangoRectangle logical;
  pango_layout_get_pixel_extents(layout, NULL, &logical);
  float xalign = gtk_widget_get_direction(widget) == GTK_TEXT_DIR_RTL ? 1.0f - self->xalign
                                                                      : self->xalign;
  float x = MAX(0.0f, (float)(width - logical.width) * xalign) - (float)logical.x;
  float y = floorf((float)(height - logical.height) / 2.0f) - (float)logical.y;
  GdkRGBA color;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS /* gtk_widget_get_color is GTK 4.10 */
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &color);
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_snapshot_save(snapshot);
  gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT(x, y));
  gtk_snapshot_append_layout(snapshot, layout, &color);
  gtk_snapshot_restore(snapshot);
}

/* A new font or font feature (a theme, a text scale, a CSS class) changes the shaping, and
 * a new font the height too. */
static void gs_text_cell_css_changed(GtkWidget *widget, GtkCssStyleChange *change) {
  GTK_WIDGET_CLASS(gs_text_cell_parent_class)->css_changed(widget, change);
  GsTextCell *self = GS_TEXT_CELL(widget);
  g_clear_object(&self->layout);
  self->kept_width = -1;
  const PangoFontDescription *font =
      pango_context_get_font_description(gtk_widget_get_pango_context(widget));
  if (!self->font || !font || !pango_font_description_equal(self->font, font)) {
    g_clear_pointer(&self->font, pango_font_description_free);
    self->font = font ? pango_font_description_copy(font) : NULL;
    gtk_widget_queue_resize(widget);
  }
}

static void gs_text_cell_finalize(GObject *object) {
  GsTextCell *self = GS_TEXT_CELL(object);
  g_clear_object(&self->layout);
  g_clear_pointer(&self->font, pango_font_description_free);
  g_free(self->text);
  G_OBJECT_CLASS(gs_text_cell_parent_class)->finalize(object);
}

static void gs_text_cell_class_init(GsTextCellClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->finalize = gs_text_cell_finalize;
  widget_class->measure = gs_text_cell_measure;
  widget_class->snapshot = gs_text_cell_snapshot;
  widget_class->css_changed = gs_text_cell_css_changed;
  gtk_widget_class_set_css_name(widget_class, "label");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_LABEL);
}

static void gs_text_cell_init(GsTextCell *self) {
  self->kept_width = -1;
}

GtkWidget *gs_text_cell_new(float xalign, gboolean natural_width) {
  GsTextCell *self = g_object_new(GS_TYPE_TEXT_CELL, NULL);
  self->xalign = xalign;
  self->natural_width = natural_width;
  return GTK_WIDGET(self);
}

void gs_text_cell_set_text(GsTextCell *self, const char *text) {
  gs_text_cell_set_text_keeping(self, text, 0);
}

void gs_text_cell_set_text_keeping(GsTextCell *self, const char *text, gsize kept) {
  g_return_if_fail(GS_IS_TEXT_CELL(self));
  if (!text)
    text = "";
  kept = MIN(kept, strlen(text));
  if (self->text && strcmp(self->text, text) == 0 && self->kept == kept)
    return;
  g_free(self->text);
  self->text = g_strdup(text);
  g_clear_object(&self->layout);
  gboolean resize = self->natural_width || kept > 0 || self->kept > 0;
  self->kept = kept;
  self->kept_width = -1;
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
  if (resize)
    gtk_widget_queue_resize(GTK_WIDGET(self));
  else
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

const char *gs_text_cell_get_text(GsTextCell *self) {
  g_return_val_if_fail(GS_IS_TEXT_CELL(self), NULL);
  return self->text ? self->text : "";
}
