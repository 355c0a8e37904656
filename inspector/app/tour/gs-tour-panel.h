/* gs-tour-panel.h: the Tour panel: plays a guided tour (model/tours/tours.h) over a capture. It
 * resolves the tour's steps in the capture's model once the log is whole, shows the step's
 * title and paragraph with Previous and Next, and asks the capture page (signal "show-step")
 * to move the scrubber to the step's event, open its page and select its tensor. A log in
 * which a step finds nothing says so in the panel instead of guessing. */
#pragma once

#include <gtk/gtk.h>

#include "tours.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_TOUR_PANEL (gs_tour_panel_get_type())
G_DECLARE_FINAL_TYPE(GsTourPanel, gs_tour_panel, GS, TOUR_PANEL, GtkWidget)

GtkWidget *gs_tour_panel_new(void);
/* The tour to play (static data; NULL: none, the panel hides). Forgets any resolved steps. */
void gs_tour_panel_set_tour(GsTourPanel *self, const gs_tour *tour);
const gs_tour *gs_tour_panel_get_tour(GsTourPanel *self);
/* Resolves the tour in model (borrowed, whole) and shows its first step. FALSE if a step
 * found nothing: the panel then says which and why. */
gboolean gs_tour_panel_start(GsTourPanel *self, gs_trace_model *model);
gboolean gs_tour_panel_get_started(GsTourPanel *self);
/* The step shown (from 0), and moving between steps (clamped; FALSE if it did not move). */
guint gs_tour_panel_get_step(GsTourPanel *self);
gboolean gs_tour_panel_go_to(GsTourPanel *self, guint step);
gboolean gs_tour_panel_next(GsTourPanel *self);
gboolean gs_tour_panel_previous(GsTourPanel *self);
/* The shown step's event index (G_MAXUINT64 before the tour started). */
guint64 gs_tour_panel_get_event(GsTourPanel *self);
/* For tests: the shown paragraph. */
const char *gs_tour_panel_get_paragraph(GsTourPanel *self);

/* The view stack page a tour page shows ("events", "graph", "timeline"; the scope tree is
 * always on screen, so a scopes step shows the event list beside it). */
const char *gs_tour_panel_view_name(gs_tour_page page);

G_END_DECLS
