/* views-test-util.h: what the inspector's view tests share: recording a workload into a
 * trace model, showing a widget in a window and waiting until it is drawn, finding widgets
 * and label texts in it, pressing its keys, and saving a screenshot PNG. */
#pragma once

#include <gtk/gtk.h>

#include "gs-application.h"
#include "trace-model.h"

G_BEGIN_DECLS

typedef void (*views_test_workload)(void);

/* Records what body does (through the engine's recorder) and feeds the whole log to a new
 * model. */
gs_trace_model *views_test_record(views_test_workload body);
/* The bytes of the log of what body does, recorded through the engine's recorder into a
 * temporary file (removed before returning); *n is their count. Free with g_free. */
char *views_test_record_bytes(views_test_workload body, gsize *n);
/* Runs the main loop until done(data) holds, failing after seconds. The iterations block (a
 * 10 ms ticker wakes them to check done): a non-blocking iteration with a sleep between
 * handled one source per 2 ms, which starved a live source's reading. */
void views_test_wait_for_seconds(gboolean (*done)(gpointer), gpointer data, guint seconds);
/* The same with a minute: a live run under ASan on 2 busy cores. */
void views_test_wait_for(gboolean (*done)(gpointer), gpointer data);
/* A handler for the views' signals that carry one guint64 (an event's index, an object's
 * id): stores it in the guint64 data points to. */
void views_test_store_u64(GtkWidget *view, guint64 value, gpointer data);
/* Closes a view test's window and frees the model it showed. */
void views_test_close(GtkWindow *window, gs_trace_model *model);
/* gtk_test_init and libadwaita's styles. */
void views_test_init(int *argc, char ***argv);
/* A window test's start: the locale and translations, settings in memory, views_test_init,
 * and the inspector's application registered (not unique), echoing no program output. */
GsApplication *views_test_application(int *argc, char ***argv);
/* A window of width x height holding child, presented and drawn. */
GtkWindow *views_test_show(GtkWidget *child, int width, int height);
/* Runs the main loop until the window has drawn a few frames (layout settled). */
void views_test_settle(GtkWidget *widget);
/* Whether w is what a search looks for; data is the search's argument (a type, a text). */
typedef gboolean (*views_test_match)(GtkWidget *w, gconstpointer data);
/* The first descendant of root (root included) that match accepts, depth first, or NULL: the
 * one walk behind every search for a widget in the view tests. */
GtkWidget *views_test_find_where(GtkWidget *root, views_test_match match, gconstpointer data);
/* The first descendant of root (root included) of type, depth first, or NULL. */
GtkWidget *views_test_find(GtkWidget *root, GType type);
/* The first label under root whose text is text (button labels included), or NULL. */
GtkWidget *views_test_find_label(GtkWidget *root, const char *text);
/* The first label under root whose text contains part, or NULL. */
GtkWidget *views_test_find_label_containing(GtkWidget *root, const char *part);
/* Every GtkLabel on screen (mapped) under root, depth first, in widget order. */
GPtrArray *views_test_labels(GtkWidget *root);
/* The text of the label on screen that follows the label saying key, or NULL. */
const char *views_test_label_after(GtkWidget *root, const char *key);
/* Presses key+mods on widget as its capture-phase shortcut controller would (before the
 * focused widget sees it): runs the matching shortcut's action and returns whether it handled
 * the key. The key must be one of its shortcuts. */
gboolean views_test_press_key(GtkWidget *widget, guint key, GdkModifierType mods);
/* widget as it is drawn now, from the drawings GTK kept for its children (as on screen). */
GdkTexture *views_test_render(GtkWidget *widget);
/* Saves widget as GS_SCREENSHOT_DIR/name (or the current directory). */
void views_test_screenshot(GtkWidget *widget, const char *name);
/* The position in a timeline view's alive list, as shown, of the object id's row, opening
 * (by activating it, as a click does) the group row it is in if need be; G_MAXUINT if it is
 * not listed. */
guint views_test_alive_row(GtkWidget *timeline, guint64 id);
/* The index of the first event of kind in m at or after from, or G_MAXUINT64. */
guint64 views_test_find_kind(gs_trace_model *m, gs_trace_kind kind, guint64 from);

G_END_DECLS
