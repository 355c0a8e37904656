/* gs-scrubber.h: the time scrubber: a slider over event indices, buttons and keys that step
 * one event (Left/Right, Home/End), "event N of M", and above it the model's plain-words
 * explanation of the chosen event. At the last event it follows the live end as events
 * arrive (for a run of several ranks, "rank R · event N of M"). The "position" property is the
 * chosen event index. */
#pragma once

#include <gtk/gtk.h>

#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_SCRUBBER (gs_scrubber_get_type())
G_DECLARE_FINAL_TYPE(GsScrubber, gs_scrubber, GS, SCRUBBER, GtkWidget)

GtkWidget *gs_scrubber_new(void);
/* Borrowed; NULL clears. Moves to the last event. */
void gs_scrubber_set_model(GsScrubber *self, gs_trace_model *model);
void gs_scrubber_model_grew(GsScrubber *self);
/* A distributed run's page scrubs its first rank's log alone while its Events page lists
 * every rank's: the label then names the rank ("rank 0 · event N of M"). -1: a single log. */
void gs_scrubber_set_rank(GsScrubber *self, gint64 rank);
guint64 gs_scrubber_get_position(GsScrubber *self);
void gs_scrubber_set_position(GsScrubber *self, guint64 index);
/* Moves by delta events, clamped. */
void gs_scrubber_step(GsScrubber *self, gint64 delta);
/* Gives the keyboard focus to the slider (or, while it is off, to the scrubber's first
 * button that takes it). */
gboolean gs_scrubber_grab_focus(GsScrubber *self);
/* The explanation shown (tests). */
const char *gs_scrubber_get_explanation(GsScrubber *self);
const char *gs_scrubber_get_position_text(GsScrubber *self);

G_END_DECLS
