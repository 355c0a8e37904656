/* gs-capture-page.h: one capture, shown in a tab: it owns the trace model and the source
 * feeding it, and composes the views (scope tree, event list, tensor details, scrubber). The
 * source is pumped from the frame clock with a time budget; every view follows the
 * scrubber's event, and a selection in one view drives the others. A program the inspector
 * runs also has its Output pane, below the views. */
#pragma once

#include <gtk/gtk.h>

#include "gs-event-list-view.h"
#include "gs-scrubber.h"
#include "gs-trace-source.h"
#include "rank-run.h"
#include "tours.h"
#include "trace-model.h"

G_BEGIN_DECLS

#define GS_TYPE_CAPTURE_PAGE (gs_capture_page_get_type())
G_DECLARE_FINAL_TYPE(GsCapturePage, gs_capture_page, GS, CAPTURE_PAGE, GtkWidget)

/* A log file, loaded on a worker with progress; follow keeps reading what is appended. */
GsCapturePage *gs_capture_page_new_for_file(const char *path, gboolean follow);
/* The logs of one distributed run's ranks (sorted by rank, checked by gs_rank_logs_one_run):
 * the first rank's log is shown as a file is, and the others load beside it; then the Events
 * page lists every rank's events (with a Rank column and filter) and the Memory page draws one
 * lane per rank. n = 1 is gs_capture_page_new_for_file. */
GsCapturePage *gs_capture_page_new_for_run(const gs_rank_log *logs, guint n);
/* The run once every rank is loaded (NULL before, and for a single log). */
gs_rank_run *gs_capture_page_get_run(GsCapturePage *self);
GtkWidget *gs_capture_page_get_rank_lanes(GsCapturePage *self);
/* A program run with tracing pointed at the inspector, its output in the Output pane and
 * echoed to echo_stdout and echo_stderr (-1: not echoed). NULL with error if it cannot
 * start. */
GsCapturePage *gs_capture_page_new_for_program(const char *const *argv, const char *cwd,
                                               int echo_stdout, int echo_stderr,
                                               GError **error);
/* A guided tour: its program run with tracing and values on, and the Tour panel playing
 * the tour once the program has finished. NULL with error if the program is not there or
 * cannot start. */
GsCapturePage *gs_capture_page_new_for_tour(const gs_tour *tour, int echo_stdout,
                                            int echo_stderr, GError **error);
/* Plays tour (NULL: none) over this capture, once its log is whole. */
void gs_capture_page_set_tour(GsCapturePage *self, const gs_tour *tour);
/* The Tour panel (a GsTourPanel); hidden while no tour plays. */
GtkWidget *gs_capture_page_get_tour_panel(GsCapturePage *self);
/* Waits for a traced program on the per-user socket. NULL with error if it cannot listen. */
GsCapturePage *gs_capture_page_new_listening(GError **error);

const char *gs_capture_page_get_title(GsCapturePage *self);
/* The source's state in a sentence ("the program exited with status 0"). */
const char *gs_capture_page_get_subtitle(GsCapturePage *self);
/* The status line under the scrubber: the source's state and, when the log has any, the
 * inconsistencies the model stepped over ("" when there is nothing to say). */
const char *gs_capture_page_get_status(GsCapturePage *self);
/* TRUE while loading or live. */
gboolean gs_capture_page_get_busy(GsCapturePage *self);
void gs_capture_page_focus_search(GsCapturePage *self);

/* NULL until a file has loaded. */
gs_trace_model *gs_capture_page_get_model(GsCapturePage *self);
GsTraceSource *gs_capture_page_get_source(GsCapturePage *self);
GsScrubber *gs_capture_page_get_scrubber(GsCapturePage *self);
GsEventListView *gs_capture_page_get_event_list(GsCapturePage *self);
GtkWidget *gs_capture_page_get_scope_tree(GsCapturePage *self);
GtkWidget *gs_capture_page_get_tensor_view(GsCapturePage *self);
/* The Output pane (a GsOutputView), and whether it is shown: a program's capture shows it
 * from the start, Ctrl+4 and the Output buttons toggle it; other captures never show it. */
GtkWidget *gs_capture_page_get_output_view(GsCapturePage *self);
gboolean gs_capture_page_get_show_output(GsCapturePage *self);
void gs_capture_page_set_show_output(GsCapturePage *self, gboolean show);
/* "loading", "waiting" or "content". */
const char *gs_capture_page_get_state_name(GsCapturePage *self);

G_END_DECLS
