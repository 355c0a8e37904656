/* gs-run-dialog.h: "Run Program…": asks for a command line, checks that it parses, and emits
 * "run" with its argv; the window starts it with tracing pointed at the inspector. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define GS_TYPE_RUN_DIALOG (gs_run_dialog_get_type())
G_DECLARE_FINAL_TYPE(GsRunDialog, gs_run_dialog, GS, RUN_DIALOG, AdwMessageDialog)

/* settings: where the last command line is kept ("last-command"). */
GsRunDialog *gs_run_dialog_new(GtkWindow *parent, GSettings *settings);

G_END_DECLS
