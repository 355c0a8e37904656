/* gs-config.h: where the inspector and the `gradscope` command find their translations and
 * the guided tours' programs (and the inspector its settings schema), whether they run
 * installed or straight from the build tree (so the demo and the tests need no install).
 * GLib only: both use it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define GS_APP_ID "io.github.gradscope.Inspector"

/* TRUE when this executable lives in the build tree (it was not installed). */
gboolean gs_config_uninstalled(void);
/* The directory holding <lang>/LC_MESSAGES/gradscope.mo for this executable. */
const char *gs_config_locale_dir(void);
/* bindtextdomain + textdomain for GETTEXT_PACKAGE, UTF-8 output. */
void gs_config_init_i18n(void);
/* Run from the build tree: point GSettings at the schema compiled there (unless the caller
 * already chose a GSETTINGS_SCHEMA_DIR). */
void gs_config_init_settings(void);
/* A guided tour's program (examples/tours/): in $GS_TOUR_DIR if set, else in the build tree's
 * examples/ when this executable runs uninstalled, else in the installed
 * LIBEXECDIR/gradscope/tours/. NULL if it is not there (or not executable); g_free. */
char *gs_config_tour_program(const char *program);
/* The Python the gradscope module was built for (meson's find_installation), or NULL if the
 * build found none; the Python tours run with it. */
const char *gs_config_python(void);
/* Where an uninstalled gradscope's Python module is (the build tree's python/), for
 * PYTHONPATH; NULL when installed, where the module is in Python's own path. */
const char *gs_config_python_module_dir(void);

G_END_DECLS
