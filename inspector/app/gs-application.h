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

G_END_DECLS
