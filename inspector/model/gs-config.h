/* gs-config.h: where the inspector and the `gradscope` command find their translations (and
 * the inspector its settings schema), whether they run installed or straight from the build
 * tree (so the demo and the tests need no install). GLib only: both use it. */
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

G_END_DECLS
