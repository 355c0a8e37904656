/* gs-text-cell.h: one line of text in a cell of a long list, cheap where a GtkLabel is not.
 * GTK 4.8's list views make about 200 rows up front whatever fits on screen (the event list's
 * 6 columns: 1,200 cells) and measure each, though they draw only the rows in view. A label
 * shapes its whole text to be measured; this cell's height, and its natural width when
 * asked, come from its font's metrics (kept per font) and its number of characters, and it
 * shapes its text only when drawn. Ellipsized at the end; styled as a label ("label" CSS
 * node). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define GS_TYPE_TEXT_CELL (gs_text_cell_get_type())
G_DECLARE_FINAL_TYPE(GsTextCell, gs_text_cell, GS, TEXT_CELL, GtkWidget)

/* xalign: 0 left, 1 right. natural_width: whether the cell asks for its text's width (an
 * estimate: characters times the font's average width), so columns share the room by their
 * texts' lengths; FALSE (natural width 0) for a column of fixed width. */
GtkWidget *gs_text_cell_new(float xalign, gboolean natural_width);
void gs_text_cell_set_text(GsTextCell *self, const char *text);
/* The same, with the first kept bytes of text never cut: the cell's minimum width is theirs
 * (shaped), so its column keeps them whole and the end is ellipsized instead. */
void gs_text_cell_set_text_keeping(GsTextCell *self, const char *text, gsize kept);
const char *gs_text_cell_get_text(GsTextCell *self);

G_END_DECLS
