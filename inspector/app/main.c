/* main.c: gradscope-inspector's entry point: sets up gettext (installed or build-tree
 * catalogue) and runs the application. */
#include "gs-config.h"

#include <glib/gi18n.h>
#include <locale.h>

#include "gs-application.h"

int main(int argc, char **argv) {
  setlocale(LC_ALL, "");
  gs_config_init_i18n();
  gs_config_init_settings();

  g_autoptr(GsApplication) app = gs_application_new();
  return g_application_run(G_APPLICATION(app), argc, argv);
}
