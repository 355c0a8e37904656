/* gs-config.c: installed or build-tree paths for the catalogue, the settings schema, the
 * guided tours' programs and the Python that runs the Python tours. The
 * build tree's paths are compiled in by meson; which set applies is decided by where the
 * running executable is. */
#include "gs-config.h"

#include <glib/gi18n.h>

gboolean gs_config_uninstalled(void) {
  static gsize once;
  static gboolean uninstalled;
  if (g_once_init_enter(&once)) {
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    uninstalled = exe && g_str_has_prefix(exe, GS_BUILD_ROOT "/");
    g_once_init_leave(&once, 1);
  }
  return uninstalled;
}

const char *gs_config_locale_dir(void) {
  return gs_config_uninstalled() ? GS_BUILD_LOCALEDIR : GS_LOCALEDIR;
}

void gs_config_init_i18n(void) {
  bindtextdomain(GETTEXT_PACKAGE, gs_config_locale_dir());
  bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
  textdomain(GETTEXT_PACKAGE);
}

void gs_config_init_settings(void) {
  if (gs_config_uninstalled())
    g_setenv("GSETTINGS_SCHEMA_DIR", GS_BUILD_SCHEMADIR, FALSE);
}

char *gs_config_tour_program(const char *program) {
  const char *dir = g_getenv("GS_TOUR_DIR");
  g_autofree char *path =
      dir && *dir ? g_build_filename(dir, program, NULL)
      : gs_config_uninstalled() ? g_build_filename(GS_BUILD_ROOT, "examples", program, NULL)
                                : g_build_filename(GS_LIBEXECDIR, "gradscope", "tours", program,
                                                   NULL);
  return g_file_test(path, G_FILE_TEST_IS_EXECUTABLE) ? g_steal_pointer(&path) : NULL;
}

const char *gs_config_python(void) {
  return *GS_PYTHON ? GS_PYTHON : NULL;
}

const char *gs_config_python_module_dir(void) {
  return gs_config_uninstalled() ? GS_BUILD_PYTHONDIR : NULL;
}
