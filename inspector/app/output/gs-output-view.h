/* gs-output-view.h: the Output pane: what a program the inspector runs prints, line by line
 * as it arrives, in monospace and selectable; stderr lines are marked, and the last line says
 * how the program ended. It follows the end while the user has not scrolled up, and keeps
 * the last GS_OUTPUT_KEPT_LINES lines, saying how many earlier ones were dropped. */
#pragma once

#include <gtk/gtk.h>

#include "gs-trace-source.h"

G_BEGIN_DECLS

#define GS_TYPE_OUTPUT_VIEW (gs_output_view_get_type())
G_DECLARE_FINAL_TYPE(GsOutputView, gs_output_view, GS, OUTPUT_VIEW, GtkWidget)

GtkWidget *gs_output_view_new(void);
/* Shows source's output from its first kept line on, then each line as it arrives. */
void gs_output_view_set_source(GsOutputView *self, GsTraceSource *source);
/* Appends lines (GsOutputLine*, oldest first), after `lost` lines that never reached the
 * view (dropped by the source before they were taken). */
void gs_output_view_append(GsOutputView *self, GPtrArray *lines, guint64 lost);

/* What is shown, lines joined by newlines (newly allocated). */
char *gs_output_view_dup_text(GsOutputView *self);
guint gs_output_view_get_n_lines(GsOutputView *self);
/* Which stream shown line `line` (from 0) came from. */
GsOutputStream gs_output_view_get_line_stream(GsOutputView *self, guint line);
/* Lines printed and no longer shown, dropped here or before they arrived. */
guint64 gs_output_view_get_n_dropped(GsOutputView *self);
/* TRUE while new lines scroll the view to them (the user has not scrolled up). */
gboolean gs_output_view_get_following(GsOutputView *self);
GtkTextView *gs_output_view_get_text_view(GsOutputView *self);

G_END_DECLS
