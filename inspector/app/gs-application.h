/* gs-application.h: the inspector's AdwApplication: command line (files, `-- PROGRAM ARGS`,
 * --listen, --follow), app-wide actions and the colour scheme. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define GS_TYPE_APPLICATION (gs_application_get_type())
G_DECLARE_FINAL_TYPE(GsApplication, gs_application, GS, APPLICATION, AdwApplication)

GsApplication *gs_application_new(void);
/* The settings shared by every window (io.github.gradscope.Inspector). */
GSettings *gs_application_get_settings(GsApplication *self);
/* Where the programs the inspector runs echo what they print, as it arrives: its own stdout
 * and stderr (a user who started it in a terminal sees the output there too), unless set
 * otherwise (-1: not echoed; tests, whose stdout is their TAP report). */
void gs_application_set_output_echo(GsApplication *self, int stdout_fd, int stderr_fd);
void gs_application_get_output_echo(GsApplication *self, int *stdout_fd, int *stderr_fd);

G_END_DECLS
