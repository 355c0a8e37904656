/* gs-view-format.c: see gs-view-format.h. */
#include "gs-view-format.h"

#include "event-fields.h"

#include <glib/gi18n.h>
#include <string.h>

char *gs_view_handle(guint64 id) {
  char buf[32];
  return g_strdup(gs_format_handle(id, buf, sizeof buf));
}

char *gs_view_shape(const gint64 *shape, int ndim) {
  GString *s = g_string_new("[");
  for (int i = 0; i < ndim; i++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", shape[i]);
  g_string_append_c(s, ']');
  return g_string_free(s, FALSE);
}

/* Three significant digits is what a profiler's table needs. */
static char *with_unit(double value, const char *unit) {
  int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;
  return g_strdup_printf("%.*f %s", decimals, value, unit);
}

char *gs_view_duration(guint64 ns) {
  /* SI unit symbols read the same in every language we ship: not translated. */
  if (ns < 1000)
    return g_strdup_printf("%" G_GUINT64_FORMAT " ns", ns);
  if (ns < 1000000)
    return with_unit((double)ns / 1e3, "µs");
  if (ns < G_GUINT64_CONSTANT(1000000000))
    return with_unit((double)ns / 1e6, "ms");
  return with_unit((double)ns / 1e9, "s");
}

/* Binary units (KiB, MiB), as the memory timeline's scale, the sentences and `gradscope stats`
 * count memory. */
char *gs_view_bytes(guint64 bytes) {
  return g_format_size_full(bytes, G_FORMAT_SIZE_IEC_UNITS);
}

char *gs_view_count(guint64 n) {
  g_autofree char *digits = g_strdup_printf("%" G_GUINT64_FORMAT, n);
  /* TRANSLATORS: between groups of three digits in a count, as in "2,700" */
  const char *separator = C_("thousands", ",");
  GString *out = g_string_new(NULL);
  gsize len = strlen(digits);
  for (gsize i = 0; i < len; i++) {
    if (i > 0 && (len - i) % 3 == 0)
      g_string_append(out, separator);
    g_string_append_c(out, digits[i]);
  }
  return g_string_free(out, FALSE);
}
