/* dispose-reason.c: the engine's dispose reasons in the user's language (see
 * dispose-reason.h). */
#include "dispose-reason.h"

#include <glib/gi18n-lib.h>
#include <string.h>

/* The text between prefix and suffix if reason is prefix + something + suffix, else NULL. */
static char *between(const char *reason, const char *prefix, const char *suffix) {
  size_t n = strlen(reason), p = strlen(prefix), s = strlen(suffix);
  if (n <= p + s || strncmp(reason, prefix, p) != 0 || strcmp(reason + n - s, suffix) != 0)
    return NULL;
  return g_strndup(reason + p, n - p - s);
}

/* The translation, with *known saying whether reason was one of the engine's. */
static char *translate(const char *reason, gboolean *known) {
  *known = TRUE;
  if (!reason || !*reason)
    return g_strdup("");
  /* The engine's fixed reasons; function names stay as they are in code. */
  static const struct {
    const char *engine;
    const char *text;
  } fixed[] = {
      /* TRANSLATORS: why a tensor was disposed; gs_... names are functions and stay as they are */
      {"gs_dispose", N_("gs_dispose (the program disposed it)")},
      {"gs_zero_grad", N_("gs_zero_grad (the gradient was cleared)")},
      /* TRANSLATORS: why a tensor was disposed: backward made it for itself and freed it;
       * the program never held it */
      {"gs_backward's own temporary",
       N_("gs_backward (one of its own temporaries: the engine freed it, not the program)")},
      /* TRANSLATORS: why a tensor was disposed: the engine made it for itself and freed it */
      {"the engine's own temporary",
       N_("the engine (one of its own temporaries: the engine freed it, not the program)")},
      {"gs_batch_dispose", N_("gs_batch_dispose (its batch was disposed)")},
      {"gs_dataset_release", N_("gs_dataset_release (the program released the dataset)")},
      {"gs_packed_sequence_dispose",
       N_("gs_packed_sequence_dispose (its packed sequence was disposed)")},
      {"the disposal of the tensor it was the gradient of",
       N_("the disposal of the tensor it was the gradient of")},
      {"its replacement in a module", N_("its replacement in a module")},
      {"a failed composite creation", N_("a failed composite creation")},
      {"a failed collation", N_("a failed collation")},
      {"the loader's reset or free (a prefetched batch nobody took)",
       N_("the loader's reset or free (a prefetched batch nobody took)")},
  };
  for (guint i = 0; i < G_N_ELEMENTS(fixed); i++)
    if (strcmp(reason, fixed[i].engine) == 0)
      return g_strdup(_(fixed[i].text));

  /* The engine's reasons with a name in them (scopes.c, module.c, optimizer.c): the name is
   * kept as written ("Linear #3", "Adam #0" are a type and an index). */
  static const struct {
    const char *prefix, *suffix;
    const char *format;
  } named[] = {
      /* TRANSLATORS: why a tensor was disposed: its dispose scope, named here, ended */
      {"the end of scope '", "'", N_("the end of scope “%s”")},
      {"dispose_everything_but on scope '", "'", N_("dispose_everything_but on scope “%s”")},
      {"dispose_everything on scope '", "'", N_("dispose_everything on scope “%s”")},
      /* TRANSLATORS: why a tensor was disposed: the module holding it (type and number) was */
      {"the disposal of module ", "", N_("the disposal of module %s")},
      /* TRANSLATORS: why a tensor was disposed: the optimizer holding it (type and number) was */
      {"the disposal of optimizer ", "", N_("the disposal of optimizer %s")},
  };
  for (guint i = 0; i < G_N_ELEMENTS(named); i++) {
    g_autofree char *name = between(reason, named[i].prefix, named[i].suffix);
    if (!name)
      continue;
    /* Each format holds one %s (msgfmt --check keeps it in the translations): put the name
     * there without handing printf a format that is not a literal. */
    const char *format = _(named[i].format), *at = strstr(format, "%s");
    if (!at)
      return g_strdup(format);
    GString *text = g_string_new_len(format, at - format);
    g_string_append(text, name);
    g_string_append(text, at + 2);
    return g_string_free(text, FALSE);
  }
  *known = FALSE;
  return g_strdup(reason);
}

char *gs_dispose_reason_text(const char *reason) {
  gboolean known;
  return translate(reason, &known);
}

gboolean gs_dispose_reason_is_known(const char *reason) {
  gboolean known;
  g_free(translate(reason, &known));
  return known;
}
