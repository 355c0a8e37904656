/* test-text-cell.c: the event list's cell (inspector/app/widgets/gs-text-cell.c). Its height is a
 * label's in the same font, without the text being shaped; its width follows the text's
 * length only when asked; in a list view, a row scrolled into view draws its text. */
#include <adwaita.h>

#include "gs-text-cell.h"
#include "views-test-util.h"

/* What the cell drew the last time GTK asked it: NULL when it drew nothing. */
static GskRenderNode *drawing(GtkWidget *cell) {
  GtkSnapshot *snapshot = gtk_snapshot_new();
  GTK_WIDGET_GET_CLASS(cell)->snapshot(cell, snapshot);
  return gtk_snapshot_free_to_node(snapshot);
}

/* How many pixels of the window's drawing inside widget differ from its first pixel: the
 * window is drawn from the drawings GTK kept, as on screen. */
static int ink_in(GtkWidget *window, GtkWidget *widget) {
  g_autoptr(GdkTexture) texture = views_test_render(window);
  int tw = gdk_texture_get_width(texture), th = gdk_texture_get_height(texture);
  g_autofree guint32 *pixels = g_new(guint32, (gsize)tw * th);
  gdk_texture_download(texture, (guchar *)pixels, (gsize)tw * 4);
  graphene_rect_t b;
  g_assert_true(gtk_widget_compute_bounds(widget, window, &b));
  int x0 = MAX(0, (int)b.origin.x), y0 = MAX(0, (int)b.origin.y);
  int x1 = MIN(tw, (int)(b.origin.x + b.size.width)), y1 = MIN(th, (int)(b.origin.y + b.size.height));
  g_assert_cmpint(x1, >, x0);
  g_assert_cmpint(y1, >, y0);
  int ink = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      ink += pixels[(gsize)y * tw + x] != pixels[(gsize)y0 * tw + x0];
  return ink;
}

static void test_measure(void) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *label = gtk_label_new("Tensor #12.0 (a very long summary of an event)");
  GtkWidget *fixed = gs_text_cell_new(0.0f, FALSE);
  GtkWidget *natural = gs_text_cell_new(0.0f, TRUE);
  const char *text = "Tensor #12.0 (a very long summary of an event)";
  gs_text_cell_set_text(GS_TEXT_CELL(fixed), text);
  gs_text_cell_set_text(GS_TEXT_CELL(natural), text);
  g_assert_cmpstr(gs_text_cell_get_text(GS_TEXT_CELL(fixed)), ==, text);
  gtk_box_append(GTK_BOX(box), label);
  gtk_box_append(GTK_BOX(box), fixed);
  gtk_box_append(GTK_BOX(box), natural);
  GtkWindow *window = views_test_show(box, 400, 200);

  int label_h, cell_h, label_w, fixed_w, natural_w, min_w;
  gtk_widget_measure(label, GTK_ORIENTATION_VERTICAL, -1, &label_h, NULL, NULL, NULL);
  gtk_widget_measure(fixed, GTK_ORIENTATION_VERTICAL, -1, &cell_h, NULL, NULL, NULL);
  g_assert_cmpint(cell_h, ==, label_h);
  gtk_widget_measure(label, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &label_w, NULL, NULL);
  gtk_widget_measure(fixed, GTK_ORIENTATION_HORIZONTAL, -1, &min_w, &fixed_w, NULL, NULL);
  g_assert_cmpint(min_w, ==, 0);
  g_assert_cmpint(fixed_w, ==, 0);
  gtk_widget_measure(natural, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural_w, NULL, NULL);
  /* An estimate from the font's average character: near the label's shaped width. */
  g_assert_cmpint(natural_w, >, label_w * 2 / 3);
  g_assert_cmpint(natural_w, <, label_w * 3 / 2);
  /* A shorter text: a natural-width cell asks to be measured again. */
  gs_text_cell_set_text(GS_TEXT_CELL(natural), "x");
  g_assert_true(gtk_widget_get_visible(natural));
  gtk_widget_measure(natural, GTK_ORIENTATION_HORIZONTAL, -1, NULL, &natural_w, NULL, NULL);
  g_assert_cmpint(natural_w, <, label_w);
  g_assert_cmpint(natural_w, >, 0);
  /* NULL reads as empty and draws nothing. */
  gs_text_cell_set_text(GS_TEXT_CELL(fixed), NULL);
  g_assert_cmpstr(gs_text_cell_get_text(GS_TEXT_CELL(fixed)), ==, "");
  g_assert_null(drawing(fixed));
  gtk_window_destroy(window);
}

static void setup_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
  (void)f, (void)data;
  gtk_list_item_set_child(item, gs_text_cell_new(0.0f, FALSE));
}

static void bind_cell(GtkSignalListItemFactory *f, GtkListItem *item, gpointer data) {
  (void)f, (void)data;
  gs_text_cell_set_text(GS_TEXT_CELL(gtk_list_item_get_child(item)),
                        gtk_string_object_get_string(gtk_list_item_get_item(item)));
}

/* The laid-out cell showing text (the list keeps rows it is done with unallocated). */
static gboolean is_drawn_cell_showing(GtkWidget *w, gconstpointer text) {
  return GS_IS_TEXT_CELL(w) && gtk_widget_get_width(w) > 0 &&
         g_strcmp0(gs_text_cell_get_text(GS_TEXT_CELL(w)), text) == 0;
}

static GtkWidget *find_cell(GtkWidget *root, const char *text) {
  return views_test_find_where(root, is_drawn_cell_showing, text);
}

/* In a list view, as in the event list: GTK 4.8 makes about 200 rows, lays out and draws
 * those in view, and the others when scrolled to. */
static void test_drawn_when_scrolled_to(void) {
  GtkStringList *strings = gtk_string_list_new(NULL);
  for (int i = 0; i < 1000; i++) {
    char text[32];
    g_snprintf(text, sizeof text, "row %d", i);
    gtk_string_list_append(strings, text);
  }
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new();
  g_signal_connect(factory, "setup", G_CALLBACK(setup_cell), NULL);
  g_signal_connect(factory, "bind", G_CALLBACK(bind_cell), NULL);
  GtkWidget *list = gtk_list_view_new(
      GTK_SELECTION_MODEL(gtk_no_selection_new(G_LIST_MODEL(strings))), factory);
  GtkWidget *scroller = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroller), list);
  GtkWindow *window = views_test_show(scroller, 300, 200);

  GtkWidget *top = find_cell(list, "row 0");
  g_assert_nonnull(top);
  g_assert_null(find_cell(list, "row 30")); /* below the view: not laid out */
  g_assert_cmpint(ink_in(GTK_WIDGET(window), top), >, 0);

  /* Scrolled so that row 30 is in view: it is drawn, at the list's width. */
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));
  gtk_adjustment_set_value(adj, 30 * gtk_widget_get_height(top));
  views_test_settle(GTK_WIDGET(window));
  GtkWidget *below = find_cell(list, "row 30");
  g_assert_nonnull(below);
  g_assert_cmpint(ink_in(GTK_WIDGET(window), below), >, 0);
  gtk_window_destroy(window);
}

int main(int argc, char **argv) {
  views_test_init(&argc, &argv);
  g_test_add_func("/text-cell/measure", test_measure);
  g_test_add_func("/text-cell/drawn-when-scrolled-to", test_drawn_when_scrolled_to);
  return g_test_run();
}
