/* gs-window.h: the main window: a tab per capture (AdwTabView), the empty state, opening
 * files (Ctrl+O, drag and drop, recent captures), comparing two (a Compare tab), running and
 * listening for programs, and toasts for what went wrong. */
#pragma once

#include <adwaita.h>

#include "gs-application.h"

G_BEGIN_DECLS

#define GS_TYPE_WINDOW (gs_window_get_type())
G_DECLARE_FINAL_TYPE(GsWindow, gs_window, GS, WINDOW, AdwApplicationWindow)

GsWindow *gs_window_new(GsApplication *app);

/* Each opens a new tab and selects it. follow: keep reading as a program appends. */
void gs_window_open_file(GsWindow *self, GFile *file, gboolean follow);
/* Several files at once (the command line, the open dialog, a drop): the logs of one
 * distributed run's ranks open as one page (gs_capture_page_new_for_run); logs of different
 * runs, a rank given twice or a log of no run among ranks' logs are refused (FALSE, error and
 * a toast naming the files, their ranks and run ids); files of which none is a rank's log open
 * one page each, as gs_window_open_file does. */
gboolean gs_window_open_files(GsWindow *self, GFile **files, guint n, gboolean follow,
                              GError **error);
/* Opens a and b as a pair in a Compare tab (A before a change, B after) and selects it. */
void gs_window_compare(GsWindow *self, GFile *a, GFile *b);
/* Runs argv (argv[0] looked up in PATH) in cwd (NULL: ours) with tracing to the inspector. */
void gs_window_spawn(GsWindow *self, const char *const *argv, const char *cwd);
/* Runs the guided tour called name (model/tours/tours.h) and plays it in a new tab. */
void gs_window_start_tour(GsWindow *self, const char *name);
/* Plays the tour called name over the selected capture (a log of the tour's program). */
void gs_window_play_tour(GsWindow *self, const char *name);
/* Waits for a traced program on the per-user socket. */
void gs_window_listen(GsWindow *self);

void gs_window_show_toast(GsWindow *self, const char *message);

/* For tests: the tab view, and the capture page of the selected tab (or NULL). */
AdwTabView *gs_window_get_tab_view(GsWindow *self);
struct _GsCapturePage *gs_window_get_current_page(GsWindow *self);

G_END_DECLS
